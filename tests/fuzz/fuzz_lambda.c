/* libFuzzer target for net/lambda's events and answers: any input is read
 * as an event; a decoded one must be a records event (SQS's) whose
 * Records is an array, or give a method and a target of
 * request-target octets only (what inproc then writes as HTTP/1.1), and
 * its fields and body, answered back in every event form, must make valid
 * JSON whose body (base64-decoded when isBase64Encoded) is the body given.
 * Seeds: tests/integration/lambda_events/ (AWS's example events; tests/run
 * points there). Build: make fuzz-build
 * (the runtime's sources, as fuzz_http's, for the answer's reason phrases). */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/base64.h"
#include "kernel/runtime/pool.h"
#include "ingot/json_read.h"
#include "net/http/codec.h"
#include "net/lambda/event.h"

#include <stdlib.h>
#include <string.h>

static struct ig_pool blocks;

static void check_answer(const struct lambda_event *ev, const struct http_inproc_response *res, ig_arena *a)
{
	ig_wbuf w = { .arena = a };
	if (!ig_lambda_reply_encode(ev, res, &w))
		return; /* out of memory: nothing to check */
	ig_json_reader r;
	ig_jr_init(&r, w.ptr, w.len, a, 8);
	const ig_json_value *v = ig_jr_value(&r);
	if (!v || !ig_jr_finish(&r) || v->type != IG_JSON_OBJECT)
		abort(); /* the answer is not JSON */
	const ig_json_value *body = ig_json_get(v, "body", 4), *b64 = ig_json_get(v, "isBase64Encoded", 15);
	if (!body || body->type != IG_JSON_STRING || !b64 || b64->type != IG_JSON_BOOL)
		abort();
	ig_str got = body->s;
	if (b64->b) {
		uint8_t *d = ig_arena_alloc(a, got.len + 3);
		long n = d ? ig_base64_decode(got.ptr, got.len, d, got.len + 3) : -1;
		if (!d)
			return;
		if (n < 0)
			abort();
		got = (ig_str){ (const char *)d, (size_t)n };
	}
	if (got.len != res->body.len || (got.len && memcmp(got.ptr, res->body.ptr, got.len) != 0))
		abort(); /* the body did not come back */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!blocks.obj_size)
		ig_pool_init(&blocks, 16384, 16, 1u << 16);
	ig_arena a;
	ig_arena_init(&a, &blocks, 64u << 20);
	struct lambda_event ev;
	const char *why = NULL;
	if (ig_lambda_event_decode((const char *)data, size, &a, &ev, &why) != 0) {
		if (!why)
			abort();
		ig_arena_reset(&a);
		return 0;
	}
	if (ev.kind == LAMBDA_EVENT_RECORDS) { /* no request: net/pubsub/sqs.c reads the JSON */
		const ig_json_value *records = ev.event ? ig_json_get(ev.event, "Records", 7) : NULL;
		if (!records || records->type != IG_JSON_ARRAY)
			abort();
		ig_arena_reset(&a);
		return 0;
	}
	if (!ev.req.method.len || !ev.req.target.len)
		abort();
	for (size_t i = 0; i < ev.req.target.len; i++)
		if (!http_has_class(ev.req.target.ptr[i], HTTP_C_TARGET))
			abort();
	ig_lambda_event_set_header(&ev, "x-request-id", (ig_str){ "id", 2 });
	struct http_inproc_response res = { .status = 200, .headers = ev.req.headers,
					    .header_count = ev.req.header_count, .body = ev.req.body };
	for (int kind = LAMBDA_EVENT_V2; kind <= LAMBDA_EVENT_ALB; kind++) {
		struct lambda_event as = ev;
		as.kind = (enum lambda_event_kind)kind;
		for (int multi = 0; multi < 2; multi++) {
			as.multi_value = multi;
			check_answer(&as, &res, &a);
		}
	}
	ig_arena_reset(&a);
	return 0;
}
