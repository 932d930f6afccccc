/* The delivery path both providers' consumers share (delivery.h). */
#include "delivery.h"
#include "kernel/runtime/clock.h"
#include "kernel/process/cores.h"

#include <stdatomic.h>

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

/* ---- the delivery metrics ---- */

/* The consumer's lanes and, per core, the counters of deliveries from
 * outside: each core's own array (by subscription), made on its first
 * such delivery; the scrape sums them. */
static struct {
	const struct ig_pubsub_table *table; /* the consumer's; else the document's */
	const struct ig_pubsub_lane *first;
	size_t stride;
	_Atomic(struct ig_pubsub_sub_stats *) inbound[IG_MAX_CORES];
} dm;

static const struct ig_pubsub_table *table_of(void)
{
	return dm.table ? dm.table : &ig_api_pubsub; /* NULL: a document without Pub/Sub */
}

static void write_delivery_metrics(struct ig_expo *e, void *arg)
{
	(void)arg;
	const struct ig_pubsub_table *table = table_of();
	if (!table)
		return;
	struct ig_pubsub_sub_stats *cores[IG_MAX_CORES];
	size_t ncores = 0;
	for (size_t c = 0; c < IG_MAX_CORES; c++)
		if ((cores[ncores] = atomic_load_explicit(&dm.inbound[c], memory_order_acquire)))
			ncores++;
	ig_expo_family(e, "ingot_pubsub_delivered_total", "counter",
		       "deliveries handled by subscription and result: ack, retry (after a backoff), drop, "
		       "dead (max attempts, or a message that breaks the schema)");
	for (size_t i = 0; i < table->nsubs; i++)
		for (int k = 0; k < IG_PUBSUB_OUTCOMES; k++) {
			uint64_t n = dm.first ? ig_counter_get(&at(dm.first, dm.stride, i)->delivered[k]) : 0;
			for (size_t c = 0; c < ncores; c++)
				n += ig_counter_get(&cores[c][i].delivered[k]);
			const char *name = table->subs[i].name;
			const struct ig_label l[2] = { { "subscription", name, strlen(name) },
						       { "result", outcome_names[k], strlen(outcome_names[k]) } };
			ig_expo_sample(e, "ingot_pubsub_delivered_total", l, 2, (double)n);
		}
	ig_expo_family(e, "ingot_pubsub_handling_duration_seconds", "histogram",
		       "from a delivery's claim (or arrival) to its handler's verdict, by subscription");
	for (size_t i = 0; i < table->nsubs; i++) {
		const char *name = table->subs[i].name;
		const struct ig_label l = { "subscription", name, strlen(name) };
		struct ig_histogram sum = { 0 };
		if (dm.first)
			ig_histogram_sum_into(&sum, &at(dm.first, dm.stride, i)->duration);
		for (size_t c = 0; c < ncores; c++)
			ig_histogram_sum_into(&sum, &cores[c][i].duration);
		ig_expo_histogram(e, "ingot_pubsub_handling_duration_seconds", &l, 1, &sum, &ig_duration_bounds);
	}
}

struct ig_metrics_source ig_pubsub_delivery_metrics_source = { .write = write_delivery_metrics };

void ig_pubsub_delivery_lanes(const struct ig_pubsub_table *table, const struct ig_pubsub_lane *first, size_t stride)
{
	dm.table = table;
	dm.first = first;
	dm.stride = stride;
}

void ig_pubsub_count_inbound(uint32_t core, const struct ig_pubsub_subscription *sub, enum ig_pubsub_outcome outcome,
			     uint64_t started_us)
{
	const struct ig_pubsub_table *table = table_of();
	if (!table || core >= IG_MAX_CORES || sub < table->subs || sub >= table->subs + table->nsubs)
		return;
	struct ig_pubsub_sub_stats *stats = atomic_load_explicit(&dm.inbound[core], memory_order_relaxed);
	if (!stats) { /* for the process's life: a leak checker finds it through dm */
		if (!(stats = calloc(table->nsubs, sizeof *stats)))
			return;
		atomic_store_explicit(&dm.inbound[core], stats, memory_order_release);
	}
	struct ig_pubsub_sub_stats *st = &stats[sub - table->subs];
	ig_counter_add(&st->delivered[outcome], 1);
	ig_histogram_observe(&st->duration, &ig_duration_bounds, ig_monotonic_us() - started_us);
}
