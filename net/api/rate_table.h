/* The shared state of the rate limits and of the door's failed attempts:
 * one fixed table of buckets for every core (lock-free: open addressing
 * over 64-bit key hashes, a CAS on each bucket's theoretical arrival time)
 * and GCRA, the step that admits or refuses one request against a bucket.
 * Knows nothing of requests. */
#ifndef NET_API_RATE_TABLE_H
#define NET_API_RATE_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 4096 buckets of 16 bytes (64 KiB of .bss, touched as keys arrive); a
 * key probes RATE_PROBE of them. */
#define IG_RATE_SLOTS 4096u
#define IG_RATE_PROBE 8u

struct ig_gcra_verdict {
	bool allowed;
	uint32_t remaining; /* allowed: requests the bucket still holds now */
	uint64_t wait_us;   /* refused: until a request would pass */
	uint64_t reset_us;  /* until the bucket is full again (burst requests) */
};

/* GCRA on one bucket: tat is its theoretical arrival time (0: never used);
 * a request at now_us passes when max(tat, now) + interval - now <= burst
 * * interval, and moves tat there by CAS (retried when another core moved
 * it first). So burst requests pass at once, then one per interval: a
 * token bucket without a separate token count or refill. */
void ig_gcra_take(_Atomic uint64_t *tat, uint64_t now_us, uint64_t interval_us, uint32_t burst,
		  struct ig_gcra_verdict *v);

/* The verdict ig_gcra_take would give now, with the bucket left as it
 * is: for a limit that counts only some requests (the door's failures),
 * which asks before and takes after. */
void ig_gcra_peek(_Atomic uint64_t *tat, uint64_t now_us, uint64_t interval_us, uint32_t burst,
		  struct ig_gcra_verdict *v);

/* A key's hash: the limit's id and the key's bytes (FNV-1a, then mixed);
 * never 0, which marks an empty slot. */
uint64_t ig_rate_hash(uint32_t id, const void *key, size_t len);

/* The bucket of hash h in the shared table: its slot, a free one (claimed
 * by CAS), or, when all RATE_PROBE slots of its window hold other keys,
 * the one whose tat is oldest, taken over with its tat kept: an eviction
 * never gives the newcomer more than a fresh key gets, and at most the
 * debt the evicted key still had (the limit can only get stricter). */
_Atomic uint64_t *ig_rate_bucket(uint64_t h);

/* The bucket of hash h if it holds one now, else NULL (a key never seen,
 * or evicted: a fresh key's allowance). Claims nothing. */
_Atomic uint64_t *ig_rate_bucket_find(uint64_t h);

/* Tests: empties the table. */
void ig_rate_table_clear(void);

#endif
