/* Unit tests of net/metrics: per-core counters, histogram bucketing at the
 * bounds, summing over cores, the text exposition (HELP/TYPE, escaping,
 * cumulative buckets, +Inf == _count) and the registry's order. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/metrics/metrics.h"
#include "tests/unit/check.h"

#include <stdio.h>

static struct ig_pool blocks;

/* The text written by fn into a fresh arena buffer, NUL-terminated. */
static char text[16384];
static const char *expo_text(void (*fn)(struct ig_expo *e, void *arg), void *arg)
{
	ig_arena a;
	ig_arena_init(&a, &blocks, 1 << 20);
	ig_wbuf w = { .arena = &a };
	struct ig_expo e = { &w };
	fn(&e, arg);
	snprintf(text, sizeof text, "%.*s", (int)w.len, w.ptr ? w.ptr : "");
	ig_arena_reset(&a);
	return text;
}

static void test_counters(void)
{
	ig_counter c = 0;
	ig_counter_add(&c, 3);
	ig_counter_add(&c, 4);
	CHECK_INT(ig_counter_get(&c), 7, "counter: adds accumulate");
	ig_counter_set(&c, 2);
	CHECK_INT(ig_counter_get(&c), 2, "counter: set replaces (a gauge)");
}

static void test_bounds(void)
{
	CHECK(ig_duration_bounds.n < IG_HISTOGRAM_MAX_BUCKETS && ig_size_bounds.n < IG_HISTOGRAM_MAX_BUCKETS,
	      "bounds: room for the slot above the last bound");
	CHECK(ig_duration_bounds.le_micro[0] == 100 &&
	      ig_duration_bounds.le_micro[ig_duration_bounds.n - 1] == 10000000,
	      "duration bounds: 0.0001 .. 10 s");
	bool otel = true;
	static const double otel_le[] = { 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10 };
	for (size_t i = 0; i < IG_COUNTOF(otel_le); i++) {
		bool found = false;
		for (uint32_t j = 0; j < ig_duration_bounds.n; j++)
			found |= (double)ig_duration_bounds.le_micro[j] / 1e6 == otel_le[i];
		otel &= found;
	}
	CHECK(otel, "duration bounds: every OpenTelemetry bound is one");
	bool increasing = true;
	for (uint32_t j = 1; j < ig_duration_bounds.n; j++)
		increasing &= ig_duration_bounds.le_micro[j] > ig_duration_bounds.le_micro[j - 1];
	for (uint32_t j = 1; j < ig_size_bounds.n; j++)
		increasing &= ig_size_bounds.le_micro[j] > ig_size_bounds.le_micro[j - 1];
	CHECK(increasing, "bounds: strictly increasing");
}

/* The bucket ig_histogram_observe's scan picks. */
static uint32_t scan_bucket(const struct ig_histogram_bounds *b, uint64_t value_micro)
{
	struct ig_histogram h = { 0 };
	ig_histogram_observe(&h, b, value_micro);
	for (uint32_t i = 0; i <= b->n; i++)
		if (ig_counter_get(&h.bucket[i]))
			return i;
	return UINT32_MAX;
}

static void test_observe(void)
{
	struct ig_histogram h = { 0 };
	const struct ig_histogram_bounds *b = &ig_duration_bounds;
	ig_histogram_observe(&h, b, 100);        /* == 0.0001: the first bucket */
	ig_histogram_observe(&h, b, 101);        /* just above: the second */
	ig_histogram_observe(&h, b, 5000);       /* == 0.005 */
	ig_histogram_observe(&h, b, 10000000);   /* == 10 s: the last bound */
	ig_histogram_observe(&h, b, 10000001);   /* above every bound */
	CHECK_INT(ig_counter_get(&h.bucket[0]), 1, "observe: a value equal to a bound is in its bucket (le)");
	CHECK_INT(ig_counter_get(&h.bucket[1]), 1, "observe: a value just above a bound is in the next");
	CHECK_INT(ig_counter_get(&h.bucket[5]), 1, "observe: 5 ms in le=0.005");
	CHECK_INT(ig_counter_get(&h.bucket[b->n - 1]), 1, "observe: 10 s in le=10");
	CHECK_INT(ig_counter_get(&h.bucket[b->n]), 1, "observe: above the last bound in the slot after it");
	CHECK_INT(ig_counter_get(&h.count), 5, "observe: count");
	CHECK_INT(ig_counter_get(&h.sum_micro), 100 + 101 + 5000 + 10000000 + 10000001, "observe: sum in millionths");
	struct ig_histogram s = { 0 };
	ig_histogram_sum_into(&s, &h);
	ig_histogram_sum_into(&s, &h);
	CHECK(ig_counter_get(&s.count) == 10 && ig_counter_get(&s.bucket[1]) == 2 &&
	      ig_counter_get(&s.sum_micro) == 2 * ig_counter_get(&h.sum_micro),
	      "sum_into: two cores' series add up");
	struct ig_histogram z = { 0 };
	ig_histogram_observe(&z, &ig_size_bounds, 0);
	ig_histogram_observe(&z, &ig_size_bounds, 17 * 1000000ull);
	CHECK(ig_counter_get(&z.bucket[0]) == 1 && ig_counter_get(&z.bucket[2]) == 1,
	      "observe: a 0-byte body in le=0, 17 bytes in le=64");
	/* The computed size bucket is the scan's, at and beside every bound
	   and over the small sizes most bodies have. */
	uint64_t bad = UINT64_MAX;
	for (uint64_t bytes = 0; bytes < 70000 && bad == UINT64_MAX; bytes++)
		if (ig_size_bucket(bytes) != scan_bucket(&ig_size_bounds, bytes * 1000000))
			bad = bytes;
	for (uint32_t i = 0; i < ig_size_bounds.n && bad == UINT64_MAX; i++)
		for (int d = -1; d <= 1; d++) {
			uint64_t bytes = ig_size_bounds.le_micro[i] / 1000000 + (uint64_t)(int64_t)d;
			bool differ = ig_size_bucket(bytes) != scan_bucket(&ig_size_bounds, bytes * 1000000);
			if (bytes != UINT64_MAX && differ)
				bad = bytes;
		}
	if (bad == UINT64_MAX && ig_size_bucket((uint64_t)1 << 40) != ig_size_bounds.n)
		bad = (uint64_t)1 << 40;
	CHECK(bad == UINT64_MAX, "size bucket: computed as the bounds' scan finds it (around every bound)");
}

static void write_family(struct ig_expo *e, void *arg)
{
	(void)arg;
	ig_expo_family(e, "ingot_test_total", "counter", "a help line with \\ and\na line feed");
	struct ig_label l[2] = { { "route", "/a\"b\\c\nd", 8 }, { "status", "200", 3 } };
	ig_expo_sample(e, "ingot_test_total", l, 2, 42);
	ig_expo_sample(e, "ingot_test_total", NULL, 0, 0.25);
	ig_expo_family(e, "ingot_test_gauge", "gauge", "g");
	ig_expo_sample(e, "ingot_test_gauge", NULL, 0, 1.0 / 0.0);
}

static void test_expo_sample(void)
{
	const char *t = expo_text(write_family, NULL);
	CHECK(strcmp(t, "# HELP ingot_test_total a help line with \\\\ and\\na line feed\n"
			"# TYPE ingot_test_total counter\n"
			"ingot_test_total{route=\"/a\\\"b\\\\c\\nd\",status=\"200\"} 42\n"
			"ingot_test_total 0.25\n"
			"# HELP ingot_test_gauge g\n"
			"# TYPE ingot_test_gauge gauge\n"
			"ingot_test_gauge +Inf\n") == 0,
	      "expo: HELP/TYPE, escaped label values and help, integer and fractional values, +Inf");
	if (check_failed_)
		printf("# got:\n%s", t);
}

static struct ig_histogram hist;
static void write_hist(struct ig_expo *e, void *arg)
{
	struct ig_label l = { "m", "GET", 3 };
	ig_expo_histogram(e, "d_seconds", arg ? &l : NULL, arg ? 1 : 0, &hist, &ig_duration_bounds);
}

static void test_expo_histogram(void)
{
	hist = (struct ig_histogram){ 0 };
	ig_histogram_observe(&hist, &ig_duration_bounds, 50);
	ig_histogram_observe(&hist, &ig_duration_bounds, 300);
	ig_histogram_observe(&hist, &ig_duration_bounds, 20000000);
	const char *t = expo_text(write_hist, &hist);
	CHECK(strstr(t, "d_seconds_bucket{m=\"GET\",le=\"0.0001\"} 1\n") != NULL, "histogram: first bucket");
	CHECK(strstr(t, "d_seconds_bucket{m=\"GET\",le=\"0.00025\"} 1\n") != NULL, "histogram: bound written shortest");
	CHECK(strstr(t, "d_seconds_bucket{m=\"GET\",le=\"0.0005\"} 2\n") != NULL, "histogram: buckets cumulative");
	CHECK(strstr(t, "d_seconds_bucket{m=\"GET\",le=\"10\"} 2\n") != NULL, "histogram: 20 s is above le=10");
	CHECK(strstr(t, "d_seconds_bucket{m=\"GET\",le=\"+Inf\"} 3\n") != NULL, "histogram: +Inf counts all");
	CHECK(strstr(t, "d_seconds_sum{m=\"GET\"} 20.00035\n") != NULL, "histogram: _sum in seconds");
	CHECK(strstr(t, "d_seconds_count{m=\"GET\"} 3\n") != NULL, "histogram: _count");
	int lines = 0;
	for (const char *p = t; *p; p++)
		lines += *p == '\n';
	CHECK_INT(lines, (int)ig_duration_bounds.n + 3, "histogram: a line per bound, +Inf, _sum, _count");
	const char *u = expo_text(write_hist, NULL);
	CHECK(strstr(u, "d_seconds_bucket{le=\"0.0001\"} 1\n") != NULL && strstr(u, "d_seconds_count 3\n") != NULL,
	      "histogram: without labels, le alone");
	/* A scrape that read a bucket after its core counted it but the count
	   before: +Inf and _count follow the buckets, never below them. */
	ig_counter_set(&hist.count, 1);
	t = expo_text(write_hist, &hist);
	CHECK(strstr(t, "le=\"+Inf\"} 3\n") != NULL && strstr(t, "d_seconds_count{m=\"GET\"} 3\n") != NULL,
	      "histogram: +Inf == _count >= every bucket under a racing count");
}

static int order[3], order_n;
static void write_a(struct ig_expo *e, void *arg) { (void)e; order[order_n++] = (int)(intptr_t)arg; }

static void test_registry(void)
{
	static struct ig_metrics_source a = { write_a, (void *)1, NULL }, b = { write_a, (void *)2, NULL };
	ig_metrics_register(&a);
	ig_metrics_register(&b);
	ig_metrics_register(&a); /* again: no second entry */
	ig_arena ar;
	ig_arena_init(&ar, &blocks, 1 << 20);
	ig_wbuf w = { .arena = &ar };
	ig_metrics_write(&w);
	ig_arena_reset(&ar);
	CHECK(order_n == 2 && order[0] == 1 && order[1] == 2, "registry: each source once, in registration order");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 4, 64);
	test_counters();
	test_bounds();
	test_observe();
	test_expo_sample();
	test_expo_histogram();
	test_registry();
	return check_done();
}
