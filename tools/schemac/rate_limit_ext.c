/* The extension x-ingot-rate-limit: at the document's root, the limit of
 * every operation that states none; on an operation, its own (or false:
 * none, whatever the root says). Read and judged here, so that a bad one
 * fails the build; emitted as data (struct ig_rate_limit, net/api/
 * rate_limit.h) that the operations' descriptors point to. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_keyword rate_keys[] = {
	{ "rate", NULL }, { "per", NULL }, { "burst", NULL }, { "key", NULL }, { NULL, NULL },
};

/* A whole number in [lo, hi], or -1. */
static long whole(const cJSON *v, long lo, long hi)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble || v->valuedouble < (double)lo ||
	    v->valuedouble > (double)hi)
		return -1;
	return (long)v->valuedouble;
}

uint64_t sc_period_us(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);
	if (end == s || s[0] < '0' || s[0] > '9' || n == 0 || n > 86400000)
		return 0;
	uint64_t unit = !strcmp(end, "ms") ? 1000 : !strcmp(end, "s") ? 1000000 : !strcmp(end, "m") ? 60000000ull
		      : !strcmp(end, "h") ? 3600000000ull : 0;
	uint64_t us = n * unit;
	return us > 86400000000ull ? 0 : us;
}

/* A header name: an HTTP token. */
static bool token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

struct sc_rate_limit *sc_parse_rate_limit(struct sc_model *m, const cJSON *v, const char *ptr, const char *name)
{
	if (!cJSON_IsObject(v)) {
		sc_error(m, ptr, "x-ingot-rate-limit must be an object {rate, per, burst, key}%s",
			 strcmp(name, "global") ? " or false" : "");
		return NULL;
	}
	sc_check_keys(m, v, ptr, rate_keys);
	unsigned before = m->errors;
	struct sc_rate_limit *l = sc_xmalloc(sizeof *l);
	l->name = sc_strdup(name);
	l->ptr = sc_strdup(ptr);
	const cJSON *rate = sc_get(v, "rate"), *per = sc_get(v, "per"), *burst = sc_get(v, "burst"),
		    *key = sc_get(v, "key");
	long r = rate ? whole(rate, 1, 1000000) : -1;
	if (r < 0)
		sc_error(m, ptr, "\"rate\" must be a whole number of requests from 1 to 1000000");
	l->per_us = cJSON_IsString(per) ? sc_period_us(per->valuestring) : 0;
	if (!l->per_us)
		sc_error(m, ptr, "\"per\" must be a period: a whole number and ms, s, m or h (\"1s\", \"250ms\"), "
				 "at most a day");
	long b = burst ? whole(burst, 1, 1000000) : r;
	if (burst && b < 0)
		sc_error(m, ptr, "\"burst\" must be a whole number of requests from 1 to 1000000");
	if (m->errors == before && l->per_us / (uint64_t)r == 0)
		sc_error(m, ptr, "more than one request a microsecond: \"rate\" over \"per\" is too fast");
	l->rate = (uint32_t)(r > 0 ? r : 1);
	l->burst = (uint32_t)(b > 0 ? b : 1);
	l->interval_us = l->per_us / l->rate;
	const char *k = cJSON_IsString(key) ? key->valuestring : key ? NULL : "address";
	l->header = NULL;
	l->subject = false;
	if (k && !strcmp(k, "address"))
		;
	else if (k && !strncmp(k, "header:", 7) && token(k + 7))
		l->header = sc_strdup(k + 7);
	else if (k && !strcmp(k, "subject"))
		l->subject = true;
	else
		sc_error(m, ptr, "\"key\" must be \"address\" (the default), \"subject\" or \"header:<name>\"");
	if (m->errors != before)
		return NULL;
	l->id = (unsigned)m->nrate_limits;
	m->rate_limits = sc_xrealloc(m->rate_limits, (m->nrate_limits + 1) * sizeof *m->rate_limits);
	m->rate_limits[m->nrate_limits++] = l;
	return l;
}

void emit_rate_limits(struct sc_model *m, struct sc_out *c)
{
	if (!m->nrate_limits)
		return;
	out_line(c, "/* x-ingot-rate-limit: the limits (net/api/rate_limit.h) the descriptors point to. */");
	for (size_t i = 0; i < m->nrate_limits; i++) {
		const struct sc_rate_limit *l = m->rate_limits[i];
		/* RateLimit-Policy states the sustained rate, q per w whole
		   seconds: a period under a second is stated per second. */
		uint64_t w = (l->per_us + 999999) / 1000000;
		uint64_t q = (uint64_t)l->rate * w * 1000000 / l->per_us;
		char *quoted = sc_printf("\"%s\"", l->name);
		char *policy = sc_printf("%s;q=%llu;w=%llu", quoted, (unsigned long long)(q ? q : 1), (unsigned long long)w);
		char *pol = c_str(policy), *nm = c_str(quoted);
		out_open(c, "static const struct ig_rate_limit ig_rate_limit_%zu = {", i);
		out_line(c, ".id = %u,", l->id);
		out_line(c, ".burst = %u,", l->burst);
		out_line(c, ".interval_us = %lluu,", (unsigned long long)l->interval_us);
		if (l->header) {
			char *h = c_str(l->header);
			out_line(c, ".key = IG_RATE_KEY_HEADER,");
			out_line(c, ".header = %s,", h);
			free(h);
		} else {
			out_line(c, ".key = %s,", l->subject ? "IG_RATE_KEY_SUBJECT" : "IG_RATE_KEY_ADDRESS");
		}
		out_line(c, ".policy = %s,", pol);
		out_line(c, ".policy_name = %s,", nm);
		out_close(c, "};");
		free(quoted);
		free(policy);
		free(pol);
		free(nm);
	}
	out_blank(c);
}

bool sc_rate_limits_need_peer(const struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i]->rate_limit && !m->ops[i]->rate_limit->header) /* by address, or subject's fallback */
			return true;
	return false;
}
