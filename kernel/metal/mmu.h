/* Changes to boot.S's identity map after boot: pages made not present, so
 * that running into them faults (a stack's guard: the overflow becomes a
 * #PF, then a #DF on its own stack, and a report, not silent corruption
 * below the stack), and present again. */
#ifndef KERNEL_METAL_MMU_H
#define KERNEL_METAL_MMU_H

#include <stdbool.h>
#include <stddef.h>

/* Makes the n 4 KiB pages from `page` (aligned) present or not. A 2 MiB
 * page holding one to hide becomes a table of 512 4 KiB pages with the
 * same attributes (the table from pages.h, kept for good); pages of a
 * 2 MiB page never split are present already. 0, or -1 when a table could
 * not be had (then nothing after that page changed). */
int ig_mmu_set_present(void *page, size_t n, bool present);

/* The main stack's guard: ig_mmu_set_present(page, 1, false). */
int ig_mmu_guard_page(void *page);

#endif
