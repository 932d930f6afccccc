/* A delivery's handler run, whichever way the delivery came, and the
 * delivery path both providers' consumers share (delivery.h). */
#include "delivery.h"
#include "net/http/wait.h"
#include "ingot/http.h"
#include "ingot/log.h"
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

enum ig_pubsub_outcome ig_pubsub_outcome_of(int status, const char **why)
{
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

/* A message's largest. */
#define DELIVERY_BUF (256 * 1024)

void *ig_pubsub_lanes_make(const struct ig_pubsub_table *table, size_t size)
{
	char *all = calloc(table->nsubs, size);
	for (size_t i = 0; all && i < table->nsubs; i++) {
		struct ig_pubsub_lane *l = (struct ig_pubsub_lane *)(all + i * size);
		l->sub = &table->subs[i];
		/* the name is a label (no '/', '?', '%'): the path as it is */
		int n = snprintf(l->target, sizeof l->target, IG_PUBSUB_PATH "%s", l->sub->name);
		l->target_len = n < (int)sizeof l->target ? (size_t)n : sizeof l->target - 1;
	}
	return all;
}

__attribute__((cold)) void ig_pubsub_delivery_init(struct ig_pubsub_delivery *d, struct http_inproc_worker *w,
						   struct ig_pubsub_lane *lane, ig_pubsub_verdict_fn *verdict,
						   size_t arena_limit)
{
	d->lane = lane;
	d->verdict = verdict;
	ig_arena_init(&d->arena, &w->blocks, arena_limit);
	d->buf = malloc(DELIVERY_BUF); /* for the process's life */
	d->cap = d->buf ? DELIVERY_BUF : 0;
	d->busy = !d->buf;
}

/* ---- the handler's run ---- */

struct delivery_work {
	struct ig_wait_work work;
	const struct ig_pubsub_subscription *sub;
};

static int run_handler(ig_ctx *ctx, const void *in, void *out)
{
	const struct ig_pubsub_subscription *sub = in;
	(void)out;
	enum ig_pubsub_result result = IG_PUBSUB_RETRY;
	if (sub->deliver(ctx, ig_req(ctx)->body, &result) != 0) {
		struct ig_logline l;
		if (ig_log_req(ctx, &l, IG_LOG_WARN, "pub/sub message breaks the topic's schema")) {
			ig_log_cstr(&l, "subscription", sub->name);
			ig_log_end(&l);
		}
		return IG_PUBSUB_STATUS_INVALID;
	}
	switch (result) {
	case IG_PUBSUB_ACK:
		return IG_PUBSUB_STATUS_ACK;
	case IG_PUBSUB_DROP:
		return IG_PUBSUB_STATUS_DROP;
	default:
		return 503;
	}
}

static void answer(ig_ctx *ctx, int status)
{
	if (status == IG_PUBSUB_STATUS_ACK || status == IG_PUBSUB_STATUS_DROP)
		ig_finish(ctx, status);
	else
		ig_respond_problem(ctx, status, status == IG_PUBSUB_STATUS_INVALID ? "the message breaks the topic's schema"
										   : "the handler asked for a retry");
}

static void handler_returned(ig_ctx *ctx, void *arg)
{
	answer(ctx, ((struct delivery_work *)arg)->work.status);
}

void ig_pubsub_handle(ig_ctx *ctx, const struct ig_pubsub_subscription *sub)
{
	struct delivery_work *w = ig_alloc(ctx, sizeof *w);
	if (!w) {
		ig_respond_problem(ctx, 500, "out of request memory");
		return;
	}
	*w = (struct delivery_work){
		.work = { .handle = run_handler, .name = sub->handler, .in = sub, .finish = handler_returned },
		.sub = sub,
	};
	switch (ig_wait_run(ctx, &w->work)) {
	case 1:
		answer(ctx, w->work.status);
		break;
	case 0:
		break;
	default:
		ig_respond_problem(ctx, 503, "too many requests are waiting on this core");
	}
}

/* ---- the consumers' deliveries ---- */

static void settle(struct ig_pubsub_delivery *d, enum ig_pubsub_outcome outcome, const char *why)
{
	ig_histogram_observe(&d->lane->stats.duration, &ig_duration_bounds, ig_monotonic_us() - d->started_us);
	if (outcome == IG_PUBSUB_OUT_RETRY && d->attempts >= d->lane->sub->max_attempts) {
		outcome = IG_PUBSUB_OUT_DEAD;
		why = "max attempts reached";
	}
	d->verdict(d, outcome, why);
}

static void answered(struct http_task *t, struct ig_ctx *x)
{
	struct ig_pubsub_delivery *d = (struct ig_pubsub_delivery *)((char *)t - offsetof(struct ig_pubsub_delivery, task));
	const char *why;
	enum ig_pubsub_outcome outcome = ig_pubsub_outcome_of(x->status, &why);
	settle(d, outcome, why);
}

bool ig_pubsub_delivery_run(struct ig_pubsub_delivery *d, struct http_inproc_worker *w, ig_str traceparent,
			    ig_str body)
{
	d->started_us = ig_monotonic_us();
	if (body.len > d->cap) {
		if (w->core->draining)
			return false;
		/* It never will fit. */
		settle(d, IG_PUBSUB_OUT_DEAD, "the message is larger than a delivery's buffer");
		return true;
	}
	if (body.len)
		memcpy(d->buf, body.ptr, body.len);
	d->body_len = body.len;
	/* One that does not fit is no traceparent (55 octets): none. */
	size_t tn = traceparent.len < sizeof d->traceparent ? traceparent.len : 0;
	if (tn)
		memcpy(d->traceparent, traceparent.ptr, tn);
	d->field = (ig_header){ IG_STR("traceparent"), { d->traceparent, tn } };
	size_t n = d->lane->target_len;
	const struct http_request r = {
		.method = "POST", .method_len = 4,
		.target = d->lane->target, .target_len = n,
		.path = d->lane->target, .path_len = n,
		.minor_version = 1,
		.headers = &d->field, .header_capacity = 1, .num_headers = tn ? 1 : 0,
		.traceparent_field = tn ? 1 : 0, .traceparents = tn ? 1 : 0,
	};
	struct ig_ctx *x = ig_http_task_begin(&d->task, w->core, &r, (ig_str){ d->buf, body.len }, answered);
	if (!x)
		return false;
	ig_pubsub_handle(x, d->lane->sub);
	return true;
}

ig_str ig_pubsub_delivery_body(const struct ig_pubsub_delivery *d)
{
	return (ig_str){ d->buf, d->body_len };
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
