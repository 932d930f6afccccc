/* The loop's per-core slots (kernel/runtime/loop.h). */
#include "kernel/runtime/loop.h"
#include "tests/unit/check.h"

/* Each key has one index for every loop; each loop its own pointers. */
static void test_loop_slots(void)
{
	static struct ig_loop_slot a, b;
	struct ig_loop one, two;
	CHECK(ig_loop_init(&one, 0) == 0 && ig_loop_init(&two, 1) == 0, "two loops");
	void **a1 = ig_loop_slot(&one, &a), **b1 = ig_loop_slot(&one, &b);
	CHECK(a1 && b1 && a1 != b1 && !*a1 && !*b1, "two keys: two empty slots of a loop");
	int x, y;
	*a1 = &x;
	void **a2 = ig_loop_slot(&two, &a);
	CHECK(a2 && a2 != a1 && !*a2, "the same key in another loop: that loop's own slot, empty");
	*a2 = &y;
	CHECK(ig_loop_slot(&one, &a) == a1 && *ig_loop_slot(&one, &a) == &x && *ig_loop_slot(&two, &a) == &y,
	      "a key finds the pointer its loop stored");
	/* Keys past IG_LOOP_SLOTS (a build with too many parts) get none. */
	static struct ig_loop_slot more[IG_LOOP_SLOTS];
	int given = 0;
	for (int i = 0; i < IG_LOOP_SLOTS; i++)
		given += ig_loop_slot(&one, &more[i]) != NULL;
	CHECK_INT(given, IG_LOOP_SLOTS - 2, "keys past IG_LOOP_SLOTS get no slot");
	ig_loop_close(&one);
	ig_loop_close(&two);
}

int main(void)
{
	test_loop_slots();
	return check_done();
}
