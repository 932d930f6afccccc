/* Arena implementation. A block's first bytes link it to the previous
 * block; the rest is handed out 8-byte aligned. */
#include "arena.h"

#include <sys/mman.h>

struct arena_block {
	struct arena_block *next;
	char data[];
};

struct arena_big {
	struct arena_big *next;
	size_t map_size;
	char data[] __attribute__((aligned(16)));
};

IG_HOT void ig_arena_init(ig_arena *a, struct ig_pool *blocks, size_t limit)
{
	*a = (ig_arena){ .blocks = blocks, .limit = limit };
}

IG_HOT void ig_arena_reset(ig_arena *a)
{
	for (struct arena_block *b = a->head, *n; b; b = n) {
		n = b->next;
		ig_pool_give(a->blocks, b);
	}
	for (struct arena_big *g = a->bigs, *n; g; g = n) {
		n = g->next;
		munmap(g, g->map_size);
	}
	ig_arena_init(a, a->blocks, a->limit);
}

static size_t block_capacity(const ig_arena *a)
{
	return a->blocks->obj_size - sizeof(struct arena_block);
}

static void *alloc_big(ig_arena *a, size_t size)
{
	size_t map = (sizeof(struct arena_big) + size + 4095) & ~(size_t)4095;
	struct arena_big *g = mmap(NULL, map, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (g == MAP_FAILED)
		return NULL;
	g->map_size = map;
	g->next = a->bigs;
	a->bigs = g;
	return g->data;
}

IG_HOT void *ig_arena_alloc(ig_arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	if (ig_unlikely(a->used + size > a->limit || a->used + size < size))
		return NULL;
	if (ig_likely((size_t)(a->end - a->cur) >= size)) {
		a->last = a->cur;
		a->cur += size;
		a->used += size;
		return a->last;
	}
	if (size > block_capacity(a) / 2) {
		void *p = alloc_big(a, size);
		if (p)
			a->used += size;
		return p;
	}
	struct arena_block *b = ig_pool_take(a->blocks);
	if (!b)
		return NULL;
	b->next = a->head;
	a->head = b;
	a->cur = b->data;
	a->end = (char *)b + a->blocks->obj_size;
	return ig_arena_alloc(a, size);
}

IG_HOT void *ig_arena_grow(ig_arena *a, void *p, size_t old_size, size_t new_size)
{
	size_t old_r = (old_size + 7) & ~(size_t)7;
	size_t new_r = (new_size + 7) & ~(size_t)7;
	if (p && p == a->last && (char *)p + old_r == a->cur &&
	    (size_t)(a->end - (char *)p) >= new_r && a->used + (new_r - old_r) <= a->limit) {
		a->cur = (char *)p + new_r;
		a->used += new_r - old_r;
		return p;
	}
	void *n = ig_arena_alloc(a, new_size);
	if (n && p)
		memcpy(n, p, old_size);
	return n;
}

IG_HOT char *ig_wbuf_reserve(ig_wbuf *w, size_t n)
{
	if (w->cap - w->len >= n)
		return w->ptr + w->len;
	if (w->failed)
		return NULL;
	size_t want = w->cap ? w->cap * 2 : 256;
	while (want - w->len < n)
		want *= 2;
	char *p = ig_arena_grow(w->arena, w->ptr, w->len, want);
	if (!p) {
		w->failed = true;
		return NULL;
	}
	w->ptr = p;
	w->cap = want;
	return p + w->len;
}
