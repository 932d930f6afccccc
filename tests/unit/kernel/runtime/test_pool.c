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
}

int main(void)
{
	test_pool();
	return check_done();
}
