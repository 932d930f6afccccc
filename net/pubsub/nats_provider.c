/* Pub/Sub on NATS JetStream (provider.h's ig_pubsub_nats_provider): a
 * client per core (net/nats), a stream per topic made sure of each time a
 * client comes up (an ordered topic's on its partitions' subjects,
 * nats_provider.h), and publish as a linear call that waits for its
 * core's client to be ready for its topic (connected, the topic's stream
 * made) and then for the stream's PubAck, API_TIMEOUT_MS in all (a late
 * send waits MIN_ACK_MS), the publisher's traceparent in the message's
 * headers. It cannot join a PostgreSQL transaction: a
 * publish inside one is an error (IG_PUBSUB_IN_TRANSACTION), never a
 * message sent early. Core 0's client also carries the consumers
 * (nats_consumer.c), cron's claims (nats_cron.c) and readiness; under
 * Lambda (publish only) it carries none of them. */
#include "nats_provider.h"
#include "provider.h"
#include "pubsub_metrics.h"
#include "kernel/process/cores.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"
#include "net/http/wait.h"
#include "kernel/runtime/arena.h"
#include "net/nats/js.h"
#include "ingot/log.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* net/pg is referred to weakly: a NATS deployment need not link it. */
bool ig_pg_transaction_open(ig_ctx *ctx) __attribute__((weak));

#define API_TIMEOUT_MS 5000
/* A publish's least wait for its PubAck, sent late in its 5 s. */
#define MIN_ACK_MS 1000
/* A stream not made (JetStream not ready yet: a cluster electing its
   leader, a server still starting) is tried again this much later. */
#define ENSURE_RETRY_MS 1000
/* A stream's copies on a cluster: JetStream's usual (and a majority
   survives one server's loss). */
#define MAX_REPLICAS 3

struct ready_wait;
struct core_client;

/* A topic's stream as one core's client knows it: made since the client
 * connected (a publish to it goes out), or not yet. */
struct topic_stream {
	struct core_client *c;
	bool made;
};

struct core_client {
	struct ig_timer retry; /* first: the timer's callback finds its client */
	struct ig_nats *nc;
	struct ig_loop *loop;
	struct topic_stream *streams; /* the table's topics', in its order */
	struct ready_wait *waiting;   /* publishes waiting for ready() */
	uint32_t ensuring;  /* stream creates in flight */
	bool streams_ok;    /* every stream is there (and cron's bucket) */
};

/* A publish waiting for its topic's stream on its core's client: in its
 * exchange's arena, linked on the client's list until a stream is made
 * (it asks ready() again), the deadline passes or the exchange is
 * cancelled, whichever comes first. */
struct ready_wait {
	struct ig_wait_call call;
	struct ig_timer deadline;
	struct ready_wait *next, **pprev; /* pprev NULL: not waiting */
	struct core_client *c;
};

static struct {
	const struct ig_pubsub_table *table;
	int backend; /* readiness's "nats", id + 1 */
	uint32_t replicas; /* the streams': the URL's servers, at most MAX_REPLICAS */
	bool cron;   /* cron's ticks are claimed here too (nats_cron.c) */
	struct core_client cores[IG_MAX_CORES];
} s;

void ig_pubsub_nats_name(char out[IG_NATS_NAME_MAX], const char *prefix, const char *topic)
{
	size_t p = strlen(prefix), t = strlen(topic);
	if (p + t >= IG_NATS_NAME_MAX)
		t = IG_NATS_NAME_MAX - 1 - p; /* cannot happen: names are 63 at most */
	memcpy(out, prefix, p);
	memcpy(out + p, topic, t);
	out[p + t] = 0;
}

void ig_pubsub_nats_subject(char out[IG_NATS_NAME_MAX], struct ig_nats *nc, const struct ig_pubsub_topic *t,
			    ig_str json)
{
	ig_pubsub_nats_name(out, IG_NATS_SUBJECT, t->name);
	if (!t->ordering_key)
		return;
	ig_arena *a = ig_nats_scratch(nc);
	ig_arena_reset(a);
	uint32_t k = ig_pubsub_nats_partition(a, t->ordering_key, json);
	ig_arena_reset(a);
	size_t n = strlen(out);
	snprintf(out + n, IG_NATS_NAME_MAX - n, ".%u", (unsigned)k);
}

/* Whether a publish of topic (the table's index) goes out now on c:
 * connected, and its stream made since (a publish before its stream is
 * there finds no responder). Another topic's stream that cannot be made
 * holds none of this one's publishes. */
static bool ready(const struct core_client *c, size_t topic)
{
	return c->nc && ig_nats_connected(c->nc) && c->streams[topic].made;
}

/* w stops waiting (ready, its deadline or its exchange's cancel): the
 * publish goes on and asks ready() again. */
static void ready_wait_end(struct ready_wait *w)
{
	if (!w->pprev)
		return;
	*w->pprev = w->next;
	if (w->next)
		w->next->pprev = w->pprev;
	w->pprev = NULL;
	ig_timer_cancel(&w->c->loop->timers, &w->deadline);
	ig_wait_call_done(&w->call);
}

static void ready_wait_deadline(struct ig_timer *t)
{
	ready_wait_end((struct ready_wait *)((char *)t - offsetof(struct ready_wait, deadline)));
}

static void ready_wait_cancel(struct ig_wait_call *call)
{
	ready_wait_end((struct ready_wait *)call);
}

static const struct ig_wait_call_ops ready_wait_ops = { .cancel = ready_wait_cancel };

/* From ctx's handler: waits until c is ready or deadline_ms passes.
 * Returns: IG_WAIT_OK (ask ready() again), or IG_WAIT_CANCELLED; -1 when
 * the arena is full. */
static int wait_ready(ig_ctx *ctx, struct core_client *c, uint64_t deadline_ms)
{
	struct ready_wait *w = ig_wait_call_new(ctx, sizeof *w, &ready_wait_ops, false);
	if (!w)
		return -1;
	w->c = c;
	w->deadline = (struct ig_timer){ .fn = ready_wait_deadline };
	w->next = c->waiting;
	if (w->next)
		w->next->pprev = &w->next;
	w->pprev = &c->waiting;
	c->waiting = w;
	ig_timer_set(&c->loop->timers, &w->deadline, deadline_ms);
	return ig_wait_for(&w->call);
}

static void log_stream_error(const struct ig_js_result *r)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, "pub/sub: a NATS stream could not be made")) {
		ig_log_cstr(&l, "error", ig_nats_error_name(r->err));
		if (r->err_code)
			ig_log_int(&l, "err_code", r->err_code);
		if (r->description.len)
			ig_log_str(&l, "description", r->description.ptr, r->description.len);
		ig_log_end(&l);
	}
}

/* Whether r says the stream (or the bucket) is there. 10058: it is,
 * with another config (an operator's replicas or limits): it still takes
 * the subject. */
static bool stream_there(const struct ig_js_result *r)
{
	if (r->err == IG_NATS_OK || r->err_code == 10058)
		return true;
	log_stream_error(r);
	return false;
}

/* One create of ensure()'s answered: once all are, the consumers start on
 * core 0 (those on a stream not made fail and are tried again each
 * second, the others run), and, with any not made, all are tried again a
 * little later. */
static void create_answered(struct core_client *c, bool there)
{
	if (!there)
		c->streams_ok = false;
	if (--c->ensuring)
		return;
	if (!c->streams_ok)
		ig_timer_set(&c->loop->timers, &c->retry, ig_monotonic_us() / 1000 + ENSURE_RETRY_MS);
	if (c->loop->core == 0)
		ig_pubsub_nats_consumers_up(c->nc, c->loop);
}

static void stream_made(void *arg, const struct ig_js_result *r)
{
	struct topic_stream *t = arg;
	struct core_client *c = t->c;
	bool there = stream_there(r);
	if (there && !t->made) {
		t->made = true;
		while (c->waiting) /* each asks again for its own topic */
			ready_wait_end(c->waiting);
	}
	create_answered(c, there);
}

static void bucket_made(void *arg, const struct ig_js_result *r)
{
	create_answered(arg, stream_there(r));
}

static void ensure(struct core_client *c, struct ig_nats *nc)
{
	c->streams_ok = true;
	c->ensuring = 1; /* until every create is sent */
	for (size_t i = 0; i < s.table->ntopics; i++) {
		char name[IG_NATS_NAME_MAX], subject[IG_NATS_NAME_MAX + 2];
		ig_pubsub_nats_name(name, IG_NATS_STREAM, s.table->topics[i].name);
		ig_pubsub_nats_name(subject, IG_NATS_SUBJECT, s.table->topics[i].name);
		if (s.table->topics[i].ordering_key)
			strcat(subject, ".*"); /* its partitions' subjects */
		const ig_str subjects[1] = { { subject, strlen(subject) } };
		const struct ig_js_stream_config cfg = { .name = { name, strlen(name) }, .subjects = subjects, .nsubjects = 1,
							 .replicas = s.replicas };
		if (ig_js_stream_create(nc, &cfg, API_TIMEOUT_MS, stream_made, &c->streams[i]) == IG_NATS_OK)
			c->ensuring++;
		else
			c->streams_ok = false;
	}
	if (s.cron && c->loop->core == 0) {
		if (ig_pubsub_nats_cron_bucket(nc, s.replicas, bucket_made, c) == IG_NATS_OK)
			c->ensuring++;
		else
			c->streams_ok = false;
	}
	create_answered(c, true); /* the one ensuring held while sending */
}

static void retry_ensure(struct ig_timer *t)
{
	struct core_client *c = (struct core_client *)t;
	if (c->nc && ig_nats_connected(c->nc) && !c->ensuring)
		ensure(c, c->nc);
}

static void up(void *arg, struct ig_nats *nc)
{
	struct core_client *c = arg;
	if (!c->ensuring)
		ensure(c, nc);
}

static void down(void *arg, struct ig_nats *nc, enum ig_nats_error kind, const char *why)
{
	struct core_client *c = arg;
	(void)nc;
	c->streams_ok = false;
	for (size_t i = 0; i < s.table->ntopics; i++)
		c->streams[i].made = false; /* made again on the next connection */
	ig_timer_cancel(&c->loop->timers, &c->retry);
	if (c->loop->core == 0)
		ig_pubsub_nats_consumers_down();
	struct ig_logline l;
	if (kind != IG_NATS_CLOSED && ig_log_begin(&l, IG_LOG_WARN, "pub/sub: NATS connection lost")) {
		ig_log_int(&l, "core", c->loop->core);
		ig_log_cstr(&l, "error", ig_nats_error_name(kind));
		ig_log_cstr(&l, "why", why);
		ig_log_end(&l);
	}
}

static const struct ig_nats_conn_ops conn_ops = { .up = up, .down = down };

static bool nats_prepare(const struct ig_pubsub_table *table, bool publish_only)
{
	s.table = table;
	int id = ig_backend_register("nats");
	s.backend = id + 1;
	/* A list of servers is a cluster's: each stream on as many of them. */
	s.replicas = 1;
	for (const char *u = ig_pubsub_config.url; *u; u++)
		s.replicas += *u == ',' && s.replicas < MAX_REPLICAS;
	if (!publish_only) {
		s.cron = ig_pubsub_nats_cron_prepare();
		(void)ig_pubsub_nats_consumers_prepare(table);
	}
	return true; /* every core publishes on a client of its own */
}

static void nats_core_start(struct ig_loop *loop, int core_count)
{
	(void)core_count;
	if (loop->core < 0 || loop->core >= IG_MAX_CORES)
		return;
	struct core_client *c = &s.cores[loop->core];
	c->loop = loop;
	c->retry.fn = retry_ensure;
	const char *why = NULL;
	struct ig_logline l;
	c->streams = calloc(s.table->ntopics ? s.table->ntopics : 1, sizeof *c->streams);
	if (!c->streams) {
		if (ig_log_begin(&l, IG_LOG_ERROR, "pub/sub: no NATS client")) {
			ig_log_cstr(&l, "why", "out of memory");
			ig_log_end(&l);
		}
		return;
	}
	for (size_t i = 0; i < s.table->ntopics; i++)
		c->streams[i].c = c;
	/* Core 0's connection alone stands for readiness: one backend, one
	   state. */
	const struct ig_nats_options o = { .url = ig_pubsub_config.url, .name = "ingot-pubsub",
					   .backend = loop->core == 0 ? s.backend : 0, .tls_verify = true };
	c->nc = ig_nats_new(loop, &o, &conn_ops, c, &why);
	if (!c->nc && ig_log_begin(&l, IG_LOG_ERROR, "pub/sub: no NATS client")) {
		ig_log_cstr(&l, "why", why ? why : "unknown");
		ig_log_end(&l);
	}
}

/* A publish's record: the PubAck's outcome. */
struct pub_wait {
	struct ig_wait_call call;
	struct ig_js_result r;
};

static void acked(void *arg, const struct ig_js_result *r)
{
	struct pub_wait *p = arg;
	p->r = *r;
	p->r.description = (ig_str){ 0 }; /* valid during the call only */
	p->r.json = p->r.stream = (ig_str){ 0 };
	ig_wait_call_done(&p->call);
}

static const struct ig_wait_call_ops pub_ops = { 0 };

static int fail(ig_pubsub_error *err, enum ig_pubsub_error_kind kind, const char *message)
{
	*err = (ig_pubsub_error){ kind, message };
	return -1;
}

/* A publish's error line: the NATS error, JetStream's code (0: none) and
 * why (NULL: none). */
static void log_publish_failed(ig_ctx *ctx, const struct ig_pubsub_topic *t, enum ig_nats_error e, int64_t err_code,
			       const char *why)
{
	struct ig_logline l;
	if (ig_log_req(ctx, &l, IG_LOG_ERROR, "publish failed")) {
		ig_log_cstr(&l, "topic", t->name);
		ig_log_cstr(&l, "error", ig_nats_error_name(e));
		if (err_code)
			ig_log_int(&l, "err_code", err_code);
		if (why)
			ig_log_cstr(&l, "why", why);
		ig_log_end(&l);
	}
}

/* From ctx's handler: waits until c is ready for topic (a process just
 * started, a Lambda function's first invocation, a reconnect) or
 * deadline_ms passes. Returns 0 when ready, else -1 with *err filled. */
static int await_ready(ig_ctx *ctx, struct core_client *c, const struct ig_pubsub_topic *t, size_t topic,
		       uint64_t deadline_ms, ig_pubsub_error *err)
{
	while (!ready(c, topic) && ig_monotonic_us() / 1000 < deadline_ms) {
		int w = wait_ready(ctx, c, deadline_ms);
		if (w < 0)
			return fail(err, IG_PUBSUB_NO_MEMORY, "out of request memory");
		if (w != IG_WAIT_OK)
			return fail(err, IG_PUBSUB_CANCELLED, "cancelled while publishing");
	}
	if (ready(c, topic))
		return 0;
	bool up = ig_nats_connected(c->nc);
	log_publish_failed(ctx, t, up ? IG_NATS_TIMEOUT : IG_NATS_NOT_CONNECTED, 0,
			   up ? "its stream is not made" : "no connection");
	return fail(err, IG_PUBSUB_PROVIDER, "NATS is not ready: the message was not sent");
}

static int nats_publish(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
			ig_pubsub_error *err)
{
	if (ig_pg_transaction_open && ig_pg_transaction_open(ctx))
		return fail(err, IG_PUBSUB_IN_TRANSACTION,
			    "a publish inside a transaction needs the PostgreSQL provider: NATS cannot join it");
	struct ig_loop *loop = ig_ctx_loop(ctx);
	struct core_client *c = loop->core >= 0 && loop->core < IG_MAX_CORES ? &s.cores[loop->core] : NULL;
	struct ig_nats *nc = c ? c->nc : NULL;
	if (!nc)
		return fail(err, IG_PUBSUB_NO_PROVIDER, "no NATS client on this core");
	size_t topic = (size_t)(t - s.table->topics);
	if (t < s.table->topics || topic >= s.table->ntopics)
		return fail(err, IG_PUBSUB_NO_PROVIDER, "not one of the document's topics");
	char headers[] = "NATS/1.0\r\ntraceparent: "
			 "00-00000000000000000000000000000000-0000000000000000-00\r\n\r\n";
	ig_traceparent_child(ctx, headers + 23);
	/* The message's id in the stream's duplicate window (2 minutes by
	   default): its trace and its own span, new for each publish. A send
	   whose connection ends before the PubAck is sent again, and the
	   stream drops it if the first reached it. */
	const ig_str msg_id = { headers + 26, 32 + 1 + 16 };
	char subject[IG_NATS_NAME_MAX];
	ig_pubsub_nats_subject(subject, nc, t, (ig_str){ json, len });
	uint64_t deadline_ms = ig_monotonic_us() / 1000 + API_TIMEOUT_MS;
	for (;;) {
		if (await_ready(ctx, c, t, topic, deadline_ms, err) != 0)
			return -1;
		/* What is left of the 5 s, but never less than MIN_ACK_MS: a
		   send must have the time for its PubAck, or a message that
		   got stored would be told as not. */
		uint64_t now_ms = ig_monotonic_us() / 1000;
		uint32_t ack_ms = deadline_ms > now_ms + MIN_ACK_MS ? (uint32_t)(deadline_ms - now_ms) : MIN_ACK_MS;
		struct pub_wait *p = ig_wait_call_new(ctx, sizeof *p, &pub_ops, false);
		if (!p)
			return fail(err, IG_PUBSUB_NO_MEMORY, "out of request memory");
		p->r = (struct ig_js_result){ 0 }; /* the record's header alone is set */
		enum ig_nats_error e = ig_js_publish(nc, (ig_str){ subject, strlen(subject) },
						     (ig_str){ headers, sizeof headers - 1 }, (ig_str){ json, len }, msg_id,
						     ack_ms, acked, p);
		if (e != IG_NATS_OK) {
			p->r.err = e;
			ig_wait_call_done(&p->call);
		}
		if (ig_wait_for(&p->call) != IG_WAIT_OK)
			return fail(err, IG_PUBSUB_CANCELLED, "cancelled while publishing");
		if (p->r.err == IG_NATS_OK) {
			ig_pubsub_count_published(ctx, t);
			return 0;
		}
		/* The connection ended first (it may have been found dead only
		   now: a Lambda function thawed): again, on the next one. */
		if ((p->r.err == IG_NATS_DISCONNECTED || p->r.err == IG_NATS_NOT_CONNECTED) &&
		    ig_monotonic_us() / 1000 < deadline_ms)
			continue;
		log_publish_failed(ctx, t, p->r.err, p->r.err_code, NULL);
		return fail(err, IG_PUBSUB_PROVIDER, "NATS did not store the message (no PubAck)");
	}
}

const struct ig_pubsub_provider ig_pubsub_nats_provider = {
	.name = "nats",
	.publish = nats_publish,
	.prepare = nats_prepare,
	.core_start = nats_core_start,
};
