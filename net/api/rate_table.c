/* The shared buckets and GCRA (rate_table.h). Every core reads and writes
 * the same table with atomics only: a claimed slot's key never changes
 * except by an eviction's CAS, and a bucket moves only by CAS. */
#include "rate_table.h"

#include <string.h>

struct slot {
	_Atomic uint64_t key; /* the hash; 0: free */
	_Atomic uint64_t tat; /* microseconds on the loops' monotonic clock */
};

static struct slot table[IG_RATE_SLOTS] __attribute__((aligned(64)));

/* The verdict for a request at now_us on a bucket whose tat is old;
 * returns the tat that admitting it leaves. */
static uint64_t judge(uint64_t old, uint64_t now_us, uint64_t interval_us, uint32_t burst, struct ig_gcra_verdict *v)
{
	uint64_t limit = interval_us * burst;
	uint64_t next = (old > now_us ? old : now_us) + interval_us;
	if (next - now_us > limit)
		*v = (struct ig_gcra_verdict){ .allowed = false, .wait_us = next - now_us - limit,
					       .reset_us = old > now_us ? old - now_us : 0 };
	else
		*v = (struct ig_gcra_verdict){ .allowed = true, .remaining = (uint32_t)((limit - (next - now_us)) / interval_us),
					       .reset_us = next - now_us };
	return next;
}

void ig_gcra_take(_Atomic uint64_t *tat, uint64_t now_us, uint64_t interval_us, uint32_t burst,
		  struct ig_gcra_verdict *v)
{
	uint64_t old = atomic_load_explicit(tat, memory_order_relaxed);
	for (;;) {
		uint64_t next = judge(old, now_us, interval_us, burst, v);
		if (!v->allowed ||
		    atomic_compare_exchange_weak_explicit(tat, &old, next, memory_order_relaxed, memory_order_relaxed))
			return;
	}
}

void ig_gcra_peek(_Atomic uint64_t *tat, uint64_t now_us, uint64_t interval_us, uint32_t burst,
		  struct ig_gcra_verdict *v)
{
	judge(atomic_load_explicit(tat, memory_order_relaxed), now_us, interval_us, burst, v);
}

uint64_t ig_rate_hash(uint32_t id, const void *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ id;
	const unsigned char *p = key;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h ? h : 1;
}

_Atomic uint64_t *ig_rate_bucket(uint64_t h)
{
	size_t at = (size_t)(h >> 20);
	struct slot *oldest = NULL;
	uint64_t oldest_tat = UINT64_MAX;
	for (unsigned k = 0; k < IG_RATE_PROBE; k++) {
		struct slot *s = &table[(at + k) % IG_RATE_SLOTS];
		uint64_t key = atomic_load_explicit(&s->key, memory_order_acquire);
		if (key == 0) {
			if (atomic_compare_exchange_strong_explicit(&s->key, &key, h, memory_order_acq_rel,
								    memory_order_acquire) ||
			    key == h)
				return &s->tat;
		}
		if (key == h)
			return &s->tat;
		uint64_t t = atomic_load_explicit(&s->tat, memory_order_relaxed);
		if (t < oldest_tat) {
			oldest_tat = t;
			oldest = s;
		}
	}
	uint64_t key = atomic_load_explicit(&oldest->key, memory_order_acquire);
	/* Lost to another eviction: this key shares that bucket for now. */
	atomic_compare_exchange_strong_explicit(&oldest->key, &key, h, memory_order_acq_rel, memory_order_acquire);
	return &oldest->tat;
}

_Atomic uint64_t *ig_rate_bucket_find(uint64_t h)
{
	size_t at = (size_t)(h >> 20);
	for (unsigned k = 0; k < IG_RATE_PROBE; k++) {
		struct slot *s = &table[(at + k) % IG_RATE_SLOTS];
		if (atomic_load_explicit(&s->key, memory_order_acquire) == h)
			return &s->tat;
	}
	return NULL;
}

void ig_rate_table_clear(void)
{
	memset(table, 0, sizeof table);
}
