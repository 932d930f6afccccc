/* natscheck: drives net/nats (the runtime's NATS client, no app) on one
 * loop against a real nats-server for tests/integration/nats_client.test.mjs,
 * printing one JSON line per event it sees; the test asserts on them.
 *
 *   natscheck core URL       pub/sub with and without headers, request and
 *                            reply, no responders, a request's timeout
 *   natscheck connect URL    connects once: "up", or "down" with the kind
 *   natscheck first-up URL   redials through "down"s until "up"
 *   natscheck js URL         a stream and durable pull consumers, publish
 *                            with the ack, pulls, ack / nak with a delay /
 *                            term, MaxDeliver, no_wait, STREAM.INFO
 *   natscheck burst URL      1,000 JetStream publishes in flight at once:
 *                            every ack, each sequence once
 *   natscheck idle URL       connects, then waits for the connection's loss
 *                            (exits at the first "down" after an "up")
 *   natscheck restart URL    JetStream across a server restart (the test
 *                            stops it at "stop_now" and starts it again):
 *                            a publish acked before, a pull in flight
 *                            failed by the loss, the stream intact after
 *   natscheck reconnect URL  subscribes, then outlives a server restart
 *                            (the test stops and starts it when it reads
 *                            "up" and "down"): the subscription restored
 *
 * NATSCHECK_PING_MS sets the keepalive's interval (the client's default
 * otherwise). A third argument "verify" checks the server's certificate and name
 * against the default trust anchors (INGOT_TLS_CA_FILE adds to them).
 * Exit 0 at the scenario's end, 1 when a call fails where it must not, 2
 * for bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/runtime/config.h"
#include "kernel/runtime/json.h"
#include "kernel/runtime/loop.h"
#include "net/nats/js.h"
#include "net/nats/nats.h"
#include "net/http/health.h"
#include "net/nats/proto.h"
#include "net/tls/tls.h"

static struct ig_loop loop;
static struct ig_nats *nc;
static const char *mode;
static int step;

static void out_str(const char *key, ig_str s)
{
	char buf[2048];
	size_t n = s.len > 300 ? 300 : s.len;
	printf("\"%s\":\"", key);
	fwrite(buf, 1, ig_json_escape(buf, s.ptr, n), stdout);
	printf("\"");
}

static void finish(int code)
{
	fflush(stdout);
	if (code)
		exit(code);
	ig_nats_close(nc);
	loop.running = false;
}

static void must(enum ig_nats_error e, const char *what)
{
	if (e != IG_NATS_OK) {
		printf("{\"ev\":\"call_failed\",\"call\":\"%s\",\"err\":\"%s\"}\n", what, ig_nats_error_name(e));
		finish(1);
	}
}

static void print_msg(const char *ev, const struct ig_nats_msg *m)
{
	ig_str trace = { 0 };
	(void)ig_nats_header_get(m->headers, "Trace-Id", &trace);
	printf("{\"ev\":\"%s\",", ev);
	out_str("subject", m->subject);
	printf(",");
	out_str("payload", m->payload);
	printf(",");
	out_str("trace", trace);
	printf(",\"status\":%d,\"headers\":%s}\n", m->status, m->headers.len ? "true" : "false");
	fflush(stdout);
}

/* ---- core ---- */

static int core_left = 5; /* 2 messages, 3 requests' ends */

static void core_tick(void)
{
	if (--core_left == 0) {
		printf("{\"ev\":\"done\"}\n");
		finish(0);
	}
}

static void on_core_msg(void *arg, const struct ig_nats_msg *m)
{
	(void)arg;
	print_msg("msg", m);
	core_tick();
}

static void on_echo(void *arg, const struct ig_nats_msg *m)
{
	(void)arg;
	char b[256];
	int n = snprintf(b, sizeof b, "echo:%.*s", (int)m->payload.len, m->payload.ptr);
	must(ig_nats_publish(nc, m->reply, (ig_str){ 0 }, IG_STR("NATS/1.0\r\nTrace-Id: r1\r\n\r\n"),
			     (ig_str){ b, (size_t)n }),
	     "publish reply");
}

static void on_silent(void *arg, const struct ig_nats_msg *m)
{
	(void)arg;
	(void)m;
}

static bool on_core_reply(void *arg, const struct ig_nats_msg *m, enum ig_nats_error err)
{
	const char *name = arg;
	if (m) {
		print_msg("reply", m);
	} else {
		printf("{\"ev\":\"request_end\",\"request\":\"%s\",\"err\":\"%s\"}\n", name, ig_nats_error_name(err));
	}
	core_tick();
	return false;
}

static void core_start(void)
{
	enum ig_nats_error e;
	if (!ig_nats_subscribe(nc, IG_STR("t.>"), (ig_str){ 0 }, on_core_msg, NULL, &e) ||
	    !ig_nats_subscribe(nc, IG_STR("svc.echo"), IG_STR("workers"), on_echo, NULL, &e) ||
	    !ig_nats_subscribe(nc, IG_STR("svc.silent"), (ig_str){ 0 }, on_silent, NULL, &e))
		must(e, "subscribe");
	must(ig_nats_publish(nc, IG_STR("t.a"), (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("one")), "publish");
	must(ig_nats_publish(nc, IG_STR("t.b"), (ig_str){ 0 }, IG_STR("NATS/1.0\r\nTrace-Id: abc\r\n\r\n"), IG_STR("two")),
	     "hpublish");
	must(ig_nats_publish(nc, IG_STR("bad subject"), (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("x")) ==
			     IG_NATS_BAD_ARGUMENT ? IG_NATS_OK : IG_NATS_PROTOCOL,
	     "a subject with a blank refused");
	must(ig_nats_request(nc, IG_STR("svc.echo"), (ig_str){ 0 }, IG_STR("ping"), 10000, on_core_reply, "echo", NULL),
	     "request echo");
	must(ig_nats_request(nc, IG_STR("svc.none"), (ig_str){ 0 }, IG_STR("x"), 10000, on_core_reply, "none", NULL),
	     "request none");
	must(ig_nats_request(nc, IG_STR("svc.silent"), (ig_str){ 0 }, IG_STR("x"), 300, on_core_reply, "silent", NULL),
	     "request silent");
}

/* ---- JetStream ---- */

static void js_next(void);

static void print_result(const char *ev, const struct ig_js_result *r)
{
	printf("{\"ev\":\"%s\",\"err\":\"%s\",\"code\":%d,\"err_code\":%d,", ev, ig_nats_error_name(r->err), r->code,
	       r->err_code);
	out_str("description", r->description);
	printf(",");
	out_str("stream", r->stream);
	printf(",\"seq\":%llu,\"duplicate\":%s,\"messages\":%llu,\"last_seq\":%llu}\n", (unsigned long long)r->seq,
	       r->duplicate ? "true" : "false", (unsigned long long)r->messages, (unsigned long long)r->last_seq);
	fflush(stdout);
}

static int js_waiting;

static void on_js_done(void *arg, const struct ig_js_result *r)
{
	print_result(arg, r);
	if (--js_waiting == 0)
		js_next();
}

static void on_js_msg(void *arg, const struct ig_nats_msg *m, const struct ig_js_meta *meta)
{
	(void)arg;
	printf("{\"ev\":\"js_msg\",");
	out_str("payload", m->payload);
	printf(",");
	out_str("stream", meta->stream);
	printf(",\"delivered\":%llu,\"stream_seq\":%llu}\n", (unsigned long long)meta->delivered,
	       (unsigned long long)meta->stream_seq);
	fflush(stdout);
	/* m1 is acked, m2 nak'ed (with a delay the first time), m3 ended */
	if (m->payload.len == 2 && m->payload.ptr[1] == '1')
		must(ig_js_ack(nc, m->reply), "ack");
	else if (m->payload.len == 2 && m->payload.ptr[1] == '2')
		must(ig_js_nak(nc, m->reply, meta->delivered == 1 ? 200000000 : 0), "nak");
	else
		must(ig_js_term(nc, m->reply), "term");
}

static void on_pull_end(void *arg, enum ig_nats_error err, int status, uint32_t received)
{
	(void)arg;
	printf("{\"ev\":\"pull_end\",\"err\":\"%s\",\"status\":%d,\"received\":%u}\n", ig_nats_error_name(err), status,
	       received);
	fflush(stdout);
	js_next();
}

static void pull(uint32_t batch, int64_t expires_ns, bool no_wait)
{
	struct ig_js_pull_options o = { .batch = batch, .expires_ns = expires_ns, .no_wait = no_wait };
	must(ig_js_pull(nc, IG_STR("T1"), IG_STR("C1"), &o, on_js_msg, on_pull_end, NULL), "pull");
}

static void js_next(void)
{
	static const ig_str subjects[] = { IG_STR("t1.>") };
	static const struct ig_js_stream_config stream = { .name = IG_STR("T1"), .subjects = subjects, .nsubjects = 1 };
	static const int64_t backoff[] = { 100000000, 200000000 };
	switch (step++) {
	case 0:
		js_waiting = 2;
		must(ig_js_stream_create(nc, &stream, 5000, on_js_done, "stream_create"), "stream create");
		/* the same config again: no error */
		must(ig_js_stream_create(nc, &stream, 5000, on_js_done, "stream_create_again"), "stream create");
		break;
	case 1: {
		js_waiting = 3;
		struct ig_js_consumer_config c = { .stream = IG_STR("T1"), .durable = IG_STR("C1"),
						   .ack_wait_ns = 30000000000, .max_deliver = 3 };
		must(ig_js_consumer_create(nc, &c, 5000, on_js_done, "consumer_create"), "consumer create");
		struct ig_js_consumer_config b = { .stream = IG_STR("T1"), .durable = IG_STR("C2"),
						   .max_deliver = 3, .backoff_ns = backoff, .nbackoff = 2 };
		must(ig_js_consumer_create(nc, &b, 5000, on_js_done, "consumer_backoff"), "consumer create");
		struct ig_js_consumer_config x = { .stream = IG_STR("NOPE"), .durable = IG_STR("C1") };
		must(ig_js_consumer_create(nc, &x, 5000, on_js_done, "consumer_no_stream"), "consumer create");
		break;
	}
	case 2:
		js_waiting = 5;
		must(ig_js_publish(nc, IG_STR("t1.a"), (ig_str){ 0 }, IG_STR("m1"), IG_STR("id-1"), 5000, on_js_done,
				   "publish"),
		     "publish");
		must(ig_js_publish(nc, IG_STR("t1.b"), IG_STR("NATS/1.0\r\nTrace-Id: x\r\n\r\n"), IG_STR("m2"),
				   IG_STR("id-2"), 5000, on_js_done, "publish"),
		     "publish");
		must(ig_js_publish(nc, IG_STR("t1.c"), (ig_str){ 0 }, IG_STR("m3"), (ig_str){ 0 }, 5000, on_js_done,
				   "publish"),
		     "publish");
		must(ig_js_publish(nc, IG_STR("t1.a"), (ig_str){ 0 }, IG_STR("m1"), IG_STR("id-1"), 5000, on_js_done,
				   "publish_duplicate"),
		     "publish");
		must(ig_js_publish(nc, IG_STR("nostream.x"), (ig_str){ 0 }, IG_STR("m"), (ig_str){ 0 }, 5000, on_js_done,
				   "publish_no_stream"),
		     "publish");
		break;
	case 3:
		pull(3, 2000000000, false); /* m1 acked, m2 nak'ed with a delay, m3 ended */
		break;
	case 4:
	case 5:
		pull(1, 10000000000, false); /* m2 again, twice: delivered 2, then 3 */
		break;
	case 6:
		pull(1, 1000000000, false); /* MaxDeliver (3) reached: nothing comes */
		break;
	case 7:
		pull(1, 0, true);
		break;
	case 8:
		js_waiting = 1;
		must(ig_js_stream_info(nc, IG_STR("T1"), 5000, on_js_done, "stream_info"), "stream info");
		break;
	default:
		printf("{\"ev\":\"done\"}\n");
		finish(0);
	}
}

/* ---- burst ---- */

#define BURST 1000
static bool burst_seen[BURST + 1];
static int burst_acked, burst_failed;
static uint64_t burst_base; /* the stream's last sequence before the burst */

static void on_burst_ack(void *arg, const struct ig_js_result *r)
{
	(void)arg;
	uint64_t i = r->seq - burst_base;
	if (r->err != IG_NATS_OK || r->seq <= burst_base || i > BURST || burst_seen[i])
		burst_failed++;
	else
		burst_seen[i] = true;
	if (++burst_acked == BURST) {
		printf("{\"ev\":\"burst\",\"acked\":%d,\"failed\":%d}\n", burst_acked - burst_failed, burst_failed);
		printf("{\"ev\":\"done\"}\n");
		finish(0);
	}
}

static void on_burst_stream(void *arg, const struct ig_js_result *r)
{
	(void)arg;
	print_result("stream_create", r);
	burst_base = r->last_seq;
	char body[32];
	for (int i = 0; i < BURST; i++) {
		int n = snprintf(body, sizeof body, "b%d", i);
		must(ig_js_publish(nc, IG_STR("b.x"), (ig_str){ 0 }, (ig_str){ body, (size_t)n }, (ig_str){ 0 }, 30000,
				   on_burst_ack, NULL),
		     "publish");
	}
}

static void burst_start(void)
{
	static const ig_str subjects[] = { IG_STR("b.>") };
	static const struct ig_js_stream_config stream = { .name = IG_STR("B"), .subjects = subjects, .nsubjects = 1,
							   .memory = true };
	must(ig_js_stream_create(nc, &stream, 5000, on_burst_stream, NULL), "stream create");
}

/* ---- restart ---- */

static void restart_next(void);

static void on_restart_done(void *arg, const struct ig_js_result *r)
{
	print_result(arg, r);
	restart_next();
}

static void on_restart_msg(void *arg, const struct ig_nats_msg *m, const struct ig_js_meta *meta)
{
	(void)arg;
	(void)meta;
	print_msg("js_msg", m);
}

static void on_restart_pull_end(void *arg, enum ig_nats_error err, int status, uint32_t received)
{
	(void)arg;
	printf("{\"ev\":\"pull_end\",\"err\":\"%s\",\"status\":%d,\"received\":%u}\n", ig_nats_error_name(err),
	       status, received);
	fflush(stdout);
}

static void restart_next(void)
{
	static const ig_str subjects[] = { IG_STR("r1.>") };
	static const struct ig_js_stream_config stream = { .name = IG_STR("R"), .subjects = subjects, .nsubjects = 1 };
	switch (step++) {
	case 0:
		must(ig_js_stream_create(nc, &stream, 5000, on_restart_done, "stream_create"), "stream create");
		break;
	case 1:
		must(ig_js_publish(nc, IG_STR("r1.a"), (ig_str){ 0 }, IG_STR("kept"), (ig_str){ 0 }, 5000, on_restart_done,
				   "publish"),
		     "publish");
		break;
	case 2: {
		/* a consumer of a subject nothing is published to: its pull waits */
		struct ig_js_consumer_config c = { .stream = IG_STR("R"), .durable = IG_STR("RC"),
						   .filter_subject = IG_STR("r1.none") };
		must(ig_js_consumer_create(nc, &c, 5000, on_restart_done, "consumer_create"), "consumer create");
		break;
	}
	case 3: {
		struct ig_js_pull_options o = { .batch = 1, .expires_ns = 60000000000 };
		must(ig_js_pull(nc, IG_STR("R"), IG_STR("RC"), &o, on_restart_msg, on_restart_pull_end, NULL), "pull");
		printf("{\"ev\":\"stop_now\"}\n");
		fflush(stdout);
		break;
	}
	case 4: /* after the restart */
		must(ig_js_stream_info(nc, IG_STR("R"), 5000, on_restart_done, "stream_info"), "stream info");
		break;
	default:
		printf("{\"ev\":\"done\"}\n");
		finish(0);
	}
}

/* ---- reconnect ---- */

static void on_reconnect_msg(void *arg, const struct ig_nats_msg *m)
{
	(void)arg;
	print_msg("msg", m);
	printf("{\"ev\":\"done\"}\n");
	finish(0);
}

/* ---- the connection's life ---- */

static void on_up(void *arg, struct ig_nats *c)
{
	(void)arg;
	printf("{\"ev\":\"up\",\"connects\":%llu,\"max_payload\":%zu,\"ready\":%s}\n",
	       (unsigned long long)ig_nats_connects(c), ig_nats_max_payload(c), ig_http_health_ready() ? "true" : "false");
	fflush(stdout);
	if (!strcmp(mode, "connect") || !strcmp(mode, "first-up")) {
		finish(0);
	} else if (!strcmp(mode, "core")) {
		core_start();
	} else if (!strcmp(mode, "js")) {
		js_next();
	} else if (!strcmp(mode, "burst")) {
		burst_start();
	} else if (!strcmp(mode, "restart")) {
		restart_next();
	} else if (!strcmp(mode, "reconnect")) {
		enum ig_nats_error e;
		if (ig_nats_connects(c) == 1) {
			if (!ig_nats_subscribe(c, IG_STR("r.x"), (ig_str){ 0 }, on_reconnect_msg, NULL, &e))
				must(e, "subscribe");
		} else {
			must(ig_nats_publish(c, IG_STR("r.x"), (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("after")), "publish");
		}
	}
}

static void on_down(void *arg, struct ig_nats *c, enum ig_nats_error kind, const char *why)
{
	(void)arg;
	if (kind == IG_NATS_CLOSED)
		return;
	printf("{\"ev\":\"down\",\"kind\":\"%s\",\"connects\":%llu,", ig_nats_error_name(kind),
	       (unsigned long long)ig_nats_connects(c));
	out_str("why", (ig_str){ why, strlen(why) });
	enum ig_nats_error e = ig_nats_publish(c, IG_STR("r.x"), (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("lost"));
	printf(",\"publish\":\"%s\",\"ready\":%s}\n", ig_nats_error_name(e), ig_http_health_ready() ? "true" : "false");
	fflush(stdout);
	if (!strcmp(mode, "connect") || (!strcmp(mode, "idle") && ig_nats_connects(c) > 0))
		finish(0);
}

static const struct ig_nats_conn_ops conn_ops = { .up = on_up, .down = on_down };

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "verify"))) {
		fprintf(stderr, "usage: natscheck core|connect|first-up|idle|js|burst|restart|reconnect URL [verify]\n");
		return 2;
	}
	static const struct ig_settings *const parts[] = { &ig_tls_trust_settings };
	char *no_args[] = { argv[0], NULL };
	const struct ig_config_args env_only = { .argc = 1, .argv = no_args, .name = "natscheck", .version = "0" };
	if (ig_config_parse(parts, IG_COUNTOF(parts), &env_only) != IG_CONFIG_OK)
		return 2;
	mode = argv[1];
	if (ig_loop_init(&loop, 0) != 0) {
		perror("natscheck: loop");
		return 1;
	}
	/* /readyz's state, as a service has it once listening: the client's
	   backend alone decides it. */
	ig_http_health_set_listening();
	int backend = ig_backend_register("nats");
	struct ig_nats_options o = { .url = argv[2], .name = "natscheck", .reconnect_min_ms = 50, .backend = backend + 1,
				     .reconnect_max_ms = 400, .connect_timeout_ms = 3000, .tls_verify = argc == 4 };
	if (getenv("NATSCHECK_PING_MS"))
		o.ping_interval_ms = (uint32_t)atoi(getenv("NATSCHECK_PING_MS"));
	const char *why;
	nc = ig_nats_new(&loop, &o, &conn_ops, NULL, &why);
	if (!nc) {
		printf("{\"ev\":\"new_failed\",\"why\":\"%s\"}\n", why);
		return 2;
	}
	loop.running = true;
	ig_loop_run(&loop);
	return 0;
}
