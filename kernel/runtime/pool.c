/* Object pools: a LIFO free list (so the most recently used, cache-warm
 * object is reused first) over chunks carved lazily from anonymous mmaps.
 * Chunks are never returned: a pool's size is its high-water mark. */
#include "pool.h"
#include "ingot/base.h"

#include <sys/mman.h>

void ig_pool_init(struct ig_pool *p, size_t obj_size, size_t chunk_objs, size_t max_objs)
{
	*p = (struct ig_pool){ 0 };
	p->obj_size = (obj_size + 15) & ~(size_t)15;
	p->chunk_objs = chunk_objs ? chunk_objs : 1;
	p->max_objs = max_objs;
}

void ig_pool_seed(struct ig_pool *p, void *mem, size_t n)
{
	if (p->total + n > p->max_objs)
		n = p->max_objs - p->total;
	p->bump = mem;
	p->bump_end = (char *)mem + n * p->obj_size;
	p->total += n;
}

#define POOL_PAGE 4096u

/* A chunk is whole pages, and objects fill them to the end: 64 objects of
 * 144 bytes would otherwise leave a third of their last page unused, a
 * third of a page per 64 connections. */
static int pool_grow(struct ig_pool *p)
{
	size_t n = p->chunk_objs;
	if (p->total + n > p->max_objs)
		n = p->max_objs - p->total;
	if (n == 0)
		return -1;
	size_t bytes = (n * p->obj_size + POOL_PAGE - 1) & ~(size_t)(POOL_PAGE - 1);
	n = bytes / p->obj_size;
	if (p->total + n > p->max_objs)
		n = p->max_objs - p->total;
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	p->bump = m;
	p->bump_end = (char *)m + n * p->obj_size;
	p->total += n;
	return 0;
}

IG_HOT void *ig_pool_take(struct ig_pool *p)
{
	void *o = p->free_list;
	if (o) {
		p->free_list = *(void **)o;
	} else {
		if (p->bump == p->bump_end && pool_grow(p) != 0)
			return NULL;
		o = p->bump;
		p->bump += p->obj_size;
	}
	p->in_use++;
	return o;
}

IG_HOT void ig_pool_give(struct ig_pool *p, void *obj)
{
	*(void **)obj = p->free_list;
	p->free_list = obj;
	p->in_use--;
}
