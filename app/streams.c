/* The reference service's streams. Server-Sent Events
 * (include/ingot/sse.h): GET /ticker sends typed ticks from its handler,
 * waiting between them; GET /events/idle keeps its stream after the
 * handler returns, so an idle stream holds no coroutine, in its core's
 * list, to which a later one's handler sends its note. A WebSocket
 * (include/ingot/websocket.h): GET /ws/echo answers each message, after
 * waiting when it asks. GET /me/events and GET /ws/me are the same for a
 * caller the door admitted, whose bearer token a browser sends as
 * ?access_token= (the document's x-ingot-access-token-query). */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>

/* This core's kept idle streams (a core is a thread): grown with realloc
 * by the first streams, never on a plain request's path, freed when the
 * last has gone (the drain ends them all). */
static _Thread_local ig_sse **idle;
static _Thread_local size_t idle_count, idle_cap;

static bool idle_add(ig_sse *s)
{
	if (idle_count == idle_cap) {
		size_t cap = idle_cap ? idle_cap * 2 : 64;
		ig_sse **p = realloc(idle, cap * sizeof *p);
		if (!p)
			return false;
		idle = p;
		idle_cap = cap;
	}
	idle[idle_count++] = s;
	return true;
}

static void idle_remove(ig_sse *s)
{
	for (size_t i = 0; i < idle_count; i++) {
		if (idle[i] == s) {
			idle[i] = idle[--idle_count];
			break;
		}
	}
	if (!idle_count) { /* nothing left for a leak checker to find at exit */
		free(idle);
		idle = NULL;
		idle_cap = 0;
	}
}

/* Sends ticks from..of, one every interval_ms. */
static int ticks(ig_ctx *ctx, ig_sse *s, const struct getTicker_in *in, int64_t from)
{
	ig_str pad = { "", 0 };
	if (in->pad) {
		char *p = ig_alloc(ctx, (size_t)in->pad);
		if (!p)
			return 500;
		memset(p, 'x', (size_t)in->pad);
		pad = (ig_str){ p, (size_t)in->pad };
	}
	for (int64_t n = from; n <= in->n; n++) {
		struct Tick t = { .n = n, .of = in->n, .has_pad = in->pad > 0, .pad = pad };
		char id[24];
		snprintf(id, sizeof id, "%lld", (long long)n);
		enum ig_sse_result r = ig_sse_send_getTicker(s, &t, "tick", id);
		if (r == IG_SSE_OK && n < in->n && in->interval_ms &&
		    ig_sleep(ctx, (uint32_t)in->interval_ms) != IG_WAIT_OK)
			r = IG_SSE_CLOSED;
		if (r != IG_SSE_OK) {
			/* What the tests see of a client that left (or a drain). */
			struct ig_logline l;
			if (ig_log_req(ctx, &l, IG_LOG_INFO, "ticker stopped")) {
				ig_log_int(&l, "tick", n);
				ig_log_int(&l, "result", r);
				ig_log_end(&l);
			}
			break;
		}
	}
	return 200;
}

int getTicker(ig_ctx *ctx, const struct getTicker_in *in, struct getTicker_out *out)
{
	(void)out;
	/* A reconnecting client goes on after the last tick it saw. */
	int64_t from = 1;
	ig_str last = ig_sse_last_event_id(ctx);
	if (last.len && last.len < 20) {
		int64_t k = 0;
		size_t i = 0;
		while (i < last.len && last.ptr[i] >= '0' && last.ptr[i] <= '9')
			k = k * 10 + (last.ptr[i++] - '0');
		if (i == last.len)
			from = k + 1;
		struct ig_logline l;
		if (ig_log_req(ctx, &l, IG_LOG_INFO, "ticker resumed")) {
			ig_log_int(&l, "after", from - 1);
			ig_log_end(&l);
		}
	}
	ig_sse *s = ig_sse_open(ctx);
	if (!s) {
		ig_respond_problem(ctx, 503, "no stream can be opened now");
		return 503;
	}
	/* A client that loses the stream comes back soon. */
	if (ig_sse_retry(s, 200) != IG_SSE_OK)
		return 200;
	return ticks(ctx, s, in, from);
}

/* The client left, or the drain: the list lets go of it. */
static void idle_closed(void *arg, ig_sse *s)
{
	(void)arg;
	idle_remove(s);
	ig_sse_close(s);
}

/* A handler's sends to other streams, kept by their own handlers: the
 * note to each of this core's idle streams, then to s how many it
 * reached. Returns false when s has gone. */
static bool broadcast(ig_sse *s, ig_str note)
{
	int64_t sent = 0;
	/* A send that finds its stream gone runs idle_closed, which takes it
	   out of the list: from the end, so that no stream is skipped. */
	for (size_t i = idle_count; i-- > 0;)
		if (i < idle_count && ig_sse_send(idle[i], "note", NULL, note) == IG_SSE_OK)
			sent++;
	char n[24];
	int len = snprintf(n, sizeof n, "%lld", (long long)sent);
	return ig_sse_send(s, "sent", NULL, (ig_str){ n, (size_t)len }) == IG_SSE_OK;
}

int getEvents(ig_ctx *ctx, const struct getEvents_in *in, struct getEvents_out *out)
{
	(void)out;
	ig_sse *s = ig_sse_open(ctx);
	if (!s) {
		ig_respond_problem(ctx, 503, "no stream can be opened now");
		return 503;
	}
	if (in->has_note && !broadcast(s, in->note))
		return 200; /* gone already */
	struct Tick t = { .n = 0, .of = 0 };
	/* And an untyped event whose data has each kind of line break: one
	   data: line each. */
	if (ig_sse_send_getEvents(s, &t, "tick", NULL) != IG_SSE_OK ||
	    ig_sse_send(s, "lines", "0", IG_STR("a\r\nb\rc\nd")) != IG_SSE_OK)
		return 200; /* gone already: not kept, it ends with the handler */
	if (!idle_add(s))
		return 200; /* not kept: it ends now */
	ig_sse_keep(s);
	ig_sse_on_close(s, idle_closed, NULL);
	return 200;
}

/* GET /ws/echo: the handler only upgrades; each message comes to
 * getWsEcho_message, decoded and checked, and is answered with n + 1. */
int getWsEcho(ig_ctx *ctx, const struct getWsEcho_in *in, struct getWsEcho_out *out)
{
	(void)in;
	(void)out;
	int status;
	ig_ws *ws = ig_ws_open_getWsEcho(ctx, &status);
	(void)ws; /* the runtime keeps it open: messages come to getWsEcho_message */
	return status;
}

typedef enum ig_ws_result echo_send_fn(ig_ws *ws, const struct Echo *msg);

static void echo(ig_ctx *ctx, ig_ws *ws, const struct Echo *msg, echo_send_fn *send)
{
	/* A handler may wait: on its coroutine, the socket's next message
	   waiting behind it. */
	if (msg->has_wait_ms && msg->wait_ms && ig_sleep(ctx, (uint32_t)msg->wait_ms) != IG_WAIT_OK)
		return; /* cancelled: the socket has closed */
	struct Echo reply = { .text = msg->text, .n = msg->n + 1 };
	/* Each send waits for room in the client's window (never FULL from
	   this handler); CLOSED: it has gone. */
	for (int64_t i = 0; i < (msg->has_repeat ? msg->repeat : 1); i++) {
		enum ig_ws_result r = send(ws, &reply);
		if (r == IG_WS_INVALID)
			ig_ws_close(ws, 1011, "the echo could not be encoded"); /* internal error */
		if (r != IG_WS_OK)
			break;
	}
}

void getWsEcho_message(ig_ctx *ctx, ig_ws *ws, const struct Echo *msg)
{
	echo(ctx, ws, msg, ig_ws_send_getWsEcho);
}

/* GET /me/events: the caller (the token's claims, as the door decoded
 * them), as one event; then the stream ends. */
int getMeEvents(ig_ctx *ctx, const struct getMeEvents_in *in, struct getMeEvents_out *out)
{
	(void)in;
	(void)out;
	const struct Caller *who = ig_principal_Caller(ctx);
	if (!who) /* the door admits no one without a token */
		return 500;
	ig_sse *s = ig_sse_open(ctx);
	if (!s) {
		ig_respond_problem(ctx, 503, "no stream can be opened now");
		return 503;
	}
	enum ig_sse_result r = ig_sse_send_getMeEvents(s, who, "caller", NULL);
	(void)r; /* not OK: the client has gone; the stream ends here either way */
	return 200;
}

/* GET /ws/me: upgrades, then greets the caller by the token's subject
 * (n = 0); its messages are echoed as GET /ws/echo's. */
int getWsMe(ig_ctx *ctx, const struct getWsMe_in *in, struct getWsMe_out *out)
{
	(void)in;
	(void)out;
	const struct Caller *who = ig_principal_Caller(ctx);
	int status;
	ig_ws *ws = ig_ws_open_getWsMe(ctx, &status);
	struct Echo hello = { .text = who && who->has_sub ? who->sub : IG_STR(""), .n = 0 };
	/* An empty window takes it; CLOSED: the client has gone already. */
	if (ws && ig_ws_send_getWsMe(ws, &hello) == IG_WS_INVALID)
		ig_ws_close(ws, 1011, "the greeting could not be encoded");
	return status;
}

void getWsMe_message(ig_ctx *ctx, ig_ws *ws, const struct Echo *msg)
{
	echo(ctx, ws, msg, ig_ws_send_getWsMe);
}
