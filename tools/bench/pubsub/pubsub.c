/* The Pub/Sub bench app's handlers (tools/bench/pubsub.js): a publish per
 * request, and a subscription handler that keeps each message's latency
 * (publish to handler, wall clock) for GET /stats, but for the backlog's
 * unstamped ones (sent_us 0), which are counted only, as
 * tools/bench/pgboss-worker.js does. Run with one thread:
 * the consumer and the requests share core 0, so the samples need no lock. */
#include "api.h"

#include <stdlib.h>
#include <time.h>

#define SAMPLES (1 << 20)
static uint32_t samples[SAMPLES];
static uint32_t count, nsamples; /* handled; latencies kept */

int publishBench(ig_ctx *ctx, const struct publishBench_in *in, struct publishBench_out *out)
{
	(void)out;
	ig_pubsub_error err;
	if (ig_publish_bench(ctx, &in->body, &err) < 0) {
		ig_respond_problem(ctx, 500, err.message);
		return 500;
	}
	return 204;
}

enum ig_pubsub_result onSink(ig_ctx *ctx, const struct BenchMsg *msg)
{
	(void)ctx;
	count++;
	if (!msg->sent_us) /* the throughput run's backlog: counted only */
		return IG_PUBSUB_ACK;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, d = now - msg->sent_us;
	if (nsamples < SAMPLES)
		samples[nsamples++] = d < 0 ? 0 : d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	return IG_PUBSUB_ACK;
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int getStats(ig_ctx *ctx, const struct getStats_in *in, struct getStats_out *out)
{
	(void)ctx;
	(void)in;
	uint32_t n = nsamples;
	qsort(samples, n, sizeof *samples, by_value);
	out->r200.count = count;
	out->r200.p50_us = n ? samples[n / 2] : 0;
	out->r200.p99_us = n ? samples[(uint64_t)n * 99 / 100] : 0;
	return 200;
}

int resetStats(ig_ctx *ctx, const struct resetStats_in *in, struct resetStats_out *out)
{
	(void)ctx;
	(void)in;
	(void)out;
	count = nsamples = 0;
	return 204;
}
