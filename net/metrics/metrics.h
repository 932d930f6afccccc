/* The metrics core: per-core counters and histograms that only their core
 * writes (a relaxed load and a relaxed store, never a read-modify-write,
 * never a lock), the Prometheus text exposition (format 0.0.4) they are
 * written out in, and the registry of sources a scrape asks for families.
 * Knows nothing of HTTP: the server's, TLS's and the client's metrics are
 * sources registered here. */
#ifndef NET_METRICS_H
#define NET_METRICS_H

#include "ingot/base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A counter or gauge of one core. Written only by its core (or, with
 * ig_counter_add_shared only, by any thread); read by any thread (the
 * scrape, on core 0) with ig_counter_get. A reader may see a value a few
 * increments old, never a torn one. */
typedef _Atomic uint64_t ig_counter;

/* Adds n: a relaxed load and a relaxed store (plain moves on x86 and arm64),
 * correct because no other thread writes c. */
static inline void ig_counter_add(ig_counter *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

/* Adds n to a counter that several threads write (a process-wide count
 * of something rare: the door's refusals, cron's runs): a relaxed atomic
 * read-modify-write, so that no add is lost, at the price of the cores
 * sharing its cache line. A counter one core owns takes ig_counter_add. */
static inline void ig_counter_add_shared(ig_counter *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Sets a gauge kept per core (active requests, open connections). */
static inline void ig_counter_set(ig_counter *c, uint64_t v)
{
	atomic_store_explicit(c, v, memory_order_relaxed);
}

static inline uint64_t ig_counter_get(const ig_counter *c)
{
	return atomic_load_explicit((ig_counter *)c, memory_order_relaxed);
}

/* ---- histograms ---- */

#define IG_HISTOGRAM_MAX_BUCKETS 24

/* Upper bounds in increasing order, in millionths of the histogram's unit
 * (microseconds, bytes times 1,000,000), the form observations come in:
 * integers, so that observing compares integers (no division, no double)
 * and a value equal to a bound lands in that bound's bucket exactly.
 * n <= IG_HISTOGRAM_MAX_BUCKETS - 1: the slot after the last bound counts
 * what exceeds it (the +Inf bucket's own share). */
struct ig_histogram_bounds {
	uint32_t n;
	uint64_t le_micro[IG_HISTOGRAM_MAX_BUCKETS];
};
/* 0.0001 .. 10 s: OpenTelemetry's HTTP duration buckets (0.005 .. 10)
 * and five below 5 ms, where most of ingot's requests end. */
extern const struct ig_histogram_bounds ig_duration_bounds;
/* 0, then 16 .. 1 GiB in bytes a factor of 4 apart, for body sizes. */
#define IG_SIZE_BOUNDS 15
extern const struct ig_histogram_bounds ig_size_bounds;

/* bucket[i]: observations <= le_micro[i] and > le_micro[i-1] (not cumulative: the
 * writer accumulates); bucket[n]: those above le_micro[n-1]. sum_micro is the sum
 * of observations in millionths of the unit (microseconds for seconds; for
 * bytes, bytes * 1e6: about 18 TB a series and core before it wraps). */
struct ig_histogram {
	ig_counter count, sum_micro;
	ig_counter bucket[IG_HISTOGRAM_MAX_BUCKETS];
};

/* Records one observation of value_micro millionths of b's unit (a
 * duration in microseconds; a size in bytes times 1,000,000). The owning
 * core only. Inline: three of these run for every metered request, and
 * most durations stop the scan at the first bound. _in: the bucket is
 * known (ig_size_bucket). */
static inline void ig_histogram_observe_in(struct ig_histogram *h, uint32_t bucket, uint64_t value_micro)
{
	ig_counter_add(&h->bucket[bucket], 1);
	ig_counter_add(&h->sum_micro, value_micro);
	ig_counter_add(&h->count, 1);
}

static inline void ig_histogram_observe(struct ig_histogram *h, const struct ig_histogram_bounds *b,
					uint64_t value_micro)
{
	uint32_t i = 0;
	while (i < b->n && value_micro > b->le_micro[i])
		i++;
	ig_histogram_observe_in(h, i, value_micro);
}

/* The bucket of ig_size_bounds that a size of `bytes` falls in, computed
 * (the bounds are 0, then powers of 4 from 16): the two body sizes of
 * every metered request are observed without a scan. */
static inline uint32_t ig_size_bucket(uint64_t bytes)
{
	if (bytes <= 16)
		return bytes != 0;
	uint32_t ceil_log2 = 64 - (uint32_t)__builtin_clzll(bytes - 1); /* 16 < bytes <= 2^ceil_log2 */
	uint32_t i = (ceil_log2 + 1) / 2 - 1;                              /* 4^(i+1) >= bytes */
	return i < IG_SIZE_BOUNDS ? i : IG_SIZE_BOUNDS; /* past 1 GiB: the slot above the last bound */
}

/* Adds src's values read with ig_counter_get into sum (a scrape's local
 * struct, not shared): for summing one series over the cores. */
void ig_histogram_sum_into(struct ig_histogram *sum, const struct ig_histogram *src);

/* ---- the text exposition (0.0.4) ---- */

/* A label pair; value need not be NUL-terminated (value_len bytes). The
 * writer escapes \, " and line feeds in values. */
struct ig_label {
	const char *name;
	const char *value;
	size_t value_len;
};

/* A text exposition being written into out (the caller's buffer). */
struct ig_expo {
	ig_wbuf *out;
};

/* The Content-Type of the text format. */
#define IG_EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Starts a family: its "# HELP" and "# TYPE" lines. Every sample of the
 * family must follow before the next family starts. type: "counter",
 * "gauge" or "histogram". */
void ig_expo_family(struct ig_expo *e, const char *name, const char *type, const char *help);
/* One sample line: name{labels} value. Integral values are written as
 * integers, others in the shortest form that reads back the same. */
void ig_expo_sample(struct ig_expo *e, const char *name, const struct ig_label *labels, size_t nlabels,
		    double value);
/* One histogram series: name_bucket{labels,le="..."} cumulative counts
 * for each bound and +Inf, name_sum and name_count. h is summed over the
 * cores by the caller (a local struct ig_histogram filled with
 * ig_histogram_sum_into). +Inf and _count are the same number, never
 * below a finite bucket, even though the counters were read while their
 * cores went on counting. */
void ig_expo_histogram(struct ig_expo *e, const char *name, const struct ig_label *labels, size_t nlabels,
		       const struct ig_histogram *h, const struct ig_histogram_bounds *b);

/* ---- the registry ---- */

/* A source writes its families when scraped: on core 0's loop, reading
 * other cores' counters with ig_counter_get only. s must stay valid for
 * the process's life (a static). Registered once at startup, before the
 * loops run; sources are written in the order they were registered. */
struct ig_metrics_source {
	void (*write)(struct ig_expo *e, void *arg);
	void *arg;
	struct ig_metrics_source *next;
};
void ig_metrics_register(struct ig_metrics_source *s);

/* Writes every registered source's families into out: one scrape. */
void ig_metrics_write(ig_wbuf *out);

#endif
