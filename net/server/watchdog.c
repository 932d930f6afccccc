/* systemd's watchdog (kernel/process/notify.h): WATCHDOG=1 at half of
 * WATCHDOG_USEC, sent only while every core's loop turns. Each core's tick,
 * at a quarter of the period, counts a turn of its own loop; core 0's tick,
 * every other time, looks at every core's count and pings only when all
 * moved since its last look. A core stuck in a handler, or in anything else
 * that keeps its loop from turning, so stops the pings, and systemd
 * restarts the service when the period passes. A withheld ping is logged
 * (a warning per look: the period is seconds) with the stuck core and the
 * pings sent so far. Runs only under systemd with WatchdogSec: without it
 * no tick is armed. */
#include "server.h"
#include "kernel/process/notify.h"
#include "ingot/log.h"

#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

static uint64_t tick_ms(void)
{
	uint64_t q = ig_notify_watchdog_usec() / 4000;
	return q < IG_TICK_MS ? IG_TICK_MS : q;
}

/* Core 0's look: the first core whose loop has not turned, or -1. */
static int stuck_core(void)
{
	int stuck = -1;
	for (int i = 0; i < ig_http_server.core_count; i++) {
		struct http_core *c = &ig_http_server.cores[i];
		uint64_t turns = atomic_load_explicit(&c->watchdog_turns, memory_order_relaxed);
		if (turns == c->watchdog_seen && stuck < 0)
			stuck = i;
		c->watchdog_seen = turns;
	}
	return stuck;
}

__attribute__((cold)) static void log_withheld(int core)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "watchdog ping withheld: a loop is not turning")) {
		ig_log_int(&l, "core", core);
		ig_log_int(&l, "pings", (int64_t)ig_http_server.watchdog_pings);
		ig_log_end(&l);
	}
}

static void on_watchdog_tick(struct ig_timer *t)
{
	struct http_core *core = (struct http_core *)((char *)t - offsetof(struct http_core, watchdog_tick));
	/* The test's stuck core: its loop stops here for good. */
	if ((int64_t)core->index == core->cfg->test_stall_core &&
	    atomic_load_explicit(&ig_http_server.watchdog_pinged_twice, memory_order_relaxed))
		for (;;)
			pause();
	uint64_t turns = atomic_load_explicit(&core->watchdog_turns, memory_order_relaxed) + 1;
	atomic_store_explicit(&core->watchdog_turns, turns, memory_order_relaxed);
	if (core->index == 0 && turns % 2 == 0) {
		int stuck = stuck_core();
		if (stuck < 0) {
			ig_notify_send("WATCHDOG=1");
			if (++ig_http_server.watchdog_pings == 2)
				atomic_store_explicit(&ig_http_server.watchdog_pinged_twice, true, memory_order_relaxed);
		} else {
			log_withheld(stuck);
		}
	}
	ig_timer_set(&core->loop.timers, &core->watchdog_tick, core->loop.clock.now_ms + tick_ms());
}

void ig_server_watchdog_core_start(struct http_core *core)
{
	core->watchdog_tick.fn = on_watchdog_tick;
	ig_timer_set(&core->loop.timers, &core->watchdog_tick, core->loop.clock.now_ms + tick_ms());
}
