/* Page by page presence in the identity map: a 2 MiB page to change is
 * split into a table of 512 4 KiB pages with the same attributes. Only
 * what hides a page splits; showing one in a 2 MiB page costs nothing. */
#include "mmu.h"
#include "pages.h"

#include <stdint.h>

#define PTE_PRESENT 0x1ull
#define PTE_LARGE 0x80ull
#define PTE_ADDR 0x000ffffffffff000ull
#define PAGE_4K 4096u
#define PAGE_2M (2u << 20)

static uint64_t *pd_entry(uintptr_t a)
{
	uint64_t cr3;
	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(cr3 & PTE_ADDR);
	uint64_t *pdpt = (uint64_t *)(uintptr_t)(pml4[a >> 39 & 511] & PTE_ADDR);
	uint64_t *pd = (uint64_t *)(uintptr_t)(pdpt[a >> 30 & 511] & PTE_ADDR);
	return &pd[a >> 21 & 511];
}

static int split(uint64_t *pde)
{
	uint64_t *table = ig_pages_alloc(1);
	if (!table)
		return -1;
	uint64_t base = *pde & PTE_ADDR & ~(uint64_t)(PAGE_2M - 1), flags = *pde & 0xfffull & ~PTE_LARGE;
	for (unsigned i = 0; i < 512; i++)
		table[i] = (base + (uint64_t)i * PAGE_4K) | flags;
	*pde = (uint64_t)(uintptr_t)table | (flags & 0x1f); /* P, RW, US, PWT, PCD */
	/* The large page's TLB entry goes with any address in it. */
	__asm__ volatile("invlpg (%0)" : : "r"(base) : "memory");
	return 0;
}

int ig_mmu_set_present(void *page, size_t n, bool present)
{
	for (uintptr_t a = (uintptr_t)page, end = a + n * PAGE_4K; a < end; a += PAGE_4K) {
		uint64_t *pde = pd_entry(a);
		if (*pde & PTE_LARGE) {
			if (present) { /* the rest of this 2 MiB page is present too */
				a = (a | (PAGE_2M - 1)) - (PAGE_4K - 1);
				continue;
			}
			if (split(pde) != 0)
				return -1;
		}
		uint64_t *pte = &((uint64_t *)(uintptr_t)(*pde & PTE_ADDR))[a >> 12 & 511];
		*pte = present ? *pte | PTE_PRESENT : *pte & ~PTE_PRESENT;
		__asm__ volatile("invlpg (%0)" : : "r"(a) : "memory");
	}
	return 0;
}

int ig_mmu_guard_page(void *page)
{
	return ig_mmu_set_present(page, 1, false);
}
