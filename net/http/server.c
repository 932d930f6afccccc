/* The server's entry: configuration, one loop per core with its own
 * SO_REUSEPORT listeners (plain HTTP and, when a certificate is given,
 * HTTPS) and pools, and the drain on SIGTERM/SIGINT. The main thread only
 * supervises; the loops never share anything but the read-only
 * configuration and TLS credentials. Without a certificate nothing of TLS
 * runs. */
#include "internal.h"
#include "kernel/config.h"
#include "kernel/cores.h"
#include "kernel/log.h"
#include "kernel/process.h"
#include "kernel/vm.h"
#include "net/tls/tls.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* Starts as http_config_defaults (net/http/core.c); the options below
 * write into it. */
static struct http_config config;

static const struct ig_option options[] = {
	{ "port", "PORT", IG_OPT_INT, &config.port, 0, 65535, "TCP port; 0 picks a free one" },
	{ "host", "HOST", IG_OPT_STR, &config.host, 0, 0, "numeric address to listen on" },
	{ "threads", "INGOT_THREADS", IG_OPT_INT, &config.threads, 0, IG_MAX_CORES,
	  "event loops; 0 = usable CPUs (affinity, cgroup quota)" },
	{ "max-conns", "INGOT_MAX_CONNS", IG_OPT_INT, &config.max_conns, 1, 1000000,
	  "open connections per core; more are accepted and closed" },
	{ "max-request-line", "INGOT_MAX_REQUEST_LINE", IG_OPT_INT, &config.max_request_line, 64, 1 << 20,
	  "request line bytes (414 beyond)" },
	{ "max-header-bytes", "INGOT_MAX_HEADER_BYTES", IG_OPT_INT, &config.max_header_bytes, 256, 1 << 20,
	  "request head bytes (431 beyond)" },
	{ "max-headers", "INGOT_MAX_HEADERS", IG_OPT_INT, &config.max_headers, 1, 10000,
	  "header fields per request (431 beyond)" },
	{ "max-body", "INGOT_MAX_BODY", IG_OPT_INT, &config.max_body, 0, 1 << 30,
	  "request body bytes (413 beyond)" },
	{ "header-timeout-ms", "INGOT_HEADER_TIMEOUT_MS", IG_OPT_INT, &config.header_timeout_ms, 1, 3600000,
	  "time to receive a request head (408 beyond)" },
	{ "body-timeout-ms", "INGOT_BODY_TIMEOUT_MS", IG_OPT_INT, &config.body_timeout_ms, 1, 3600000,
	  "time to receive a request body (408 beyond)" },
	{ "idle-timeout-ms", "INGOT_IDLE_TIMEOUT_MS", IG_OPT_INT, &config.idle_timeout_ms, 1, 86400000,
	  "keep-alive connection idle time" },
	{ "write-timeout-ms", "INGOT_WRITE_TIMEOUT_MS", IG_OPT_INT, &config.write_timeout_ms, 1, 3600000,
	  "time a client may leave responses unread" },
	{ "max-output", "INGOT_MAX_OUTPUT", IG_OPT_INT, &config.max_output, 1024, 1 << 30,
	  "unsent response bytes per connection before reading pauses" },
	{ "grace-ms", "INGOT_GRACE_MS", IG_OPT_INT, &config.grace_ms, 0, 3600000,
	  "drain time after SIGTERM/SIGINT" },
	{ "log-level", "INGOT_LOG_LEVEL", IG_OPT_LEVEL, &config.log_level, 0, 0, "error, warn, info or debug" },
	{ "access-log", "INGOT_ACCESS_LOG", IG_OPT_BOOL, &config.access_log, 0, 0, "log every request" },
	{ "tls-cert", "INGOT_TLS_CERT", IG_OPT_STR, &config.tls_cert, 0, 0,
	  "PEM file: certificate chain, leaf first; turns HTTPS on" },
	{ "tls-key", "INGOT_TLS_KEY", IG_OPT_STR, &config.tls_key, 0, 0, "PEM file: its private key (RSA or EC)" },
	{ "tls-cert-pem", "INGOT_TLS_CERT_PEM", IG_OPT_STR, &config.tls_cert_pem, 0, 0,
	  "the certificate chain as PEM text, instead of a file" },
	{ "tls-key-pem", "INGOT_TLS_KEY_PEM", IG_OPT_STR, &config.tls_key_pem, 0, 0,
	  "the private key as PEM text, instead of a file" },
	{ "tls-port", "INGOT_TLS_PORT", IG_OPT_INT, &config.tls_port, 0, 65535, "HTTPS port; 0 picks a free one" },
	{ "tls-only", "INGOT_TLS_ONLY", IG_OPT_BOOL, &config.tls_only, 0, 0,
	  "serve HTTPS only: no plain HTTP listener" },
	{ "tls-handshake-timeout-ms", "INGOT_TLS_HANDSHAKE_TIMEOUT_MS", IG_OPT_INT, &config.tls_handshake_timeout_ms,
	  1, 3600000, "a TLS handshake not done by then is cut" },
	{ "tls-max-handshakes", "INGOT_TLS_MAX_HANDSHAKES", IG_OPT_INT, &config.tls_max_handshakes, 1, 1000000,
	  "concurrent TLS handshakes per core; beyond, the oldest that sent nothing yet is "
	  "closed to make room, or else the newcomer" },
	{ "tls-idle-timeout-ms", "INGOT_TLS_IDLE_TIMEOUT_MS", IG_OPT_INT, &config.tls_idle_timeout_ms, 1, 86400000,
	  "idle keep-alive HTTPS connection (it holds a 16 KiB TLS buffer)" },
	{ "tls-session-cache", "INGOT_TLS_SESSION_CACHE", IG_OPT_INT, &config.tls_session_cache, 0, 1 << 30,
	  "bytes per core for resumable TLS sessions (about 100 each; BearSSL's shared cache: "
	  "2 GiB in all at most); 0: none" },
};

static bool tls_on(void)
{
	return config.tls_cert[0] || config.tls_cert_pem[0];
}

/* Seeds for the pools: enough for the first connections, carved from one
 * mapping per core so the first request makes no allocation call. */
#define SEED_CONNS 16
#define SEED_CTXS 32
#define SEED_RBUFS 2
#define SEED_BLOCKS 8

static struct http_core *cores;
static int core_count;
static const struct tls_credentials *tls_credentials; /* read-only, all cores */
static _Atomic int cores_finished; /* loops other than core 0 that returned */

/* Core 0 runs on the main thread and also owns the process's duties: the
 * signalfd and the grace timer. */
static int signal_fd = -1;
static struct ig_io signal_io;
static struct ig_timer grace_timer;
static bool stopping, grace_over;

void http_core_drained(struct http_core *core)
{
	/* Core 0 stops last: it holds the grace timer and joins the others. */
	if (core->index != 0 || atomic_load(&cores_finished) == core_count - 1)
		core->loop.running = false;
}

static void stop_accepting(struct http_core *core)
{
	sock_core_stop_accepting(&core->sock);
	if (core->tls)
		sock_core_stop_accepting(&core->tls_sock);
}

/* The HTTPS listener's accept: a connection slot first, so that a TLS
 * state is never made for a connection that cannot be served. */
static void *tls_accept(void *arg, struct ig_transport *lower)
{
	struct http_core *core = arg;
	struct http_conn *c = http_conn_take(core);
	if (!c)
		return NULL;
	struct ig_transport *t = ig_tls_server(core->tls, lower);
	if (!t) {
		ig_pool_give(&core->conns, c);
		return NULL;
	}
	return http_conn_begin(core, c, t, (uint32_t)core->cfg->tls_idle_timeout_ms);
}

static int tls_core_setup(struct http_core *core)
{
	const struct http_config *cfg = core->cfg;
	struct ig_tls_limits limits = {
		.handshake_timeout_ms = (uint32_t)cfg->tls_handshake_timeout_ms,
		.max_handshakes = (uint32_t)cfg->tls_max_handshakes,
		/* Per core, pooled by a backend that shares one cache. */
		.session_cache_bytes = (size_t)cfg->tls_session_cache *
				       (tls_backend_shares_session_cache() ? (size_t)cfg->threads : 1),
		.close_timeout_ms = (uint32_t)cfg->write_timeout_ms,
	};
	core->tls = ig_tls_core_new(&core->loop, tls_credentials, &limits);
	if (!core->tls)
		return -1;
	sock_core_init(&core->tls_sock, &core->loop, core->tls_listen_fd, (uint32_t)cfg->max_conns, tls_accept, core);
	return sock_core_start(&core->tls_sock);
}

static void on_core_wake(struct ig_loop *loop, void *arg)
{
	(void)loop;
	struct http_core *core = arg;
	if (atomic_load(&core->force_requested)) {
		stop_accepting(core);
		http_conn_force_close_all(core);
		return;
	}
	if (atomic_load(&core->drain_requested) && !core->draining) {
		core->draining = true;
		stop_accepting(core);
		http_conn_drain(core);
	} else if (core->draining && core->count == 0) {
		http_core_drained(core); /* another core finished */
	}
}

static int core_setup(struct http_core *core)
{
	const struct http_config *cfg = core->cfg;
	if (ig_loop_init(&core->loop, (int)core->index) != 0)
		return -1;
	http_core_init_pools(core);
	core->loop.on_wake = on_core_wake;
	core->loop.arg = core;
	sock_core_init(&core->sock, &core->loop, core->listen_fd, (uint32_t)cfg->max_conns,
		       http_conn_accept, core);

	/* One mapping, touched only as used: the seeds and the header scratch. */
	struct ig_pool *pools[] = { &core->sock.streams, &core->conns, &core->ctxs, &core->rbufs, &core->blocks };
	size_t seeds[] = { SEED_CONNS, SEED_CONNS, SEED_CTXS, SEED_RBUFS, SEED_BLOCKS };
	size_t bytes = (size_t)cfg->max_headers * sizeof(struct http_header);
	bytes = (bytes + 15) & ~(size_t)15;
	for (size_t i = 0; i < IG_COUNTOF(pools); i++)
		bytes += seeds[i] * pools[i]->obj_size;
	char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	core->scratch_headers = (struct http_header *)m;
	m += ((size_t)cfg->max_headers * sizeof(struct http_header) + 15) & ~(size_t)15;
	for (size_t i = 0; i < IG_COUNTOF(pools); i++) {
		ig_pool_seed(pools[i], m, seeds[i]);
		m += seeds[i] * pools[i]->obj_size;
	}
	if (tls_credentials && tls_core_setup(core) != 0)
		return -1;
	return core->listen_fd >= 0 ? sock_core_start(&core->sock) : 0;
}

static void log_core_failure(const struct http_core *core)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, "core setup failed")) {
		ig_log_int(&l, "core", core->index);
		ig_log_end(&l);
	}
}

/* Cores 1..n-1, each on its own thread. */
static void *core_main(void *arg)
{
	struct http_core *core = arg;
	if (core_setup(core) == 0) {
		/* A drain may have been asked before this loop ran. */
		on_core_wake(&core->loop, core);
		if (!core->draining || core->count)
			ig_loop_run(&core->loop);
	} else {
		log_core_failure(core);
	}
	stop_accepting(core);
	atomic_fetch_add(&cores_finished, 1);
	ig_loop_wake(&cores[0].loop);
	return NULL;
}

static void request_all(_Atomic int *(*flag)(struct http_core *))
{
	for (int i = 0; i < core_count; i++) {
		atomic_store(flag(&cores[i]), 1);
		ig_loop_wake(&cores[i].loop);
	}
}

static _Atomic int *drain_flag(struct http_core *c) { return &c->drain_requested; }
static _Atomic int *force_flag(struct http_core *c) { return &c->force_requested; }

static void on_grace_over(struct ig_timer *t)
{
	(void)t;
	grace_over = true;
	request_all(force_flag);
}

static void on_signal(struct ig_io *io, uint32_t events)
{
	(void)io;
	(void)events;
	const char *name = NULL;
	if (ig_signals_read(signal_fd, &name) != IG_SIGNAL_STOP || stopping)
		return;
	stopping = true;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "draining")) {
		ig_log_cstr(&l, "signal", name);
		ig_log_int(&l, "grace_ms", config.grace_ms);
		ig_log_end(&l);
	}
	struct ig_loop *loop = &cores[0].loop;
	grace_timer.fn = on_grace_over;
	ig_timer_set(&loop->timers, &grace_timer, loop->clock.now_ms + (uint64_t)config.grace_ms);
	request_all(drain_flag);
}

/* An explicit INGOT_THREADS, or a single CPU in the mask, needs no look at
 * the cgroup files, which costs about 100 us of a cold start. */
static int choose_threads(int *cpus, int *ncpus_out, int *quota_out)
{
	int ncpus = ig_affinity_cpus(cpus, IG_MAX_CORES);
	*ncpus_out = ncpus;
	*quota_out = -1; /* not read */
	if (config.threads > 0)
		return (int)config.threads;
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
	return 1;
}

/* Checks the TLS options and loads the credentials (only when TLS is on:
 * otherwise nothing of TLS runs). NULL, or the error to report. */
static const char *tls_startup(char *err, size_t errlen)
{
	if (!tls_on()) {
		if (config.tls_only)
			return "INGOT_TLS_ONLY needs a certificate (INGOT_TLS_CERT or INGOT_TLS_CERT_PEM)";
		if (config.tls_key[0] || config.tls_key_pem[0])
			return "a TLS private key was given without a certificate (INGOT_TLS_CERT or INGOT_TLS_CERT_PEM)";
		return NULL;
	}
	if (config.tls_cert[0] && config.tls_cert_pem[0])
		return "give the TLS certificate once: INGOT_TLS_CERT or INGOT_TLS_CERT_PEM, not both";
	if (config.tls_key[0] && config.tls_key_pem[0])
		return "give the TLS private key once: INGOT_TLS_KEY or INGOT_TLS_KEY_PEM, not both";
	if (!config.tls_key[0] && !config.tls_key_pem[0])
		return "a TLS certificate was given without its private key (INGOT_TLS_KEY or INGOT_TLS_KEY_PEM)";
	if (!config.tls_only && config.tls_port == config.port && config.port != 0)
		return "INGOT_TLS_PORT must differ from PORT";
	tls_credentials = ig_tls_server_credentials(config.tls_cert, config.tls_cert_pem[0] ? config.tls_cert_pem : NULL,
						    config.tls_key, config.tls_key_pem[0] ? config.tls_key_pem : NULL,
						    err, errlen);
	return tls_credentials ? NULL : err;
}

static int serve(int argc, char **argv, const struct ig_app *app)
{
	uint64_t t0 = ig_monotonic_us();
	config = http_config_defaults;
	switch (ig_config_parse(options, IG_COUNTOF(options), argc, argv, app->name, app->version)) {
	case IG_CONFIG_OK: break;
	case IG_CONFIG_EXIT: return 0;
	case IG_CONFIG_ERROR: return 2;
	}
	ig_log_threshold = config.log_level;
	char err[256];
	const char *tls_error = tls_startup(err, sizeof err);
	if (tls_error)
		return startup_error(tls_error);
	long nofile = ig_raise_nofile();

	static int cpus[IG_MAX_CORES];
	int ncpus, quota;
	core_count = choose_threads(cpus, &ncpus, &quota);
	config.threads = core_count;
	/* Before any thread starts, so that all inherit the blocked mask. */
	signal_fd = ig_signals_open();
	if (signal_fd < 0)
		return startup_error("cannot open a signalfd");

	/* One mapping instead of malloc, whose first use costs a few calls. */
	size_t per_core = sizeof *cores + sizeof(pthread_t) + sizeof(void *);
	size_t table_bytes = (size_t)core_count * per_core;
	char *table = mmap(NULL, table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED)
		return startup_error("out of memory");
	cores = (struct http_core *)table;
	pthread_t *threads = (pthread_t *)(table + (size_t)core_count * sizeof *cores);
	void **args = (void **)(threads + core_count);
	int port = (int)config.port, tls_port = (int)config.tls_port;
	for (int i = 0; i < core_count; i++) {
		/* The first listener may pick the port; the others join it. */
		cores[i].listen_fd = -1;
		cores[i].tls_listen_fd = -1;
		if (!config.tls_only && (cores[i].listen_fd = sock_listen(config.host, &port, 4096, err, sizeof err)) < 0)
			return startup_error(err);
		if (tls_credentials &&
		    (cores[i].tls_listen_fd = sock_listen(config.host, &tls_port, 4096, err, sizeof err)) < 0)
			return startup_error(err);
		cores[i].index = (uint32_t)i;
		cores[i].cfg = &config;
		cores[i].app = app;
		args[i] = &cores[i];
	}
	config.port = port;
	config.tls_port = tls_port;
	if (core_count > 1 &&
	    ig_threads_start(threads + 1, core_count - 1, cpus, ncpus, 1, core_main, args + 1) != 0)
		return startup_error("cannot start threads");
	ig_pin_self(cpus[0]);
	struct http_core *core0 = &cores[0];
	if (core_setup(core0) != 0)
		return startup_error("cannot set up the first core");
	signal_io.fn = on_signal;
	if (ig_loop_add(&core0->loop, signal_fd, EPOLLIN, &signal_io) != 0)
		return startup_error("cannot watch the signalfd");

	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "listening")) {
		ig_log_cstr(&l, "addr", config.host);
		if (!config.tls_only)
			ig_log_int(&l, "port", port);
		if (tls_credentials) {
			ig_log_int(&l, "tls_port", tls_port);
			ig_log_cstr(&l, "tls", tls_backend_name());
		}
		ig_log_int(&l, "threads", core_count);
		ig_log_int(&l, "cpus", ncpus);
		ig_log_int(&l, "cgroup_cpu_limit", quota);
		ig_log_int(&l, "nofile", nofile);
		ig_log_int(&l, "startup_us", (int64_t)(ig_monotonic_us() - t0));
		ig_log_cstr(&l, "service", app->name);
		ig_log_cstr(&l, "version", app->version);
		ig_log_int(&l, "pid", getpid());
		ig_log_end(&l);
	}

	ig_loop_run(&core0->loop);
	stop_accepting(core0);
	for (int i = 1; i < core_count; i++)
		pthread_join(threads[i], NULL);

	uint64_t requests = 0, cut = 0, dropped = 0;
	struct ig_tls_stats tls = { 0 };
	for (int i = 0; i < core_count; i++) {
		requests += cores[i].requests;
		cut += cores[i].cut;
		dropped += cores[i].dropped;
		if (cores[i].tls) {
			const struct ig_tls_stats *s = ig_tls_core_stats(cores[i].tls);
			tls.handshakes += s->handshakes;
			tls.resumed += s->resumed;
			tls.failed += s->failed;
			tls.timed_out += s->timed_out;
			tls.refused += s->refused;
		}
	}
	if (ig_log_begin(&l, grace_over ? IG_LOG_WARN : IG_LOG_INFO,
			 grace_over ? "stopped: grace period over" : "stopped")) {
		ig_log_int(&l, "requests", (int64_t)requests);
		ig_log_int(&l, "cut", (int64_t)cut);
		ig_log_int(&l, "dropped", (int64_t)dropped);
		if (tls_credentials) {
			ig_log_int(&l, "tls_handshakes", (int64_t)tls.handshakes);
			ig_log_int(&l, "tls_resumed", (int64_t)tls.resumed);
			ig_log_int(&l, "tls_failed", (int64_t)tls.failed);
			ig_log_int(&l, "tls_timed_out", (int64_t)tls.timed_out);
			ig_log_int(&l, "tls_refused", (int64_t)tls.refused);
		}
		ig_log_end(&l);
	}
	munmap(table, table_bytes);
	return 0;
}

int ig_main(int argc, char **argv, const struct ig_app *app)
{
	/* As a VM's init: set the machine up first, so a failure is on the
	   console. Elsewhere (a container's PID 1 included) this does nothing. */
	if (ig_vm_init() != 0)
		ig_vm_poweroff(1);
	int rc = serve(argc, argv, app);
	if (ig_vm_active())
		ig_vm_poweroff(rc); /* PID 1 of a machine must not return */
	return rc;
}
