/* Coroutines: a function run on a small stack of its own, which can
 * suspend itself (ig_coro_yield) and be resumed later by whoever runs the
 * loop. One pool per core, never shared: stacks are mmap'd with a guard
 * page below, reused hot, trimmed when given back, and capped. No HTTP
 * here: net/api runs handlers on these; kernel/ knows nothing of them.
 *
 * A stack is one mapping (MAP_NORESERVE: a page is memory once touched),
 * its guard page the lowest; its struct ig_coro lives in its top bytes
 * (about 100 of the stack's size). The switch saves what the ABI makes
 * the callee keep (rbx, rbp, r12-r15, rsp), not MXCSR nor the x87 control
 * word: nothing in the process changes them. A fault in a guard page is a
 * stack overflow (ig_coro_guard_hit; kernel/process/fatal.c logs it);
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
 * burst). */
#define IG_CORO_IDLE_MIN 16u

/* A core's stacks. Fields are the pool's own; read them for metrics. */
struct ig_coro_pool {
	size_t stack_size;   /* usable bytes per stack, a multiple of the page */
	uint32_t cap;        /* most coroutines alive at once (running or suspended) */
	uint32_t live;       /* alive now */
	uint32_t idle;       /* stacks kept for reuse */
	uint64_t refused;    /* ig_coro_new calls refused at the cap */
	struct ig_coro *free_list;
};

/* Sets p up empty: no stack is mapped until the first ig_coro_new.
 * stack_size is rounded up to the page. On the core's thread. */
void ig_coro_pool_init(struct ig_coro_pool *p, size_t stack_size, uint32_t cap);

/* A coroutine that will run fn(arg) on a stack of p's, not started yet.
 * Returns: NULL at p's cap or when no stack can be mapped (nothing
 * changed); else the coroutine, p's until it finishes. On p's thread. */
struct ig_coro *ig_coro_new(struct ig_coro_pool *p, ig_coro_fn *fn, void *arg);

/* Switches to c (started or suspended) until it yields or fn returns.
 * Returns: true when fn returned: c's stack is back in its pool and c is
 * invalid. false when c yielded and waits for the next resume. Not from
 * inside c itself; nested coroutines (a coroutine resuming another) are
 * allowed. */
bool ig_coro_resume(struct ig_coro *c);

/* From inside a coroutine: back to whoever resumed it; returns when it is
 * resumed again. */
void ig_coro_yield(void);

/* The coroutine the calling thread runs now, or NULL on a thread's own
 * stack. */
struct ig_coro *ig_coro_self(void);

/* Whether addr lies in the guard page of one of the calling thread's
 * coroutine stacks (a fault there is a stack overflow); async-signal-safe.
 * When it does and size is not NULL, *size is that stack's usable size. */
bool ig_coro_guard_hit(const void *addr, size_t *size);

/* Gives every idle stack back to the system (a drain, a test). On p's
 * thread. */
void ig_coro_pool_trim(struct ig_coro_pool *p);

#endif
