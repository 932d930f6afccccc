/* The process's memory budget for what clients make it buffer (request
 * bodies being received, responses waiting to be sent, TLS connections'
 * buffers): one atomic count of reserved bytes shared by every core,
 * charged in chunks through a per-core credit, so that a request touches
 * its own core's state only. Who derives the limit and what happens on a
 * refusal are the callers' (net/server, net/http, net/tls). */
#ifndef KERNEL_MEMBUDGET_H
#define KERNEL_MEMBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

/* One per core, never shared: bytes taken from the global count and not
 * yet handed to a buffer. */
struct ig_mem_credit {
	size_t local;
};

/* What found no room: each is counted and logged apart. */
enum ig_mem_cause {
	IG_MEM_BODY,   /* a request body: answered 503 after the wait (net/http) */
	IG_MEM_TLS,    /* a new TLS connection's buffers: its handshake refused (net/tls) */
	IG_MEM_OUTPUT, /* a response's unsent output: its connection paused, not refused (net/http) */
	IG_MEM_CAUSES
};

/* The shared state (membudget.c's): read and written only there. */
struct ig_membudget_state {
	_Atomic uint64_t used, limit;
	_Atomic uint64_t refusals[IG_MEM_CAUSES], logged_at_ms[IG_MEM_CAUSES], unlogged[IG_MEM_CAUSES];
	int64_t setting; /* INGOT_MEMORY_BUDGET: bytes; 0 = derive (net/server) */
};
extern struct ig_membudget_state ig_membudget_state;

/* The chunk a core takes from (and keeps of) the global count. */
#define IG_MEM_CREDIT_CHUNK ((size_t)256 << 10)

/* 0: no limit (before the limit is derived, after "listening"). */
void ig_membudget_set_limit(uint64_t bytes);
uint64_t ig_membudget_limit(void);
/* Reserved by the cores, their unused credit included: above the limit
 * only when the limit was set below what was taken already (a caller that
 * goes on without room, as net/http's output does, holds memory outside
 * the count). */
uint64_t ig_membudget_used(void);
/* Reserves n bytes; false when the budget has no room for them. */
bool ig_membudget_take(struct ig_mem_credit *c, size_t n);
/* Gives back n bytes taken with ig_membudget_take on the same core. */
void ig_membudget_give(struct ig_mem_credit *c, size_t n);
/* Something of cause found no room; returns the new total of that cause. */
uint64_t ig_membudget_count_refusal(enum ig_mem_cause cause);
uint64_t ig_membudget_refusals(enum ig_mem_cause cause);
/* Whether a refusal of cause at now_ms (a monotonic clock) may be logged:
 * at most once a second per cause for the process. When it may,
 * *suppressed is the count of that cause's not logged since its last line. */
bool ig_membudget_log_due(enum ig_mem_cause cause, uint64_t now_ms, uint64_t *suppressed);

#endif
