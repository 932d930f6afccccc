/* The server's sequence, once the settings are parsed: choose the cores,
 * open their listeners (the first may pick the port), start their threads
 * (over lwIP, later: ig_server_start_cores), set up core 0 on the main
 * thread, say "listening", run until the drain is over, log the totals.
 * The loops share nothing but the read-only settings and TLS credentials. */
#include "kernel/process/exit_codes.h"
#include "kernel/process/notify.h"
#include "net/http/health.h"
#include "server.h"
#include "kernel/process/cores.h"
#include "ingot/log.h"
#include "kernel/runtime/log_ring.h"
#include "kernel/process/process.h"
#include "net/metrics/metrics.h"
#include "net/stack.h"
#include "net/tls/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct http_config ig_server_config;
struct ig_http_server ig_http_server;
void (*ig_http_stopped_hook)(void);

/* An explicit INGOT_THREADS, or a single CPU in the mask, needs no look at
 * the cgroup files, which costs about 100 us of a cold start. */
static int choose_threads(int *cpus, int *ncpus_out, int *quota_out)
{
	int ncpus = ig_affinity_cpus(cpus, IG_MAX_CORES);
	*ncpus_out = ncpus;
	*quota_out = -1; /* not read */
	if (ig_server_config.threads > 0)
		return (int)ig_server_config.threads;
	if (ncpus == 1)
		return 1;
	int quota = ig_cgroup_cpu_limit();
	*quota_out = quota;
	return quota > 0 && quota < ncpus ? quota : ncpus;
}

static int startup_error(const char *what)
{
	struct ig_logline l;
	fprintf(stderr, "ingot: %s\n", what);
	if (ig_log_begin(&l, IG_LOG_ERROR, "startup failed")) {
		ig_log_cstr(&l, "error", what);
		ig_log_end(&l);
	}
	return IG_EXIT_FAILURE;
}

/* Every core's listeners, before any thread starts; 0 or -1 with err. */
static int open_listeners(const struct ig_app *app, char *err, size_t errlen)
{
	struct http_config *cfg = &ig_server_config;
	int port = (int)cfg->port, tls_port = (int)cfg->tls_port;
	unsigned health_paths = ig_http_health_free_paths(app);
	for (int i = 0; i < ig_http_server.core_count; i++) {
		struct http_core *core = &ig_http_server.cores[i];
		core->index = (uint32_t)i;
		core->app = app; /* the listeners ask whether it needs peer addresses */
		if (ig_server_listen(core, &port, &tls_port, err, errlen) != 0)
			return -1;
		core->cfg = cfg;
		/* Here, before the threads: the scrape on core 0 reads every meter. */
		ig_http_meter_init(&core->meter, app->route_count);
		core->health_paths = health_paths;
	}
	cfg->port = port;
	cfg->tls_port = tls_port;
	if (ig_server_activation.active)
		ig_server_activation_release();
	return 0;
}

/* The other cores' threads (core 0 is the main thread), started once. */
static struct {
	pthread_t *threads;
	void **args;
	const int *cpus;
	int n, ncpus;
	bool started; /* or forgone: nothing more to start */
	bool running; /* their threads were made */
	struct ig_timer bound;
} others;

/* Over lwIP core 0 serves alone until the first bytes it delivers, or
 * this long after "listening". */
#define OTHER_CORES_BOUND_MS 50

static int start_threads(void)
{
	others.started = others.running = true;
	return others.n > 1 ? ig_threads_start(others.threads + 1, others.n - 1, others.cpus, others.ncpus, 1,
					      ig_server_core_main, others.args + 1)
			    : 0;
}

void ig_server_wake_core(struct http_core *core)
{
	if (atomic_load(&core->loop_ready))
		ig_loop_wake(&core->loop);
}

static void cancel_bound(void)
{
	struct ig_loop *loop = &ig_http_server.cores[0].loop;
	if (ig_timer_armed(&others.bound))
		ig_timer_cancel(&loop->timers, &others.bound);
}

void ig_server_forgo_cores(void)
{
	if (others.started)
		return;
	others.started = true;
	cancel_bound();
	atomic_fetch_add(&ig_http_server.cores_finished, others.n - 1);
}

void ig_server_start_cores(void)
{
	if (others.started)
		return;
	cancel_bound();
	if (start_threads() != 0) {
		/* After "listening": the process ends as a start that failed
		   before it would have, rather than serve on fewer cores than
		   it said. */
		startup_error("cannot start threads");
		exit(IG_EXIT_FAILURE);
	}
}

static void on_cores_bound(struct ig_timer *t)
{
	(void)t;
	ig_server_start_cores();
}

static void log_listening(const struct ig_app *app, int ncpus, int quota, long nofile, uint64_t t0_us)
{
	const struct http_config *cfg = &ig_server_config;
	struct ig_logline l;
	const char *refused = ig_server_tls_refused();
	if (refused && ig_log_begin(&l, IG_LOG_ERROR, "HTTPS off: TLS refused to start; plain HTTP serves")) {
		ig_log_cstr(&l, "reason", refused);
		ig_log_end(&l);
	}
	if (!ig_log_begin(&l, IG_LOG_INFO, "listening"))
		return;
	ig_log_cstr(&l, "addr", cfg->host);
	if (!cfg->tls_only)
		ig_log_int(&l, "port", cfg->port);
	if (ig_http_server.tls) {
		ig_log_int(&l, "tls_port", cfg->tls_port);
		ig_log_cstr(&l, "tls", ig_tls_backend_name());
	}
	ig_log_cstr(&l, "net", ig_net_stack->name);
	ig_log_int(&l, "threads", ig_http_server.core_count);
	ig_log_int(&l, "cpus", ncpus);
	ig_log_int(&l, "cgroup_cpu_limit", quota);
	ig_log_int(&l, "nofile", nofile);
	ig_log_int(&l, "max_conns", cfg->max_conns);
	ig_log_int(&l, "startup_us", (int64_t)(ig_monotonic_us() - t0_us));
	ig_log_cstr(&l, "service", app->name);
	ig_log_cstr(&l, "version", app->version);
	ig_log_int(&l, "pid", getpid());
	if (ig_server_activation.active)
		ig_log_cstr(&l, "sockets", "LISTEN_FDS");
	ig_log_end(&l);
}

/* Runs once per process: compiled for size (cold), like the settings. */
__attribute__((cold)) int ig_http_serve(const struct ig_app *app, uint64_t t0_us)
{
	ig_log_set_threshold((enum ig_log_level)ig_server_config.log_level);
	long nofile = ig_raise_nofile();
	static int cpus[IG_MAX_CORES];
	int ncpus, quota;
	int n = ig_http_server.core_count = choose_threads(cpus, &ncpus, &quota);
	ig_server_config.threads = n;
	ig_server_fit_conns(nofile, n);
	/* Before any thread starts, so that all inherit the blocked mask. */
	if ((ig_http_server.signal_fd = ig_signals_open()) < 0)
		return startup_error("cannot open a signalfd");

	/* One mapping instead of malloc, whose first use costs a few calls:
	   the cores, their threads, and the listeners side by side. */
	size_t head = ((size_t)n * (sizeof(struct http_core) + sizeof(pthread_t) + sizeof(void *)) + 63) & ~(size_t)63;
	size_t listeners_end = head + IG_SERVER_LISTENER_SLOTS(n) * ig_net_stack->listener_size;
	/* The cores' 5xx storm tables last: untouched until a 5xx. */
	size_t logs_at = (listeners_end + 63) & ~(size_t)63;
	size_t table_bytes = logs_at + (size_t)n * sizeof(struct http_error_log);
	char *table = mmap(NULL, table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED)
		return startup_error("out of memory");
	ig_http_server.cores = (struct http_core *)table;
	pthread_t *threads = (pthread_t *)(table + (size_t)n * sizeof(struct http_core));
	void **args = (void **)(threads + n);
	ig_http_server.listeners = table + head;
	struct http_error_log *error_logs = (struct http_error_log *)(table + logs_at);
	for (int i = 0; i < n; i++)
		ig_http_server.cores[i].error_log = &error_logs[i];
	ig_http_server.listener_size = ig_net_stack->listener_size;
	char err[256];
	/* Only under a supervisor's LISTEN_* does the activation code (kept
	   off the startup pages, net/cold.ld) run. */
	if ((getenv("LISTEN_FDS") || getenv("LISTEN_PID")) && ig_server_activation_take(err, sizeof err) != 0) {
		startup_error(err);
		return IG_EXIT_CONFIG; /* the supervisor gave what cannot be served */
	}
	if (ig_server_admin_open(err, sizeof err) != 0) {
		startup_error(err);
		return IG_EXIT_CONFIG; /* the admin port is another's, or HOST is no address */
	}
	if (open_listeners(app, err, sizeof err) != 0) {
		startup_error(err);
		return IG_EXIT_CONFIG; /* the port is another's, or HOST is no address */
	}
	ig_metrics_register(&ig_server_metrics_source);
	ig_notify_open(); /* systemd's NOTIFY_SOCKET: before the threads read it */
	for (int i = 0; i < n; i++)
		args[i] = &ig_http_server.cores[i];
	others.threads = threads;
	others.args = args;
	others.cpus = cpus;
	others.n = n;
	others.ncpus = ncpus;
	/* With TLS they start at once: a reload (SIGHUP) reaches the cores
	   set up by then, and a core started later would serve the old
	   certificate. */
	bool late = n > 1 && ig_net_stack->after_first_delivery && !ig_http_server.tls;
	if (!late && start_threads() != 0)
		return startup_error("cannot start threads");
	ig_pin_self(cpus[0]);
	struct http_core *core0 = &ig_http_server.cores[0];
	if (ig_server_core_setup(core0, err, sizeof err) != 0)
		return startup_error(err);
	/* Where the stack binds only on the loop (lwIP), the ports are known
	   from here. */
	if (core0->listener)
		ig_server_config.port = ig_net_stack->port(core0->listener);
	if (core0->tls_listener)
		ig_server_config.tls_port = ig_net_stack->port(core0->tls_listener);
	if (ig_server_watch_signals(core0) != 0)
		return startup_error("cannot watch the signalfd");
	if (ig_server_admin_start(core0, err, sizeof err) != 0)
		return startup_error(err);
	/* Every core's sockets listen since open_listeners (the kernel queues
	   what comes for a core whose loop is still starting), and core 0
	   serves from here: ready, without waiting for the other threads. */
	ig_http_health_set_listening();
	log_listening(app, ncpus, quota, nofile, t0_us);
	if (!others.started) {
		ig_net_stack->after_first_delivery(ig_server_start_cores);
		others.bound.fn = on_cores_bound;
		ig_timer_set(&core0->loop.timers, &others.bound, core0->loop.clock.now_ms + OTHER_CORES_BOUND_MS);
	}
	/* After "listening" (reading the cgroup costs about 100 us), and
	   before the rings: its line is written directly, so that a server
	   that logs nothing more starts no writer thread. */
	ig_server_memory_budget();
	/* From here no loop writes stdout itself: a reader that stops reading
	   must not stop the loops (nor the signalfd on this one). Over lwIP
	   (a TAP device, or the unikernel, whose serial console takes a line
	   at once and which has a CPU per loop and none for a writer) the
	   loops keep writing directly. */
	if (ig_net_stack->streams_are_fds)
		ig_log_ring_enable(cpus, ncpus);
	ig_notify_send("READY=1");

	ig_loop_run(&core0->loop);
	ig_server_stop_accepting(core0);
	/* What the drain answered must reach the peers: a stack in the
	   process cannot send after the exit. */
	ig_net_stack->finish(&core0->loop, 2000);
	for (int i = 1; i < n && others.running; i++)
		pthread_join(threads[i], NULL);
	/* Every loop has stopped: a storm's last counts are due now. */
	for (int i = 0; i < n; i++)
		ig_http_error_log_flush(&ig_http_server.cores[i]);
	if (ig_http_stopped_hook)
		ig_http_stopped_hook();
	uint64_t cut = ig_server_log_stopped();
	/* The "stopped" line is what supervisors and tests wait for; a reader
	   that does not read gets a bounded wait, not a stuck exit. */
	ig_log_ring_flush(2000);
	munmap(table, table_bytes);
	return cut ? IG_EXIT_CUT : IG_EXIT_OK;
}
