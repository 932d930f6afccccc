/* The Runtime API loop (lambda.h): next, answer through the in-process
 * engine, post, next again, as explicit steps on one core's loop. The
 * Runtime API is called through api_call.h, on the same loop as the
 * handlers' own outbound calls; every call's memory is the invocation's
 * arena, reset when the next invocation is pulled. */
#include "kernel/process/exit_codes.h"
#include "net/lambda/api_call.h"
#include "net/lambda/event.h"
#include "net/lambda/internal.h"
#include "net/pubsub/sqs.h"
#include "kernel/runtime/base64.h"
#include "kernel/runtime/clock.h"
#include "ingot/log.h"
#include "net/http/health.h"
#include "net/server/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RETRY_FIRST_MS 10
#define RETRY_MAX_MS 500
/* Consecutive failed calls (about 12 s of backoff) after which the Runtime
 * API is taken for gone: the process exits 1 and Lambda, seeing the exit,
 * replaces the sandbox, where retrying would hang to the function's
 * timeout. A local cause (no descriptor for the socket) ends the same. */
#define RETRY_GIVE_UP 30
#define ARENA_LIMIT (64u << 20)  /* an event (6 MB at most), its decoded body, the answer */
#define EVENT_MAX (8u << 20)     /* Lambda's payload limit is 6 MB */
#define INPROC_BUF (32u << 20)   /* request bytes and the captured response */
#define REQUEST_ID_MAX 128
#define POST_TIMEOUT_MS 30000 /* for the whole answer to a post */

enum step { STEP_NEXT, STEP_RESPONSE, STEP_ERROR, STEP_INIT_ERROR };

static const char *const step_names[] = { "next", "response", "error", "init/error" };

struct runtime {
	struct http_core core;
	struct lambda_api api;
	bool api_ready;
	ig_arena arena;
	char *buf; /* the in-process request's (INPROC_BUF, mapped once, touched as used) */
	struct http_inproc inproc;
	struct lambda_event ev;
	enum step step;
	char url[512];
	char request_id[REQUEST_ID_MAX + 1];
	size_t request_id_len;
	char traceparent[IG_TRACEPARENT_LEN];
	ig_str post_body;
	const char *error_type;
	ig_header post_headers[3];
	/* The streaming mode: the prelude (and, for an answer made whole, its
	   body), then the engine's body as it comes when from_engine. */
	ig_str stream_head;
	size_t stream_head_sent;
	bool streaming, from_engine, stream_posted, engine_done;
	struct ig_deferred cut; /* the exchange cut when the post ended first */
	char trailers[400];
	uint32_t backoff_ms, attempt;
	struct ig_timer retry_timer;
	uint64_t t0_us;
	bool started; /* the first next was sent (the startup line) */
	bool once;    /* init/error: stop the loop after it */
};

/* Mapped when the runtime starts: a static one would sit among the .bss
 * that every start touches and cost an idle server its pages. */
static struct runtime *rt;

static const char *runtime_api(void)
{
	return ig_lambda_config.runtime_api && *ig_lambda_config.runtime_api ? ig_lambda_config.runtime_api
									 : getenv("AWS_LAMBDA_RUNTIME_API");
}

static void set_url(const char *tail)
{
	snprintf(rt->url, sizeof rt->url, LAMBDA_API_PREFIX "%s", tail);
}

static void call_step(void);

bool ig_lambda_current_invocation(const char **api, const char **id, size_t *id_len)
{
	if (!rt || !rt->request_id_len || rt->step == STEP_INIT_ERROR)
		return false;
	*api = runtime_api();
	*id = rt->request_id;
	*id_len = rt->request_id_len;
	return true;
}

/* ---- retries ---- */

static void on_retry_timer(struct ig_timer *t)
{
	(void)t;
	call_step();
}

static void retry(const char *why, int status)
{
	struct ig_logline l;
	rt->attempt++;
	if (rt->once && rt->attempt > 5) { /* an init error is worth a few tries, not a hang */
		rt->core.loop.running = false;
		return;
	}
	if (rt->attempt > RETRY_GIVE_UP) {
		if (ig_log_begin(&l, IG_LOG_ERROR, "runtime api unreachable")) {
			ig_log_cstr(&l, "call", step_names[rt->step]);
			ig_log_cstr(&l, "error", why);
			if (status)
				ig_log_int(&l, "status", status);
			ig_log_int(&l, "attempts", rt->attempt);
			ig_log_end(&l);
		}
		rt->core.loop.running = false; /* ig_lambda_serve returns 1 */
		return;
	}
	if (ig_log_begin(&l, IG_LOG_WARN, "runtime api retry")) {
		ig_log_cstr(&l, "call", step_names[rt->step]);
		ig_log_cstr(&l, "error", why);
		if (status)
			ig_log_int(&l, "status", status);
		ig_log_int(&l, "attempt", rt->attempt);
		ig_log_int(&l, "delay_ms", rt->backoff_ms);
		ig_log_end(&l);
	}
	rt->retry_timer.fn = on_retry_timer;
	ig_timer_set(&rt->core.loop.timers, &rt->retry_timer, rt->core.loop.clock.now_ms + rt->backoff_ms);
	rt->backoff_ms = rt->backoff_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : rt->backoff_ms * 2;
}

/* The call reached the Runtime API and was answered: no more backoff. */
static void reached(void)
{
	rt->backoff_ms = RETRY_FIRST_MS;
	rt->attempt = 0;
}

/* ---- posting an answer or an error ---- */

static void next_invocation(void);

/* _X_AMZN_TRACE_ID, the invocation's X-Ray trace header, as Lambda's own
 * runtimes set it (one invocation at a time: the environment is the
 * process's). One buffer, put in the environment once and rewritten in
 * place: no allocation per invocation, as setenv's would be. A header too
 * long for it (X-Ray's are about 100 bytes) or none unsets the variable. */
#define TRACE_ENV "_X_AMZN_TRACE_ID="
static char trace_env[sizeof TRACE_ENV + 512];
static void set_trace_env(ig_str trace)
{
	if (!trace.len || trace.len >= sizeof trace_env - (sizeof TRACE_ENV - 1)) {
		unsetenv("_X_AMZN_TRACE_ID"); /* takes trace_env out of the environment too */
		return;
	}
	memcpy(trace_env, TRACE_ENV, sizeof TRACE_ENV - 1);
	memcpy(trace_env + sizeof TRACE_ENV - 1, trace.ptr, trace.len);
	trace_env[sizeof TRACE_ENV - 1 + trace.len] = 0;
	if (getenv("_X_AMZN_TRACE_ID") != trace_env + sizeof TRACE_ENV - 1) /* not ours yet */
		putenv(trace_env);
}

static void on_posted(const struct lambda_api_answer *res)
{
	if (res->error) {
		retry(res->error, 0);
		return;
	}
	if (res->status >= 500) {
		retry("the Runtime API answered a server error", res->status);
		return;
	}
	reached();
	if (res->status >= 300) { /* an unknown id, an answer too large: not ours to repeat */
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "runtime api refused")) {
			ig_log_cstr(&l, "call", step_names[rt->step]);
			ig_log_int(&l, "status", res->status);
			ig_log_str(&l, "request_id", rt->request_id, rt->request_id_len);
			ig_log_str(&l, "body", res->body.ptr, res->body.len < 300 ? res->body.len : 300);
			ig_log_end(&l);
		}
	}
	if (rt->once) {
		rt->core.loop.running = false;
		return;
	}
	next_invocation();
}

static void post(void)
{
	char tail[REQUEST_ID_MAX + 40];
	if (rt->step == STEP_INIT_ERROR)
		snprintf(tail, sizeof tail, "/init/error");
	else
		snprintf(tail, sizeof tail, "/invocation/%.*s/%s", (int)rt->request_id_len, rt->request_id,
			 rt->step == STEP_RESPONSE ? "response" : "error");
	set_url(tail);
	size_t n = 0;
	rt->post_headers[n++] = (ig_header){ IG_STR("Content-Type"), IG_STR("application/json") };
	if (rt->error_type)
		rt->post_headers[n++] = (ig_header){ IG_STR("Lambda-Runtime-Function-Error-Type"),
						    { rt->error_type, strlen(rt->error_type) } };
	ig_lambda_api_call(&rt->api, runtime_api(), "POST", rt->url, rt->post_headers, n, rt->post_body, POST_TIMEOUT_MS,
			on_posted);
}

static void log_failure(const char *request_id, size_t id_len, const char *type, const char *message)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, "invocation failed")) {
		ig_log_str(&l, "request_id", request_id, id_len);
		ig_log_cstr(&l, "type", type);
		ig_log_cstr(&l, "error", message);
		ig_log_end(&l);
	}
}

/* {"errorMessage": ..., "errorType": ...} to .../error or init/error. */
static void post_error(enum step step, const char *type, const char *message)
{
	ig_wbuf w = { .arena = &rt->arena };
	ig_wbuf_lit(&w, "{\"errorMessage\":");
	ig_json_string(&w, message, strlen(message));
	ig_wbuf_lit(&w, ",\"errorType\":");
	ig_json_string(&w, type, strlen(type));
	ig_wbuf_lit(&w, "}");
	log_failure(rt->request_id, rt->request_id_len, type, message);
	rt->step = step;
	rt->error_type = type;
	rt->post_body = (ig_str){ w.ptr, w.failed ? 0 : w.len };
	post();
}

/* ---- the streaming mode ----
 * A function URL with InvokeMode RESPONSE_STREAM (INGOT_LAMBDA_INVOKE_MODE)
 * reads its answer as application/vnd.awslambda.http-integration-response:
 * the prelude (status, fields, cookies), 8 NUL bytes, then the body as it
 * is, POSTed chunked with Lambda-Runtime-Function-Response-Mode: streaming.
 * The engine's response is passed on as it is written (inproc.h's sink),
 * so an SSE stream or an ig_body_out download leaves as it is made, held
 * back by the Runtime API's connection; any other answer goes the same
 * way, whole. A body cut short ends with Lambda's error trailers. */

static void on_stream_posted(const struct lambda_api_answer *res);

static ig_str stream_peek(void *arg, bool *end, ig_str *trailers)
{
	(void)arg;
	if (rt->stream_head_sent < rt->stream_head.len) {
		*end = false;
		return (ig_str){ rt->stream_head.ptr + rt->stream_head_sent, rt->stream_head.len - rt->stream_head_sent };
	}
	if (!rt->from_engine) {
		*end = true;
		return (ig_str){ NULL, 0 };
	}
	bool whole = true;
	ig_str b = ig_http_inproc_body(&rt->inproc, end, &whole);
	if (*end && !whole) {
		static const char type[] = "Runtime.TruncatedResponse";
		static const char error[] = "{\"errorMessage\":\"the response stream ended before its end\","
					    "\"errorType\":\"Runtime.TruncatedResponse\"}";
		char b64[ig_base64_len(sizeof error - 1) + 1];
		size_t n = ig_base64_encode((const uint8_t *)error, sizeof error - 1, b64);
		int len = snprintf(rt->trailers, sizeof rt->trailers,
				   "Lambda-Runtime-Function-Error-Type: %s\r\nLambda-Runtime-Function-Error-Body: %.*s\r\n",
				   type, (int)n, b64);
		*trailers = (ig_str){ rt->trailers, len > 0 && (size_t)len < sizeof rt->trailers ? (size_t)len : 0 };
		log_failure(rt->request_id, rt->request_id_len, type, "the response stream ended before its end");
	}
	return b;
}

static void stream_taken(void *arg, size_t n)
{
	(void)arg;
	size_t k = rt->stream_head.len - rt->stream_head_sent;
	k = k < n ? k : n;
	rt->stream_head_sent += k;
	if (n > k)
		ig_http_inproc_taken(&rt->inproc, n - k);
}

static const struct lambda_api_source stream_source = { .peek = stream_peek, .taken = stream_taken };

/* POSTs head (and, when not from_engine, nothing after it) in the
 * streaming mode. */
static void stream_post(ig_str head, bool from_engine)
{
	char tail[REQUEST_ID_MAX + 40];
	snprintf(tail, sizeof tail, "/invocation/%.*s/response", (int)rt->request_id_len, rt->request_id);
	set_url(tail);
	rt->step = STEP_RESPONSE;
	rt->streaming = true;
	rt->from_engine = from_engine;
	rt->stream_head = head;
	rt->stream_head_sent = 0;
	rt->post_headers[0] = (ig_header){ IG_STR("Lambda-Runtime-Function-Response-Mode"), IG_STR("streaming") };
	rt->post_headers[1] = (ig_header){ IG_STR("Content-Type"),
					   IG_STR("application/vnd.awslambda.http-integration-response") };
	rt->post_headers[2] = (ig_header){ IG_STR("Trailer"),
					   IG_STR("Lambda-Runtime-Function-Error-Type, Lambda-Runtime-Function-Error-Body") };
	ig_lambda_api_stream(&rt->api, runtime_api(), rt->url, rt->post_headers, 3, &stream_source, NULL,
			     POST_TIMEOUT_MS, on_stream_posted);
}

/* The prelude, or, when the arena has no room for it, a bare 500's. */
static ig_str prelude_of(const struct http_inproc_response *res, ig_str body)
{
	ig_wbuf w = { .arena = &rt->arena };
	if (ig_lambda_reply_prelude(res, &w)) {
		ig_wbuf_put(&w, body.ptr, body.len);
		if (!w.failed)
			return (ig_str){ w.ptr, w.len };
	}
	static const char bare[] = "{\"statusCode\":500}\0\0\0\0\0\0\0";
	return (ig_str){ bare, sizeof bare }; /* its own NUL is the eighth */
}

/* inproc.h's sink: the engine's head is written, its body follows. */
static void sink_head(void *arg, const struct http_inproc_response *head)
{
	(void)arg;
	stream_post(prelude_of(head, (ig_str){ NULL, 0 }), true);
}

static void sink_more(void *arg)
{
	(void)arg;
	if (rt->stream_posted) { /* nobody reads it any more */
		bool end, whole;
		ig_http_inproc_taken(&rt->inproc, ig_http_inproc_body(&rt->inproc, &end, &whole).len);
		return;
	}
	ig_lambda_api_more(&rt->api);
}

static const struct http_inproc_sink stream_sink = { .head = sink_head, .more = sink_more };

static void cut_exchange(struct ig_deferred *d)
{
	(void)d;
	ig_http_inproc_cut(&rt->inproc);
}

/* Both the post and the exchange have ended: the next invocation. */
static void stream_ended(void)
{
	if (rt->stream_posted && (rt->engine_done || !rt->from_engine))
		next_invocation();
}

static void on_stream_posted(const struct lambda_api_answer *res)
{
	rt->stream_posted = true;
	struct ig_logline l;
	if (res->error || res->status >= 300) { /* the body is gone: nothing to repeat */
		if (ig_log_begin(&l, IG_LOG_ERROR, "runtime api stream failed")) {
			ig_log_str(&l, "request_id", rt->request_id, rt->request_id_len);
			if (res->error)
				ig_log_cstr(&l, "error", res->error);
			else
				ig_log_int(&l, "status", res->status);
			if (!res->error)
				ig_log_str(&l, "body", res->body.ptr, res->body.len < 300 ? res->body.len : 300);
			ig_log_end(&l);
		}
	} else {
		reached();
	}
	if (rt->from_engine && !rt->engine_done) { /* the post ended first: the handler is cut as for a client gone */
		sink_more(NULL);
		rt->cut.fn = cut_exchange;
		ig_loop_defer(&rt->core.loop, &rt->cut);
		return;
	}
	stream_ended();
}

/* ---- one invocation ---- */

static bool streams(void)
{
	return ig_lambda_config.invoke_mode == LAMBDA_RESPONSE_STREAM && rt->ev.kind == LAMBDA_EVENT_V2 &&
	       rt->ev.function_url;
}

static void on_answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	(void)arg;
	if (rt->streaming) { /* the head was passed on: the body has been or is being sent */
		rt->engine_done = true;
		ig_lambda_api_more(&rt->api); /* its end */
		stream_ended();
		return;
	}
	if (result != HTTP_INPROC_OK) {
		post_error(STEP_ERROR, "Runtime.NoResponse",
			   result == HTTP_INPROC_NO_ROOM ? "the response is larger than the runtime's buffer"
							 : "the engine closed without a response");
		return;
	}
	if (streams()) {
		stream_post(prelude_of(res, res->body), false);
		return;
	}
	ig_wbuf w = { .arena = &rt->arena };
	if (!ig_lambda_reply_encode(&rt->ev, res, &w)) {
		post_error(STEP_ERROR, "Runtime.NoResponse", "out of memory for the answer");
		return;
	}
	rt->step = STEP_RESPONSE;
	rt->error_type = NULL;
	rt->post_body = (ig_str){ w.ptr, w.len };
	post();
}

/* A records event's answer (net/pubsub/sqs.h): SQS's batchItemFailures. */
static void on_records_done(void *arg, ig_str answer)
{
	(void)arg;
	rt->step = STEP_RESPONSE;
	rt->error_type = NULL;
	rt->post_body = answer;
	post();
}

/* A request that cannot reach the engine (a field with a CR or LF, a
 * method that is no token): the problem+json answer the engine gives one
 * that does not parse, in the event's form. */
static void answer_problem(int status, const char *detail)
{
	ig_str id = { rt->request_id, rt->request_id_len };
	char *body = ig_arena_alloc(&rt->arena, HTTP_PROBLEM_MAX);
	if (!body) {
		post_error(STEP_ERROR, "Runtime.NoResponse", "out of memory for the answer");
		return;
	}
	const ig_header fields[] = { { IG_STR("Content-Type"), IG_STR("application/problem+json") },
				     { IG_STR("X-Request-Id"), id } };
	const struct http_inproc_response res = {
		.status = status, .headers = fields, .header_count = IG_COUNTOF(fields),
		.body = { body, ig_http_problem_body(body, HTTP_PROBLEM_MAX, status, detail, NULL, id) },
	};
	on_answered(NULL, HTTP_INPROC_OK, &res);
}

static ig_str response_header(const struct lambda_api_answer *res, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < res->header_count; i++)
		if (res->headers[i].name.len == n && strncasecmp(res->headers[i].name.ptr, name, n) == 0)
			return res->headers[i].value;
	return (ig_str){ NULL, 0 };
}

static bool all_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

/* X-Ray's "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;
 * Sampled=1" as a W3C traceparent: the root's 32 digits, the parent's 16. */
static bool traceparent_of_xray(ig_str x, char out[IG_TRACEPARENT_LEN])
{
	const char *root = NULL, *parent = NULL;
	bool sampled = false;
	for (size_t i = 0; i < x.len;) {
		const char *f = x.ptr + i;
		const char *semi = memchr(f, ';', x.len - i);
		size_t n = semi ? (size_t)(semi - f) : x.len - i;
		if (n == 5 + 35 && memcmp(f, "Root=1-", 7) == 0 && f[15] == '-')
			root = f + 7;
		else if (n == 7 + 16 && memcmp(f, "Parent=", 7) == 0)
			parent = f + 7;
		else if (n == 9 && memcmp(f, "Sampled=1", 9) == 0)
			sampled = true;
		i += n + 1;
	}
	if (!root || !parent || !all_hex(root, 8) || !all_hex(root + 9, 24) || !all_hex(parent, 16))
		return false;
	memcpy(out, "00-", 3);
	memcpy(out + 3, root, 8);
	memcpy(out + 11, root + 9, 24);
	out[35] = '-';
	memcpy(out + 36, parent, 16);
	memcpy(out + 52, sampled ? "-01" : "-00", 3);
	return true;
}

/* Lambda-Runtime-Deadline-Ms (Unix milliseconds) on the core's clock. */
static uint64_t deadline_of(ig_str ms)
{
	uint64_t v = 0;
	for (size_t i = 0; i < ms.len; i++) {
		if (ms.ptr[i] < '0' || ms.ptr[i] > '9' || v > UINT64_MAX / 16)
			return 0;
		v = v * 10 + (uint64_t)(ms.ptr[i] - '0');
	}
	if (!v)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	uint64_t loop_now = rt->core.loop.clock.now_ms;
	return v > now ? loop_now + (v - now) : loop_now + 1;
}

/* An id that fits and is safe in a URL path: Lambda's are UUIDs. */
static bool request_id_valid(ig_str id)
{
	if (id.len == 0 || id.len > REQUEST_ID_MAX)
		return false;
	for (size_t i = 0; i < id.len; i++) {
		char c = id.ptr[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

static void invoke(const struct lambda_api_answer *res)
{
	ig_str id = response_header(res, "lambda-runtime-aws-request-id");
	if (!request_id_valid(id)) { /* nowhere to answer: the id goes into the answer's path */
		retry("the invocation has no usable Lambda-Runtime-Aws-Request-Id", res->status);
		return;
	}
	rt->request_id_len = id.len;
	memcpy(rt->request_id, id.ptr, id.len);
	rt->streaming = rt->stream_posted = rt->engine_done = false;
	ig_str trace = response_header(res, "lambda-runtime-trace-id");
	set_trace_env(trace);
	const char *why;
	if (ig_lambda_event_decode(res->body.ptr, res->body.len, &rt->arena, &rt->ev, &why) != 0) {
		post_error(STEP_ERROR, "Runtime.InvalidEvent", why);
		return;
	}
	uint64_t deadline = deadline_of(response_header(res, "lambda-runtime-deadline-ms"));
	if (rt->ev.kind == LAMBDA_EVENT_RECORDS) {
		why = "the event's records are not ones this function runs (no subscriptions)";
		if (!&ig_pubsub_sqs_ops || ig_pubsub_sqs_ops.run(rt->ev.event, &rt->core, &rt->arena, rt->buf, INPROC_BUF,
								  deadline, on_records_done, NULL, &why) != 0)
			post_error(STEP_ERROR, "Runtime.InvalidEvent", why);
		return;
	}
	ig_lambda_event_set_header(&rt->ev, "x-request-id", (ig_str){ rt->request_id, rt->request_id_len });
	if (!ig_lambda_event_header(&rt->ev, "traceparent").len && traceparent_of_xray(trace, rt->traceparent))
		ig_lambda_event_set_header(&rt->ev, "traceparent", (ig_str){ rt->traceparent, IG_TRACEPARENT_LEN });
	rt->ev.req.deadline_ms = deadline;
	rt->ev.req.sink = streams() ? &stream_sink : NULL;
	enum http_inproc_result result;
	if (ig_http_inproc_run(&rt->inproc, &rt->core, rt->buf, INPROC_BUF, &rt->ev.req, on_answered, NULL, &result) == 0)
		return;
	if (result == HTTP_INPROC_NO_SLOT)
		post_error(STEP_ERROR, "Runtime.NoResponse", "no connection slot for the invocation");
	else /* the client's request is at fault: answered as the engine answers one */
		answer_problem(result == HTTP_INPROC_NO_ROOM ? 413 : 400,
			       result == HTTP_INPROC_NO_ROOM ? "the request is larger than the runtime's buffer"
							     : "the request's method, path or a field cannot be HTTP");
}

static void on_next(const struct lambda_api_answer *res)
{
	if (res->error) {
		retry(res->error, 0);
		return;
	}
	if (res->status != 200) {
		retry("the Runtime API did not hand out an invocation", res->status);
		return;
	}
	reached();
	invoke(res);
}

static void get_next(void)
{
	set_url("/invocation/next");
	/* No timeout: Lambda answers when there is an invocation, and freezes
	   the process meanwhile. */
	if (!rt->started) {
		rt->started = true;
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_INFO, "lambda runtime")) {
			ig_log_cstr(&l, "runtime_api", runtime_api());
			ig_log_int(&l, "startup_us", (int64_t)(ig_monotonic_us() - rt->t0_us));
			ig_log_int(&l, "pid", getpid());
			ig_log_end(&l);
		}
	}
	ig_lambda_api_call(&rt->api, runtime_api(), "GET", rt->url, NULL, 0, (ig_str){ NULL, 0 }, UINT32_MAX, on_next);
}

static void next_invocation(void)
{
	ig_arena_reset(&rt->arena);
	rt->request_id_len = 0;
	rt->step = STEP_NEXT;
	get_next();
}

static void call_step(void)
{
	if (rt->step == STEP_NEXT)
		next_invocation(); /* what a failed GET left in the arena goes */
	else
		post();
}

/* ---- the start ---- */

/* The connection is kept however long the process is frozen between
 * invocations. */
static int open_api(void)
{
	rt->backoff_ms = RETRY_FIRST_MS;
	ig_arena_init(&rt->arena, &rt->core.blocks, ARENA_LIMIT);
	if (ig_lambda_api_init(&rt->api, &rt->core.loop, EVENT_MAX) != 0)
		return -1;
	rt->api_ready = true;
	return 0;
}

static int map_runtime(void)
{
	if (rt)
		return 0;
	void *m = mmap(NULL, sizeof *rt, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	rt = m;
	rt->core.loop.epfd = rt->core.loop.wakefd = -1; /* no loop yet (init_error) */
	return 0;
}

/* The runtime's loop and Runtime API client, or, when the runtime did not
 * get that far, the loop alone for the one call; false when they cannot be
 * made (a failed ig_loop_init has left nothing open). */
static bool loop_for_post(void)
{
	if (rt->api_ready)
		return true;
	if (rt->core.loop.epfd < 0 && ig_loop_init(&rt->core.loop, 0) != 0)
		return false;
	if (!rt->core.blocks.obj_size)
		ig_pool_init(&rt->core.blocks, HTTP_BLOCK_STRIDE, 16, 1024);
	return open_api() == 0;
}

/* An init error of errorType type, posted on the loop (with its retries),
 * or, when there can be none (no descriptor for its epoll, no memory), with
 * blocking calls on a socket of its own: Lambda learns why either way.
 * Returns exit_code. */
static int init_error(const char *type, const char *message, int exit_code)
{
	if (map_runtime() == 0 && loop_for_post()) {
		rt->once = true;
		post_error(STEP_INIT_ERROR, type, message);
		ig_loop_run(&rt->core.loop);
		return exit_code;
	}
	log_failure("", 0, type, message);
	if (ig_lambda_post_blocking(runtime_api(), "/init/error", type, message) != 0) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "runtime api unreachable")) {
			ig_log_cstr(&l, "call", step_names[STEP_INIT_ERROR]);
			ig_log_cstr(&l, "error", strerror(errno));
			ig_log_end(&l);
		}
	}
	return exit_code;
}

/* The errorType of a start that failed with errno err. */
static const char *setup_error_type(int err)
{
	switch (err) {
	case ENOMEM: return "Runtime.OutOfMemory";
	case EMFILE:
	case ENFILE: return "Runtime.TooManyOpenFiles";
	default: return "Runtime.InitError";
	}
}

/* Runs once per process: cold, as the rest of the start. */
__attribute__((cold)) int ig_lambda_serve(const struct ig_app *app, uint64_t t0_us)
{
	ig_log_set_threshold((enum ig_log_level)ig_server_config.log_level);
	ig_server_config.threads = 1;
	if (map_runtime() != 0)
		return IG_EXIT_FAILURE;
	rt->t0_us = t0_us;
	if (ig_http_inproc_core_init(&rt->core, &ig_server_config, app) != 0 || open_api() != 0) {
		int err = errno;
		char why[128];
		snprintf(why, sizeof why, "the runtime cannot set up its loop: %s", strerror(err));
		return init_error(setup_error_type(err), why, IG_EXIT_FAILURE);
	}
	rt->buf = mmap(NULL, INPROC_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rt->buf == MAP_FAILED)
		return init_error("Runtime.OutOfMemory", "the runtime cannot map its buffer", IG_EXIT_FAILURE);
	ig_lambda_crash_watch();
	char bad[256];
	const char *why = &ig_pubsub_sqs_ops ? ig_pubsub_sqs_ops.check(bad, sizeof bad) : NULL;
	if (why)
		return init_error("Runtime.InvalidSetting", why, IG_EXIT_CONFIG);
	if (ig_http_core_start_hook) /* net/pg's pools, a NATS publisher's client: on this one core */
		ig_http_core_start_hook(&rt->core.loop, 1);
	/* Ready: nothing to wait for but the backends (/readyz). */
	ig_http_health_set_listening();
	next_invocation();
	ig_loop_run(&rt->core.loop);
	return IG_EXIT_FAILURE; /* the loop ends only when the Runtime API is gone (RETRY_GIVE_UP) */
}

__attribute__((cold)) int ig_lambda_init_error(const char *message)
{
	return init_error("Runtime.InvalidSetting", message, IG_EXIT_CONFIG);
}
