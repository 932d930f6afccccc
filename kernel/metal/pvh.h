/* The PVH boot ABI's start info (xen/include/public/arch-x86/hvm/start_info.h),
 * which qemu and Firecracker pass in %ebx: the command line, the modules
 * (the initrd) and, from version 1, the memory map. All addresses are physical. */
#ifndef KERNEL_METAL_PVH_H
#define KERNEL_METAL_PVH_H

#include <stdint.h>

#define IG_PVH_MAGIC 0x336ec578u
#define IG_PVH_MEMMAP_RAM 1

struct ig_pvh_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr; /* version >= 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
};

/* One module (qemu's -initrd, Firecracker's initrd): modlist_paddr points
 * at nr_modules of these. */
struct ig_pvh_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct ig_pvh_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

#endif
