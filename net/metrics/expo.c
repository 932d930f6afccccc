/* The Prometheus text exposition format, version 0.0.4: HELP and TYPE
 * lines, samples with escaped label values, histograms as cumulative
 * buckets. Runs only when scraped, never on a request's path. */
#include "metrics.h"

#include <math.h>

static void put_str(ig_wbuf *w, const char *s)
{
	ig_wbuf_put(w, s, strlen(s));
}

/* HELP text escapes backslash and line feed; label values also the
 * double quote. */
static void put_escaped(ig_wbuf *w, const char *s, size_t n, bool quote)
{
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		const char *esc = s[i] == '\\' ? "\\\\" : s[i] == '\n' ? "\\n" : quote && s[i] == '"' ? "\\\"" : NULL;
		if (!esc)
			continue;
		ig_wbuf_put(w, s + start, i - start);
		ig_wbuf_put(w, esc, 2);
		start = i + 1;
	}
	ig_wbuf_put(w, s + start, n - start);
}

static void put_value(ig_wbuf *w, double v)
{
	if (isnan(v))
		ig_wbuf_lit(w, "NaN");
	else if (isinf(v))
		put_str(w, v > 0 ? "+Inf" : "-Inf");
	else
		ig_json_double(w, v); /* integers as such, others shortest */
}

void ig_expo_family(struct ig_expo *e, const char *name, const char *type, const char *help)
{
	ig_wbuf_lit(e->out, "# HELP ");
	put_str(e->out, name);
	ig_wbuf_lit(e->out, " ");
	put_escaped(e->out, help, strlen(help), false);
	ig_wbuf_lit(e->out, "\n# TYPE ");
	put_str(e->out, name);
	ig_wbuf_lit(e->out, " ");
	put_str(e->out, type);
	ig_wbuf_lit(e->out, "\n");
}

/* name{a="x",b="y"[,le="..."]} with suffix appended to name. */
static void put_series(ig_wbuf *w, const char *name, const char *suffix, const struct ig_label *labels,
		       size_t nlabels, const char *le)
{
	put_str(w, name);
	put_str(w, suffix);
	if (!nlabels && !le)
		return;
	ig_wbuf_lit(w, "{");
	for (size_t i = 0; i < nlabels; i++) {
		if (i)
			ig_wbuf_lit(w, ",");
		put_str(w, labels[i].name);
		ig_wbuf_lit(w, "=\"");
		put_escaped(w, labels[i].value, labels[i].value_len, true);
		ig_wbuf_lit(w, "\"");
	}
	if (le) {
		ig_wbuf_put(w, &",le=\""[nlabels ? 0 : 1], nlabels ? 5 : 4);
		put_str(w, le);
		ig_wbuf_lit(w, "\"");
	}
	ig_wbuf_lit(w, "}");
}

void ig_expo_sample(struct ig_expo *e, const char *name, const struct ig_label *labels, size_t nlabels,
		    double value)
{
	put_series(e->out, name, "", labels, nlabels, NULL);
	ig_wbuf_lit(e->out, " ");
	put_value(e->out, value);
	ig_wbuf_lit(e->out, "\n");
}

static void put_count_line(ig_wbuf *w, uint64_t v)
{
	char num[24];
	ig_wbuf_lit(w, " ");
	ig_wbuf_put(w, num, ig_fmt_u64(num, v));
	ig_wbuf_lit(w, "\n");
}

void ig_expo_histogram(struct ig_expo *e, const char *name, const struct ig_label *labels, size_t nlabels,
		       const struct ig_histogram *h, const struct ig_histogram_bounds *b)
{
	ig_wbuf *w = e->out;
	uint64_t cumulative = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		char le[40];
		ig_wbuf bound = { .ptr = le, .cap = sizeof le };
		put_value(&bound, (double)b->le_micro[i] / 1e6); /* correctly rounded: 100 is 0.0001 */
		le[bound.len] = 0;
		cumulative += ig_counter_get(&h->bucket[i]);
		put_series(w, name, "_bucket", labels, nlabels, le);
		put_count_line(w, cumulative);
	}
	cumulative += ig_counter_get(&h->bucket[b->n]);
	/* The counters were read while their cores went on counting: the
	   larger of the two totals keeps +Inf >= every bucket and == _count. */
	uint64_t count = ig_counter_get(&h->count);
	if (count < cumulative)
		count = cumulative;
	put_series(w, name, "_bucket", labels, nlabels, "+Inf");
	put_count_line(w, count);
	put_series(w, name, "_sum", labels, nlabels, NULL);
	ig_wbuf_lit(w, " ");
	put_value(w, (double)ig_counter_get(&h->sum_micro) / 1e6);
	ig_wbuf_lit(w, "\n");
	put_series(w, name, "_count", labels, nlabels, NULL);
	put_count_line(w, count);
}
