/* Push delivery, for hosts that scale to zero: POST /_ingot/push/<sub>
 * takes a subscription's message over HTTP, as a CloudEvent (binary or
 * structured mode: Knative Eventing, Eventarc) or GCP Pub/Sub push's JSON
 * wrapper, and delivers it as the consumer does, an in-process request to
 * serve.c's path, as cron's endpoint runs a job; its verdict is the
 * answer. Reached from ig_pubsub_serve (the generated router's miss). */
#include "consumer.h"
#include "delivery.h"
#include "push_settings.h"
#include "kernel/runtime/base64.h"
#include "net/http/bearer.h"
#include "net/http/inproc.h"
#include "ingot/http.h"
#include "ingot/json_read.h"

#include <string.h>
#include <strings.h>

#define PUSH_PATH "/_ingot/push/"
#define PUSH_ROOM (16 * 1024) /* beside the message: the request's head and the answer */

struct push_call {
	struct http_inproc inproc;
	ig_ctx *ctx;
	const struct ig_pubsub_subscription *sub;
	uint64_t started_us; /* its arrival: the handling time's start */
	ig_str message;
	char traceparent[IG_TRACEPARENT_LEN];
	ig_header headers[2];
	char target[sizeof IG_PUBSUB_PATH + 64];
	size_t cap;
	char buf[]; /* cap bytes */
};

static const ig_json_value *member(const ig_json_value *o, const char *key)
{
	return o && o->type == IG_JSON_OBJECT ? ig_json_get(o, key, strlen(key)) : NULL;
}

static ig_str string(const ig_json_value *o, const char *key)
{
	const ig_json_value *v = member(o, key);
	return v && v->type == IG_JSON_STRING ? v->s : (ig_str){ NULL, 0 };
}

static bool base64_into(ig_ctx *ctx, ig_str in, ig_str *out)
{
	char *p = ig_alloc(ctx, in.len / 4 * 3 + 3);
	long n = p ? ig_base64_decode(in.ptr, in.len, (uint8_t *)p, in.len / 4 * 3 + 3) : -1;
	if (n < 0)
		return false;
	*out = (ig_str){ p, (size_t)n };
	return true;
}

/* The message and the event's traceparent (or {NULL, 0}): a structured
 * CloudEvent's data (or data_base64), a binary one's body, a Pub/Sub push
 * wrapper's message.data; anything else is a binary CloudEvent without
 * its ce- fields, the body as it is. NULL, or why it is no message. */
static const char *message_of(ig_ctx *ctx, ig_str *msg, ig_str *trace)
{
	const ig_request *req = ig_req(ctx);
	ig_str type = ig_req_header(ctx, "content-type");
	*msg = req->body;
	*trace = ig_req_header(ctx, "ce-traceparent");
	bool structured = type.len >= 28 && strncasecmp(type.ptr, "application/cloudevents+json", 28) == 0;
	if (!structured && ig_req_header(ctx, "ce-specversion").len)
		return NULL;
	ig_json_reader r;
	ig_jr_init(&r, req->body.ptr, req->body.len, ig_ctx_arena(ctx), 64);
	const ig_json_value *v = ig_jr_value(&r);
	bool object = v && ig_jr_finish(&r) && v->type == IG_JSON_OBJECT;
	if (structured) {
		if (!object)
			return "the structured CloudEvent is not a JSON object";
		*trace = string(v, "traceparent");
		const ig_json_value *data = member(v, "data");
		if (data) {
			*msg = data->raw;
			return NULL;
		}
		ig_str b64 = string(v, "data_base64");
		if (!b64.ptr || !base64_into(ctx, b64, msg))
			return "the structured CloudEvent has neither data nor base64 data_base64";
		return NULL;
	}
	const ig_json_value *wrapped = member(v, "message");
	if (object && wrapped && wrapped->type == IG_JSON_OBJECT && string(v, "subscription").ptr) {
		*trace = string(member(wrapped, "attributes"), "traceparent");
		ig_str b64 = string(wrapped, "data");
		if (!base64_into(ctx, b64, msg))
			return "the Pub/Sub push message's data is not base64";
	}
	return NULL;
}

static void answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	struct push_call *call = arg;
	ig_ctx *ctx = call->ctx;
	int status = result == HTTP_INPROC_OK ? res->status : 0;
	const char *why;
	ig_pubsub_count_inbound(ig_core_index(ctx), call->sub, ig_pubsub_outcome_of(status, &why), call->started_us);
	switch (status) {
	case IG_PUBSUB_STATUS_ACK:
	case IG_PUBSUB_STATUS_DROP:
		ig_finish(ctx, status);
		break;
	case IG_PUBSUB_STATUS_INVALID:
		ig_respond_problem(ctx, 422, "the message breaks the topic's schema");
		break;
	case 503:
		ig_add_header(ctx, "Retry-After", IG_STR("1"));
		ig_respond_problem(ctx, 503, "the handler asked for a retry");
		break;
	default:
		ig_respond_problem(ctx, 500, "the handler failed");
	}
}

/* After the sender's batch: a request made from inside the router's
 * dispatch would run the engine inside itself. */
static void start(ig_ctx *ctx, void *arg)
{
	struct push_call *call = arg;
	const struct http_inproc_request req = {
		.method = IG_STR("POST"),
		.target = { call->target, strlen(call->target) },
		.headers = call->headers,
		.header_count = call->headers[1].name.len ? 2 : 1,
		.body = call->message,
		.peer = IG_STR("push"),
	};
	enum http_inproc_result result;
	if (ig_http_inproc_run(&call->inproc, ctx->core, call->buf, call->cap, &req, answered, call, &result) != 0)
		ig_respond_problem(ctx, 503, "no room to deliver the message");
}

static const struct ig_pubsub_subscription *named(ig_str name)
{
	for (size_t i = 0; i < ig_api_pubsub.nsubs; i++)
		if (strlen(ig_api_pubsub.subs[i].name) == name.len && memcmp(ig_api_pubsub.subs[i].name, name.ptr, name.len) == 0)
			return &ig_api_pubsub.subs[i];
	return NULL;
}

bool ig_pubsub_push_serve(ig_ctx *ctx)
{
	const ig_request *req = ig_req(ctx);
	size_t plen = sizeof PUSH_PATH - 1;
	/* NULL before the settings are parsed (handler tests without a start) */
	const char *secret = ig_pubsub_push_config.secret ? ig_pubsub_push_config.secret : "";
	if (req->path.len <= plen || memcmp(req->path.ptr, PUSH_PATH, plen) != 0 || (!secret[0] && !ig_pubsub_push_config.jwt))
		return false;
	const struct ig_pubsub_subscription *sub = named((ig_str){ req->path.ptr + plen, req->path.len - plen });
	if (!sub)
		return false;
	if (!(req->method.len == 4 && memcmp(req->method.ptr, "POST", 4) == 0)) {
		ig_add_header(ctx, "Allow", IG_STR("POST"));
		ig_respond_problem(ctx, 405, "POST only");
		return true;
	}
	if (!ig_http_bearer_is(ig_req_header(ctx, "authorization"), secret)) {
		if (ig_pubsub_push_config.jwt) { /* the door's JWT, else its 401 */
			if (!ig_pubsub_push_config.jwt(ctx))
				return true;
		} else {
			ig_add_header(ctx, "WWW-Authenticate", IG_STR("Bearer"));
			ig_respond_problem(ctx, 401, "the push secret is required as a bearer token");
			return true;
		}
	}
	ig_str msg, trace;
	const char *why = message_of(ctx, &msg, &trace);
	if (why) {
		ig_respond_problem(ctx, 400, why);
		return true;
	}
	/* In the exchange's arena, which lasts until its answer is written. */
	struct push_call *call = ig_pubsub_key_make() ? ig_alloc(ctx, sizeof *call + msg.len + PUSH_ROOM) : NULL;
	if (!call) {
		ig_respond_problem(ctx, 503, "out of memory");
		return true;
	}
	call->ctx = ctx;
	call->sub = sub;
	call->started_us = ig_monotonic_us();
	call->message = msg;
	call->cap = msg.len + PUSH_ROOM;
	/* the name is a label (no '/', '?', '%'): the path as it is */
	memcpy(call->target, IG_PUBSUB_PATH, sizeof IG_PUBSUB_PATH - 1);
	memcpy(call->target + sizeof IG_PUBSUB_PATH - 1, sub->name, strlen(sub->name) + 1);
	call->headers[0] = (ig_header){ IG_STR(IG_PUBSUB_KEY_HEADER), { ig_pubsub_key, IG_PUBSUB_KEY_LEN } };
	/* The event's trace, else this request's (a child of its span) */
	if (trace.len != IG_TRACEPARENT_LEN) {
		ig_traceparent_child(ctx, call->traceparent);
		trace = (ig_str){ call->traceparent, IG_TRACEPARENT_LEN };
	}
	call->headers[1] = (ig_header){ IG_STR("traceparent"), trace };
	ig_after(ctx, 0, start, call);
	return true;
}
