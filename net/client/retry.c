/* The retry interceptor (interceptors.h): one call state per outer call, in
 * explicit states; an attempt that fails before its head reached the
 * caller is repeated after a backoff timer on the loop. Nothing of a
 * failed attempt is buffered: a retried response's body is read and
 * dropped. */
#include "ingot/client_interceptors.h"
#include "net/ascii.h"
#include "net/client/internal.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#define MAX_STATUSES 32
#define MAX_CALLS_PER_CORE 65536

struct retry {
	struct wrap_owner w; /* first: what callers hold */
	ig_dispatcher *inner;
	uint32_t max_retries, min_delay_ms, max_delay_ms, max_retry_after_ms, errors;
	uint16_t statuses[MAX_STATUSES];
	size_t status_count;
	const char *const *methods;
	uint64_t rng;
};

/* Its states (internal.h): WRAP_TRY runs an attempt, WRAP_DRAIN drops the
 * body of a response that will be retried, WRAP_WAIT runs the backoff
 * timer. c->f.retries counts the retries made here. */
struct retry_call {
	struct wrap_fwd f; /* first: what the caller holds */
	struct retry *r;
	uint64_t wait_ms;
	struct ig_timer timer;
};

/* One pool per core (thread): retry dispatchers come and go, their calls'
 * memory stays for the next. */
static _Thread_local struct wrap_slots call_slots = WRAP_SLOTS(struct retry_call, 64, MAX_CALLS_PER_CORE);

static const char *const idempotent_methods[] = { "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", NULL };
static const uint16_t default_statuses[] = { 429, 500, 502, 503, 504 };

/* ---- decisions ---- */

static bool is_idempotent(const struct retry_call *c)
{
	if (c->f.opts.idempotent >= 0)
		return c->f.opts.idempotent;
	const char *method = c->f.opts.method ? c->f.opts.method : "GET";
	for (const char *const *m = c->r->methods; *m; m++)
		if (strcmp(*m, method) == 0)
			return true;
	return false;
}

static bool may_retry(const struct retry_call *c)
{
	return !c->f.aborting && !c->r->w.destroying && c->f.retries < c->r->max_retries && is_idempotent(c);
}

static bool status_retried(const struct retry *r, int status)
{
	for (size_t i = 0; i < r->status_count; i++)
		if (r->statuses[i] == status)
			return true;
	return false;
}

static uint64_t next_random(struct retry *r)
{
	/* xorshift64*: jitter needs spread, not secrecy */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return r->rng * 0x2545F4914F6CDD1DULL;
}

/* Full jitter: uniform in [0, min(max, min * 2^(k-1))] for retry k. */
static uint64_t backoff_ms(struct retry_call *c)
{
	struct retry *r = c->r;
	uint32_t k = c->f.retries; /* retries made so far: this is retry k + 1 */
	uint64_t cap = r->max_delay_ms;
	if (k < 32 && ((uint64_t)r->min_delay_ms << k) < cap)
		cap = (uint64_t)r->min_delay_ms << k;
	return next_random(r) % (cap + 1);
}

/* ---- attempts ---- */

static void on_timer(struct ig_timer *t);

static void wait_then_retry(struct retry_call *c, uint64_t wait_ms)
{
	c->f.state = WRAP_WAIT;
	c->timer = (struct ig_timer){ .fn = on_timer };
	struct ig_loop *loop = c->r->w.d.loop;
	ig_timer_set(&loop->timers, &c->timer, loop->clock.now_ms + wait_ms);
}

static void on_timer(struct ig_timer *t)
{
	struct retry_call *c = (struct retry_call *)((char *)t - offsetof(struct retry_call, timer));
	if (c->r->w.destroying) {
		ig_wrap_fwd_end_with_error(&c->f, IG_CLIENT_ABORTED, "the retry dispatcher was destroyed");
	} else {
		c->f.retries++;
		ig_wrap_fwd_start(&c->f, c->r->inner);
	}
}

/* ---- what retry decides of an attempt (struct wrap_fwd_kind) ---- */

static bool retry_drop(struct wrap_fwd *f, int status, const ig_header *headers, size_t count)
{
	struct retry_call *c = (struct retry_call *)f;
	if (!status_retried(c->r, status) || !may_retry(c))
		return false;
	const ig_str *ra = ig_header_find(headers, count, "retry-after");
	uint64_t wait;
	if (ra && ig_retry_after_ms(*ra, time(NULL), &wait))
		c->wait_ms = wait < c->r->max_retry_after_ms ? wait : c->r->max_retry_after_ms;
	else
		c->wait_ms = backoff_ms(c);
	return true;
}

static void retry_dropped(struct wrap_fwd *f)
{
	struct retry_call *c = (struct retry_call *)f;
	if (c->f.aborting || c->r->w.destroying)
		ig_wrap_fwd_end_with_error(&c->f, IG_CLIENT_ABORTED, "aborted before a retry");
	else
		wait_then_retry(c, c->wait_ms);
}

static bool retry_failed(struct wrap_fwd *f, enum ig_client_error error, const char *message)
{
	(void)message;
	struct retry_call *c = (struct retry_call *)f;
	if (c->f.state == WRAP_DRAIN && !c->r->w.destroying) {
		/* The retry was decided from the head; losing the body of the
		   response we drop changes nothing. */
		wait_then_retry(c, c->wait_ms);
		return true;
	}
	if (c->f.state == WRAP_TRY && (c->r->errors & IG_RETRY_ON(error)) && may_retry(c)) {
		wait_then_retry(c, backoff_ms(c));
		return true;
	}
	return false;
}

static void retry_cancel_wait(struct wrap_fwd *f)
{
	struct retry_call *c = (struct retry_call *)f;
	ig_timer_cancel(&c->r->w.d.loop->timers, &c->timer);
}

static const struct wrap_fwd_kind retry_kind = {
	.destroyed_message = "the retry dispatcher was destroyed",
	.busy_message = "too many calls in the retry interceptor",
	.drop = retry_drop,
	.dropped = retry_dropped,
	.failed = retry_failed,
	.cancel_wait = retry_cancel_wait,
};

/* ---- the dispatcher ---- */

static ig_call *retry_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts, const ig_dispatch_handler *h,
			       void *arg)
{
	struct retry *r = (struct retry *)d;
	struct retry_call *c = ig_wrap_fwd_take(&r->w, &call_slots, &retry_kind, h, arg);
	if (!c)
		return NULL;
	*c = (struct retry_call){ .r = r };
	return ig_wrap_fwd_begin(&c->f, &r->w, &call_slots, &retry_kind, r->inner, opts, h, arg);
}

static void retry_destroy(ig_dispatcher *d)
{
	struct retry *r = (struct retry *)d;
	ig_wrap_destroy_begin(&r->w);
	for (struct retry_call *c = (struct retry_call *)r->w.calls, *next; c; c = next) {
		next = (struct retry_call *)c->f.w.next; /* c stays listed until released */
		if (c->f.state == WRAP_WAIT)
			ig_wrap_fwd_end_with_error(&c->f, IG_CLIENT_ABORTED, "the retry dispatcher was destroyed");
	}
	ig_wrap_fwd_destroy_end(&r->w, &r->inner);
}

static const struct ig_dispatcher_ops retry_ops = {
	.dispatch = retry_dispatch,
	.destroy = retry_destroy,
};

ig_dispatcher *ig_retry_new(ig_dispatcher *inner, const struct ig_retry_opts *opts)
{
	static const struct ig_retry_opts no_opts;
	const struct ig_retry_opts *o = opts ? opts : &no_opts;
	if (!inner || (o->statuses && o->status_count > MAX_STATUSES)) {
		errno = EINVAL;
		return NULL;
	}
	struct retry *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	ig_wrap_fwd_owner_init(&r->w, &retry_ops, inner);
	r->inner = inner;
	r->max_retries = o->max_retries ? o->max_retries : 2;
	r->min_delay_ms = o->min_delay_ms ? o->min_delay_ms : 100;
	r->max_delay_ms = o->max_delay_ms ? o->max_delay_ms : 5000;
	r->max_retry_after_ms = o->max_retry_after_ms ? o->max_retry_after_ms : 30000;
	r->errors = o->errors ? o->errors : IG_RETRY_ERRORS_DEFAULT;
	const uint16_t *statuses = o->statuses ? o->statuses : default_statuses;
	r->status_count = o->statuses ? o->status_count : IG_COUNTOF(default_statuses);
	memcpy(r->statuses, statuses, r->status_count * sizeof *statuses);
	r->methods = o->methods ? o->methods : idempotent_methods;
	r->rng = o->seed ? o->seed : (ig_monotonic_us() ^ (uint64_t)(uintptr_t)r) | 1;
	return &r->w.d;
}

/* ---- Retry-After ---- */

static bool digits(const char **p, const char *end, size_t n, int *out)
{
	int v = 0;
	for (size_t i = 0; i < n; i++, (*p)++) {
		if (*p >= end || **p < '0' || **p > '9')
			return false;
		v = v * 10 + (**p - '0');
	}
	*out = v;
	return true;
}

static bool literal(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

static bool month(const char **p, const char *end, int *out)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	if (end - *p < 3)
		return false;
	for (int m = 0; m < 12; m++) {
		if (memcmp(*p, names + 3 * m, 3) == 0) {
			*out = m + 1;
			*p += 3;
			return true;
		}
	}
	return false;
}

static bool clock_time(const char **p, const char *end, int *h, int *m, int *s)
{
	return digits(p, end, 2, h) && literal(p, end, ":") && digits(p, end, 2, m) && literal(p, end, ":") &&
	       digits(p, end, 2, s) && *h < 24 && *m < 60 && *s < 61;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The three HTTP-date forms of RFC 9110 5.6.7, as seconds since the epoch. */
static bool http_date(const char *p, const char *end, int64_t *out)
{
	int year, mon, day, h, m, s;
	const char *comma = memchr(p, ',', (size_t)(end - p));
	if (comma) {
		p = comma + 1;
		if (!literal(&p, end, " ") || !digits(&p, end, 2, &day))
			return false;
		if (literal(&p, end, " ")) { /* IMF-fixdate: 06 Nov 1994 08:49:37 GMT */
			if (!month(&p, end, &mon) || !literal(&p, end, " ") || !digits(&p, end, 4, &year))
				return false;
		} else { /* RFC 850: 06-Nov-94 08:49:37 GMT */
			if (!literal(&p, end, "-") || !month(&p, end, &mon) || !literal(&p, end, "-") ||
			    !digits(&p, end, 2, &year))
				return false;
			year += year < 70 ? 2000 : 1900;
		}
		if (!literal(&p, end, " ") || !clock_time(&p, end, &h, &m, &s) || !literal(&p, end, " GMT"))
			return false;
	} else { /* asctime: Sun Nov  6 08:49:37 1994 */
		if (end - p < 3)
			return false;
		p += 3;
		if (!literal(&p, end, " ") || !month(&p, end, &mon) || !literal(&p, end, " "))
			return false;
		if (p < end && *p == ' ') {
			p++;
			if (!digits(&p, end, 1, &day))
				return false;
		} else if (!digits(&p, end, 2, &day)) {
			return false;
		}
		if (!literal(&p, end, " ") || !clock_time(&p, end, &h, &m, &s) || !literal(&p, end, " ") ||
		    !digits(&p, end, 4, &year))
			return false;
	}
	if (p != end || day < 1 || day > 31)
		return false;
	*out = days_from_civil(year, mon, day) * 86400 + h * 3600 + m * 60 + s;
	return true;
}

bool ig_retry_after_ms(ig_str value, time_t now, uint64_t *ms)
{
	ig_str v = ig_ascii_trim_ows(value.ptr, value.ptr + value.len);
	const char *p = v.ptr, *end = v.ptr + v.len;
	if (p == end)
		return false;
	if (*p >= '0' && *p <= '9') {
		uint64_t seconds = 0;
		for (; p < end; p++) {
			if (*p < '0' || *p > '9')
				return false;
			if (seconds < UINT32_MAX) /* saturate: the cap applies anyway */
				seconds = seconds * 10 + (uint64_t)(*p - '0');
		}
		*ms = seconds * 1000;
		return true;
	}
	int64_t at;
	if (!http_date(p, end, &at))
		return false;
	*ms = at > (int64_t)now ? (uint64_t)(at - (int64_t)now) * 1000 : 0;
	return true;
}
