/* Changes to boot.S's identity map after boot. */
#ifndef KERNEL_METAL_MMU_H
#define KERNEL_METAL_MMU_H

/* Makes the 4 KiB page at `page` (aligned) not present, so that running
 * into it faults (a stack's guard: the overflow becomes a #PF, then a #DF
 * on its own stack, and a register dump, not silent corruption below the
 * stack). Splits the 2 MiB page holding it; one split at most: 0, or -1
 * when a second one is asked for. */
int ig_mmu_guard_page(void *page);

#endif
