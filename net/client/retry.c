/* The retry interceptor (interceptors.h): one call state per outer call, in
 * explicit states; an attempt that fails before its head reached the
 * caller is repeated after a backoff timer on the loop. Nothing of a
 * failed attempt is buffered: a retried response's body is read and
 * dropped. */
#include "net/client/interceptors.h"
#include "net/client/internal.h"
#include "kernel/clock.h"
#include "kernel/loop.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#define MAX_STATUSES 32
#define MAX_CALLS_PER_CORE 65536

enum retry_state {
	RETRY_ATTEMPT, /* an inner call runs; nothing has reached the caller */
	RETRY_DRAIN,   /* its response will be retried: dropping its body */
	RETRY_WAIT,    /* the backoff timer runs */
	RETRY_PASS,    /* the caller has the head: the rest is forwarded */
	RETRY_ENDED,   /* the caller has had on_complete or on_error */
};

struct retry_call;

struct retry {
	struct wrap_owner w; /* first: what callers hold */
	ig_dispatcher *inner;
	uint32_t max_retries, min_delay_ms, max_delay_ms, max_retry_after_ms, errors;
	uint16_t statuses[MAX_STATUSES];
	size_t status_count;
	const char *const *methods;
	uint64_t rng;
};

struct retry_call {
	struct wrap_call w; /* first: what the caller holds */
	struct retry *r;
	ig_dispatch_opts opts;
	const ig_dispatch_handler *h;
	void *arg;
	ig_call *inner; /* valid while inner_live */
	bool inner_live;
	bool connected; /* on_connect was forwarded */
	bool aborting;  /* the caller aborted: no more attempts */
	enum retry_state state;
	uint64_t drained; /* body bytes dropped in RETRY_DRAIN */
	uint32_t retries;
	uint32_t done_retries, done_redirects; /* reported by ended inner calls */
	uint64_t wait_ms;
	struct ig_timer timer;
};

/* One pool per core (thread): retry dispatchers come and go, their calls'
 * memory stays for the next. */
static _Thread_local struct wrap_slots call_slots = WRAP_SLOTS(struct retry_call, 64, MAX_CALLS_PER_CORE);

static const char *const idempotent_methods[] = { "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", NULL };
static const uint16_t default_statuses[] = { 429, 500, 502, 503, 504 };

static const ig_dispatch_handler retry_handler;
static const struct ig_call_ops retry_call_ops;

/* ---- lifetime ---- */

static void retry_free(struct wrap_owner *o)
{
	free(o);
}

/* Every entry point holds the call while it runs (internal.h). */
static void hold(struct retry_call *c)
{
	wrap_hold(&c->w);
}

static void let_go(struct retry_call *c)
{
	wrap_let_go(&c->w, c->state == RETRY_ENDED);
}

/* The totals the caller sees: ours, those of ended inner calls, and the
 * running inner call's. */
static void sync_counts(struct retry_call *c, const ig_call *inner)
{
	c->w.call.retries = c->retries + c->done_retries + (inner ? inner->retries : 0);
	c->w.call.redirects = c->done_redirects + (inner ? inner->redirects : 0);
}

static void inner_ended(struct retry_call *c, const ig_call *inner)
{
	c->inner_live = false;
	c->done_retries += inner->retries;
	c->done_redirects += inner->redirects;
}

static void end_with_error(struct retry_call *c, enum ig_client_error error, const char *message)
{
	if (c->state == RETRY_WAIT)
		ig_timer_cancel(&c->r->w.d.loop->timers, &c->timer);
	c->state = RETRY_ENDED;
	sync_counts(c, NULL);
	if (c->h->on_error)
		c->h->on_error(&c->w.call, c->arg, error, message);
}

/* ---- decisions ---- */

static bool is_idempotent(const struct retry_call *c)
{
	if (c->opts.idempotent >= 0)
		return c->opts.idempotent;
	const char *method = c->opts.method ? c->opts.method : "GET";
	for (const char *const *m = c->r->methods; *m; m++)
		if (strcmp(*m, method) == 0)
			return true;
	return false;
}

static bool may_retry(const struct retry_call *c)
{
	return !c->aborting && !c->r->w.destroying && c->retries < c->r->max_retries && is_idempotent(c);
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
	uint32_t k = c->retries; /* retries made so far: this is retry k + 1 */
	uint64_t cap = r->max_delay_ms;
	if (k < 32 && ((uint64_t)r->min_delay_ms << k) < cap)
		cap = (uint64_t)r->min_delay_ms << k;
	return next_random(r) % (cap + 1);
}

/* ---- attempts ---- */

static void on_timer(struct ig_timer *t);

static void start_attempt(struct retry_call *c)
{
	c->state = RETRY_ATTEMPT;
	c->inner_live = true;
	c->inner = NULL; /* not the last attempt's: known once dispatch returns */
	c->drained = 0;
	hold(c);
	ig_call *inner = ig_dispatch(c->r->inner, &c->opts, &retry_handler, c);
	if (c->inner_live) {
		c->inner = inner;
		if (c->aborting) /* asked while the dispatch ran */
			ig_call_abort(inner);
	}
	let_go(c);
}

static void wait_then_retry(struct retry_call *c, uint64_t wait_ms)
{
	c->state = RETRY_WAIT;
	c->timer = (struct ig_timer){ .fn = on_timer };
	struct ig_loop *loop = c->r->w.d.loop;
	ig_timer_set(&loop->timers, &c->timer, loop->clock.now_ms + wait_ms);
}

static void on_timer(struct ig_timer *t)
{
	struct retry_call *c = (struct retry_call *)((char *)t - offsetof(struct retry_call, timer));
	hold(c);
	if (c->r->w.destroying) {
		end_with_error(c, IG_CLIENT_ABORTED, "the retry dispatcher was destroyed");
	} else {
		c->retries++;
		start_attempt(c);
	}
	let_go(c);
}

/* ---- the inner call's callbacks ---- */

static void inner_on_connect(ig_call *inner, void *arg)
{
	struct retry_call *c = arg;
	c->inner = inner;
	if (c->aborting) {
		ig_call_abort(inner); /* asked before the inner call was known */
		return;
	}
	if (c->state != RETRY_ATTEMPT || c->connected || !c->h->on_connect)
		return;
	c->connected = true;
	hold(c);
	sync_counts(c, inner);
	c->h->on_connect(&c->w.call, c->arg);
	let_go(c);
}

static bool inner_on_headers(ig_call *inner, void *arg, int status, const ig_header *headers, size_t count)
{
	struct retry_call *c = arg;
	c->inner = inner;
	if (c->aborting) {
		ig_call_abort(inner); /* asked before the inner call was known */
		return false;
	}
	if (c->state != RETRY_ATTEMPT)
		return true;
	if (status_retried(c->r, status) && may_retry(c)) {
		const ig_str *ra = ig_header_find(headers, count, "retry-after");
		uint64_t wait;
		if (ra && ig_retry_after_ms(*ra, time(NULL), &wait))
			c->wait_ms = wait < c->r->max_retry_after_ms ? wait : c->r->max_retry_after_ms;
		else
			c->wait_ms = backoff_ms(c);
		c->state = RETRY_DRAIN;
		return true; /* read the body to its end, and drop it */
	}
	c->state = RETRY_PASS;
	if (!c->h->on_headers)
		return true;
	hold(c);
	sync_counts(c, inner);
	bool more = c->h->on_headers(&c->w.call, c->arg, status, headers, count);
	bool ended = c->state == RETRY_ENDED;
	let_go(c);
	return more && !ended;
}

static bool inner_on_data(ig_call *inner, void *arg, const char *data, size_t len)
{
	struct retry_call *c = arg;
	if (c->state == RETRY_DRAIN) {
		c->drained += len;
		if (c->drained <= WRAP_DRAIN_MAX)
			return true;
		/* Enough dropped: its on_error (RETRY_DRAIN) goes on to the retry. */
		ig_call_abort(inner);
		return false;
	}
	if (c->state != RETRY_PASS || !c->h->on_data)
		return true;
	hold(c);
	sync_counts(c, inner);
	bool more = c->h->on_data(&c->w.call, c->arg, data, len);
	bool ended = c->state == RETRY_ENDED;
	let_go(c);
	return more && !ended;
}

static void inner_on_complete(ig_call *inner, void *arg)
{
	struct retry_call *c = arg;
	inner_ended(c, inner);
	hold(c);
	if (c->state == RETRY_DRAIN) {
		if (c->aborting || c->r->w.destroying)
			end_with_error(c, IG_CLIENT_ABORTED, "aborted before a retry");
		else
			wait_then_retry(c, c->wait_ms);
	} else if (c->state == RETRY_PASS) {
		c->state = RETRY_ENDED;
		sync_counts(c, NULL);
		if (c->h->on_complete)
			c->h->on_complete(&c->w.call, c->arg);
	}
	let_go(c);
}

static void inner_on_error(ig_call *inner, void *arg, enum ig_client_error error, const char *message)
{
	struct retry_call *c = arg;
	inner_ended(c, inner);
	hold(c);
	if (c->aborting) {
		end_with_error(c, IG_CLIENT_ABORTED, message);
	} else if (c->state == RETRY_DRAIN && !c->r->w.destroying) {
		/* The retry was decided from the head; losing the body of the
		   response we drop changes nothing. */
		wait_then_retry(c, c->wait_ms);
	} else if (c->state == RETRY_ATTEMPT && (c->r->errors & IG_RETRY_ON(error)) && may_retry(c)) {
		wait_then_retry(c, backoff_ms(c));
	} else if (c->state != RETRY_ENDED) {
		end_with_error(c, error, message);
	}
	let_go(c);
}

static const ig_dispatch_handler retry_handler = {
	.on_connect = inner_on_connect,
	.on_headers = inner_on_headers,
	.on_data = inner_on_data,
	.on_complete = inner_on_complete,
	.on_error = inner_on_error,
};

/* ---- the caller's side ---- */

static void retry_call_abort(ig_call *call)
{
	struct retry_call *c = (struct retry_call *)call;
	if (c->state == RETRY_ENDED)
		return;
	hold(c);
	c->aborting = true;
	if (!c->inner_live)
		end_with_error(c, IG_CLIENT_ABORTED, "aborted");
	else if (c->inner)
		ig_call_abort(c->inner); /* its on_error ends ours */
	/* else it is being dispatched: start_attempt or its first callback
	   aborts it once it is known. */
	let_go(c);
}

static void retry_call_resume(ig_call *call)
{
	struct retry_call *c = (struct retry_call *)call;
	if (c->state == RETRY_PASS && c->inner_live)
		ig_call_resume(c->inner);
}

static const struct ig_call_ops retry_call_ops = {
	.abort = retry_call_abort,
	.resume = retry_call_resume,
};

static ig_call *retry_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts, const ig_dispatch_handler *h,
			       void *arg)
{
	struct retry *r = (struct retry *)d;
	if (r->w.destroying) {
		if (h->on_error)
			h->on_error(&ig_ended_call, arg, IG_CLIENT_ABORTED, "the retry dispatcher was destroyed");
		return NULL;
	}
	struct retry_call *c = wrap_call_take(&call_slots);
	if (!c) {
		if (h->on_error)
			h->on_error(&ig_ended_call, arg, IG_CLIENT_BUSY, "too many calls in the retry interceptor");
		return NULL;
	}
	*c = (struct retry_call){
		.w = { .call = { .ops = &retry_call_ops } }, .r = r, .opts = *opts, .h = h, .arg = arg
	};
	wrap_call_link(&r->w, &call_slots, &c->w);
	hold(c);
	start_attempt(c);
	bool ended = c->state == RETRY_ENDED;
	let_go(c);
	return ended ? NULL : &c->w.call;
}

static void retry_destroy(ig_dispatcher *d)
{
	struct retry *r = (struct retry *)d;
	wrap_destroy_begin(&r->w); /* keeps r while waiting calls end below */
	for (struct retry_call *c = (struct retry_call *)r->w.calls, *next; c; c = next) {
		hold(c);
		if (c->state == RETRY_WAIT)
			end_with_error(c, IG_CLIENT_ABORTED, "the retry dispatcher was destroyed");
		next = (struct retry_call *)c->w.next; /* c stays listed until let_go frees it */
		let_go(c);
	}
	ig_dispatcher *inner = r->inner;
	r->inner = NULL;
	inner->ops->destroy(inner);
	wrap_destroy_end(&r->w);
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
	r->w.d = (ig_dispatcher){ .ops = &retry_ops,
				  .loop = inner->loop,
				  .max_body_bytes = inner->max_body_bytes };
	r->w.free = retry_free;
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
	const char *p = value.ptr, *end = value.ptr + value.len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
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
