/* What the boot leaves for the rest of the platform: the kernel command
 * line (copied out of the start info, which lies in memory the page
 * allocator may hand out). */
#ifndef KERNEL_METAL_ENTRY_H
#define KERNEL_METAL_ENTRY_H

const char *ig_metal_boot_cmdline(void);

#endif
