/* The delivery path both providers' consumers share (delivery.h). */
#include "delivery.h"

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

int ig_pubsub_request_run(struct http_inproc_slot *slot, struct http_inproc_worker *w, const char *target,
			  struct ig_pubsub_request *rq, int64_t attempts, ig_str traceparent, ig_str body,
			  http_inproc_done_fn *done, void *arg, enum http_inproc_result *result)
{
	size_t n = (size_t)ig_fmt_i64(rq->attempt_text, attempts);
	size_t nh = 0;
	rq->headers[nh++] = (ig_header){ IG_STR(IG_PUBSUB_KEY_HEADER), { ig_pubsub_key, IG_PUBSUB_KEY_LEN } };
	rq->headers[nh++] = (ig_header){ IG_STR("Ingot-Pubsub-Attempt"), { rq->attempt_text, n } };
	if (traceparent.len)
		rq->headers[nh++] = (ig_header){ IG_STR("traceparent"), traceparent };
	const struct http_inproc_request req = {
		.method = IG_STR("POST"),
		.target = { target, strlen(target) },
		.headers = rq->headers,
		.header_count = nh,
		.body = body,
		.peer = IG_STR("pubsub"),
	};
	return ig_http_inproc_slot_run(slot, w, &req, done, arg, result);
}

static const struct ig_pubsub_sub_stats *at(const struct ig_pubsub_sub_stats *first, size_t stride, size_t i)
{
	return (const struct ig_pubsub_sub_stats *)((const char *)first + i * stride);
}

void ig_pubsub_write_delivery_metrics(struct ig_expo *e, const struct ig_pubsub_table *table,
				      const struct ig_pubsub_sub_stats *first, size_t stride)
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
