/* Fixed-size object pools, one per core and never shared: take and give are
 * a pointer swap. Memory comes from mmap in chunks as the pool grows, so an
 * idle process touches none of it and no request ever calls malloc. */
#ifndef KERNEL_POOL_H
#define KERNEL_POOL_H

#include <stddef.h>

struct ig_pool {
	size_t obj_size;    /* rounded up to 16 */
	size_t chunk_objs;  /* objects per mmap'd chunk */
	size_t max_objs;    /* hard cap; take returns NULL beyond it */
	size_t total;       /* objects carved so far */
	size_t in_use;
	char *bump, *bump_end; /* uncarved rest of the newest chunk */
	void *free_list;
};

void ig_pool_init(struct ig_pool *p, size_t obj_size, size_t chunk_objs, size_t max_objs);
/* Gives the pool its first n objects' worth of memory at mem (16-byte
 * aligned), so the first requests need no system call. */
void ig_pool_seed(struct ig_pool *p, void *mem, size_t n);
void *ig_pool_take(struct ig_pool *p); /* NULL when exhausted */
void ig_pool_give(struct ig_pool *p, void *obj);

#endif
