/* Coroutines: a function run on a small stack of its own, which can
 * suspend itself (ig_coro_yield) and be resumed later by whoever runs the
 * loop. One pool per core, never shared: stacks are mmap'd with a guard
 * page below, reused hot, trimmed when given back, and capped. No HTTP
 * here: net/api runs handlers on these; kernel/ knows nothing of them.
 *
 * A stack is one mapping (MAP_NORESERVE: a page is memory once touched),
 * its guard page the lowest; its struct ig_coro lives in its top bytes
 * (about 100 of the stack's size). The switch (inline, at the end)
 * switches the general registers and the stack, not MXCSR nor the x87
 * control word: nothing in the process changes them. A fault in a guard
 * page is a stack overflow (ig_coro_guard_hit; kernel/process/fatal.c logs it);
 * the build's -fstack-clash-protection makes a frame larger than a page
 * touch its pages in order, so that it cannot step over the guard. On
 * kernel/metal mapping is allocating: a stack is RAM from its start.
 *
 * The cap and vm.max_map_count (65,530 by default): on Linux 6.13 and
 * later the guard is MADV_GUARD_INSTALL, which needs no mapping of its
 * own, and the stacks, mapped next to each other, merge into few mappings
 * (40 stacks: 1). Earlier, the guard is mprotect PROT_NONE: two mappings a
 * stack (the guard, the stack; a guard between every two stacks keeps
 * them from merging). Leaving 1,530 for the rest of the process (its
 * segments, each thread's stack, guard and signal stack, the allocator's
 * mappings: tens), 64,000 / 2 = 32,000 stacks in all: a per-core cap of
 * 32,000 / cores (4,000 on 8 cores) keeps any kernel under the limit.
 * Memory is the other bound: a waiting stack keeps the pages it touched,
 * at least its top one. */
#ifndef KERNEL_CORO_H
#define KERNEL_CORO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ig_coro;
typedef void ig_coro_fn(void *arg);

/* The smallest stack a pool makes (ig_coro_pool_init rounds up to it). */
#define IG_CORO_STACK_MIN ((size_t)16 * 1024)
/* The top of a stack that stays resident when it is given back: what
 * every run touches (the struct ig_coro, then the first frames). The
 * pages below it are trimmed (madvise DONTNEED) when a run that waited
 * (yielded) had touched them: one mincore each such run, and the madvise
 * only then. A run that never yielded is not checked (a syscall on every
 * request): it ran on the free list's head and leaves it there, the next
 * one taken; the head is checked when another stack is given back above
 * it. So at most one idle stack a pool keeps deep pages. */
#define IG_CORO_HOT_BYTES ((size_t)8 * 1024)
/* Idle stacks kept for reuse: up to this many, or as many as are alive;
 * a stack given back beyond that is unmapped (the pool shrinks after a
 * burst). A paced pool (ig_coro_pool_pace) does both once a second. */
#define IG_CORO_IDLE_MIN 16u

/* A core's stacks. Fields are the pool's own; read them for metrics. */
struct ig_coro_pool {
	size_t stack_size;   /* usable bytes per stack, a multiple of the page */
	uint32_t cap;        /* most coroutines alive at once (running or suspended) */
	uint32_t live;       /* alive now */
	uint32_t idle;       /* stacks kept for reuse */
	uint64_t refused;    /* ig_coro_new calls refused at the cap */
	struct ig_coro *free_list;
	/* Paced (ig_coro_pool_pace): the clock, when the next review is due,
	   and the most alive since the last one. */
	const uint64_t *now_ms;
	uint64_t review_at;
	uint32_t peak;
};

/* Sets p up empty: no stack is mapped until the first ig_coro_new.
 * stack_size is rounded up to the page. On the core's thread. */
void ig_coro_pool_init(struct ig_coro_pool *p, size_t stack_size, uint32_t cap);

/* Paces p's upkeep by a clock in milliseconds (a loop's cached now_ms,
 * read at each give-back): instead of unmapping and trimming as stacks
 * come back (a system call for many requests under load, where the number
 * alive swings between batches), p reviews itself when a stack comes back
 * at least a second after the last review. It then keeps as many stacks
 * as were alive at once since then (at least IG_CORO_IDLE_MIN), unmaps the
 * rest, and trims the deep pages of those used in between. A pool left
 * idle after a burst keeps them until its next give-back. now_ms must
 * outlive p. On p's thread. */
void ig_coro_pool_pace(struct ig_coro_pool *p, const uint64_t *now_ms);

/* A coroutine that will run fn(arg) on a stack of p's, not started yet.
 * Returns: NULL at p's cap or when no stack can be mapped (nothing
 * changed); else the coroutine, p's until it finishes. On p's thread. */
struct ig_coro *ig_coro_new(struct ig_coro_pool *p, ig_coro_fn *fn, void *arg);

/* Switches to c (started or suspended) until it yields or fn returns.
 * Returns: true when fn returned: c's stack is back in its pool and c is
 * invalid. false when c yielded and waits for the next resume. Not from
 * inside c itself; nested coroutines (a coroutine resuming another) are
 * allowed. Inline (below). */
static inline bool ig_coro_resume(struct ig_coro *c);

/* From inside a coroutine: back to whoever resumed it; returns when it is
 * resumed again. Inline (below). */
static inline void ig_coro_yield(void);

/* The coroutine the calling thread runs now, or NULL on a thread's own
 * stack. */
static inline struct ig_coro *ig_coro_self(void);

/* Whether addr lies in the guard page of one of the calling thread's
 * coroutine stacks (a fault there is a stack overflow); async-signal-safe.
 * When it does and size is not NULL, *size is that stack's usable size. */
bool ig_coro_guard_hit(const void *addr, size_t *size);

/* Gives every idle stack back to the system (a drain, a test). On p's
 * thread. */
void ig_coro_pool_trim(struct ig_coro_pool *p);


/* ---- the switch, inline ----
 * A resume and its yield switch stacks in the caller's own code: no call
 * and no return crosses from one stack to the other. A switch made of a
 * call and a ret mispredicts every return it makes on the other stack
 * (the return predictor holds this stack's addresses), four a round trip:
 * a resume and its yield took 33 ns that way, 3.6 ns this way
 * (tools/bench/coro_switch, 2-core VM). Here each side jumps to where the
 * other left (an indirect jump, which the branch predictor learns: a
 * resume site usually lands at one yield site and back), and a handler
 * that never waits (net/http/wait.c's runner) makes a round trip with no
 * return mispredicted. What follows is coro.c's, in the header only to be
 * inlined: nothing else reads struct ig_coro's fields. */

#if defined(__SANITIZE_ADDRESS__)
#define IG_CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IG_CORO_ASAN 1
#endif
#endif
#ifdef IG_CORO_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#error "kernel/runtime/coro.h: the stack switch is written for x86_64 only; port ig_coro_switch first"
#endif

struct ig_coro {
	void *sp;               /* its stack pointer while switched out */
	void *caller_sp;        /* the resumer's, while it runs */
	struct ig_coro *caller; /* the coroutine that resumed it; NULL: a thread's stack */
	struct ig_coro_pool *pool;
	ig_coro_fn *fn;
	void *arg;
	struct ig_coro *next; /* in the pool's free list */
	char *base;           /* the mapping: the guard page, then the stack */
	bool done;
	bool waited;    /* yielded since it was taken: its deep pages are worth a look */
	bool unchecked; /* idle, its last run not trimmed: only the free list's head
			   (in a paced pool, any used since the last review) */
#ifdef IG_CORO_ASAN
	void *fake_stack;
	const void *caller_bottom;
	size_t caller_size;
#endif
};

/* The lowest byte of c's stack, above its guard page. */
static inline char *ig_coro_stack_low(const struct ig_coro *c)
{
	return c->base + 4096;
}

/* The calling thread's running coroutine (ig_coro_self). */
extern _Thread_local struct ig_coro *ig_coro_running;

/* coro.c: c's fn has returned; its stack goes back to its pool. */
void ig_coro_finished(struct ig_coro *c);

/* Saves where this side goes on (the label 1 below) and rbp on the
 * stack, the stack pointer in *save, then loads `to` and jumps to where
 * that side had saved itself (or, on a new stack, to coro.c's
 * ig_coro_start). The 128 bytes skipped first are the red zone, which a
 * function that calls nothing may use below its stack pointer. rdi and
 * rsi are its operands and every other general register (but rsp and
 * rbp), xmm0-15 and the x87 stack are declared clobbered: the compiler
 * keeps what it needs after the switch in the frame, and a function that
 * switches saves the callee-saved registers once, in its prologue, not at
 * each switch. With AVX-512 enabled (no build here does), xmm16-31 and
 * k0-7 would have to join the list. MXCSR and the x87 control word are
 * not switched (nothing in the process changes them). No endbr64 at the
 * jump's targets: the build enables no IBT nor shadow stack. */
__attribute__((always_inline)) static inline void ig_coro_switch(void **save, void *to)
{
	void *s = save, *t = to;
	__asm__ volatile("leaq -128(%%rsp), %%rsp\n\t"
			 "pushq %%rbp\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "movq %%rsp, (%0)\n\t"
			 "movq %1, %%rsp\n\t"
			 "popq %%rax\n\t"
			 "jmpq *%%rax\n"
			 "1:\tpopq %%rbp\n\t"
			 "leaq 128(%%rsp), %%rsp"
			 : "+D"(s), "+S"(t)
			 :
			 : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
			   "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)",
			   "st(3)", "st(4)", "st(5)", "st(6)", "st(7)", "memory", "cc");
}

static inline struct ig_coro *ig_coro_self(void)
{
	return ig_coro_running;
}

static inline bool ig_coro_resume(struct ig_coro *c)
{
	c->caller = ig_coro_running;
	ig_coro_running = c;
#ifdef IG_CORO_ASAN
	void *fake;
	__sanitizer_start_switch_fiber(&fake, ig_coro_stack_low(c), c->pool->stack_size);
#endif
	ig_coro_switch(&c->caller_sp, c->sp);
#ifdef IG_CORO_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	ig_coro_running = c->caller;
	if (__builtin_expect(!c->done, 1))
		return false;
	ig_coro_finished(c);
	return true;
}

static inline void ig_coro_yield(void)
{
	struct ig_coro *c = ig_coro_running;
	c->waited = true;
#ifdef IG_CORO_ASAN
	__sanitizer_start_switch_fiber(&c->fake_stack, c->caller_bottom, c->caller_size);
#endif
	ig_coro_switch(&c->sp, c->caller_sp);
#ifdef IG_CORO_ASAN
	/* The resumer may be another stack than the last one. */
	__sanitizer_finish_switch_fiber(c->fake_stack, &c->caller_bottom, &c->caller_size);
#endif
}

#endif
