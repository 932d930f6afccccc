/* Object pools (kernel/runtime/pool.h): LIFO reuse and the bound. */
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

static void test_pool(void)
{
	struct ig_pool p;
	ig_pool_init(&p, 24, 2, 3);
	void *a = ig_pool_take(&p), *b = ig_pool_take(&p), *c = ig_pool_take(&p);
	CHECK(a && b && c && ig_pool_take(&p) == NULL, "pool: take stops at the cap");
	ig_pool_give(&p, b);
	CHECK(ig_pool_take(&p) == b, "pool: the last object given is the next taken");
	/* A chunk's objects fill its pages: 2 of 144 bytes map a page, which
	   holds 28, carved one after the other before any second mapping. */
	struct ig_pool q;
	ig_pool_init(&q, 144, 2, 1000);
	char *first = ig_pool_take(&q), *last = first;
	for (int i = 1; i < 28; i++)
		last = ig_pool_take(&q);
	CHECK(q.total == 28 && last == first + 27 * 144, "pool: a chunk's objects fill its whole pages");
	ig_pool_init(&q, 144, 2, 5);
	for (int i = 0; i < 5; i++)
		ig_pool_take(&q);
	CHECK(q.total == 5 && ig_pool_take(&q) == NULL, "pool: filling the pages keeps to the cap");
}

int main(void)
{
	test_pool();
	return check_done();
}
