/* What both providers' consumers (consumer.c on PostgreSQL, nats_consumer.c
 * on NATS) share about a delivery: its in-process request to serve.c, the
 * verdict read from the answer, the retry's backoff, and the delivery
 * metrics. No provider's state: each consumer keeps its own. */
#ifndef NET_PUBSUB_DELIVERY_H
#define NET_PUBSUB_DELIVERY_H

#include "key.h"
#include "topics.h"
#include "net/http/inproc.h"
#include "net/metrics/metrics.h"

enum ig_pubsub_outcome { IG_PUBSUB_OUT_ACK, IG_PUBSUB_OUT_RETRY, IG_PUBSUB_OUT_DROP, IG_PUBSUB_OUT_DEAD, IG_PUBSUB_OUTCOMES };

/* A subscription's delivery counters by outcome and its handling times. */
struct ig_pubsub_sub_stats {
	ig_counter delivered[IG_PUBSUB_OUTCOMES];
	struct ig_histogram duration;
};

/* min_backoff doubled per attempt after the first, up to max_backoff. */
uint64_t ig_pubsub_backoff_us(const struct ig_pubsub_subscription *sub, uint64_t attempts);

/* The handler's verdict from its in-process answer (serve.c's statuses):
 * any status but those three is a retry; *why says why for a retry or a
 * dead delivery. */
enum ig_pubsub_outcome ig_pubsub_outcome_of(enum http_inproc_result result, const struct http_inproc_response *res,
					    const char **why);

/* A delivery's request fields, kept with the delivery while it runs. */
struct ig_pubsub_request {
	char attempt_text[24];
	ig_header headers[3];
};

/* Starts POST target (IG_PUBSUB_PATH<subscription>) with body, the
 * consumer's key, the attempt and traceparent (empty: none) in slot, as
 * ig_http_inproc_slot_run does (0, or -1 with *result). */
int ig_pubsub_request_run(struct http_inproc_slot *slot, struct http_inproc_worker *w, const char *target,
			  struct ig_pubsub_request *rq, int64_t attempts, ig_str traceparent, ig_str body,
			  http_inproc_done_fn *done, void *arg, enum http_inproc_result *result);

/* ingot_pubsub_delivered_total and ingot_pubsub_handling_duration_seconds
 * for the table's subscriptions: subscription i's stats at first, stride
 * bytes apart (a member of each consumer's per-subscription state). */
void ig_pubsub_write_delivery_metrics(struct ig_expo *e, const struct ig_pubsub_table *table,
				      const struct ig_pubsub_sub_stats *first, size_t stride);

#endif
