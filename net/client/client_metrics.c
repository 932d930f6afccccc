/* The outbound client's metrics: each core counts into its own fixed
 * tables (internal.h, struct client_metrics) as its calls end and its
 * connections open, take calls and close; the scrape on core 0 sums the
 * cores' entries that carry the same labels. Label values are bounded by
 * the tables: an origin beyond CLIENT_METRICS_ORIGINS is "_OTHER", a series
 * beyond CLIENT_METRICS_SERIES goes to one "_OTHER" series, a method that
 * is not a standard one is "_OTHER" (net/http/meter.h's names). */
#include "client_metrics.h"
#include "internal.h"
#include "kernel/runtime/clock.h"
#include "net/http/meter.h"

#include <stdio.h>
#include <string.h>

static const char other[] = "_OTHER";

/* ---- counting, on the owning core ---- */

uint8_t ig_client_metrics_origin(struct client_core *core, const char *host, uint16_t port)
{
	struct client_metrics *m = &core->metrics;
	uint32_t n = atomic_load_explicit(&m->origin_count, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		if (m->origins[i].port == port && strcmp(m->origins[i].host, host) == 0)
			return (uint8_t)i;
	if (n == CLIENT_METRICS_ORIGINS)
		return CLIENT_METRICS_ORIGINS;
	struct ig_client_metrics_origin *o = &m->origins[n];
	o->port = port;
	snprintf(o->host, sizeof o->host, "%s", host);
	atomic_store_explicit(&m->origin_count, n + 1, memory_order_release);
	return (uint8_t)n;
}

static struct client_metrics_series *series_of(struct client_metrics *m, uint8_t origin, uint8_t method,
					       uint16_t status)
{
	uint32_t n = atomic_load_explicit(&m->series_count, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		struct client_metrics_series *s = &m->series[i];
		if (s->origin == origin && s->method == method && s->status == status)
			return s;
	}
	if (n == CLIENT_METRICS_SERIES)
		return &m->series[CLIENT_METRICS_SERIES]; /* the overflow series */
	struct client_metrics_series *s = &m->series[n];
	s->origin = origin;
	s->method = method;
	s->status = status;
	atomic_store_explicit(&m->series_count, n + 1, memory_order_release);
	return s;
}

void ig_client_metrics_call_end(const struct client_call *c, enum ig_client_error error)
{
	const struct client_origin *o = c->origin;
	struct client_metrics *m = &o->core->metrics;
	if (error != IG_CLIENT_OK && (unsigned)error < IG_CLIENT_ERROR_KINDS)
		ig_counter_add(&m->origins[o->metrics_origin].errors[error], 1);
	if (!c->status)
		return; /* no response head: only the error tells */
	ig_str method = { c->opts.method, strlen(c->opts.method) };
	uint16_t status = c->status >= 100 && c->status <= 599 ? c->status : 0;
	struct client_metrics_series *s =
		series_of(m, o->metrics_origin, (uint8_t)ig_http_method_index(method, false), status);
	ig_histogram_observe(&s->duration, &ig_duration_bounds, ig_monotonic_us() - c->start_us);
}

void ig_client_metrics_conn_open(const struct client_origin *o, int delta)
{
	ig_counter_add(&o->core->metrics.origins[o->metrics_origin].conns_open, (uint64_t)(int64_t)delta);
}

void ig_client_metrics_conn_busy(const struct client_origin *o, int delta)
{
	ig_counter_add(&o->core->metrics.origins[o->metrics_origin].conns_busy, (uint64_t)(int64_t)delta);
}

/* ---- the scrape, on core 0: entries of every core, same labels summed ---- */

/* What an origin slot or a series is labelled with; port 0 and status 0
 * are "_OTHER". */
struct entry_key {
	const char *host;
	uint16_t port;
	uint8_t method;
	uint16_t status;
};

static struct entry_key origin_key(const struct client_metrics *m, uint32_t slot)
{
	if (slot == CLIENT_METRICS_ORIGINS)
		return (struct entry_key){ .host = other };
	return (struct entry_key){ .host = m->origins[slot].host, .port = m->origins[slot].port };
}

static struct entry_key series_key(const struct client_metrics *m, uint32_t i)
{
	const struct client_metrics_series *s = &m->series[i];
	if (i == CLIENT_METRICS_SERIES)
		return (struct entry_key){ .host = other, .method = HTTP_METHODS - 1 };
	struct entry_key k = origin_key(m, s->origin);
	k.method = s->method;
	k.status = s->status;
	return k;
}

/* A walk over every core's origin slots (or series), in order: core, then
 * entry, the last slot ("_OTHER", or the overflow series) after the
 * published ones. Entries with the same labels (with or without the port)
 * form a group: the scrape writes each group once, summed. */
struct walk {
	bool series, with_port; /* what is walked, and what makes labels equal */
	const struct client_core *core; /* NULL: not started, or past the end */
	uint32_t i;
};

static uint32_t published(const struct walk *w)
{
	const struct client_metrics *m = &w->core->metrics;
	return atomic_load_explicit(w->series ? &m->series_count : &m->origin_count, memory_order_acquire);
}

/* Moves w to the next entry (from the first when it has not started). */
static bool walk_next(struct walk *w, bool started)
{
	uint32_t last = w->series ? CLIENT_METRICS_SERIES : CLIENT_METRICS_ORIGINS;
	if (!started || w->i == last) {
		w->core = ig_client_core_next(started ? w->core : NULL);
		w->i = 0;
		if (w->core && published(w) == 0)
			w->i = last;
	} else {
		w->i = w->i + 1 < published(w) ? w->i + 1 : last;
	}
	return w->core != NULL;
}

static struct entry_key walk_key(const struct walk *w)
{
	return w->series ? series_key(&w->core->metrics, w->i) : origin_key(&w->core->metrics, w->i);
}

static bool same_labels(const struct walk *a, const struct walk *b)
{
	struct entry_key x = walk_key(a), y = walk_key(b);
	return (!a->with_port || x.port == y.port) && x.method == y.method && x.status == y.status &&
	       strcmp(x.host, y.host) == 0;
}

/* Moves w to the next first entry of a group (no entry before it has its
 * labels); false after the last. */
static bool next_group(struct walk *w)
{
	bool started = w->core != NULL;
	while (walk_next(w, started)) {
		started = true;
		struct walk v = *w;
		bool seen = false;
		for (bool more = walk_next(&v, false); more && !(v.core == w->core && v.i == w->i);
		     more = walk_next(&v, true))
			if ((seen = same_labels(&v, w)))
				break;
		if (!seen)
			return true;
	}
	return false;
}

/* Moves v (a member of first's group) to the group's next member; v->core
 * is NULL after the last. */
static void next_member(struct walk *v, const struct walk *first)
{
	while (walk_next(v, true) && !same_labels(v, first))
		;
}

static struct ig_label label(const char *name, const char *value)
{
	return (struct ig_label){ name, value, strlen(value) };
}

/* A port or a status as a label value: 0 is "_OTHER". */
static void number_text(char out[8], uint16_t v)
{
	if (v)
		out[ig_fmt_u64(out, v)] = 0;
	else
		memcpy(out, other, sizeof other);
}

static void write_durations(struct ig_expo *e)
{
	static const char name[] = "http_client_request_duration_seconds";
	ig_expo_family(e, name, "histogram", "Duration of outbound HTTP requests, from dispatch to their end.");
	for (struct walk w = { .series = true, .with_port = true }; next_group(&w);) {
		struct ig_histogram sum = { 0 };
		for (struct walk v = w; v.core; next_member(&v, &w))
			ig_histogram_sum_into(&sum, &v.core->metrics.series[v.i].duration);
		if (!ig_counter_get(&sum.count))
			continue; /* the overflow series, unused */
		struct entry_key k = walk_key(&w);
		char port[8], status[8];
		number_text(port, k.port);
		number_text(status, k.status);
		const struct ig_label labels[] = {
			label("server_address", k.host),
			label("server_port", port),
			label("http_request_method", ig_http_method_names[k.method]),
			label("http_response_status_code", status),
		};
		ig_expo_histogram(e, name, labels, 4, &sum, &ig_duration_bounds);
	}
}

static void write_errors(struct ig_expo *e)
{
	static const char name[] = "ingot_client_errors_total";
	ig_expo_family(e, name, "counter", "Outbound HTTP requests that failed, by server and kind.");
	for (struct walk w = { .series = false, .with_port = false }; next_group(&w);) {
		uint64_t sums[IG_CLIENT_ERROR_KINDS] = { 0 };
		for (struct walk v = w; v.core; next_member(&v, &w))
			for (int kind = 1; kind < IG_CLIENT_ERROR_KINDS; kind++)
				sums[kind] += ig_counter_get(&v.core->metrics.origins[v.i].errors[kind]);
		for (int kind = 1; kind < IG_CLIENT_ERROR_KINDS; kind++) {
			if (!sums[kind])
				continue;
			const struct ig_label labels[] = {
				label("server_address", walk_key(&w).host),
				label("kind", ig_client_error_name((enum ig_client_error)kind)),
			};
			ig_expo_sample(e, name, labels, 2, (double)sums[kind]);
		}
	}
}

static void write_connections(struct ig_expo *e)
{
	static const char name[] = "ingot_client_connections";
	ig_expo_family(e, name, "gauge", "Outbound connections: active (a request in flight) or idle (kept alive).");
	for (struct walk w = { .series = false, .with_port = true }; next_group(&w);) {
		uint64_t open = 0, busy = 0;
		for (struct walk v = w; v.core; next_member(&v, &w)) {
			const struct ig_client_metrics_origin *o = &v.core->metrics.origins[v.i];
			/* busy first: a connection counted busy was open then. */
			busy += ig_counter_get(&o->conns_busy);
			open += ig_counter_get(&o->conns_open);
		}
		struct entry_key k = walk_key(&w);
		if (!open && !busy && k.host == other)
			continue; /* "_OTHER", never used */
		char port[8];
		number_text(port, k.port);
		const struct { const char *state; uint64_t n; } rows[] = {
			{ "active", busy }, { "idle", open > busy ? open - busy : 0 },
		};
		for (size_t i = 0; i < 2; i++) {
			const struct ig_label labels[] = {
				label("server_address", k.host),
				label("server_port", port),
				label("state", rows[i].state),
			};
			ig_expo_sample(e, name, labels, 3, (double)rows[i].n);
		}
	}
}

static void write_client(struct ig_expo *e, void *arg)
{
	(void)arg;
	write_durations(e);
	write_errors(e);
	write_connections(e);
}

struct ig_metrics_source ig_client_metrics_source = { .write = write_client };
