/* The per-request arena: bump allocation in blocks taken from the core's
 * block pool, released all at once when the request's response has been
 * written. Allocations larger than a block get their own mapping (a large
 * request body), still bounded by the arena's limit. */
#ifndef KERNEL_ARENA_H
#define KERNEL_ARENA_H

#include "ingot.h"
#include "pool.h"

struct arena_block;
struct arena_big;

struct ig_arena {
	struct ig_pool *blocks; /* the core's block pool (block = header + data) */
	struct arena_block *head;
	struct arena_big *bigs;
	char *cur, *end;
	char *last; /* start of the newest allocation, so wbuf can grow in place */
	size_t used, limit;
};

void ig_arena_init(ig_arena *a, struct ig_pool *blocks, size_t limit);
void ig_arena_reset(ig_arena *a); /* gives everything back */

/* Grows the newest allocation p (of old_size bytes) to new_size, in place
 * when it is the newest and fits, else by copying. NULL on failure. */
void *ig_arena_grow(ig_arena *a, void *p, size_t old_size, size_t new_size);

#endif
