/* fetch: a command-line client built on the runtime's outbound client
 * (kernel/ and net/, no app), for the integration tests and for trying an
 * upstream by hand. One loop on one thread runs every request; nothing
 * blocks.
 *
 *   fetch [options] URL...
 *
 * Each URL is requested --count times (URL order, round robin), keeping
 * --concurrency requests in flight. Output: one JSON line per response, in
 * completion order, then a summary line; exit status 0 if every request
 * got a response (any status), 1 if any failed, 2 for bad usage.
 *
 *   {"i":0,"url":"http://127.0.0.1:8080/json","status":200,"headers":4,
 *    "bytes":112,"sha256":"...","retries":0,"redirects":0,"ms":0.41}
 *   {"i":1,"url":"...","error":"connect","message":"connect to ... failed: Connection refused","ms":0.1}
 *   {"summary":true,"requests":2,"ok":1,"failed":1,"connections":1,"ms":3.2}
 *
 * "connections" counts the TCP connections the client opened (keep-alive
 * reuse shows as fewer connections than requests); "i" is the request's
 * index in dispatch order (pipelined responses keep it).
 *
 * Options (defaults in brackets):
 *   --method M            request method [GET]
 *   --header 'K: V'       a request header (repeatable)
 *   --data BODY           request body
 *   --data-size N         request body of N bytes ('x')
 *   --count N             requests per URL [1]
 *   --concurrency N       requests in flight at once [1]
 *   --connections N       connections per origin [8]
 *   --pipelining N        requests in flight per connection [1]
 *   --timeout-connect MS, --timeout-headers MS, --timeout-body MS
 *   --keep-alive MS       idle connection expiry [4000]
 *   --max-body BYTES      response body limit [1048576]
 *   --max-header-bytes N, --max-headers N
 *   --retry N             retry interceptor, N retries (0: none) [0]
 *   --redirect N          follow up to N redirects (0: none) [0]
 *   --cacert FILE         trust only the certificates of this PEM bundle
 *   --body                print the body (as a JSON string), not its sha256
 *   --show-headers        print the response headers ([[name,value],...])
 *   --dispatch            the dispatch API (raw handler) instead of ig_fetch
 *   --interval MS         wait MS between starting requests [0]
 *   --pause-ms MS         --dispatch: pause after each piece of body and
 *                         resume MS later (back-pressure)
 *   --abort-ms MS         abort each call MS after it started
 *   --quiet               print the summary line only
 *   --destroy-early       destroy the dispatcher once the first requests
 *                         are dispatched; the loop runs until they end
 *   --abort-others WHEN   --dispatch: when the first call's request is
 *                         written (WHEN=connect) or its response head has
 *                         come (WHEN=headers), abort every other call in
 *                         flight, from a timer
 *   --abort-cascade       --dispatch: a call's on_error aborts every other
 *                         call in flight
 *   --cross-resume        --dispatch: each call pauses in on_headers and
 *                         on_data and resumes the other calls paused
 *                         (resumes asked inside callbacks, across
 *                         connections)
 *
 * The summary also gives "cpu_ms", this process's user+system time, and
 * "calls_live", the client's call slots still taken once every request
 * has ended (0 unless one leaked).
 */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"
#include "ingot/client.h"
#include "ingot/client_interceptors.h"
#include "net/client/internal.h"
#include "net/client/settings.h"
#include "net/dns/dns_settings.h"
#include "net/client/url.h"
#include "net/tls/tls.h"
#include "net/tls/backend.h"

#include <bearssl_hash.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define MAX_URLS 64
#define MAX_HEADERS 64

static struct {
	const char *method;
	ig_header headers[MAX_HEADERS];
	size_t header_count;
	ig_str body;
	const char *urls[MAX_URLS];
	size_t url_count;
	uint32_t count, concurrency, retry, redirect;
	bool print_body, show_headers, dispatch_api;
	uint32_t interval, pause_ms, abort_ms;
	bool quiet, destroy_early, cross_resume, abort_cascade;
	const char *abort_others;
	ig_client_opts client;
	uint32_t timeout_connect, timeout_headers, timeout_body;
	const char *cacert;
} opt = { .count = 1, .concurrency = 1 };

/* ---- a request in flight ---- */

struct slot {
	uint32_t index; /* dispatch order */
	const char *url;
	uint64_t start_us;
	ig_arena arena;
	/* --dispatch: what the raw handler gathers */
	struct ig_url parsed;
	ig_dispatch_opts dopts;
	int status;
	size_t header_count;
	ig_wbuf body;
	br_sha256_context sha;
	uint64_t bytes;
	ig_wbuf headers_json;
	ig_call *call;
	struct ig_timer pause_timer, abort_timer;
	uint32_t pauses;
	uint32_t status_seen;
};

static struct ig_loop loop;
static struct ig_pool blocks;
static ig_dispatcher *dispatcher;
static uint32_t next_index, total, finished, failed, in_flight;
static uint64_t run_start_us;
static struct ig_timer interval_timer;
static uint64_t last_start_ms;

static void start_next(void);

/* --cross-resume, --abort-others, --abort-cascade: the calls in flight, so that each can
 * reach the others. */
#define MAX_CROSS 64
static struct slot *cross[MAX_CROSS];
/* --abort-others: the call that triggered it, spared. */
static struct slot *abort_keeper;
static struct ig_timer abort_others_timer;

#define SLOT_OF(t, field) ((struct slot *)((char *)(t) - offsetof(struct slot, field)))

static void after_ms(struct ig_timer *t, uint32_t ms)
{
	ig_timer_set(&loop.timers, t, loop.clock.now_ms + ms);
}

static void json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void print_common(struct slot *s)
{
	printf("{\"i\":%u,\"url\":", s->index);
	json_str(stdout, s->url, strlen(s->url));
}

static void print_ms(uint64_t since_us)
{
	printf(",\"ms\":%.3f}\n", (double)(ig_monotonic_us() - since_us) / 1000.0);
}

static void print_body_digest(const char *body, size_t len, br_sha256_context *running)
{
	unsigned char d[32];
	br_sha256_context ctx;
	if (!running) {
		br_sha256_init(&ctx);
		br_sha256_update(&ctx, body, len);
		running = &ctx;
	}
	br_sha256_out(running, d);
	printf(",\"sha256\":\"");
	for (int i = 0; i < 32; i++)
		printf("%02x", d[i]);
	printf("\"");
}

static void print_headers(const ig_header *h, size_t n)
{
	printf(",\"header_list\":[");
	for (size_t i = 0; i < n; i++) {
		printf(i ? ",[" : "[");
		json_str(stdout, h[i].name.ptr, h[i].name.len);
		printf(",");
		json_str(stdout, h[i].value.ptr, h[i].value.len);
		printf("]");
	}
	printf("]");
}

static void slot_done(struct slot *s, bool ok)
{
	finished++;
	if (!ok)
		failed++;
	in_flight--;
	if (!opt.quiet)
		fflush(stdout);
	ig_timer_cancel(&loop.timers, &s->pause_timer);
	ig_timer_cancel(&loop.timers, &s->abort_timer);
	for (int i = 0; i < MAX_CROSS; i++)
		if (cross[i] == s)
			cross[i] = NULL;
	if (abort_keeper == s)
		abort_keeper = NULL;
	ig_arena_reset(&s->arena);
	free(s);
	if (finished == total)
		loop.running = false;
	else
		start_next();
}

/* ---- the request API ---- */

static void on_response(ig_response *res, void *arg)
{
	struct slot *s = arg;
	if (opt.quiet) {
		slot_done(s, res->error == IG_CLIENT_OK);
		return;
	}
	print_common(s);
	if (res->error != IG_CLIENT_OK) {
		printf(",\"error\":\"%s\",\"message\":", ig_client_error_name(res->error));
		const char *m = res->error_message ? res->error_message : "";
		json_str(stdout, m, strlen(m));
	} else {
		printf(",\"status\":%d,\"headers\":%zu,\"bytes\":%zu", res->status, res->header_count,
		       res->body.len);
		if (opt.print_body) {
			printf(",\"body\":");
			json_str(stdout, res->body.ptr, res->body.len);
		} else {
			print_body_digest(res->body.ptr, res->body.len, NULL);
		}
		if (opt.show_headers)
			print_headers(res->headers, res->header_count);
	}
	printf(",\"retries\":%u,\"redirects\":%u", res->retries, res->redirects);
	print_ms(s->start_us);
	slot_done(s, res->error == IG_CLIENT_OK);
}

/* ---- the dispatch API ---- */

static void abort_all_but(const struct slot *keep)
{
	for (int i = 0; i < MAX_CROSS; i++)
		if (cross[i] && cross[i] != keep && cross[i]->call)
			ig_call_abort(cross[i]->call);
}

static void on_abort_others(struct ig_timer *t)
{
	(void)t;
	abort_all_but(abort_keeper);
}

/* --abort-others: from the loop, not from inside the callback. */
static void abort_others_at(struct slot *s, const char *when)
{
	if (opt.abort_others && !strcmp(opt.abort_others, when) && !abort_keeper) {
		abort_keeper = s;
		after_ms(&abort_others_timer, 0);
	}
}

/* --cross-resume: pauses s and resumes every other paused call. */
static bool cross_step(struct slot *s)
{
	s->pauses++;
	for (int i = 0; i < MAX_CROSS; i++)
		if (cross[i] && cross[i] != s && cross[i]->call)
			ig_call_resume(cross[i]->call);
	/* If no other call is left to resume it. */
	after_ms(&s->pause_timer, 20);
	return false;
}

static bool d_headers(ig_call *call, int status, const ig_header *h, size_t n, void *arg)
{
	(void)call;
	struct slot *s = arg;
	s->status = status;
	s->header_count = n;
	if (opt.show_headers) {
		/* Copied: the array is valid during this callback only. */
		for (size_t i = 0; i < n; i++) {
			ig_wbuf_put(&s->headers_json, i ? ",[" : "[", i ? 2 : 1);
			ig_wbuf_put(&s->headers_json, "\"", 1);
			ig_wbuf_put(&s->headers_json, h[i].name.ptr, h[i].name.len);
			ig_wbuf_put(&s->headers_json, "\",\"", 3);
			ig_wbuf_put(&s->headers_json, h[i].value.ptr, h[i].value.len);
			ig_wbuf_put(&s->headers_json, "\"]", 2);
		}
	}
	abort_others_at(s, "headers");
	if (s->status_seen++) {
		fprintf(stderr, "fetch: a second on_headers for request %u\n", s->index);
		abort();
	}
	if (opt.cross_resume)
		return cross_step(s);
	return true;
}

static bool d_data(ig_call *call, const char *data, size_t len, void *arg)
{
	(void)call;
	struct slot *s = arg;
	s->bytes += len;
	if (opt.print_body)
		ig_wbuf_put(&s->body, data, len);
	br_sha256_update(&s->sha, data, len);
	if (opt.cross_resume)
		return cross_step(s);
	if (opt.pause_ms) {
		s->pauses++;
		after_ms(&s->pause_timer, opt.pause_ms);
		return false;
	}
	return true;
}

static void on_pause_over(struct ig_timer *t)
{
	struct slot *s = SLOT_OF(t, pause_timer);
	ig_call_resume(s->call);
}

static void on_abort_time(struct ig_timer *t)
{
	struct slot *s = SLOT_OF(t, abort_timer);
	ig_call_abort(s->call);
}

static void d_complete(ig_call *call, void *arg)
{
	struct slot *s = arg;
	if (opt.quiet) {
		slot_done(s, true);
		return;
	}
	print_common(s);
	printf(",\"status\":%d,\"headers\":%zu,\"bytes\":%llu", s->status, s->header_count,
	       (unsigned long long)s->bytes);
	if (opt.print_body) {
		printf(",\"body\":");
		json_str(stdout, s->body.ptr, s->body.len);
	} else {
		print_body_digest(NULL, 0, &s->sha);
	}
	if (opt.pause_ms)
		printf(",\"pauses\":%u", s->pauses);
	if (opt.show_headers)
		printf(",\"header_list\":[%.*s]", (int)s->headers_json.len, s->headers_json.ptr);
	printf(",\"retries\":%u,\"redirects\":%u", call->retries, call->redirects);
	print_ms(s->start_us);
	slot_done(s, true);
}

static void d_connect(ig_call *call, void *arg)
{
	(void)call;
	struct slot *s = arg;
	abort_others_at(s, "connect");
}

static void d_error(ig_call *call, enum ig_client_error error, const char *message, void *arg)
{
	(void)call;
	struct slot *s = arg;
	if (opt.abort_cascade)
		abort_all_but(s);
	if (opt.quiet) {
		slot_done(s, false);
		return;
	}
	print_common(s);
	printf(",\"error\":\"%s\",\"message\":", ig_client_error_name(error));
	json_str(stdout, message, strlen(message));
	print_ms(s->start_us);
	slot_done(s, false);
}

static const ig_dispatch_handler raw_handler = {
	.on_connect = d_connect,
	.on_headers = d_headers,
	.on_data = d_data,
	.on_complete = d_complete,
	.on_error = d_error,
};

static void start_one(struct slot *s)
{
	s->pause_timer.fn = on_pause_over;
	s->abort_timer.fn = on_abort_time;
	if (!opt.dispatch_api) {
		ig_fetch_opts f = {
			.method = opt.method, .url = s->url, .headers = opt.headers,
			.header_count = opt.header_count, .body = opt.body,
			.connect_timeout_ms = opt.timeout_connect, .headers_timeout_ms = opt.timeout_headers,
			.body_timeout_ms = opt.timeout_body,
		};
		/* NULL: it has ended already, and s is gone. */
		ig_call *call = ig_fetch(dispatcher, &s->arena, &f, on_response, s);
		if (call && opt.abort_ms) {
			s->call = call;
			after_ms(&s->abort_timer, opt.abort_ms);
		}
		return;
	}
	if (ig_url_parse(s->url, strlen(s->url), &s->parsed) != 0) {
		d_error(NULL, IG_CLIENT_BAD_REQUEST, "not an http:// or https:// URL", s);
		return;
	}
	s->body = (ig_wbuf){ .arena = &s->arena };
	s->headers_json = (ig_wbuf){ .arena = &s->arena };
	br_sha256_init(&s->sha);
	s->dopts = (ig_dispatch_opts){
		.method = opt.method, .origin = s->parsed.origin, .path = s->parsed.path,
		.headers = opt.headers, .header_count = opt.header_count, .body = opt.body,
		.connect_timeout_ms = opt.timeout_connect, .headers_timeout_ms = opt.timeout_headers,
		.body_timeout_ms = opt.timeout_body, .idempotent = -1,
	};
	ig_call *call = ig_dispatch(dispatcher, &s->dopts, &raw_handler, s);
	if (!call)
		return; /* it has ended already, and s is gone */
	s->call = call;
	if (opt.cross_resume || opt.abort_others || opt.abort_cascade)
		for (int i = 0; i < MAX_CROSS; i++)
			if (!cross[i]) {
				cross[i] = s;
				break;
			}
	if (opt.abort_ms)
		after_ms(&s->abort_timer, opt.abort_ms);
}

static void on_interval(struct ig_timer *t)
{
	(void)t;
	start_next();
}

static void start_next(void)
{
	while (in_flight < opt.concurrency && next_index < total) {
		if (opt.interval && next_index > 0 && loop.clock.now_ms < last_start_ms + opt.interval) {
			if (!ig_timer_armed(&interval_timer))
				after_ms(&interval_timer, (uint32_t)(last_start_ms + opt.interval - loop.clock.now_ms));
			return;
		}
		last_start_ms = loop.clock.now_ms;
		/* Test tool, not the runtime: a slot is a malloc. */
		struct slot *s = calloc(1, sizeof *s);
		if (!s) {
			fprintf(stderr, "fetch: out of memory\n");
			exit(1);
		}
		s->index = next_index++;
		s->url = opt.urls[s->index % opt.url_count];
		s->start_us = ig_monotonic_us();
		ig_arena_init(&s->arena, &blocks, (size_t)opt.client.max_body_bytes * 2 + (1u << 20));
		in_flight++;
		start_one(s);
	}
}

/* ---- options ---- */

static void usage(const char *why)
{
	if (why)
		fprintf(stderr, "fetch: %s\n", why);
	fprintf(stderr, "usage: fetch [--method M] [--header 'K: V'] [--data BODY] [--count N] "
			"[--concurrency N] [--connections N] [--pipelining N] [--timeout-connect MS] "
			"[--timeout-headers MS] [--timeout-body MS] [--keep-alive MS] [--max-body N] "
			"[--max-header-bytes N] [--max-headers N] [--retry N] [--redirect N] "
			"[--cacert FILE] [--body] [--show-headers] [--dispatch] [--interval MS] "
			"[--pause-ms MS] [--abort-ms MS] [--quiet] [--data-size N] [--destroy-early] "
			"[--cross-resume] [--abort-others connect|headers] [--abort-cascade] URL...\n");
	exit(2);
}

static uint64_t number(const char *flag, const char *v, uint64_t min, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long n = v ? strtoull(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || n < min || n > max) {
		fprintf(stderr, "fetch: %s needs a number in %llu..%llu\n", flag, (unsigned long long)min,
			(unsigned long long)max);
		exit(2);
	}
	return n;
}

static void add_header(const char *kv)
{
	const char *colon = strchr(kv, ':');
	if (!colon || colon == kv || opt.header_count == MAX_HEADERS)
		usage("--header needs 'Name: value'");
	const char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	opt.headers[opt.header_count++] = (ig_header){ { kv, (size_t)(colon - kv) }, { v, strlen(v) } };
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define FLAG(name) (!strcmp(a, name))
#define TAKE(name, lo, hi) (i++, (uint32_t)number(name, v, lo, hi))
		if (FLAG("--method")) { if (!v) usage("--method needs a value"); opt.method = v; i++; }
		else if (FLAG("--header")) { if (!v) usage("--header needs a value"); add_header(v); i++; }
		else if (FLAG("--data")) { if (!v) usage("--data needs a value"); opt.body = (ig_str){ v, strlen(v) }; i++; }
		else if (FLAG("--data-size")) {
			size_t n = TAKE(a, 0, 1u << 30);
			char *b = malloc(n ? n : 1);
			if (!b)
				usage("--data-size: out of memory");
			memset(b, 'x', n);
			opt.body = (ig_str){ b, n };
		}
		else if (FLAG("--count")) opt.count = TAKE(a, 1, 10000000);
		else if (FLAG("--concurrency")) opt.concurrency = TAKE(a, 1, 100000);
		else if (FLAG("--connections")) opt.client.connections = TAKE(a, 1, 65536);
		else if (FLAG("--pipelining")) opt.client.pipelining = TAKE(a, 1, 1000);
		else if (FLAG("--timeout-connect")) opt.timeout_connect = TAKE(a, 1, 3600000);
		else if (FLAG("--timeout-headers")) opt.timeout_headers = TAKE(a, 1, 3600000);
		else if (FLAG("--timeout-body")) opt.timeout_body = TAKE(a, 1, 3600000);
		else if (FLAG("--keep-alive")) opt.client.keep_alive_ms = TAKE(a, 1, 3600000);
		else if (FLAG("--max-body")) opt.client.max_body_bytes = TAKE(a, 1, 1u << 30);
		else if (FLAG("--max-header-bytes")) opt.client.max_header_bytes = TAKE(a, 256, 1u << 20);
		else if (FLAG("--max-headers")) opt.client.max_headers = TAKE(a, 1, 100000);
		else if (FLAG("--retry")) opt.retry = TAKE(a, 0, 100);
		else if (FLAG("--redirect")) opt.redirect = TAKE(a, 0, 100);
		else if (FLAG("--cacert")) { if (!v) usage("--cacert needs a file"); opt.cacert = v; i++; }
		else if (FLAG("--body")) opt.print_body = true;
		else if (FLAG("--show-headers")) opt.show_headers = true;
		else if (FLAG("--dispatch")) opt.dispatch_api = true;
		else if (FLAG("--interval")) opt.interval = TAKE(a, 1, 3600000);
		else if (FLAG("--pause-ms")) opt.pause_ms = TAKE(a, 1, 3600000);
		else if (FLAG("--abort-ms")) opt.abort_ms = TAKE(a, 1, 3600000);
		else if (FLAG("--quiet")) opt.quiet = true;
		else if (FLAG("--destroy-early")) opt.destroy_early = true;
		else if (FLAG("--cross-resume")) opt.cross_resume = true;
		else if (FLAG("--abort-others")) {
			if (!v || (strcmp(v, "connect") && strcmp(v, "headers")))
				usage("--abort-others needs connect or headers");
			opt.abort_others = v;
			i++;
		}
		else if (FLAG("--abort-cascade")) opt.abort_cascade = true;
		else if (FLAG("--help") || FLAG("-h")) usage(NULL);
		else if (a[0] == '-' && a[1] == '-') { fprintf(stderr, "fetch: unknown option %s\n", a); exit(2); }
		else if (opt.url_count == MAX_URLS) usage("too many URLs");
		else opt.urls[opt.url_count++] = a;
#undef FLAG
#undef TAKE
	}
	if (!opt.url_count)
		usage("no URL");
}

static const struct tls_trust *load_cacert(const char *file)
{
	FILE *f = fopen(file, "rb");
	if (!f) {
		fprintf(stderr, "fetch: --cacert %s: %s\n", file, strerror(errno));
		exit(2);
	}
	static char pem[1 << 20];
	size_t n = fread(pem, 1, sizeof pem, f);
	fclose(f);
	char err[256];
	if (ig_tls_backend_init(err, sizeof err) != 0) {
		fprintf(stderr, "fetch: %s\n", err);
		exit(2);
	}
	const struct tls_trust *t = ig_tls_trust_load(pem, n, true, err, sizeof err);
	if (!t) {
		fprintf(stderr, "fetch: --cacert %s: %s\n", file, err);
		exit(2);
	}
	return t;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	/* The resolver's files and port and the default trust come from the
	   environment, as for the service (INGOT_HOSTS_FILE, ...). */
	const struct ig_settings *const parts[] = { &ig_dns_settings, &ig_tls_trust_settings };
	char *no_flags[] = { argv[0], NULL };
	struct ig_config_args env_only = { .argc = 1, .argv = no_flags, .name = "fetch", .version = "" };
	if (ig_config_parse(parts, IG_COUNTOF(parts), &env_only) != IG_CONFIG_OK)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	ig_client_opts_resolve(&opt.client, &opt.client);
	if (opt.cacert)
		opt.client.trust = load_cacert(opt.cacert);
	if (ig_loop_init(&loop, 0) != 0) {
		fprintf(stderr, "fetch: cannot make a loop\n");
		return 1;
	}
	ig_pool_init(&blocks, 16 * 1024, 16, 1u << 20);
	dispatcher = ig_agent_new(&loop, &opt.client);
	if (dispatcher && opt.retry)
		dispatcher = ig_retry_new(dispatcher, &(struct ig_retry_opts){ .max_retries = opt.retry });
	if (dispatcher && opt.redirect)
		dispatcher = ig_redirect_new(dispatcher, &(struct ig_redirect_opts){ .max_redirects = opt.redirect });
	if (!dispatcher) {
		fprintf(stderr, "fetch: cannot make the client: %s\n", strerror(errno));
		return 1;
	}
	total = opt.count * (uint32_t)opt.url_count;
	interval_timer.fn = on_interval;
	if (opt.pause_ms && !opt.dispatch_api)
		usage("--pause-ms needs --dispatch");
	run_start_us = ig_monotonic_us();
	if ((opt.cross_resume || opt.abort_others || opt.abort_cascade) && !opt.dispatch_api)
		usage("--cross-resume, --abort-others and --abort-cascade need --dispatch");
	abort_others_timer.fn = on_abort_others;
	start_next();
	if (opt.destroy_early) {
		dispatcher->ops->destroy(dispatcher);
		dispatcher = NULL;
		total = next_index; /* no more can start */
	}
	if (finished < total)
		ig_loop_run(&loop);
	struct client_core *core = ig_client_core_of(&loop);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
			(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
	printf("{\"summary\":true,\"requests\":%u,\"ok\":%u,\"failed\":%u,\"connections\":%llu,\"cpu_ms\":%.1f"
	       ",\"calls_live\":%zu",
	       total, total - failed, failed, (unsigned long long)(core ? core->connects : 0), cpu_ms,
	       core ? core->calls.in_use : 0);
	print_ms(run_start_us);
	if (dispatcher)
		dispatcher->ops->destroy(dispatcher);
	return failed ? 1 : 0;
}
