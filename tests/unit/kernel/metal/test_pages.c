/* Unit tests of kernel/metal/pages, the unikernel's page allocator, over a
 * fake PVH memory map whose RAM is an mmap'd region of this process (below
 * 4 GiB, as the identity map's RAM is): the
 * largest RAM range is chosen, pages come back zeroed even after being
 * written and freed, runs are contiguous and disjoint, exhaustion and
 * fragmentation fail cleanly, partial frees and foreign pointers behave,
 * the initrd module is a hole the arena keeps out of, and pages the
 * image's unpacker wrote are cleared before they are handed out. */
#define _DEFAULT_SOURCE
#include "kernel/metal/pages.h"
#include "tests/unit/check.h"

#include <stdlib.h>
#include <sys/mman.h>

#define RAM_PAGES 64

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int main(void)
{
	struct ig_pvh_start_info si = { .magic = IG_PVH_MAGIC, .version = 0 };
	CHECK_INT(ig_pages_init(&si, 0, 0), -1, "version 0 has no memory map: refused");

	unsigned char *small = mmap(NULL, 8 * IG_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	unsigned char *ram = mmap(NULL, RAM_PAGES * IG_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (small == MAP_FAILED || ram == MAP_FAILED)
		return 1;
	struct ig_pvh_memmap_entry map[] = {
		{ .addr = (uintptr_t)small, .size = 8 * IG_PAGE_SIZE, .type = IG_PVH_MEMMAP_RAM },
		{ .addr = (uintptr_t)ram - IG_PAGE_SIZE * 1000, .size = IG_PAGE_SIZE * 4000, .type = 2 }, /* reserved */
		{ .addr = (uintptr_t)ram, .size = RAM_PAGES * IG_PAGE_SIZE, .type = IG_PVH_MEMMAP_RAM },
	};
	si = (struct ig_pvh_start_info){ .magic = IG_PVH_MAGIC, .version = 1, .memmap_paddr = (uintptr_t)map,
					 .memmap_entries = 3 };
	CHECK_INT(ig_pages_init(&si, 0, 0), 0, "a memory map is taken");
	size_t total = ig_pages_total();
	CHECK(total > 0 && total < RAM_PAGES, "the largest RAM range, less its bitmap pages");
	CHECK_INT(ig_pages_free_count(), total, "all pages free at first");

	unsigned char *a = ig_pages_alloc(3), *b = ig_pages_alloc(2);
	CHECK(a && b, "two runs allocated");
	CHECK(a >= ram && b + 2 * IG_PAGE_SIZE <= ram + RAM_PAGES * IG_PAGE_SIZE, "inside the chosen range");
	CHECK(b >= a + 3 * IG_PAGE_SIZE || a >= b + 2 * IG_PAGE_SIZE, "runs do not overlap");
	CHECK(((uintptr_t)a % IG_PAGE_SIZE) == 0, "page aligned");
	CHECK(all_zero(a, 3 * IG_PAGE_SIZE), "fresh pages are zero");
	CHECK_INT(ig_pages_free_count(), total - 5, "the free count follows");

	memset(a, 0xab, 3 * IG_PAGE_SIZE);
	ig_pages_free(a, 3);
	CHECK_INT(ig_pages_free_count(), total - 2, "a free gives the pages back");
	CHECK(ig_pages_alloc(total - 2) == NULL, "the held run splits the free pages: no run of all of them");
	unsigned char *c = ig_pages_alloc(total - 5);
	CHECK(c == b + 2 * IG_PAGE_SIZE, "the run after the held one is found whole");
	if (c)
		ig_pages_free(c, total - 5);
	unsigned char *d = ig_pages_alloc(3);
	CHECK(d && all_zero(d, 3 * IG_PAGE_SIZE), "written pages come back zeroed");

	memset(d, 0xcd, 3 * IG_PAGE_SIZE);
	ig_pages_zero(d, 3);
	CHECK(all_zero(d, 3 * IG_PAGE_SIZE), "MADV_DONTNEED's zeroing");

	ig_pages_free(d + IG_PAGE_SIZE, 1);
	CHECK_INT(ig_pages_free_count(), total - 4, "a partial free returns one page");
	ig_pages_free(d + IG_PAGE_SIZE, 1);
	CHECK_INT(ig_pages_free_count(), total - 4, "freeing it twice changes nothing");
	ig_pages_free(small, 1);
	ig_pages_free(d + 1, 1);
	CHECK_INT(ig_pages_free_count(), total - 4, "foreign or unaligned pointers are ignored");

	CHECK(ig_pages_alloc(total) == NULL, "more than is free fails");
	CHECK(ig_pages_alloc(0) == NULL, "zero pages fail");
	size_t got = 0;
	while (ig_pages_alloc(1))
		got++;
	CHECK_INT(got, total - 4, "single pages fill every hole, the freed middle one too");
	CHECK_INT(ig_pages_free_count(), 0, "nothing left");
	ig_pages_free(b, 2);
	CHECK(ig_pages_alloc(3) == NULL, "fragmented: no run of three");
	CHECK(ig_pages_alloc(2) == b, "the freed run of two is found again");

	/* The initrd (the first module) is a hole: the arena is the larger
	   side of it, and its bytes are never the allocator's. */
	memset(ram, 0, RAM_PAGES * IG_PAGE_SIZE);
	struct ig_pvh_modlist_entry mod = { .paddr = (uintptr_t)ram + 40 * IG_PAGE_SIZE, .size = 4 * IG_PAGE_SIZE + 100 };
	memset(ram + 40 * IG_PAGE_SIZE, 0x5a, mod.size);
	si.nr_modules = 1;
	si.modlist_paddr = (uintptr_t)&mod;
	CHECK_INT(ig_pages_init(&si, 0, 0), 0, "a memory map with a module");
	size_t below = ig_pages_total(), n_below = 0;
	unsigned char *p, *highest = NULL;
	while ((p = ig_pages_alloc(1))) {
		n_below++;
		highest = p > highest ? p : highest;
		memset(p, 0xee, IG_PAGE_SIZE);
	}
	CHECK(below > 19 && below < 40, "the 40 pages below the module, not the 19 above it, less the bitmap");
	CHECK_INT(n_below, below, "every page handed out");
	CHECK(highest && highest + IG_PAGE_SIZE <= ram + 40 * IG_PAGE_SIZE, "all below the module");
	bool intact = true;
	for (size_t i = 0; i < mod.size; i++)
		intact = intact && ram[40 * IG_PAGE_SIZE + i] == 0x5a;
	CHECK(intact, "the module's bytes untouched");

	mod.paddr = (uintptr_t)ram + 10 * IG_PAGE_SIZE;
	CHECK_INT(ig_pages_init(&si, 0, 0), 0, "a module low in the range");
	unsigned char *first = ig_pages_alloc(1);
	CHECK(first && first >= ram + 15 * IG_PAGE_SIZE, "the arena starts past the module's last, partial page");

	/* What the image's unpacker wrote above the kernel (images/unpack.S)
	   is cleared when handed out; RAM above it is taken as it came up. */
	si.nr_modules = 0;
	memset(ram, 0x77, RAM_PAGES * IG_PAGE_SIZE);
	CHECK_INT(ig_pages_init(&si, 0, (uintptr_t)ram + 20 * IG_PAGE_SIZE), 0, "a memory map with written pages");
	size_t clean = 0, written = 0, counted = 0;
	while ((p = ig_pages_alloc(1))) {
		if (p < ram + 20 * IG_PAGE_SIZE)
			written += all_zero(p, IG_PAGE_SIZE);
		else
			clean += p[0] == 0x77; /* taken as it is: never cleared */
		counted += p < ram + 20 * IG_PAGE_SIZE;
	}
	CHECK(counted > 10 && written == counted, "every page below the unpacker's end comes back zeroed");
	CHECK_INT(clean, ig_pages_total() - counted, "pages above it are not cleared again");
	return check_done();
}
