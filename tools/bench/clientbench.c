/* clientbench: the outbound client's half of `make bench` (client.js runs
 * it). One loop on one thread, a Pool to one origin (50 connections,
 * pipelining 10 by default), keeping a fixed number of requests in flight
 * (500) and starting the next as each ends, for a time or a count. Two
 * modes: the request API (ig_fetch, each response gathered into the
 * request's own arena) and the dispatch API (a raw handler that counts the
 * body's bytes). Prints one JSON line: requests, errors, seconds, req/s and
 * the CPU time per request over the measured window (after the warm-up),
 * from getrusage. Not a test: it measures.
 *
 *   clientbench [--mode request|dispatch] [--connections 50] [--pipelining 10]
 *               [--inflight 500] [--seconds 3] [--warmup 1] [--requests N] URL */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "ingot/client.h"
#include "net/client/url.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static struct {
	bool dispatch_api;
	uint32_t connections, pipelining, inflight;
	double seconds, warmup;
	uint64_t requests; /* 0: run for seconds */
	const char *url;
} opt = { .connections = 50, .pipelining = 10, .inflight = 500, .seconds = 3, .warmup = 1 };

/* One lane: a request in flight, started again as soon as it ends. */
struct lane {
	ig_arena arena;
	ig_dispatch_opts dopts;
	int status;
	uint64_t bytes;
};

static struct ig_loop loop;
static struct ig_pool blocks;
static ig_dispatcher *pool;
static struct ig_url target;
static ig_fetch_opts fetch_opts;
static struct lane *lanes;
static uint64_t completed, errors, bad_status;
static uint32_t depth; /* nested starts: a call that ends before ig_fetch returns */
static bool measuring, stopping;
static struct ig_timer phase_timer;

/* The measured window. */
static uint64_t t0_us, done0, err0;
static double cpu0_s;

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void report_and_exit(void)
{
	double secs = (double)(ig_monotonic_us() - t0_us) / 1e6;
	double cpu = cpu_seconds() - cpu0_s;
	uint64_t n = completed - done0, e = errors - err0;
	printf("{\"client\":\"ingot %s\",\"requests\":%llu,\"errors\":%llu,\"bad_status\":%llu,"
	       "\"seconds\":%.3f,\"rps\":%.1f,\"cpu_s\":%.3f,\"cpu_us_per_req\":%.3f,"
	       "\"connections\":%u,\"pipelining\":%u,\"inflight\":%u}\n",
	       opt.dispatch_api ? "dispatch" : "request", (unsigned long long)n, (unsigned long long)e,
	       (unsigned long long)bad_status, secs, n / secs, cpu, n ? cpu * 1e6 / (double)n : 0.0,
	       opt.connections, opt.pipelining, opt.inflight);
	fflush(stdout);
	/* In-flight calls are simply left: the process ends here. */
	_exit(n && e == 0 ? 0 : 1);
}

static void begin_window(void)
{
	measuring = true;
	t0_us = ig_monotonic_us();
	cpu0_s = cpu_seconds();
	done0 = completed;
	err0 = errors;
}

static void on_phase(struct ig_timer *t)
{
	(void)t;
	if (!measuring) {
		begin_window();
		if (!opt.requests)
			ig_timer_set(&loop.timers, &phase_timer, loop.clock.now_ms + (uint64_t)(opt.seconds * 1000));
		return;
	}
	report_and_exit();
}

static void start(struct lane *l);

static void lane_ended(struct lane *l, bool ok)
{
	completed++;
	if (!ok)
		errors++;
	if (opt.requests && measuring && completed - done0 >= opt.requests)
		report_and_exit();
	if (stopping)
		return;
	if (depth > 64) {
		fprintf(stderr, "clientbench: calls fail before they start (%llu errors); is %s up?\n",
			(unsigned long long)errors, opt.url);
		exit(1);
	}
	start(l);
}

/* ---- the request API: the whole response in the lane's arena ---- */

static void on_response(ig_response *res, void *arg)
{
	struct lane *l = arg;
	bool ok = res->error == IG_CLIENT_OK;
	if (ok && res->status != 200)
		bad_status++;
	ig_arena_reset(&l->arena);
	lane_ended(l, ok);
}

/* ---- the dispatch API: a raw handler ---- */

static bool d_headers(ig_call *call, int status, const ig_header *h, size_t n, void *arg)
{
	(void)call;
	(void)h;
	(void)n;
	((struct lane *)arg)->status = status;
	return true;
}

static bool d_data(ig_call *call, const char *data, size_t len, void *arg)
{
	(void)call;
	(void)data;
	((struct lane *)arg)->bytes += len;
	return true;
}

static void d_complete(ig_call *call, void *arg)
{
	(void)call;
	struct lane *l = arg;
	if (l->status != 200)
		bad_status++;
	lane_ended(l, true);
}

static void d_error(ig_call *call, enum ig_client_error error, const char *message, void *arg)
{
	(void)call;
	(void)error;
	(void)message;
	lane_ended(arg, false);
}

static const ig_dispatch_handler raw_handler = {
	.on_headers = d_headers, .on_data = d_data, .on_complete = d_complete, .on_error = d_error,
};

static void start(struct lane *l)
{
	depth++;
	if (opt.dispatch_api) {
		l->status = 0;
		l->bytes = 0;
		ig_dispatch(pool, &l->dopts, &raw_handler, l);
	} else {
		ig_fetch(pool, &l->arena, &fetch_opts, on_response, l);
	}
	depth--;
}

/* ---- options ---- */

static void usage(const char *why)
{
	if (why)
		fprintf(stderr, "clientbench: %s\n", why);
	fprintf(stderr, "usage: clientbench [--mode request|dispatch] [--connections N] [--pipelining N] "
			"[--inflight N] [--seconds S] [--warmup S] [--requests N] URL\n");
	exit(2);
}

static double number(const char *flag, const char *v, double min, double max)
{
	char *end;
	errno = 0;
	double n = v ? strtod(v, &end) : 0;
	if (!v || !*v || *end || errno || n < min || n > max) {
		fprintf(stderr, "clientbench: %s needs a number in %g..%g\n", flag, min, max);
		exit(2);
	}
	return n;
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--mode") == 0 && v) {
			if (strcmp(v, "request") != 0 && strcmp(v, "dispatch") != 0)
				usage("--mode is request or dispatch");
			opt.dispatch_api = strcmp(v, "dispatch") == 0;
			i++;
		} else if (strcmp(a, "--connections") == 0) {
			opt.connections = (uint32_t)number(a, v, 1, 65536), i++;
		} else if (strcmp(a, "--pipelining") == 0) {
			opt.pipelining = (uint32_t)number(a, v, 1, 1000), i++;
		} else if (strcmp(a, "--inflight") == 0) {
			opt.inflight = (uint32_t)number(a, v, 1, 1u << 20), i++;
		} else if (strcmp(a, "--seconds") == 0) {
			opt.seconds = number(a, v, 0.1, 3600), i++;
		} else if (strcmp(a, "--warmup") == 0) {
			opt.warmup = number(a, v, 0, 3600), i++;
		} else if (strcmp(a, "--requests") == 0) {
			opt.requests = (uint64_t)number(a, v, 1, 1e12), i++;
		} else if (a[0] == '-') {
			usage("unknown option");
		} else if (!opt.url) {
			opt.url = a;
		} else {
			usage("one URL");
		}
	}
	if (!opt.url)
		usage("a URL is needed");
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (ig_url_parse(opt.url, strlen(opt.url), &target) != 0)
		usage("not an http:// or https:// URL");
	if (ig_loop_init(&loop, 0) != 0) {
		fprintf(stderr, "clientbench: cannot make a loop\n");
		return 1;
	}
	/* The origin as a C string for ig_pool_new. */
	char origin[300];
	if (target.origin.len >= sizeof origin)
		usage("URL too long");
	memcpy(origin, target.origin.ptr, target.origin.len);
	origin[target.origin.len] = '\0';
	ig_client_opts copts = {
		.connections = opt.connections,
		.pipelining = opt.pipelining,
		.max_queued = opt.inflight + 1024,
	};
	pool = ig_pool_new(&loop, origin, &copts);
	if (!pool) {
		fprintf(stderr, "clientbench: cannot make the pool: %s\n", strerror(errno));
		return 1;
	}
	/* Lanes and their arenas once, before the first request: nothing is
	   allocated per request but from the arenas' block pool. */
	ig_pool_init(&blocks, 16 * 1024, opt.inflight, (size_t)opt.inflight * 4 + 64);
	lanes = calloc(opt.inflight, sizeof *lanes);
	if (!lanes) {
		fprintf(stderr, "clientbench: out of memory\n");
		return 1;
	}
	fetch_opts = (ig_fetch_opts){ .url = opt.url };
	for (uint32_t i = 0; i < opt.inflight; i++) {
		ig_arena_init(&lanes[i].arena, &blocks, 1u << 20);
		lanes[i].dopts = (ig_dispatch_opts){ .path = target.path, .idempotent = -1 };
	}
	phase_timer.fn = on_phase;
	if (opt.warmup > 0)
		ig_timer_set(&loop.timers, &phase_timer, loop.clock.now_ms + (uint64_t)(opt.warmup * 1000));
	else
		on_phase(&phase_timer);
	for (uint32_t i = 0; i < opt.inflight; i++)
		start(&lanes[i]);
	ig_loop_run(&loop);
	report_and_exit();
}
