/* Every 5xx is logged once at error level: by ig_finish (a handler's or the
 * runtime's answer), or by the module that failed, in its own words (a
 * database error, a failed upstream call), which then marks the exchange so
 * that ig_finish adds nothing. A storm is bounded per core, without a lock:
 * identical failures (route, status, cause) log one line a second, and the
 * count of those left out follows when that second is over. */
#include "internal.h"
#include "wait.h"

#include <stddef.h>
#include <string.h>

#define WINDOW_MS 1000

static uint64_t key_of(uint32_t route, int status, const char *cause)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)cause; *p; p++)
		h = (h ^ *p) * 1099511628211u;
	h = (h ^ route) * 1099511628211u;
	h = (h ^ (uint64_t)status) * 1099511628211u;
	return h ? h : 1;
}

static const char *route_name(const struct http_core *core, uint32_t route)
{
	return route && route <= core->app->route_count ? core->app->routes[route - 1] : "";
}

static void write_count(const struct http_core *core, struct http_error_slot *s)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, "server errors suppressed")) {
		ig_log_cstr(&l, "route", route_name(core, s->route));
		ig_log_int(&l, "status", s->status);
		ig_log_cstr(&l, "cause", s->cause);
		ig_log_int(&l, "suppressed", s->suppressed);
		ig_log_end(&l);
	}
	s->suppressed = 0;
}

static void on_tick(struct ig_timer *t)
{
	struct http_error_log *log = (struct http_error_log *)((char *)t - offsetof(struct http_error_log, tick));
	struct http_core *core = log->core;
	uint64_t now = core->loop.clock.now_ms, next = UINT64_MAX;
	for (int i = 0; i < HTTP_ERROR_LOG_SLOTS; i++) {
		struct http_error_slot *s = &log->slots[i];
		if (!s->suppressed)
			continue;
		if (now >= s->since_ms + WINDOW_MS)
			write_count(core, s);
		else if (s->since_ms + WINDOW_MS < next)
			next = s->since_ms + WINDOW_MS;
	}
	if (next != UINT64_MAX)
		ig_timer_set(&core->loop.timers, t, next);
}

/* Whether this failure is to be logged now: false when an identical one
 * was, less than a second ago (then it is counted). */
static bool storm_admits(struct http_core *core, uint32_t route, int status, const char *cause)
{
	struct http_error_log *log = core->error_log;
	if (!log)
		return true;
	uint64_t key = key_of(route, status, cause), now = core->loop.clock.now_ms;
	struct http_error_slot *s = NULL, *victim = &log->slots[0];
	for (int i = 0; i < HTTP_ERROR_LOG_SLOTS && !s; i++) {
		struct http_error_slot *c = &log->slots[i];
		if (c->key == key && c->route == route && c->status == status)
			s = c;
		else if (!c->key || (victim->key && c->since_ms < victim->since_ms))
			victim = c;
	}
	if (s && now < s->since_ms + WINDOW_MS) {
		s->suppressed++;
		log->tick.fn = on_tick;
		log->core = core;
		ig_timer_set_lazy(&core->loop.timers, &log->tick, s->since_ms + WINDOW_MS);
		return false;
	}
	if (!s) {
		s = victim;
		if (s->suppressed) /* its count is due before its slot is reused */
			write_count(core, s);
		s->key = key;
		s->route = route;
		s->status = status;
		size_t n = strlen(cause);
		n = n < sizeof s->cause - 1 ? n : sizeof s->cause - 1;
		memcpy(s->cause, cause, n);
		s->cause[n] = 0;
	} else if (s->suppressed) {
		write_count(core, s); /* the second is over; its tick has not run yet */
	}
	s->since_ms = now;
	return true;
}

bool ig_http_error_line_begin(struct ig_ctx *x, struct ig_logline *l, const char *msg, int status, const char *cause)
{
	x->error_logged = true;
	if (!ig_log_enabled(IG_LOG_ERROR) || !storm_admits(x->core, x->route, status, cause) ||
	    !ig_log_begin(l, IG_LOG_ERROR, msg))
		return false;
	ig_str id = ig_request_id(x);
	ig_log_str(l, "request_id", id.ptr, id.len);
	ig_log_cstr(l, "trace_id", ig_trace_id(x));
	ig_log_str(l, "method", x->req.method.ptr, x->req.method.len);
	ig_log_cstr(l, "route", ig_route_template(x));
	if (x->work && x->work->name)
		ig_log_cstr(l, "operation", x->work->name);
	ig_log_int(l, "status", status);
	ig_log_cstr(l, "cause", cause);
	return true;
}

void ig_http_error_mark_logged(struct ig_ctx *x)
{
	x->error_logged = true;
}

__attribute__((cold, noinline)) void ig_http_error_log_answer(struct ig_ctx *x)
{
	struct ig_logline l;
	if (ig_http_error_line_begin(x, &l, "server error", x->status, x->cause ? x->cause : "handler"))
		ig_log_end(&l);
}

void ig_http_error_log_flush(struct http_core *core)
{
	struct http_error_log *log = core->error_log;
	if (!log)
		return;
	ig_timer_cancel(&core->loop.timers, &log->tick);
	for (int i = 0; i < HTTP_ERROR_LOG_SLOTS; i++)
		if (log->slots[i].suppressed)
			write_count(core, &log->slots[i]);
}
