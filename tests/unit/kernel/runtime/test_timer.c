/* The timer wheel (kernel/runtime/timer.h): timers fire once, at their
 * tick, in any rotation; a cancelled one never does. */
#include "kernel/runtime/timer.h"
#include "tests/unit/check.h"

static int fired[4];
static struct ig_timer timers[4];
static void on_fire_indexed(struct ig_timer *t) { fired[t - timers]++; }

static void test_timers(void)
{
	struct ig_timers w;
	ig_timers_init(&w, 1000);
	for (int i = 0; i < 4; i++)
		timers[i] = (struct ig_timer){ .fn = on_fire_indexed };
	ig_timer_set(&w, &timers[0], 1010);
	ig_timer_set(&w, &timers[1], 1100);
	ig_timer_set(&w, &timers[2], 1000 + 10000); /* beyond one rotation */
	ig_timer_set(&w, &timers[3], 1050);
	ig_timer_cancel(&w, &timers[3]);
	CHECK(ig_timers_wait_ms(&w, 1000) > 0 && ig_timers_wait_ms(&w, 1000) <= 12,
	      "timer wheel: wait time reaches the earliest timer");
	ig_timers_run(&w, 1009);
	CHECK_INT(fired[0], 0, "timer: not fired before its deadline");
	ig_timers_run(&w, 1012);
	CHECK_INT(fired[0], 1, "timer: fired once at its deadline");
	ig_timers_run(&w, 1060);
	CHECK_INT(fired[3], 0, "timer: a cancelled timer never fires");
	ig_timers_run(&w, 5000);
	CHECK_INT(fired[1], 1, "timer: fired after a long gap");
	CHECK_INT(fired[2], 0, "timer: a timer one rotation away waits its turn");
	ig_timers_run(&w, 11000);
	CHECK_INT(fired[2], 1, "timer: fires after more than one rotation");
	CHECK_INT(ig_timers_wait_ms(&w, 11000), -1, "timer wheel: no wait when empty");
}

int main(void)
{
	test_timers();
	return check_done();
}
