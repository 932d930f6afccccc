/* The per-request arena and its growable buffer (kernel/runtime/arena.h). */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/ingot.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <stdlib.h>

static struct ig_pool blocks;

static void test_arena(void)
{
	ig_arena a;
	ig_arena_init(&a, &blocks, 100000);
	char *p = ig_arena_alloc(&a, 10);
	char *q = ig_arena_alloc(&a, 10);
	CHECK(p && q && q - p == 16 && ((uintptr_t)p & 7) == 0, "arena: 8-byte aligned bump allocation");
	void *big = ig_arena_alloc(&a, 50000);
	CHECK(big != NULL, "arena: allocations beyond a block get their own mapping");
	memset(big, 1, 50000);
	CHECK(ig_arena_alloc(&a, 60000) == NULL, "arena: the limit is enforced");
	ig_arena_reset(&a);
	ig_arena_init(&a, &blocks, 1 << 20);
	ig_wbuf w = { .arena = &a };
	for (int i = 0; i < 10000; i++)
		ig_wbuf_lit(&w, "0123456789");
	CHECK(!w.failed && w.len == 100000 && w.ptr[99999] == '9', "wbuf: grows beyond a block");
	ig_arena_reset(&a);
	ig_arena_init(&a, &blocks, 1000);
	ig_wbuf small = { .arena = &a };
	for (int i = 0; i < 200; i++)
		ig_wbuf_lit(&small, "0123456789");
	CHECK(small.failed, "wbuf: growth past the arena limit marks it failed");
	ig_arena_reset(&a);
	CHECK_INT(blocks.in_use, 0, "arena: reset gives every block back");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 4, 64);
	test_arena();
	return check_done();
}
