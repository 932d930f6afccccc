/* Unit tests of net/api/operation and check: the one runner every
 * generated operation goes through. A rejected request never reaches the
 * handler and gets the decoder's answer (400 with the errors, 415, 500);
 * in and out arrive zeroed; the encoder runs when the exchange finishes
 * (now, or later for a pending answer); with the debug build's check a
 * response that breaks its schema is answered 500, a pending one is
 * logged; a handler that waits finishes through the same steps when it
 * returns; with no coroutine to be had the answer is 503; an operation
 * over its rate limit is answered 429 with its headers before decoding,
 * keyed apart by the limit's header, or by the principal's subject after
 * the door (without one: by the client's address); a door whose auth
 * handler may wait runs on the coroutine, still before the decoder; an operation's before-hooks run in
 * order after the limit and the decoder and may answer instead of the
 * handler. Also the
 * router's answers, and x-ingot-stream-body's path test (ig_path_fits). The exchange (net/http) is a stand-in
 * here that records what the runner asked of it. */
#include "kernel/runtime/arena.h"
#include "ingot/log.h"
#include "kernel/runtime/pool.h"
#include "net/api/operation.h"
#include "net/http/wait.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <stdlib.h>

static struct ig_pool blocks;

/* ---- the exchange, recorded ---- */

struct ig_ctx {
	ig_arena arena;
	ig_request req;
	ig_wbuf body;
	ig_encode_fn *encode;
	const void *out;
	int finished, status;
	int rejected; /* the status ig_count_rejected was told, 0 if none */
	const char *problem; /* the detail of ig_respond_problem / ig_respond_errors */
	char allow[64];
	char heads[256]; /* every ig_add_header, "name: value\n" each */
};

static void ctx_start(ig_ctx *c)
{
	memset(c, 0, sizeof *c);
	ig_arena_init(&c->arena, &blocks, 1 << 20);
	c->body.arena = &c->arena;
	c->req.target = c->req.path = IG_STR("/t");
}

void *ig_alloc(ig_ctx *c, size_t size) { return ig_arena_alloc(&c->arena, size); }
ig_arena *ig_ctx_arena(ig_ctx *c) { return &c->arena; }
ig_wbuf *ig_body(ig_ctx *c) { return &c->body; }
const ig_request *ig_req(const ig_ctx *c) { return &c->req; }
ig_str ig_request_id(const ig_ctx *c) { (void)c; return IG_STR("test-id"); }
void ig_count_rejected(ig_ctx *c, int status) { c->rejected = status; }

void ig_set_encoder(ig_ctx *c, ig_encode_fn *encode, const void *out)
{
	c->encode = encode;
	c->out = out;
}

void ig_finish(ig_ctx *c, int status)
{
	if (c->finished++)
		return;
	c->status = status;
	if (c->encode)
		c->encode(c, status, c->out);
}

void ig_respond_problem(ig_ctx *c, int status, const char *detail)
{
	c->problem = detail;
	c->encode = NULL;
	ig_finish(c, status);
}

void ig_respond_errors(ig_ctx *c, const char *detail)
{
	ig_respond_problem(c, 400, detail);
}

/* The coroutine runner (net/http/wait.h), as the stand-in chooses: the
 * handler runs at once and returns (1), runs and "waits" (0: its finish is
 * kept for the test to call), or finds no stack (-1: it never runs). */
static int wait_mode = 1;
static struct ig_wait_work *kept;
static bool on_coroutine; /* inside a work's handle */
int ig_wait_run(ig_ctx *c, struct ig_wait_work *work)
{
	if (wait_mode < 0)
		return -1;
	on_coroutine = true;
	work->status = work->handle(c, work->in, work->out);
	on_coroutine = false;
	kept = work;
	return wait_mode;
}

void ig_add_header(ig_ctx *c, const char *name, ig_str value)
{
	snprintf(c->allow, sizeof c->allow, "%s: %.*s", name, (int)value.len, value.ptr);
	size_t used = strlen(c->heads);
	snprintf(c->heads + used, sizeof c->heads - used, "%s: %.*s\n", name, (int)value.len, value.ptr);
}

/* The rate limit's view of the exchange: a header's value, the loop's
 * clock, no peer (a header-keyed limit needs none), the 429s' count. */
static ig_str key_header;
static uint64_t now_us = 1000000;
static int rate_limited;
ig_str ig_req_header(const ig_ctx *c, const char *name)
{
	(void)c;
	return strcmp(name, "X-Key") == 0 ? key_header : (ig_str){ NULL, 0 };
}
bool ig_http_peer_addr(const ig_ctx *c, uint8_t out[16])
{
	(void)c;
	(void)out;
	return false;
}
uint64_t ig_http_start_us(const ig_ctx *c)
{
	(void)c;
	return now_us;
}
void ig_count_rate_limited(ig_ctx *c)
{
	(void)c;
	rate_limited++;
}
/* The operation's hooks, as the exchange was told them. */
static const struct ig_op_hooks *told_hooks;
void ig_http_set_op_hooks(ig_ctx *c, const struct ig_op_hooks *hooks)
{
	(void)c;
	told_hooks = hooks;
}

/* The door's principal, as the test sets it. */
static const struct ig_principal *principal;
const struct ig_principal *ig_principal(const ig_ctx *c)
{
	(void)c;
	return principal;
}

/* ---- one operation ---- */

struct t_in {
	int64_t id;
	char pad[100];
};
struct t_out {
	int64_t r200;
	char pad[100];
};

static int decode_verdict; /* what the decoder answers */
static int handler_calls, handler_status;
static bool zeroed;

static int t_decode(ig_ctx *c, const ig_str *seg, void *in_)
{
	(void)c;
	struct t_in *in = in_;
	if (!decode_verdict)
		in->id = seg ? (int64_t)seg[0].len : -1;
	return decode_verdict;
}

static bool all_zero(const void *p, size_t n)
{
	const char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static int t_handle(ig_ctx *c, const void *in_, void *out_)
{
	(void)c;
	const struct t_in *in = in_;
	struct t_out *out = out_;
	handler_calls++;
	zeroed = all_zero(in->pad, sizeof in->pad) && all_zero(out, sizeof *out);
	out->r200 = in->id;
	return handler_status;
}

static void t_encode(ig_ctx *c, int status, const void *out_)
{
	const struct t_out *out = out_;
	char text[32];
	int n = snprintf(text, sizeof text, "{\"n\":%d}", status == 200 ? (int)out->r200 : -1);
	ig_wbuf_put(&c->body, text, (size_t)n);
}

/* The response schema: n at most 3. */
static bool small_n(const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at)
{
	const ig_json_value *n = ig_json_get(v, "n", 1);
	if (!n || n->type != IG_JSON_INT || n->i <= 3)
		return true;
	ig_fail(x, at, "maximum", "must be at most 3");
	return false;
}

static const struct ig_response_schema t_schemas[] = { { 200, small_n } };

static const struct ig_operation op = {
	.id = "t", .in_size = sizeof(struct t_in), .out_size = sizeof(struct t_out),
	.decode = t_decode, .handle = t_handle, .encode = t_encode,
};
static const struct ig_operation op_checked = {
	.id = "t", .in_size = sizeof(struct t_in), .out_size = sizeof(struct t_out),
	.decode = t_decode, .handle = t_handle, .encode = t_encode,
	.check = ig_check_response, .schemas = t_schemas, .nschemas = 1,
};

/* The document's keys "204" (no schema), "2XX", "4XX" (no schema) and
 * "default", every status encoded alike. */
static void t_encode_any(ig_ctx *c, int status, const void *out_)
{
	(void)status;
	const struct t_out *out = out_;
	char text[32];
	int n = snprintf(text, sizeof text, "{\"n\":%d}", (int)out->r200);
	ig_wbuf_put(&c->body, text, (size_t)n);
}
static const struct ig_response_schema t_keyed[] = { { 204, NULL }, { 2, small_n }, { 4, NULL }, { 0, small_n } };
static const struct ig_operation op_keyed = {
	.id = "t", .in_size = sizeof(struct t_in), .out_size = sizeof(struct t_out),
	.decode = t_decode, .handle = t_handle, .encode = t_encode_any,
	.check = ig_check_response, .schemas = t_keyed, .nschemas = 4,
};

static ig_ctx ctx;

static void run(const struct ig_operation *o, const char *segment, int verdict, int status)
{
	ctx_start(&ctx);
	decode_verdict = verdict;
	handler_status = status;
	handler_calls = 0;
	ig_str seg[1] = { { segment, strlen(segment) } };
	ig_run_operation(&ctx, o, seg);
}

static bool body_is(const char *want)
{
	return ctx.body.len == strlen(want) && memcmp(ctx.body.ptr, want, ctx.body.len) == 0;
}

static void test_rejected(void)
{
	static const int verdicts[] = { 400, 415, 500 };
	for (size_t i = 0; i < 3; i++) {
		run(&op, "abc", verdicts[i], 200);
		char name[96];
		snprintf(name, sizeof name, "a decoder's %d never reaches the handler and is the answer", verdicts[i]);
		CHECK(handler_calls == 0 && ctx.finished == 1 && ctx.status == verdicts[i] && ctx.problem, name);
		snprintf(name, sizeof name, "a decoder's %d is counted as a rejection (metrics)", verdicts[i]);
		CHECK(ctx.rejected == verdicts[i], name);
	}
	run(&op, "abc", 400, 200);
	CHECK(strcmp(ctx.problem, "the request does not match the API") == 0, "400 answers the collected errors");
}

static void test_runs(void)
{
	run(&op, "abc", 0, 200);
	CHECK(handler_calls == 1 && zeroed, "the handler gets in and out zeroed");
	CHECK(ctx.rejected == 0, "an accepted request is not counted as rejected");
	CHECK(ctx.finished == 1 && ctx.status == 200 && body_is("{\"n\":3}"),
	      "the encoder writes out at ig_finish with the handler's status (in decoded from seg)");
	run(&op, "abc", 0, IG_PENDING);
	CHECK(ctx.finished == 0 && ctx.encode == t_encode, "a pending answer is not finished, its encoder is set");
	ig_finish(&ctx, 200);
	CHECK(body_is("{\"n\":3}"), "a pending answer is encoded when it finishes");

	struct ig_operation bare = { .id = "b", .in_size = 1, .out_size = 1, .handle = t_handle };
	ctx_start(&ctx);
	handler_status = 204;
	ig_run_operation(&ctx, &bare, NULL);
	CHECK(ctx.finished == 1 && ctx.status == 204 && ctx.body.len == 0, "no decoder, no encoder: the status alone");
}

static void test_waits(void)
{
	wait_mode = 0;
	run(&op, "abc", 0, 200);
	CHECK(handler_calls == 1 && ctx.finished == 0, "a handler that waits: nothing is finished when the run returns");
	kept->finish(&ctx, kept);
	CHECK(ctx.finished == 1 && ctx.status == 200 && body_is("{\"n\":3}"),
	      "a handler that waited: its status is encoded and finished when it returns");
	run(&op_checked, "abcd", 0, 200);
	kept->finish(&ctx, kept);
	CHECK(ctx.status == 500 && ctx.problem, "a handler that waited: its answer is checked as a synchronous one");
	wait_mode = -1;
	run(&op, "abc", 0, 200);
	CHECK(handler_calls == 0 && ctx.finished == 1 && ctx.status == 503 && ctx.problem &&
		      strcmp(ctx.allow, "Retry-After: 1") == 0,
	      "no coroutine to be had: 503 with Retry-After: 1, and the handler never runs");
	wait_mode = 1;
}

static void test_checks(void)
{
	run(&op_checked, "abc", 0, 200);
	CHECK(ctx.status == 200 && body_is("{\"n\":3}") && !ctx.problem, "checked: a valid response leaves as it is");
	run(&op_checked, "abcd", 0, 200);
	CHECK(ctx.finished == 1 && ctx.status == 500 && ctx.problem &&
		      strcmp(ctx.problem, "the response does not match its schema") == 0,
	      "checked: a response that breaks its schema is answered 500");
	run(&op, "abcd", 0, 200);
	CHECK(ctx.status == 200 && body_is("{\"n\":4}"), "unchecked, the same response leaves (the shipped build)");
	run(&op_checked, "abcd", 0, 201);
	CHECK(ctx.status == 201 && !ctx.problem, "checked: a status without a schema is not checked");
	run(&op_checked, "abcd", 0, IG_PENDING);
	CHECK(ctx.finished == 0 && ctx.encode && ctx.encode != t_encode, "checked: a pending answer gets the checker");
	ig_finish(&ctx, 200);
	CHECK(ctx.status == 200 && body_is("{\"n\":4}"), "checked: a pending answer keeps its status (logged)");
}

/* An exact status wins over its range, a range over default. */
static void test_check_keys(void)
{
	run(&op_keyed, "abcd", 0, 201);
	CHECK(ctx.status == 500 && ctx.problem, "checked: 201 falls under 2XX's schema");
	run(&op_keyed, "abc", 0, 201);
	CHECK(ctx.status == 201 && !ctx.problem, "checked: a 201 that 2XX allows leaves");
	run(&op_keyed, "abcd", 0, 204);
	CHECK(ctx.status == 204 && !ctx.problem, "checked: 204, listed without a schema, is not held to 2XX's");
	run(&op_keyed, "abcd", 0, 422);
	CHECK(ctx.status == 422 && !ctx.problem, "checked: 422 falls under 4XX, which has no schema, not under default");
	run(&op_keyed, "abcd", 0, 503);
	CHECK(ctx.status == 500 && ctx.problem, "checked: 503 falls to default's schema");
}

static void test_router(void)
{
	ig_str seg[3];
	CHECK_INT(ig_split_path(IG_STR("/"), seg, 3), 1, "/ is one empty segment");
	CHECK(seg[0].len == 0, "the segment of / is empty");
	CHECK_INT(ig_split_path(IG_STR("/a/bc/"), seg, 3), 3, "/a/bc/ is three segments");
	check_slice(seg[1].ptr, seg[1].len, "bc", "segments are the raw text between slashes", "seg[1]");
	CHECK_INT(ig_split_path(IG_STR("/a/b/c/d"), seg, 3), 4, "more segments than any route: max + 1");
	CHECK(ig_path_fits(IG_STR("/files/a.bin"), "/files/{name}"), "a {name} segment takes any segment");
	CHECK(ig_path_fits(IG_STR("/v1/files/x/parts/2"), "/v1/files/{id}/parts/{n}"), "literals and parameters in turn");
	CHECK(!ig_path_fits(IG_STR("/files/"), "/files/{name}"), "a parameter takes no empty segment");
	CHECK(!ig_path_fits(IG_STR("/files"), "/files/{name}"), "a missing segment does not fit");
	CHECK(!ig_path_fits(IG_STR("/files/a/b"), "/files/{name}"), "an extra segment does not fit");
	CHECK(!ig_path_fits(IG_STR("/filez/a"), "/files/{name}"), "a literal is compared whole");
	CHECK(!ig_path_fits(IG_STR("/file/a"), "/files/{name}"), "a shorter literal does not fit");
	CHECK(ig_path_fits(IG_STR("/"), "/"), "the root fits the root");
	CHECK(!ig_path_fits(IG_STR("/x"), "/"), "nor anything else");
	ctx_start(&ctx);
	ig_answer_options(&ctx, IG_STR("GET, HEAD"), IG_STR(""));
	CHECK(ctx.status == 204 && strcmp(ctx.allow, "Allow: GET, HEAD") == 0, "OPTIONS: 204 with Allow");
	ctx_start(&ctx);
	ctx.req.method = IG_STR("OPTIONS");
	ig_answer_other_method(&ctx, IG_STR("GET, HEAD, OPTIONS"), IG_STR(""));
	CHECK(ctx.status == 204 && strcmp(ctx.allow, "Allow: GET, HEAD, OPTIONS") == 0,
	      "OPTIONS on a known path: 204 with Allow");
	ctx_start(&ctx);
	ctx.req.method = IG_STR("DELETE");
	ig_answer_other_method(&ctx, IG_STR("GET"), IG_STR(""));
	CHECK(ctx.status == 405 && strcmp(ctx.allow, "Allow: GET") == 0 && ctx.problem,
	      "another method: 405 with Allow");
}

static const struct ig_rate_limit t_limit = {
	.id = 7, .burst = 2, .interval_us = 1000000, .key = IG_RATE_KEY_HEADER, .header = "X-Key",
	.policy = "\"t\";q=1;w=1", .policy_name = "\"t\"",
};

static const struct ig_rate_limit t_limit_hooks = {
	.id = 8, .burst = 2, .interval_us = 1000000, .key = IG_RATE_KEY_HEADER, .header = "X-Key",
	.policy = "\"h\";q=1;w=1", .policy_name = "\"h\"",
};

static void test_rate_limited(void)
{
	struct ig_operation limited = op;
	limited.rate_limit = &t_limit;
	key_header = IG_STR("alice");
	int passed = 0;
	for (int i = 0; i < 3; i++) {
		run(&limited, "abc", 0, 200);
		passed += handler_calls;
	}
	CHECK(passed == 2, "a burst of 2: two requests reach the handler, the third does not");
	CHECK(ctx.status == 429 && ctx.problem && rate_limited == 1, "the third is answered 429 problem+json and counted");
	CHECK(strcmp(ctx.heads, "Retry-After: 1\nRateLimit-Policy: \"t\";q=1;w=1\nRateLimit: \"t\";r=0;t=1\n") == 0,
	      "the 429 has Retry-After, RateLimit-Policy and RateLimit");
	key_header = IG_STR("bob");
	run(&limited, "abc", 0, 200);
	CHECK(handler_calls == 1 && ctx.status == 200, "another header value has its own allowance");
	key_header = IG_STR("alice");
	now_us += 999999;
	run(&limited, "abc", 0, 200);
	CHECK(handler_calls == 0 && ctx.status == 429, "a microsecond before its interval, still refused");
	now_us += 1;
	run(&limited, "abc", 0, 200);
	CHECK(handler_calls == 1 && ctx.status == 200, "one interval later one more passes");
	run(&op, "abc", 0, 200);
	CHECK(handler_calls == 1 && ctx.status == 200, "an operation without a limit is not counted against one");
}

/* A stand-in for the door: admits, or answers 401, as the test says. */
static bool door_admits, door_on_coroutine;
static bool t_door(ig_ctx *c, const struct ig_security *sec)
{
	(void)sec;
	door_on_coroutine = on_coroutine;
	if (!door_admits)
		ig_respond_problem(c, 401, "authentication required");
	return door_admits;
}
static const struct ig_security t_security = { .check = t_door };

static const struct ig_rate_limit t_by_subject = {
	.id = 8, .burst = 2, .interval_us = 1000000, .key = IG_RATE_KEY_SUBJECT,
	.policy = "\"s\";q=1;w=1", .policy_name = "\"s\"",
};

/* Requests under t_by_subject as p, the door admitting or not; returns how
 * many reached the handler. */
static int as(const struct ig_operation *o, const struct ig_principal *p, bool admit, int n)
{
	int passed = 0;
	principal = p;
	door_admits = admit;
	for (int i = 0; i < n; i++) {
		run(o, "abc", 0, 200);
		passed += handler_calls;
	}
	return passed;
}

static void test_rate_by_subject(void)
{
	struct ig_operation secured = op, open = op;
	secured.rate_limit = open.rate_limit = &t_by_subject;
	secured.security = &t_security;
	const struct ig_principal alice = { .subject = IG_STR("alice") }, bob = { .subject = IG_STR("bob") },
				  carol = { .subject = IG_STR("carol") }, nobody = { .subject = { NULL, 0 } };
	int before = rate_limited;
	CHECK_INT(as(&secured, &alice, true, 3), 2, "a burst of 2 per subject: alice's third is refused");
	CHECK(ctx.status == 429 && rate_limited == before + 1 && strstr(ctx.heads, "RateLimit: \"s\";r=0;t=1"),
	      "answered 429 with the headers, counted");
	CHECK_INT(as(&secured, &bob, true, 2), 2, "bob has his own allowance");
	CHECK_INT(as(&secured, &alice, false, 1), 0, "the door's refusal comes first...");
	CHECK_INT(ctx.status, 401, "...so a refused caller gets 401, not the subject's 429");
	as(&secured, &carol, false, 3);
	CHECK_INT(as(&secured, &carol, true, 3), 2, "requests the door refused spent nothing of the subject's allowance");
	CHECK_INT(as(&open, NULL, true, 3), 2, "no principal: keyed by the client's address, its own allowance");
	CHECK_INT(as(&open, &nobody, true, 1), 0, "an empty subject is keyed by the address too");
	now_us += 1000000;
	CHECK_INT(as(&secured, &alice, true, 2), 1, "one interval later one more of alice's passes");
}

/* An apiKey scheme judged by the app's auth handler (never called: the
 * door is t_door), so the door may wait. */
static enum ig_auth_result t_auth(ig_ctx *c, const struct ig_credentials *cred, struct ig_principal *p)
{
	(void)c, (void)cred, (void)p;
	return IG_AUTH_REFUSED;
}
static const struct ig_sec_scheme t_key = { .name = "key", .type = IG_SEC_API_KEY, .handler = t_auth };
static const struct ig_sec_use t_key_use[] = { { &t_key, NULL, 0 } };
static const struct ig_sec_alt t_key_alt[] = { { t_key_use, 1 } };
static const struct ig_security t_waiting = { .check = t_door, .alts = t_key_alt, .nalts = 1 };

static void test_door_waits(void)
{
	struct ig_operation waiting = op;
	waiting.security = &t_waiting;
	door_admits = false;
	run(&waiting, "abc", 400, 200);
	CHECK(door_on_coroutine && handler_calls == 0 && ctx.status == 401 && ctx.rejected == 0,
	      "an auth handler's door runs on the coroutine, before the decoder: 401, not 400");
	door_admits = true;
	run(&waiting, "abc", 400, 200);
	CHECK(handler_calls == 0 && ctx.status == 400, "admitted, the decoder's 400 is the answer");
	ctx_start(&ctx);
	ctx.req.path = IG_STR("/abcd");
	decode_verdict = 0;
	handler_status = 200;
	handler_calls = 0;
	ig_str seg[1] = { IG_STR("abc") };
	ig_run_operation(&ctx, &waiting, seg);
	CHECK(handler_calls == 1 && ctx.status == 200 && body_is("{\"n\":4}"),
	      "admitted, the handler runs with in decoded from the path's segments kept in the arena");
	run(&op, "abc", 0, 200);
	CHECK(handler_calls == 1 && ctx.status == 200, "an operation without security runs as before");
	door_admits = true;
	run(&(struct ig_operation){ .id = "t", .in_size = sizeof(struct t_in), .out_size = sizeof(struct t_out),
				    .handle = t_handle, .security = &t_security },
	    "abc", 0, 200);
	CHECK(!door_on_coroutine && handler_calls == 1, "a door without an auth handler stays on the loop");
}

bool ig_http_answered(const ig_ctx *c)
{
	return c->finished != 0;
}

/* Before-hooks that log their runs ("a" then "b") into hook_log; b
 * answers b_answer unless it is IG_HOOK_NEXT. */
static char hook_log[16];
static int b_answer;
static int64_t b_saw_id;
static int hook_a(ig_ctx *c, const char *operation_id, const void *in)
{
	(void)c;
	(void)in;
	strcat(hook_log, strcmp(operation_id, "t") == 0 ? "a" : "?");
	return IG_HOOK_NEXT;
}
static int hook_b(ig_ctx *c, const char *operation_id, const void *in)
{
	(void)operation_id;
	strcat(hook_log, "b");
	b_saw_id = ((const struct t_in *)in)->id;
	if (b_answer == 418)
		ig_wbuf_lit(ig_body(c), "\"teapot\"");
	if (b_answer == -403) { /* answers, then wrongly says go on */
		ig_respond_problem(c, 403, "no");
		return IG_HOOK_NEXT;
	}
	return b_answer;
}
static void hook_after(const struct ig_answer *a)
{
	(void)a;
}

static void test_hooks(void)
{
	static ig_before_hook_fn *const before[] = { hook_a, hook_b };
	static ig_after_hook_fn *const after[] = { hook_after };
	static const struct ig_op_hooks hooks = { .before = before, .after = after, .nbefore = 2, .nafter = 1 };
	struct ig_operation hooked = op;
	hooked.hooks = &hooks;

	hook_log[0] = 0;
	b_answer = IG_HOOK_NEXT;
	told_hooks = NULL;
	run(&hooked, "abc", 0, 200);
	CHECK(strcmp(hook_log, "ab") == 0 && handler_calls == 1 && ctx.status == 200 && body_is("{\"n\":3}"),
	      "before-hooks run in order with the operationId, then the handler");
	CHECK(b_saw_id == 3, "a before-hook sees the decoded in struct");
	CHECK(told_hooks == &hooks, "the exchange is told the operation's hooks (its after-hooks)");

	hook_log[0] = 0;
	b_answer = 418;
	run(&hooked, "abc", 0, 200);
	CHECK(strcmp(hook_log, "ab") == 0 && handler_calls == 0 && ctx.finished == 1 && ctx.status == 418 &&
		      body_is("\"teapot\""),
	      "a before-hook's status answers with its body; the handler never runs");
	b_answer = 1000;
	run(&hooked, "abc", 0, 200);
	CHECK(handler_calls == 0 && ctx.status == 500, "a before-hook's status outside 100..599 answers 500");
	b_answer = -403;
	run(&hooked, "abc", 0, 200);
	CHECK(handler_calls == 0 && ctx.status == 403 && ctx.finished >= 1,
	      "a before-hook that answered and still said IG_HOOK_NEXT: its answer stands, the handler never runs");

	hook_log[0] = 0;
	b_answer = IG_HOOK_NEXT;
	told_hooks = NULL;
	run(&hooked, "abc", 400, 200);
	CHECK(hook_log[0] == 0 && ctx.status == 400 && told_hooks == &hooks,
	      "a request the decoder refuses runs no before-hook, and its 400 has the operation's after-hooks");

	struct ig_operation limited = hooked;
	limited.rate_limit = &t_limit_hooks;
	key_header = IG_STR("hooks");
	for (int i = 0; i < 3; i++)
		run(&limited, "abc", 0, 200);
	CHECK(ctx.status == 429 && strcmp(hook_log, "abab") == 0, "a request over its rate limit runs no before-hook");

	told_hooks = NULL;
	run(&op, "abc", 0, 200);
	CHECK(told_hooks == NULL && handler_calls == 1, "an operation without hooks tells the exchange nothing");
}

int main(void)
{
	ig_log_threshold = -1; /* the check's log line: TAP on stdout */
	ig_pool_init(&blocks, 16384, 16, 1 << 10);
	test_rejected();
	test_runs();
	test_waits();
	test_checks();
	test_check_keys();
	test_router();
	test_rate_limited();
	test_rate_by_subject();
	test_door_waits();
	test_hooks();
	return check_done();
}
