/* The memory budget's shared count (membudget.h). Relaxed atomics: the
 * count bounds memory, it orders nothing else. A core goes to the shared
 * count only when its credit runs out or grows past two chunks. */
#include "membudget.h"

#include <stdatomic.h>

/* In common storage, which the link places after every .bss section:
 * with the other start-time globals, whose last page has room, not on a
 * page of its own that the start would touch (idle RSS). */
__attribute__((common)) struct ig_membudget_state ig_membudget_state;
#define used (ig_membudget_state.used)
#define limit (ig_membudget_state.limit)
#define refusals (ig_membudget_state.refusals)
#define logged_at_ms (ig_membudget_state.logged_at_ms)
#define unlogged (ig_membudget_state.unlogged)

void ig_membudget_set_limit(uint64_t bytes)
{
	atomic_store_explicit(&limit, bytes, memory_order_relaxed);
}

uint64_t ig_membudget_limit(void)
{
	return atomic_load_explicit(&limit, memory_order_relaxed);
}

uint64_t ig_membudget_used(void)
{
	return atomic_load_explicit(&used, memory_order_relaxed);
}

/* Adds want to the shared count unless that passes the limit. */
static bool charge(uint64_t want)
{
	uint64_t lim = atomic_load_explicit(&limit, memory_order_relaxed);
	uint64_t before = atomic_fetch_add_explicit(&used, want, memory_order_relaxed);
	if (!lim || before + want <= lim)
		return true;
	atomic_fetch_sub_explicit(&used, want, memory_order_relaxed);
	return false;
}

bool ig_membudget_take(struct ig_mem_credit *c, size_t n)
{
	if (c->local >= n) {
		c->local -= n;
		return true;
	}
	size_t need = n - c->local;
	/* A chunk more when there is room for it, else just what is needed:
	   near the limit, the credit cached on other cores should not refuse
	   a request that fits. */
	size_t rounded = (need + IG_MEM_CREDIT_CHUNK - 1) / IG_MEM_CREDIT_CHUNK * IG_MEM_CREDIT_CHUNK;
	if (!charge(rounded)) {
		if (rounded == need || !charge(need))
			return false;
		rounded = need;
	}
	c->local = c->local + rounded - n;
	return true;
}

void ig_membudget_give(struct ig_mem_credit *c, size_t n)
{
	c->local += n;
	if (c->local > 2 * IG_MEM_CREDIT_CHUNK) {
		atomic_fetch_sub_explicit(&used, c->local - IG_MEM_CREDIT_CHUNK, memory_order_relaxed);
		c->local = IG_MEM_CREDIT_CHUNK;
	}
}

uint64_t ig_membudget_count_refusal(enum ig_mem_cause cause)
{
	return atomic_fetch_add_explicit(&refusals[cause], 1, memory_order_relaxed) + 1;
}

uint64_t ig_membudget_refusals(enum ig_mem_cause cause)
{
	return atomic_load_explicit(&refusals[cause], memory_order_relaxed);
}

bool ig_membudget_log_due(enum ig_mem_cause cause, uint64_t now_ms, uint64_t *suppressed)
{
	uint64_t last = atomic_load_explicit(&logged_at_ms[cause], memory_order_relaxed);
	if ((last && now_ms < last + 1000) ||
	    !atomic_compare_exchange_strong_explicit(&logged_at_ms[cause], &last, now_ms ? now_ms : 1,
						     memory_order_relaxed, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&unlogged[cause], 1, memory_order_relaxed);
		return false;
	}
	*suppressed = atomic_exchange_explicit(&unlogged[cause], 0, memory_order_relaxed);
	return true;
}
