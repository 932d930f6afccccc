/* Threads, signals and the drain: cores 1..n-1 each run on a thread of
 * their own; core 0 runs on the main thread, reads SIGTERM/SIGINT from a
 * signalfd, asks every core to drain, forces them when the grace period
 * is over, and stops last, once the others have returned. */
#include "net/http/health.h"
#include "server.h"
#include "ingot/log.h"
#include "kernel/process/fatal.h"
#include "kernel/process/notify.h"
#include "kernel/process/process.h"

#include <signal.h>
#include <stdatomic.h>

void ig_server_on_drained(struct http_core *core)
{
	/* Core 0 stops last: it holds the grace timer and joins the others. */
	if (core->index != 0 || atomic_load(&ig_http_server.cores_finished) == ig_http_server.core_count - 1)
		core->loop.running = false;
}

void ig_server_on_core_wake(struct ig_loop *loop, void *arg)
{
	(void)loop;
	struct http_core *core = arg;
	if (atomic_load(&core->tls_reload_requested) && atomic_exchange(&core->tls_reload_requested, 0))
		ig_server_tls_adopt(core);
	if (atomic_load(&core->force_requested)) {
		ig_server_stop_accepting(core);
		ig_http_conn_force_close_all(core);
		return;
	}
	if (atomic_load(&core->drain_requested) && !core->draining) {
		/* The backlog first, while not draining: connections the kernel
		   completed before the signal are accepted (and served, then
		   closed), not refused and reset by ig_http_conn_take. */
		ig_server_stop_accepting(core);
		core->draining = true;
		ig_http_conn_drain(core);
	} else if (core->draining && core->count == 0) {
		ig_server_on_drained(core); /* another core finished */
	}
}

static void log_core_failure(const struct http_core *core, const char *why)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, "core setup failed")) {
		ig_log_int(&l, "core", core->index);
		ig_log_cstr(&l, "error", why);
		ig_log_end(&l);
	}
}

void *ig_server_core_main(void *arg)
{
	struct http_core *core = arg;
	char err[256];
	ig_fatal_thread_init();
	if (ig_server_core_setup(core, err, sizeof err) == 0) {
		/* A drain may have been asked before this loop ran. */
		ig_server_on_core_wake(&core->loop, core);
		if (!core->draining || core->count)
			ig_loop_run(&core->loop);
	} else {
		log_core_failure(core, err);
	}
	ig_server_stop_accepting(core);
	atomic_fetch_add(&ig_http_server.cores_finished, 1);
	ig_loop_wake(&ig_http_server.cores[0].loop);
	return NULL;
}

static void request_all(_Atomic int *(*flag)(struct http_core *))
{
	for (int i = 0; i < ig_http_server.core_count; i++) {
		atomic_store(flag(&ig_http_server.cores[i]), 1);
		ig_server_wake_core(&ig_http_server.cores[i]);
	}
}

static _Atomic int *drain_flag(struct http_core *c) { return &c->drain_requested; }
static _Atomic int *force_flag(struct http_core *c) { return &c->force_requested; }

static void on_grace_over(struct ig_timer *t)
{
	(void)t;
	ig_http_server.grace_over = true;
	request_all(force_flag);
}

/* The drain proper: the grace period counts from here, after the delay. */
static void start_drain(struct ig_timer *t)
{
	(void)t;
	struct ig_loop *loop = &ig_http_server.cores[0].loop;
	ig_http_server.grace_timer.fn = on_grace_over;
	ig_timer_set(&loop->timers, &ig_http_server.grace_timer, loop->clock.now_ms + (uint64_t)ig_server_config.grace_ms);
	request_all(drain_flag);
}

void (*ig_http_drain_hook)(void);

static void begin_stop(const char *why_key, const char *why, int64_t delay_ms)
{
	ig_http_server.stopping = true;
	ig_server_forgo_cores(); /* over lwIP, those still waiting to start */
	/* Not ready at once, so that load balancers take the instance out
	   while it still serves, through the delay (a pre-stop delay). */
	ig_http_health_set_draining();
	ig_notify_send("STOPPING=1");
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "draining")) {
		ig_log_cstr(&l, why_key, why);
		ig_log_int(&l, "drain_delay_ms", delay_ms);
		ig_log_int(&l, "grace_ms", ig_server_config.grace_ms); /* counted after the delay */
		ig_log_end(&l);
	}
	if (ig_http_drain_hook)
		ig_http_drain_hook();
}

static void on_signal(struct ig_io *io, uint32_t events)
{
	(void)io;
	(void)events;
	const char *name = NULL;
	int log_signal;
	bool reload;
	enum ig_signal_event ev = ig_signals_read(ig_http_server.signal_fd, &name, &log_signal, &reload);
	if (reload && !ig_http_server.stopping)
		ig_server_reload();
	if (log_signal == SIGUSR1)
		ig_server_log_level_set(IG_LOG_DEBUG, "SIGUSR1");
	else if (log_signal == SIGUSR2)
		ig_server_log_level_set(ig_server_config.log_level, "SIGUSR2");
	if (ev != IG_SIGNAL_STOP)
		return;
	struct ig_loop *loop = &ig_http_server.cores[0].loop;
	if (ig_http_server.stopping) {
		/* A second signal during the drain delay: drain now. */
		if (ig_timer_armed(&ig_http_server.delay_timer)) {
			ig_timer_cancel(&loop->timers, &ig_http_server.delay_timer);
			start_drain(NULL);
		}
		return;
	}
	int64_t delay_ms = ig_server_config.drain_delay_ms;
	begin_stop("signal", name, delay_ms);
	if (delay_ms == 0) {
		start_drain(NULL);
		return;
	}
	ig_http_server.delay_timer.fn = start_drain;
	ig_timer_set(&loop->timers, &ig_http_server.delay_timer, loop->clock.now_ms + (uint64_t)delay_ms);
}

bool ig_server_drain_now(const char *reason)
{
	if (ig_http_server.stopping)
		return false;
	/* No delay: it exists for a load balancer to take the instance out,
	   and an idle server has nothing to hand over. */
	begin_stop("reason", reason, 0);
	start_drain(NULL);
	return true;
}

int ig_server_watch_signals(struct http_core *core0)
{
	ig_http_server.signal_io.fn = on_signal;
	return ig_loop_add(&core0->loop, ig_http_server.signal_fd, EPOLLIN, &ig_http_server.signal_io);
}
