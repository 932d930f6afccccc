/* Exit when idle (INGOT_IDLE_EXIT_MS): each core's tick publishes when it
 * last saw the app's work (a connection open, an exchange in flight, a
 * request since its last tick; the admin listener's are not work, or a
 * scrape more often than the setting would keep us up forever); core 0's
 * tick starts the normal drain once every core's is older than the
 * setting, and the process exits 0. Only the ticks look, each at its own
 * core: the request path carries nothing of this but the admin listener's
 * share of the counts (core->admin).
 *
 * Losing no connection during the exit, with a supervisor that holds the
 * socket (socket activation) and starts us again when one is pending:
 * - The idle decision is a guess: core 1 may accept a connection just
 *   after its tick said idle. That costs nothing, because the exit is the
 *   drain, and the drain loses no accepted connection: it serves it.
 * - The drain (ig_server_on_core_wake) makes each core stop accepting before
 *   it sets `draining` (after which ig_http_conn_take refuses): it accepts
 *   what is in the backlog, while not draining, so that is served; then it
 *   takes the socket out of its epoll and closes its own descriptor of it.
 *   So no accept ever happens while draining: nothing is accepted and
 *   dropped.
 * - A connection the kernel completes after a core's last accept stays in
 *   the backlog: another core still watching accepts it (and serves it),
 *   or, once every core has closed its descriptor, it waits there for the
 *   next start. Our close does not reset it, since the socket is the
 *   supervisor's too (without a supervisor holding it, as with a socket of
 *   our own, the backlog is reset at exit, as a SIGTERM's drain does).
 * - EPOLLEXCLUSIVE wakes one core per arrival. A wakeup given to a core
 *   that then closes without accepting is not lost: that core's stop
 *   accepts the whole backlog first, and what comes after its last accept
 *   raises a new wakeup for a core still watching, or for the supervisor's
 *   poll once no core is. */
#include "server.h"
#include <stdatomic.h>
#include <stddef.h>

/* A quarter of the setting: the exit comes between 1 and 1.25 times it
 * after the last work (plus a tick), without a wakeup per millisecond. */
static uint64_t tick_ms(void)
{
	uint64_t q = (uint64_t)ig_server_config.idle_exit_ms / 4;
	return q < IG_TICK_MS ? IG_TICK_MS : q > 1000 ? 1000 : q;
}

static uint64_t app_requests(const struct http_core *core)
{
	return core->requests - core->admin.requests;
}

static bool all_idle_since(uint64_t now_ms, uint64_t idle_ms)
{
	for (int i = 0; i < ig_http_server.core_count; i++)
		if (now_ms < atomic_load_explicit(&ig_http_server.cores[i].idle_last_busy_ms, memory_order_relaxed) + idle_ms)
			return false;
	return true;
}

static void on_idle_tick(struct ig_timer *t)
{
	struct http_core *core = (struct http_core *)((char *)t - offsetof(struct http_core, idle_tick));
	if (core->draining)
		return; /* a drain is under way: its end is the exit */
	uint64_t now = core->loop.clock.now_ms;
	/* A request since the last tick counts even if its connection has
	   closed since: it was work, and the next may follow. */
	uint64_t requests = app_requests(core);
	if (core->count > core->admin.conns || core->ctxs.in_use > core->admin.ctxs ||
	    requests != core->idle_requests_seen)
		atomic_store_explicit(&core->idle_last_busy_ms, now, memory_order_relaxed);
	core->idle_requests_seen = requests;
	if (core->index == 0 && !ig_http_server.stopping &&
	    all_idle_since(now, (uint64_t)ig_server_config.idle_exit_ms) && ig_server_drain_now("idle"))
		return;
	ig_timer_set(&core->loop.timers, &core->idle_tick, now + tick_ms());
}

void ig_server_idle_core_start(struct http_core *core)
{
	uint64_t now = core->loop.clock.now_ms;
	/* The start is work: a supervisor starts us for a pending connection.
	   Core 0 starts the others' clocks too, in case its tick comes before
	   their threads have set up. */
	if (core->index == 0)
		for (int i = 0; i < ig_http_server.core_count; i++)
			atomic_store_explicit(&ig_http_server.cores[i].idle_last_busy_ms, now, memory_order_relaxed);
	atomic_store_explicit(&core->idle_last_busy_ms, now, memory_order_relaxed);
	core->idle_requests_seen = app_requests(core);
	core->idle_tick.fn = on_idle_tick;
	ig_timer_set(&core->loop.timers, &core->idle_tick, now + tick_ms());
}
