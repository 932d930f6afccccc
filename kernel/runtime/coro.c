/* Coroutines (coro.h): the pool's stacks, the switch between them, and the
 * trim of what a stack gave back. Each stack is one mapping: a guard page,
 * then the stack, its struct ig_coro in its top bytes (no allocation
 * besides the mapping). x86_64 only: the switch is assembly (inline, in
 * coro.h). Linux and kernel/metal alike: only mmap, madvise, mprotect,
 * mincore. */
#include "coro.h"
#include "ingot/base.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#ifdef IG_CORO_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define PAGE ((size_t)4096)
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

/* The struct's place in the stack's top bytes, a cache line of its own. */
#define HEAD ((sizeof(struct ig_coro) + 63) & ~(size_t)63)

_Thread_local struct ig_coro *ig_coro_running;
/* No mincore (kernel/metal, whose pages are RAM from the start): nothing
 * to trim. Any core may find it first: relaxed, one value for all. */
static atomic_bool no_trim;

/* Where a new stack's first switch jumps (ig_coro_new lays out what it
 * pops): the struct ig_coro into the first argument, no frame below
 * (rbp 0: a backtrace's end), and coro_main called with the stack 16-byte
 * aligned. */
void ig_coro_start(void);
__asm__(".section .text.hot.ig_coro_start,\"ax\",@progbits\n"
	".globl ig_coro_start\n"
	".hidden ig_coro_start\n"
	".type ig_coro_start,@function\n"
	"ig_coro_start:\n"
	"	popq %rdi\n"
	"	xorl %ebp, %ebp\n"
	"	call coro_main\n"
	"	ud2\n"
	".size ig_coro_start, .-ig_coro_start\n"
	".previous\n");

/* A coroutine's first and last moments: fn runs between them. */
IG_HOT __attribute__((used, noreturn)) static void coro_main(struct ig_coro *c)
{
#ifdef IG_CORO_ASAN
	__sanitizer_finish_switch_fiber(NULL, &c->caller_bottom, &c->caller_size);
#endif
	c->fn(c->arg);
	c->done = true;
#ifdef IG_CORO_ASAN
	/* NULL: this stack's fake frames are dropped, it is never back. */
	__sanitizer_start_switch_fiber(NULL, c->caller_bottom, c->caller_size);
#endif
	void *gone;
	ig_coro_switch(&gone, c->caller_sp);
	__builtin_unreachable();
}

/* Not hot: a core's setup may run it at the start (net/cold.ld leaves it in
 * .text). */
void ig_coro_pool_init(struct ig_coro_pool *p, size_t stack_size, uint32_t cap)
{
	if (stack_size < IG_CORO_STACK_MIN)
		stack_size = IG_CORO_STACK_MIN;
	*p = (struct ig_coro_pool){ .stack_size = (stack_size + PAGE - 1) & ~(PAGE - 1), .cap = cap };
}

/* A fresh stack: mapped, not touched but for its top page (the struct). */
__attribute__((cold, noinline)) static struct ig_coro *map_stack(struct ig_coro_pool *p)
{
	size_t len = PAGE + p->stack_size;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1,
		       0);
	if (m == MAP_FAILED)
		return NULL;
	/* A guard without a mapping of its own where the kernel has them
	   (Linux 6.13, kernel/metal); else PROT_NONE, a second mapping. */
	if (madvise(m, PAGE, MADV_GUARD_INSTALL) != 0 && mprotect(m, PAGE, PROT_NONE) != 0) {
		munmap(m, len);
		return NULL;
	}
	/* The struct and the first frames, what every run touches, start at
	   one of 32 cache lines below the top, picked by where the mapping
	   lies (successive stacks are 17 pages apart, and 17 is odd): at the
	   same offset in every page, the stacks' hot lines would all fall in
	   the same few sets of the L1 cache (8 lines a set), and 64 handlers
	   in flight would evict each other's there. */
	size_t color = (((uintptr_t)m / PAGE) % 32) * 64;
	struct ig_coro *c = (struct ig_coro *)(m + len - HEAD - color);
	*c = (struct ig_coro){ .pool = p, .base = m };
	return c;
}

__attribute__((cold, noinline)) static void unmap_stack(struct ig_coro *c)
{
#ifdef IG_CORO_ASAN
	/* The frames a run left poisoned (its last switch's) stay in ASan's
	   shadow after munmap: memory mapped there later (an arena's block)
	   would read as a stack's redzone. */
	__asan_unpoison_memory_region(ig_coro_stack_low(c), c->pool->stack_size);
#endif
	munmap(c->base, PAGE + c->pool->stack_size);
}

IG_HOT struct ig_coro *ig_coro_new(struct ig_coro_pool *p, ig_coro_fn *fn, void *arg)
{
	if (p->live >= p->cap) {
		p->refused++;
		return NULL;
	}
	struct ig_coro *c = p->free_list;
	if (c) {
		p->free_list = c->next;
		p->idle--;
	} else if (!(c = map_stack(p))) {
		return NULL;
	}
	if (++p->live > p->peak)
		p->peak = p->live;
	c->fn = fn;
	c->arg = arg;
	c->done = false;
	c->waited = false;
#ifdef IG_CORO_ASAN
	/* A past run's frames, left by its last switch, may still be poisoned. */
	__asan_unpoison_memory_region(ig_coro_stack_low(c), p->stack_size - HEAD);
#endif
	/* What the first switch pops: where it jumps (ig_coro_start), then
	   what ig_coro_start pops (c), which leaves the stack 16-byte aligned
	   for its call (c is 64-byte aligned); two words of zeros above, the
	   end of a backtrace. */
	void **sp = (void **)c;
	*--sp = NULL;
	*--sp = NULL;
	*--sp = c;
	*--sp = (void *)ig_coro_start;
	c->sp = sp;
	return c;
}

/* Gives back the pages that the run touched below the hot top ones. One
 * mincore, and madvise only when something there is resident: a handler
 * that stayed shallow costs no page-table change (and no TLB shootdown
 * across the process's cores). */
__attribute__((noinline)) static void trim_deep(struct ig_coro *c)
{
	if (atomic_load_explicit(&no_trim, memory_order_relaxed))
		return;
	size_t deep = c->pool->stack_size - IG_CORO_HOT_BYTES;
	char *low = ig_coro_stack_low(c);
	unsigned char vec[64];
	for (size_t off = 0; off < deep; off += sizeof vec * PAGE) {
		size_t len = deep - off < sizeof vec * PAGE ? deep - off : sizeof vec * PAGE;
		if (mincore(low + off, len, vec) != 0) {
			atomic_store_explicit(&no_trim, errno == ENOSYS, memory_order_relaxed);
			return;
		}
		for (size_t i = 0; i < len / PAGE; i++)
			if (vec[i] & 1) {
				madvise(low + off + i * PAGE, deep - off - i * PAGE, MADV_DONTNEED);
				return;
			}
	}
}

IG_HOT void ig_coro_pool_pace(struct ig_coro_pool *p, const uint64_t *now_ms)
{
	p->now_ms = now_ms;
	p->review_at = *now_ms + 1000;
	p->peak = p->live;
}

/* A paced pool's upkeep (ig_coro_pool_pace): keep what the last second
 * needed at once, hot ones first (the free list's head is the last given
 * back), trim those used since, unmap the rest. */
__attribute__((cold, noinline)) static void review(struct ig_coro_pool *p)
{
	uint32_t keep = p->peak > IG_CORO_IDLE_MIN ? p->peak : IG_CORO_IDLE_MIN;
	keep = keep > p->live ? keep - p->live : 0;
	struct ig_coro **link = &p->free_list;
	for (uint32_t kept = 0; *link && kept < keep; kept++) {
		struct ig_coro *c = *link;
		if (c->unchecked)
			trim_deep(c);
		c->unchecked = false;
		link = &c->next;
	}
	while (*link) {
		struct ig_coro *c = *link;
		*link = c->next;
		unmap_stack(c);
		p->idle--;
	}
	p->peak = p->live;
	p->review_at = *p->now_ms + 1000;
}

void ig_coro_finished(struct ig_coro *c)
{
	struct ig_coro_pool *p = c->pool;
	p->live--;
	if (p->now_ms) {
		c->unchecked = true;
		c->next = p->free_list;
		p->free_list = c;
		p->idle++;
		if (*p->now_ms >= p->review_at)
			review(p);
		return;
	}
	if (p->idle >= IG_CORO_IDLE_MIN && p->idle >= p->live) {
		unmap_stack(c);
		return;
	}
	/* The head stays the only idle stack not checked: it goes below. */
	struct ig_coro *head = p->free_list;
	if (head && head->unchecked) {
		trim_deep(head);
		head->unchecked = false;
	}
	if (c->waited)
		trim_deep(c);
	c->unchecked = !c->waited;
	c->next = p->free_list;
	p->free_list = c;
	p->idle++;
}

/* The running coroutine's stack is the one that grows; the chain also
 * holds those that resumed it (nested), checked as cheaply. */
__attribute__((cold)) bool ig_coro_guard_hit(const void *addr, size_t *size)
{
	const char *a = addr;
	for (const struct ig_coro *c = ig_coro_running; c; c = c->caller)
		if (a >= c->base && a < c->base + PAGE) {
			if (size)
				*size = c->pool->stack_size;
			return true;
		}
	return false;
}

__attribute__((cold)) void ig_coro_pool_trim(struct ig_coro_pool *p)
{
	while (p->free_list) {
		struct ig_coro *c = p->free_list;
		p->free_list = c->next;
		unmap_stack(c);
	}
	p->idle = 0;
}
