/* The guard page: the 2 MiB page around it becomes a table of 512 4 KiB
 * pages with the same attributes, the guard's entry not present. */
#include "mmu.h"

#include <stdint.h>

#define PTE_PRESENT 0x1ull
#define PTE_LARGE 0x80ull
#define PTE_ADDR 0x000ffffffffff000ull
#define PAGE_4K 4096u
#define PAGE_2M (2u << 20)

static uint64_t table[512] __attribute__((aligned(4096)));
static int split_done;

int ig_mmu_guard_page(void *page)
{
	if (split_done)
		return -1;
	uintptr_t a = (uintptr_t)page;
	uint64_t cr3;
	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(cr3 & PTE_ADDR);
	uint64_t *pdpt = (uint64_t *)(uintptr_t)(pml4[a >> 39 & 511] & PTE_ADDR);
	uint64_t *pd = (uint64_t *)(uintptr_t)(pdpt[a >> 30 & 511] & PTE_ADDR);
	uint64_t *pde = &pd[a >> 21 & 511];
	if (!(*pde & PTE_LARGE))
		return -1;
	uint64_t base = *pde & PTE_ADDR & ~(uint64_t)(PAGE_2M - 1), flags = *pde & 0xfffull & ~PTE_LARGE;
	for (unsigned i = 0; i < 512; i++)
		table[i] = (base + (uint64_t)i * PAGE_4K) | flags;
	table[(a - base) / PAGE_4K] &= ~PTE_PRESENT;
	*pde = (uint64_t)(uintptr_t)table | (flags & 0x1f); /* P, RW, US, PWT, PCD */
	__asm__ volatile("mov %0, %%cr3" : : "r"(cr3) : "memory");
	split_done = 1;
	return 0;
}
