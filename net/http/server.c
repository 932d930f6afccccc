/* The server's entry: configuration, one loop per core with its own
 * SO_REUSEPORT listener and pools, and the drain on SIGTERM/SIGINT. The
 * main thread only supervises; the loops never share anything but the
 * read-only configuration. */
#include "internal.h"
#include "kernel/config.h"
#include "kernel/cores.h"
#include "kernel/log.h"
#include "kernel/process.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct http_config config = {
	.port = 8080,
	.host = "0.0.0.0",
	.threads = 0,
	.max_conns = 10000,
	.max_request_line = 8192,
	.max_header_bytes = 16384,
	.max_headers = 100,
	.max_body = 1 << 20,
	.header_timeout_ms = 10000,
	.body_timeout_ms = 30000,
	.idle_timeout_ms = 60000,
	.write_timeout_ms = 30000,
	.max_output = 256 * 1024,
	.grace_ms = 8000,
	.log_level = IG_LOG_INFO,
	.access_log = false,
};

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
};

static struct http_core *cores;
static int core_count;

static void on_core_wake(struct ig_loop *loop, void *arg)
{
	(void)loop;
	struct http_core *core = arg;
	if (atomic_load(&core->force_requested)) {
		sock_core_stop_accepting(&core->sock);
		http_conn_force_close_all(core);
		return;
	}
	if (atomic_load(&core->drain_requested) && !core->draining) {
		core->draining = true;
		sock_core_stop_accepting(&core->sock);
		http_conn_drain(core);
	}
}

static int core_setup(struct http_core *core)
{
	const struct http_config *cfg = core->cfg;
	if (ig_loop_init(&core->loop, (int)core->index) != 0)
		return -1;
	size_t max_conns = (size_t)cfg->max_conns;
	size_t head = (size_t)(cfg->max_header_bytes > cfg->max_request_line ? cfg->max_header_bytes
									      : cfg->max_request_line);
	core->rbuf_size = (uint32_t)((head + 16384 + 4095) & ~(size_t)4095);
	ig_pool_init(&core->conns, sizeof(struct http_conn), 256, max_conns);
	ig_pool_init(&core->ctxs, sizeof(struct ig_ctx), 256, max_conns * 4 + 1024);
	ig_pool_init(&core->rbufs, core->rbuf_size, 8, max_conns + 64);
	ig_pool_init(&core->blocks, HTTP_BLOCK_SIZE, 16, max_conns * 16 + 1024);
	core->limits = (struct http_limits){ .max_request_line = (size_t)cfg->max_request_line,
					     .max_header_bytes = (size_t)cfg->max_header_bytes,
					     .max_headers = (size_t)cfg->max_headers };
	core->scratch_headers = calloc((size_t)cfg->max_headers, sizeof(struct http_header));
	if (!core->scratch_headers)
		return -1;
	core->loop.on_wake = on_core_wake;
	core->loop.arg = core;
	sock_core_init(&core->sock, &core->loop, core->listen_fd, (uint32_t)cfg->max_conns,
		       http_conn_accept, core);
	return sock_core_start(&core->sock);
}

static void *core_main(void *arg)
{
	struct http_core *core = arg;
	if (core_setup(core) != 0) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "core setup failed")) {
			ig_log_int(&l, "core", core->index);
			ig_log_end(&l);
		}
		return NULL;
	}
	/* A drain may have been asked before this loop ran. */
	on_core_wake(&core->loop, core);
	if (!core->draining || core->count)
		ig_loop_run(&core->loop);
	sock_core_stop_accepting(&core->sock);
	return NULL;
}

static void request_drain(void *arg)
{
	(void)arg;
	for (int i = 0; i < core_count; i++) {
		atomic_store(&cores[i].drain_requested, 1);
		ig_loop_wake(&cores[i].loop);
	}
}

static void request_force(void *arg)
{
	(void)arg;
	for (int i = 0; i < core_count; i++) {
		atomic_store(&cores[i].force_requested, 1);
		ig_loop_wake(&cores[i].loop);
	}
}

static int choose_threads(int *cpus, int *ncpus_out, int *quota_out)
{
	int ncpus = ig_affinity_cpus(cpus, IG_MAX_CORES);
	int quota = ig_cgroup_cpu_limit();
	*ncpus_out = ncpus;
	*quota_out = quota;
	if (config.threads > 0)
		return (int)config.threads;
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

int ig_main(int argc, char **argv, const struct ig_app *app)
{
	uint64_t t0 = ig_monotonic_us();
	switch (ig_config_parse(options, IG_COUNTOF(options), argc, argv, app->name, app->version)) {
	case IG_CONFIG_OK: break;
	case IG_CONFIG_EXIT: return 0;
	case IG_CONFIG_ERROR: return 2;
	}
	ig_log_threshold = config.log_level;
	long nofile = ig_raise_nofile();

	static int cpus[IG_MAX_CORES];
	int ncpus, quota;
	core_count = choose_threads(cpus, &ncpus, &quota);
	config.threads = core_count;
	ig_signals_block();

	cores = calloc((size_t)core_count, sizeof *cores);
	pthread_t *threads = calloc((size_t)core_count, sizeof *threads);
	void **args = calloc((size_t)core_count, sizeof *args);
	if (!cores || !threads || !args)
		return startup_error("out of memory");
	int port = (int)config.port;
	char err[256];
	for (int i = 0; i < core_count; i++) {
		/* The first listener may pick the port; the others join it. */
		cores[i].listen_fd = sock_listen(config.host, &port, 4096, err, sizeof err);
		if (cores[i].listen_fd < 0)
			return startup_error(err);
		cores[i].index = (uint32_t)i;
		cores[i].cfg = &config;
		cores[i].app = app;
		args[i] = &cores[i];
	}
	config.port = port;
	if (ig_threads_start(threads, core_count, cpus, ncpus, core_main, args) != 0)
		return startup_error("cannot start threads");

	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "listening")) {
		ig_log_cstr(&l, "addr", config.host);
		ig_log_int(&l, "port", port);
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

	struct ig_drain_hooks hooks = { request_drain, request_force, NULL };
	bool in_time = ig_supervise(threads, core_count, (uint32_t)config.grace_ms, &hooks);

	uint64_t requests = 0, cut = 0, dropped = 0;
	for (int i = 0; i < core_count; i++) {
		requests += cores[i].requests;
		cut += cores[i].cut;
		dropped += cores[i].dropped;
		free(cores[i].scratch_headers);
	}
	free(cores);
	free(threads);
	free(args);
	if (ig_log_begin(&l, in_time ? IG_LOG_INFO : IG_LOG_WARN, in_time ? "stopped" : "stopped: grace period over")) {
		ig_log_int(&l, "requests", (int64_t)requests);
		ig_log_int(&l, "cut", (int64_t)cut);
		ig_log_int(&l, "dropped", (int64_t)dropped);
		ig_log_end(&l);
	}
	return 0;
}
