/* The mock agent (mock.h): interceptions in registration order, matched at
 * dispatch; each call's reply is played from a timer on the loop by a small
 * state machine (wait, body, paused, ended), so every callback arrives
 * outside dispatch, as from a socket. */
#include "ingot/client_mock.h"
#include "ingot/client_interceptors.h"
#include "net/client/internal.h"
#include "net/client/url.h"
#include "kernel/runtime/loop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define MAX_CALLS_PER_CORE 65536

struct interception {
	char *origin, *method, *path; /* NULL: any; origin normalised */
	bool path_prefix;
	ig_header *match_headers;
	size_t match_count;
	int status;
	ig_header *headers;
	size_t header_count;
	char *body;
	size_t body_len, chunk_size;
	uint32_t delay_ms;
	enum ig_client_error error;
	char *error_message;
	bool error_after_body;
	uint32_t times, used; /* times 0: persistent */
};

struct mock_call;

struct ig_mock_agent {
	struct wrap_owner w; /* first: what callers hold */
	ig_dispatcher *real;
	struct interception *list;
	size_t count, cap;
	bool net_all;       /* unmatched calls may go to real, to any origin */
	char **net_allowed; /* or to these origins (normalised) */
	size_t net_allowed_count;
	struct ig_mock_record *history;
	size_t history_count;
};

enum mock_state {
	MOCK_WAIT,   /* the timer runs until the head (or the error) */
	MOCK_BODY,   /* delivering the body */
	MOCK_PAUSED, /* the caller returned false: waiting for resume */
	MOCK_ENDED,  /* the caller has had on_complete or on_error */
};

struct mock_call {
	struct wrap_call w; /* first: what the caller holds */
	ig_mock_agent *m;
	const ig_dispatch_handler *h;
	void *arg;
	int index; /* the interception, or -1: fail with error/message */
	enum ig_client_error error;
	enum mock_state state;
	size_t off; /* body bytes delivered */
	struct ig_timer timer;
	char message[256];
};

static _Thread_local struct wrap_slots call_slots = WRAP_SLOTS(struct mock_call, 64, MAX_CALLS_PER_CORE);

static const struct ig_call_ops mock_call_ops;

/* ---- set-up: copies ---- */

static char *copy(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static char *copy_str(const char *s)
{
	return s ? copy(s, strlen(s)) : NULL;
}

static ig_header *copy_headers(const ig_header *h, size_t n, bool *ok)
{
	if (n == 0)
		return NULL;
	ig_header *out = calloc(n, sizeof *out);
	if (!out) {
		*ok = false;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char *name = copy(h[i].name.ptr, h[i].name.len),
		     *value = copy(h[i].value.ptr, h[i].value.len);
		if (!name || !value)
			*ok = false;
		out[i] = (ig_header){ { name, name ? h[i].name.len : 0 },
				      { value, value ? h[i].value.len : 0 } };
	}
	return out;
}

static void free_headers(ig_header *h, size_t n)
{
	for (size_t i = 0; h && i < n; i++) {
		free((char *)h[i].name.ptr);
		free((char *)h[i].value.ptr);
	}
	free(h);
}

static void free_interception(struct interception *ic)
{
	free(ic->origin);
	free(ic->method);
	free(ic->path);
	free_headers(ic->match_headers, ic->match_count);
	free_headers(ic->headers, ic->header_count);
	free(ic->body);
	free(ic->error_message);
}

/* The origin in the form calls carry (url.h), or a copy as given when it
 * does not parse as one. */
static char *normalised_origin(const char *origin, size_t len)
{
	struct ig_url u;
	if (ig_url_parse_origin(origin, len, &u) == 0)
		return copy(u.origin.ptr, u.origin.len);
	return copy(origin, len);
}

int ig_mock_intercept(ig_mock_agent *m, const struct ig_mock_match *match, const struct ig_mock_reply *reply,
		      uint32_t times)
{
	static const struct ig_mock_match any;
	match = match ? match : &any;
	bool is_error = reply->error != IG_CLIENT_OK;
	if ((unsigned)reply->error > IG_CLIENT_BAD_REQUEST ||
	    (!is_error && (reply->status < 100 || reply->status > 599)) ||
	    (reply->error_after_body && !is_error)) {
		errno = EINVAL;
		return -1;
	}
	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct interception *list = realloc(m->list, cap * sizeof *list);
		if (!list)
			return -1;
		m->list = list;
		m->cap = cap;
	}
	struct interception ic = {
		.path_prefix = match->path_prefix,
		.match_count = match->header_count,
		.status = reply->status,
		.header_count = reply->header_count,
		.body_len = reply->body.len,
		.chunk_size = reply->chunk_size,
		.delay_ms = reply->delay_ms,
		.error = reply->error,
		.error_after_body = reply->error_after_body,
		.times = times,
	};
	bool ok = true;
	ic.origin = match->origin ? normalised_origin(match->origin, strlen(match->origin)) : NULL;
	ic.method = copy_str(match->method);
	ic.path = copy_str(match->path);
	ic.match_headers = copy_headers(match->headers, match->header_count, &ok);
	ic.headers = copy_headers(reply->headers, reply->header_count, &ok);
	ic.body = copy(reply->body.ptr, reply->body.len);
	ic.error_message =
		copy_str(is_error ? (reply->error_message ? reply->error_message : "mocked error") : NULL);
	if (!ok || (match->origin && !ic.origin) || (match->method && !ic.method) ||
	    (match->path && !ic.path) || !ic.body || (is_error && !ic.error_message)) {
		free_interception(&ic);
		errno = ENOMEM;
		return -1;
	}
	m->list[m->count] = ic;
	return (int)m->count++;
}

void ig_mock_disable_net_connect(ig_mock_agent *m)
{
	m->net_all = false;
	for (size_t i = 0; i < m->net_allowed_count; i++)
		free(m->net_allowed[i]);
	m->net_allowed_count = 0;
}

int ig_mock_enable_net_connect(ig_mock_agent *m, const char *origin)
{
	if (!origin) {
		m->net_all = true;
		return 0;
	}
	char **list = realloc(m->net_allowed, (m->net_allowed_count + 1) * sizeof *list);
	if (!list)
		return -1;
	m->net_allowed = list;
	char *o = normalised_origin(origin, strlen(origin));
	if (!o)
		return -1;
	list[m->net_allowed_count++] = o;
	return 0;
}

/* ---- matching ---- */

/* ig_str_eq without memcmp on an empty slice (its pointer may be NULL). */
static bool str_is(ig_str a, const char *b, size_t n)
{
	return a.len == n && (n == 0 || memcmp(a.ptr, b, n) == 0);
}

static bool origin_is(ig_str call_origin, const char *want)
{
	struct ig_url u;
	ig_str o = call_origin;
	if (ig_url_parse_origin(call_origin.ptr, call_origin.len, &u) == 0)
		o = u.origin;
	return str_is(o, want, strlen(want));
}

static bool has_header(const ig_dispatch_opts *opts, const ig_header *want)
{
	for (size_t i = 0; i < opts->header_count; i++) {
		const ig_header *h = &opts->headers[i];
		bool name = h->name.len == want->name.len &&
			    (h->name.len == 0 || strncasecmp(h->name.ptr, want->name.ptr, h->name.len) == 0);
		if (name && str_is(h->value, want->value.ptr, want->value.len))
			return true;
	}
	return false;
}

static bool matches(const struct interception *ic, const ig_dispatch_opts *opts, const char *method)
{
	if (ic->times && ic->used >= ic->times)
		return false;
	if (ic->origin && !origin_is(opts->origin, ic->origin))
		return false;
	if (ic->method && strcmp(ic->method, method) != 0)
		return false;
	if (ic->path) {
		size_t n = strlen(ic->path);
		bool ok = ic->path_prefix ? opts->path.len >= n &&
						    (n == 0 || memcmp(opts->path.ptr, ic->path, n) == 0)
					  : str_is(opts->path, ic->path, n);
		if (!ok)
			return false;
	}
	for (size_t i = 0; i < ic->match_count; i++)
		if (!has_header(opts, &ic->match_headers[i]))
			return false;
	return true;
}

static bool net_allowed(const ig_mock_agent *m, ig_str origin)
{
	if (m->net_all)
		return true;
	for (size_t i = 0; i < m->net_allowed_count; i++)
		if (origin_is(origin, m->net_allowed[i]))
			return true;
	return false;
}

/* ---- history ---- */

static void put_cut(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(dst, s, n);
	dst[n] = 0;
}

static void record(ig_mock_agent *m, const ig_dispatch_opts *opts, const char *method, int index)
{
	if (m->history_count == IG_MOCK_HISTORY)
		return;
	struct ig_mock_record *r = &m->history[m->history_count++];
	r->at_ms = m->w.d.loop->clock.now_ms;
	r->interception = index;
	r->body_len = opts->body.len;
	put_cut(r->method, sizeof r->method, method, strlen(method));
	put_cut(r->origin, sizeof r->origin, opts->origin.ptr, opts->origin.len);
	put_cut(r->path, sizeof r->path, opts->path.ptr, opts->path.len);
	size_t at = 0;
	r->headers[0] = 0;
	for (size_t i = 0; i < opts->header_count; i++) {
		const ig_header *h = &opts->headers[i];
		int n = snprintf(r->headers + at, sizeof r->headers - at, "%.*s: %.*s\n", (int)h->name.len,
				 h->name.ptr, (int)h->value.len, h->value.ptr);
		if (n < 0 || (size_t)n >= sizeof r->headers - at)
			break;
		at += (size_t)n;
	}
}

const struct ig_mock_record *ig_mock_history(const ig_mock_agent *m, size_t *count)
{
	*count = m->history_count;
	return m->history;
}

/* ---- pending ---- */

static bool pending(const struct interception *ic)
{
	return ic->times ? ic->used < ic->times : ic->used == 0;
}

size_t ig_mock_pending(const ig_mock_agent *m, char *out, size_t cap)
{
	size_t n = 0, at = 0;
	if (cap)
		out[0] = 0;
	for (size_t i = 0; i < m->count; i++) {
		const struct interception *ic = &m->list[i];
		if (!pending(ic))
			continue;
		n++;
		if (at + 1 >= cap)
			continue;
		char times[24];
		if (ic->times)
			snprintf(times, sizeof times, "%u", ic->times);
		else
			snprintf(times, sizeof times, "persistent");
		int k = snprintf(out + at, cap - at, "interception %zu: %s %s%s%s used %u of %s\n", i,
				 ic->method ? ic->method : "*", ic->origin ? ic->origin : "*",
				 ic->path ? ic->path : "*", ic->path_prefix ? "*" : "", ic->used, times);
		at = k < 0 ? cap : at + (size_t)k;
		if (at >= cap)
			at = cap; /* cut: snprintf kept the NUL */
	}
	return n;
}

bool ig_mock_assert_all_used(const ig_mock_agent *m, char *msg, size_t cap)
{
	char list[1024];
	size_t n = ig_mock_pending(m, list, sizeof list);
	if (n == 0) {
		if (cap)
			msg[0] = 0;
		return true;
	}
	if (cap)
		snprintf(msg, cap, "%zu interception%s not used:\n%s", n, n == 1 ? "" : "s", list);
	return false;
}

uint32_t ig_mock_times_used(const ig_mock_agent *m, int interception)
{
	if (interception < 0 || (size_t)interception >= m->count)
		return 0;
	return m->list[interception].used;
}

/* ---- calls ---- */

static void agent_free(struct wrap_owner *o)
{
	ig_mock_agent *m = (ig_mock_agent *)o;
	for (size_t i = 0; i < m->count; i++)
		free_interception(&m->list[i]);
	free(m->list);
	ig_mock_disable_net_connect(m);
	free(m->net_allowed);
	free(m->history);
	free(m);
}

/* The caller is told of the end next: the state goes after the batch. */
static void ended(struct mock_call *c)
{
	c->state = MOCK_ENDED;
	ig_wrap_call_ended(&c->w);
}

static void end_with_error(struct mock_call *c, enum ig_client_error error, const char *message)
{
	ig_timer_cancel(&c->m->w.d.loop->timers, &c->timer);
	ended(c);
	if (c->h->on_error)
		c->h->on_error(&c->w.call, error, message, c->arg);
}

/* Plays the reply from where it stands until it ends or the caller
 * pauses. The interception is looked up again after each callback: one
 * may register more and move the list. */
static void play(struct mock_call *c)
{
	const struct interception *ic = c->index >= 0 ? &c->m->list[c->index] : NULL;
	if (c->state == MOCK_WAIT) {
		if (!ic) {
			end_with_error(c, c->error, c->message);
		} else if (ic->error && !ic->error_after_body) {
			end_with_error(c, ic->error, ic->error_message);
		} else {
			if (c->h->on_connect)
				c->h->on_connect(&c->w.call, c->arg);
			if (c->state == MOCK_WAIT) {
				c->state = MOCK_BODY;
				ic = &c->m->list[c->index];
				if (c->h->on_headers &&
				    !c->h->on_headers(&c->w.call, ic->status, ic->headers,
						      ic->header_count, c->arg) &&
				    c->state == MOCK_BODY)
					c->state = MOCK_PAUSED;
			}
		}
	}
	while (c->state == MOCK_BODY) {
		ic = &c->m->list[c->index];
		if (c->off < ic->body_len) {
			size_t n = ic->body_len - c->off;
			if (ic->chunk_size && ic->chunk_size < n)
				n = ic->chunk_size;
			const char *piece = ic->body + c->off;
			c->off += n;
			if (c->h->on_data && !c->h->on_data(&c->w.call, piece, n, c->arg) &&
			    c->state == MOCK_BODY)
				c->state = MOCK_PAUSED;
		} else if (ic->error) {
			end_with_error(c, ic->error, ic->error_message);
		} else {
			ended(c);
			if (c->h->on_complete)
				c->h->on_complete(&c->w.call, c->arg);
		}
	}
}

static void on_timer(struct ig_timer *t)
{
	play((struct mock_call *)((char *)t - offsetof(struct mock_call, timer)));
}

static void mock_call_abort(ig_call *call)
{
	struct mock_call *c = (struct mock_call *)call;
	if (c->state == MOCK_ENDED)
		return;
	end_with_error(c, IG_CLIENT_ABORTED, "aborted");
}

static void mock_call_resume(ig_call *call)
{
	struct mock_call *c = (struct mock_call *)call;
	if (c->state != MOCK_PAUSED)
		return;
	/* As from a socket: the rest arrives on a later turn of the loop. */
	c->state = MOCK_BODY;
	struct ig_loop *loop = c->m->w.d.loop;
	ig_timer_set(&loop->timers, &c->timer, loop->clock.now_ms);
}

static const struct ig_call_ops mock_call_ops = {
	.abort = mock_call_abort,
	.resume = mock_call_resume,
};

static ig_call *mock_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts, const ig_dispatch_handler *h,
			      void *arg)
{
	ig_mock_agent *m = (ig_mock_agent *)d;
	const char *method = opts->method ? opts->method : "GET";
	int index = -1;
	for (size_t i = 0; i < m->count && index < 0; i++)
		if (matches(&m->list[i], opts, method))
			index = (int)i;
	record(m, opts, method, index);
	if (m->w.destroying) {
		if (h->on_error)
			h->on_error(&ig_ended_call, IG_CLIENT_ABORTED, "the mock agent was destroyed", arg);
		return NULL;
	}
	bool allowed = net_allowed(m, opts->origin);
	if (index < 0 && allowed && m->real)
		return ig_dispatch(m->real, opts, h, arg);

	struct mock_call *c = ig_wrap_call_take(&call_slots);
	if (!c) {
		if (h->on_error)
			h->on_error(&ig_ended_call, IG_CLIENT_BUSY, "too many calls in the mock agent", arg);
		return NULL;
	}
	*c = (struct mock_call){
		.w = { .call = { .ops = &mock_call_ops } }, .m = m, .h = h, .arg = arg, .index = index
	};
	c->timer.fn = on_timer;
	if (index >= 0) {
		m->list[index].used++;
	} else {
		c->error = allowed ? IG_CLIENT_MOCK_UNMATCHED : IG_CLIENT_NET_FORBIDDEN;
		snprintf(c->message, sizeof c->message, "%s: %s %.*s%.*s",
			 allowed ? "no mock interception matches"
				 : "network disabled and no mock interception matches",
			 method, (int)opts->origin.len, opts->origin.ptr, (int)opts->path.len,
			 opts->path.ptr);
	}
	ig_wrap_call_link(&m->w, &call_slots, &c->w);
	uint64_t delay = index >= 0 ? m->list[index].delay_ms : 0;
	ig_timer_set(&d->loop->timers, &c->timer, d->loop->clock.now_ms + delay);
	return &c->w.call;
}

static void mock_destroy(ig_dispatcher *d)
{
	ig_mock_agent *m = (ig_mock_agent *)d;
	ig_wrap_destroy_begin(&m->w);
	for (struct mock_call *c = (struct mock_call *)m->w.calls, *next; c; c = next) {
		next = (struct mock_call *)c->w.next; /* c stays listed until released */
		if (c->state != MOCK_ENDED)
			end_with_error(c, IG_CLIENT_ABORTED, "the mock agent was destroyed");
	}
	ig_wrap_destroy_end(&m->w);
}

static const struct ig_dispatcher_ops mock_ops = {
	.dispatch = mock_dispatch,
	.destroy = mock_destroy,
};

ig_mock_agent *ig_mock_agent_new(struct ig_loop *loop, ig_dispatcher *real)
{
	ig_mock_agent *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->history = calloc(IG_MOCK_HISTORY, sizeof *m->history);
	if (!m->history) {
		free(m);
		return NULL;
	}
	m->w.d = (ig_dispatcher){ .ops = &mock_ops,
				  .loop = loop,
				  .max_body_bytes = real ? real->max_body_bytes : 0 };
	m->w.free = agent_free;
	m->real = real;
	m->net_all = true;
	return m;
}

ig_dispatcher *ig_mock_dispatcher(ig_mock_agent *m)
{
	return &m->w.d;
}

void ig_mock_agent_free(ig_mock_agent *m)
{
	mock_destroy(&m->w.d);
}
