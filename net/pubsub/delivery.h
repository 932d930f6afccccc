/* What both providers' consumers (consumer.c on PostgreSQL, nats_consumer.c
 * on NATS) share about a delivery: its slot and task (net/http/task.h) in
 * which serve.c decodes, checks and handles the message, the verdict read
 * from the answer's status, the retry's backoff, and the delivery
 * metrics. No provider's state: each consumer keeps its own, and is told
 * the verdict through its callback. */
#ifndef NET_PUBSUB_DELIVERY_H
#define NET_PUBSUB_DELIVERY_H

#include "key.h"
#include "topics.h"
#include "net/http/inproc.h"
#include "net/http/task.h"
#include "net/metrics/metrics.h"

enum ig_pubsub_outcome { IG_PUBSUB_OUT_ACK, IG_PUBSUB_OUT_RETRY, IG_PUBSUB_OUT_DROP, IG_PUBSUB_OUT_DEAD, IG_PUBSUB_OUTCOMES };

/* A subscription's delivery counters by outcome and its handling times. */
struct ig_pubsub_sub_stats {
	ig_counter delivered[IG_PUBSUB_OUTCOMES];
	struct ig_histogram duration;
};

/* min_backoff doubled per attempt after the first, up to max_backoff. */
uint64_t ig_pubsub_backoff_us(const struct ig_pubsub_subscription *sub, uint64_t attempts);

/* The handler's verdict from its answer's status (serve.c's, key.h; 0:
 * no answer came): any status but those three is a retry; *why says why
 * for a retry or a dead delivery. */
enum ig_pubsub_outcome ig_pubsub_outcome_of(int status, const char **why);

/* Runs sub's handler with ctx's body (the message's JSON) on a handler
 * coroutine (net/http/wait.h: it may make linear calls), in ctx's context
 * (its request id, the publisher's traceparent), and answers its verdict
 * as ctx's status (key.h): a message that breaks the topic's schema
 * (logged, naming the subscription), a retry as a problem. Every
 * delivery's one handling, a consumer's task or a request from outside
 * (serve.c). */
struct ig_ctx;
void ig_pubsub_handle(struct ig_ctx *ctx, const struct ig_pubsub_subscription *sub);

/* A subscription as a consumer runs it: the first member of each
 * consumer's own state per subscription. */
struct ig_pubsub_lane {
	const struct ig_pubsub_subscription *sub;
	char target[128]; /* IG_PUBSUB_PATH<subscription> */
	size_t target_len;
	struct ig_pubsub_sub_stats stats;
};

/* The consumer's states for the table's subscriptions, size bytes each
 * (a lane first), in one array from calloc, each lane set and the rest
 * zero: NULL when out of memory. At the start. */
void *ig_pubsub_lanes_make(const struct ig_pubsub_table *table, size_t size);

/* ingot_pubsub_delivered_total and ingot_pubsub_handling_duration_seconds
 * by subscription, one writer (the start registers it) for all that
 * delivers: a consumer's lanes and the deliveries that come from outside
 * (ig_pubsub_count_inbound). */
extern struct ig_metrics_source ig_pubsub_delivery_metrics_source;

/* The consumer's lanes for that writer: table's subscriptions' (the
 * document's), first, stride bytes apart (ig_pubsub_lanes_make's size).
 * At the consumer's start, before any core runs. */
void ig_pubsub_delivery_lanes(const struct ig_pubsub_table *table, const struct ig_pubsub_lane *first, size_t stride);

/* A delivery that came from outside, a push endpoint's request (push.c)
 * or an SQS record (sqs.c), handled on core (its thread; single writer):
 * its outcome and its handling time since started_us (ig_monotonic_us),
 * for sub, one of the document's subscriptions. Nothing counted when
 * memory for the core's counters runs out. */
void ig_pubsub_count_inbound(uint32_t core, const struct ig_pubsub_subscription *sub, enum ig_pubsub_outcome outcome,
			     uint64_t started_us);

struct ig_pubsub_delivery;

/* The consumer's end of a delivery that ran (or could never run): the
 * outcome (a retry already made dead at max attempts) and why, for a
 * retry or a dead one. Called once per ig_pubsub_delivery_run that
 * returned true: from the core's loop after the handler's answer, or from
 * inside that call for a message too large ever to run. */
typedef void ig_pubsub_verdict_fn(struct ig_pubsub_delivery *d, enum ig_pubsub_outcome outcome, const char *why);

/* A delivery slot, the first member of each consumer's own: private
 * fields but attempts (set before a run; read by the verdict), busy (the
 * consumer's: whether the slot is taken) and arena (the consumer's
 * scratch, reset by it). */
struct ig_pubsub_delivery {
	struct ig_pubsub_lane *lane;
	ig_pubsub_verdict_fn *verdict;
	uint64_t attempts, started_us;
	bool busy;
	ig_arena arena;
	/* The run's message and traceparent, copied: what the consumer
	   passed may be gone before the handler is. */
	char *buf;
	size_t cap, body_len;
	char traceparent[64];
	ig_header field; /* the request's one field: traceparent */
	struct http_task task;
};

/* Sets d up on w's core for lane's subscription: its buffer (a message's
 * largest) taken now, an arena of at most arena_limit bytes from w's
 * blocks. At the core's start. d is busy, never to be run, when the
 * buffer cannot be had. */
void ig_pubsub_delivery_init(struct ig_pubsub_delivery *d, struct http_inproc_worker *w, struct ig_pubsub_lane *lane,
			     ig_pubsub_verdict_fn *verdict, size_t arena_limit);

/* Runs body (the message's JSON) as attempt d->attempts: a task on w's
 * core, POST to the lane's target with traceparent (empty: none), whose
 * handler is the subscription's. True when it runs (its verdict comes
 * later), or when it never can (larger than the buffer: the verdict,
 * dead, has been given); false, nothing given, when the core takes no
 * task now (it drains or has no exchange free): the consumer gives the
 * message back. */
IG_MUST_USE bool ig_pubsub_delivery_run(struct ig_pubsub_delivery *d, struct http_inproc_worker *w,
					ig_str traceparent, ig_str body);

/* The body of d's last run, in d's buffer until its next run (a dead
 * letter's copy needs none of its own). */
ig_str ig_pubsub_delivery_body(const struct ig_pubsub_delivery *d);

#endif
