/* The delivery path both providers' consumers share (delivery.h). */
#include "delivery.h"
#include "kernel/runtime/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const outcome_names[IG_PUBSUB_OUTCOMES] = { "ack", "retry", "drop", "dead" };

uint64_t ig_pubsub_backoff_us(const struct ig_pubsub_subscription *sub, uint64_t attempts)
{
	uint64_t b = sub->min_backoff_us;
	for (uint64_t i = 1; i < attempts && b < sub->max_backoff_us; i++)
		b *= 2;
	return b < sub->max_backoff_us ? b : sub->max_backoff_us;
}

enum ig_pubsub_outcome ig_pubsub_outcome_of(enum http_inproc_result result, const struct http_inproc_response *res,
					    const char **why)
{
	int status = result == HTTP_INPROC_OK ? res->status : 0;
	*why = NULL;
	if (status == IG_PUBSUB_STATUS_ACK)
		return IG_PUBSUB_OUT_ACK;
	if (status == IG_PUBSUB_STATUS_DROP)
		return IG_PUBSUB_OUT_DROP;
	if (status == IG_PUBSUB_STATUS_INVALID) {
		*why = "the message breaks the topic's schema";
		return IG_PUBSUB_OUT_DEAD;
	}
	*why = status == 503 ? "the handler asked for a retry" : "the handler failed";
	return IG_PUBSUB_OUT_RETRY;
}

/* A delivery's request: the message's JSON and a head. */
#define DELIVERY_BUF (256 * 1024)

void *ig_pubsub_lanes_make(const struct ig_pubsub_table *table, size_t size)
{
	char *all = calloc(table->nsubs, size);
	for (size_t i = 0; all && i < table->nsubs; i++) {
		struct ig_pubsub_lane *l = (struct ig_pubsub_lane *)(all + i * size);
		l->sub = &table->subs[i];
		/* the name is a label (no '/', '?', '%'): the path as it is */
		snprintf(l->target, sizeof l->target, IG_PUBSUB_PATH "%s", l->sub->name);
	}
	return all;
}

void ig_pubsub_delivery_init(struct ig_pubsub_delivery *d, struct http_inproc_worker *w, struct ig_pubsub_lane *lane,
			     ig_pubsub_verdict_fn *verdict, size_t arena_limit)
{
	d->lane = lane;
	d->verdict = verdict;
	d->busy = ig_http_inproc_slot_init(&d->slot, w, DELIVERY_BUF, arena_limit) != 0;
}

static void settle(struct ig_pubsub_delivery *d, enum ig_pubsub_outcome outcome, const char *why)
{
	ig_histogram_observe(&d->lane->stats.duration, &ig_duration_bounds, ig_monotonic_us() - d->started_us);
	if (outcome == IG_PUBSUB_OUT_RETRY && d->attempts >= d->lane->sub->max_attempts) {
		outcome = IG_PUBSUB_OUT_DEAD;
		why = "max attempts reached";
	}
	d->verdict(d, outcome, why);
}

static void answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	const char *why;
	enum ig_pubsub_outcome outcome = ig_pubsub_outcome_of(result, res, &why);
	settle(arg, outcome, why);
}

bool ig_pubsub_delivery_run(struct ig_pubsub_delivery *d, struct http_inproc_worker *w, ig_str traceparent,
			    ig_str body)
{
	d->started_us = ig_monotonic_us();
	size_t n = (size_t)ig_fmt_i64(d->attempt_text, (int64_t)d->attempts);
	size_t nh = 0;
	d->headers[nh++] = (ig_header){ IG_STR(IG_PUBSUB_KEY_HEADER), { ig_pubsub_key, IG_PUBSUB_KEY_LEN } };
	d->headers[nh++] = (ig_header){ IG_STR("Ingot-Pubsub-Attempt"), { d->attempt_text, n } };
	if (traceparent.len)
		d->headers[nh++] = (ig_header){ IG_STR("traceparent"), traceparent };
	const struct http_inproc_request req = {
		.method = IG_STR("POST"),
		.target = { d->lane->target, strlen(d->lane->target) },
		.headers = d->headers,
		.header_count = nh,
		.body = body,
		.peer = IG_STR("pubsub"),
	};
	enum http_inproc_result result;
	if (ig_http_inproc_slot_run(&d->slot, w, &req, answered, d, &result) == 0)
		return true;
	if (!w->core->draining && result == HTTP_INPROC_NO_ROOM) {
		/* Larger than a delivery's buffer: it never will fit. */
		settle(d, IG_PUBSUB_OUT_DEAD, "the message is larger than a delivery's buffer");
		return true;
	}
	return false;
}

static const struct ig_pubsub_sub_stats *at(const struct ig_pubsub_lane *first, size_t stride, size_t i)
{
	return &((const struct ig_pubsub_lane *)((const char *)first + i * stride))->stats;
}

void ig_pubsub_write_delivery_metrics(struct ig_expo *e, const struct ig_pubsub_table *table,
				      const struct ig_pubsub_lane *first, size_t stride)
{
	ig_expo_family(e, "ingot_pubsub_delivered_total", "counter",
		       "deliveries handled by subscription and result: ack, retry (after a backoff), drop, "
		       "dead (max attempts, or a message that breaks the schema)");
	for (size_t i = 0; i < table->nsubs; i++)
		for (int k = 0; k < IG_PUBSUB_OUTCOMES; k++) {
			const char *n = table->subs[i].name;
			const struct ig_label l[2] = { { "subscription", n, strlen(n) },
						       { "result", outcome_names[k], strlen(outcome_names[k]) } };
			ig_expo_sample(e, "ingot_pubsub_delivered_total", l, 2, (double)ig_counter_get(&at(first, stride, i)->delivered[k]));
		}
	ig_expo_family(e, "ingot_pubsub_handling_duration_seconds", "histogram",
		       "from a delivery's claim (or arrival) to its handler's verdict, by subscription");
	for (size_t i = 0; i < table->nsubs; i++) {
		const char *n = table->subs[i].name;
		const struct ig_label l = { "subscription", n, strlen(n) };
		struct ig_histogram sum = { 0 };
		ig_histogram_sum_into(&sum, &at(first, stride, i)->duration);
		ig_expo_histogram(e, "ingot_pubsub_handling_duration_seconds", &l, 1, &sum, &ig_duration_bounds);
	}
}
