/* First-fit over a bitmap of the arena's pages, from a rover so that a
 * program that only maps (the startup) finds its pages at once. A second
 * bitmap remembers which pages were ever handed out: only those are
 * cleared on the next allocation. The bitmaps live in the arena's first
 * pages. */
#include "pages.h"

#include <string.h>

static uintptr_t arena;     /* first page after the bitmaps */
static size_t npages, nfree, rover;
static uint64_t *used, *dirty;

#define BITS 64u

static bool bit(const uint64_t *map, size_t i)
{
	return map[i / BITS] >> (i % BITS) & 1;
}

static void set_bit(uint64_t *map, size_t i, bool v)
{
	if (v)
		map[i / BITS] |= 1ull << (i % BITS);
	else
		map[i / BITS] &= ~(1ull << (i % BITS));
}

/* Keeps [s, end), page-aligned inward, if it is the largest range yet. */
static void consider(uint64_t s, uint64_t end, uint64_t *best_start, uint64_t *best_end)
{
	s = (s + IG_PAGE_SIZE - 1) & ~(uint64_t)(IG_PAGE_SIZE - 1);
	end &= ~(uint64_t)(IG_PAGE_SIZE - 1);
	if (end > s && end - s > *best_end - *best_start) {
		*best_start = s;
		*best_end = end;
	}
}

int ig_pages_init(const struct ig_pvh_start_info *si, uintptr_t image_end, uintptr_t written_end)
{
	if (si->version < 1 || !si->memmap_paddr)
		return -1;
	const struct ig_pvh_memmap_entry *e = (const void *)(uintptr_t)si->memmap_paddr;
	uint64_t lo = ((uint64_t)image_end + IG_PAGE_SIZE - 1) & ~(uint64_t)(IG_PAGE_SIZE - 1);
	/* The initrd (the first module) stays where the loader put it, read in
	   place: a hole in the RAM the arena may take. */
	uint64_t hole_lo = 0, hole_hi = 0;
	if (si->nr_modules && si->modlist_paddr) {
		const struct ig_pvh_modlist_entry *m = (const void *)(uintptr_t)si->modlist_paddr;
		hole_lo = m->paddr;
		hole_hi = m->paddr + m->size;
	}
	uint64_t best_start = 0, best_end = 0;
	for (uint32_t i = 0; i < si->memmap_entries; i++) {
		if (e[i].type != IG_PVH_MEMMAP_RAM)
			continue;
		uint64_t s = e[i].addr, end = e[i].addr + e[i].size;
		if (end > 0xfe000000ull) /* the identity map's device area */
			end = 0xfe000000ull;
		if (s < lo)
			s = lo;
		if (hole_hi > s && hole_lo < end) {
			consider(s, hole_lo > s ? hole_lo : s, &best_start, &best_end);
			consider(hole_hi < end ? hole_hi : end, end, &best_start, &best_end);
		} else {
			consider(s, end, &best_start, &best_end);
		}
	}
	size_t pages = (size_t)((best_end - best_start) / IG_PAGE_SIZE);
	/* Two bitmaps of `pages` bits, rounded to whole pages. */
	size_t map_words = (pages + BITS - 1) / BITS;
	size_t map_pages = (2 * map_words * sizeof(uint64_t) + IG_PAGE_SIZE - 1) / IG_PAGE_SIZE;
	if (pages <= map_pages + 1)
		return -1;
	used = (uint64_t *)(uintptr_t)best_start;
	dirty = used + map_words;
	memset(used, 0, 2 * map_words * sizeof(uint64_t));
	arena = (uintptr_t)best_start + map_pages * IG_PAGE_SIZE;
	npages = nfree = pages - map_pages;
	for (size_t i = 0; i < npages && arena + i * IG_PAGE_SIZE < written_end; i++)
		set_bit(dirty, i, true);
	return 0;
}

/* A free run of n pages starting at from, else where the search resumes. */
static bool run_free(size_t from, size_t n, size_t *next)
{
	for (size_t i = 0; i < n; i++)
		if (bit(used, from + i)) {
			*next = from + i + 1;
			return false;
		}
	return true;
}

void *ig_pages_alloc(size_t n)
{
	if (n == 0 || n > nfree)
		return NULL;
	for (int pass = 0; pass < 2; pass++) {
		size_t i = pass ? 0 : rover, end = pass ? rover + n : npages;
		if (end > npages)
			end = npages;
		while (i + n <= end) {
			size_t next;
			if (!run_free(i, n, &next)) {
				i = next;
				continue;
			}
			char *p = (char *)(arena + i * IG_PAGE_SIZE);
			for (size_t k = 0; k < n; k++) {
				if (bit(dirty, i + k))
					memset(p + k * IG_PAGE_SIZE, 0, IG_PAGE_SIZE);
				set_bit(used, i + k, true);
				set_bit(dirty, i + k, true);
			}
			nfree -= n;
			rover = i + n;
			return p;
		}
	}
	return NULL;
}

/* The arena's page indexes [first, end) of a range a caller passes; false
 * when it is not the arena's (then nothing is to be done). */
static bool arena_range(const void *p, size_t n, size_t *first, size_t *end)
{
	uintptr_t a = (uintptr_t)p;
	if (a < arena || a % IG_PAGE_SIZE)
		return false;
	*first = (a - arena) / IG_PAGE_SIZE;
	*end = *first + n < npages ? *first + n : npages;
	return true;
}

void ig_pages_free(void *p, size_t n)
{
	size_t i, end;
	if (!arena_range(p, n, &i, &end))
		return;
	for (; i < end; i++)
		if (bit(used, i)) {
			set_bit(used, i, false);
			nfree++;
		}
}

void ig_pages_zero(void *p, size_t n)
{
	size_t i, end;
	if (!arena_range(p, n, &i, &end))
		return;
	for (; i < end; i++)
		if (bit(used, i))
			memset((char *)(arena + i * IG_PAGE_SIZE), 0, IG_PAGE_SIZE);
}

size_t ig_pages_total(void)
{
	return npages;
}

size_t ig_pages_free_count(void)
{
	return nfree;
}
