/* The bare-metal page allocator behind mmap/munmap: 4 KiB pages of the
 * largest RAM range of the PVH memory map above the image, one bit each.
 * Pages come back zeroed, as anonymous mappings must; a page never handed
 * out is still zero from the machine's start and is not cleared again. */
#ifndef KERNEL_METAL_PAGES_H
#define KERNEL_METAL_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pvh.h"

#define IG_PAGE_SIZE 4096u

/* From the start info's memory map (version >= 1), RAM above image_end and
 * below the device area at 0xfe000000 (the identity map's end for RAM),
 * around the first module (the initrd, read in place by fds.c); -1
 * when there is no map or no such RAM (the program then cannot run). A
 * page is cleared when it is handed out only if it was written before:
 * RAM comes up zero, but for what lies below written_end (the image's
 * unpacker and its payload, images/unpack.S; 0: nothing). */
int ig_pages_init(const struct ig_pvh_start_info *si, uintptr_t image_end, uintptr_t written_end);
/* n contiguous zeroed pages, or NULL. */
void *ig_pages_alloc(size_t n);
/* Returns pages (any subrange of what was handed out; others ignored). */
void ig_pages_free(void *p, size_t n);
/* Zeroes pages that stay allocated (madvise MADV_DONTNEED). */
void ig_pages_zero(void *p, size_t n);
/* For the boot log: pages in the arena, and free now. */
size_t ig_pages_total(void);
size_t ig_pages_free_count(void);

#endif
