/* A stand-in for the runtime behind include/ingot/http.h and api_hooks.h, so the generated
 * router, decoders and encoders can be tested without sockets (with the
 * real net/api runtime): main takes one request per argument, "METHOD
 * TARGET[ ~ Name: value]...[ ~ body TEXT]", routes each, runs a pending handler's timer at once, and prints
 * status, the route matched, headers and body. The arena is malloc (freed at exit). */
#include "net/api/operation.h"
#include "net/http/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

struct ig_arena {
	int unused;
};
static struct ig_arena mock_arena;

/* Garbage, not zeros: the generated code must zero what it allocates. */
void *ig_arena_alloc(ig_arena *a, size_t size)
{
	(void)a;
	void *p = malloc(size ? size : 1);
	if (!p)
		abort();
	memset(p, 0xa5, size);
	return p;
}

/* The JSON reader grows its arrays (kernel/runtime/arena.h's contract). */
void *ig_arena_grow(ig_arena *a, void *p, size_t old_size, size_t new_size);
void *ig_arena_grow(ig_arena *a, void *p, size_t old_size, size_t new_size)
{
	void *n = ig_arena_alloc(a, new_size);
	if (p && old_size)
		memcpy(n, p, old_size < new_size ? old_size : new_size);
	return n;
}

struct ig_ctx {
	ig_request req;
	ig_header headers_in[16];
	ig_wbuf body, headers, errors;
	const char *content_type;
	ig_encode_fn *encode;
	const void *out;
	int status, finished, errors_count;
	ig_ctx_fn *timer_fn;
	void *timer_arg;
	uint32_t timer_ms;
	const char *route;
};

char *ig_wbuf_reserve(ig_wbuf *w, size_t n)
{
	if (w->cap - w->len < n) {
		w->cap = (w->len + n) * 2;
		w->ptr = realloc(w->ptr, w->cap);
		if (!w->ptr)
			abort();
	}
	return w->ptr + w->len;
}

void *ig_alloc(ig_ctx *ctx, size_t size)
{
	(void)ctx;
	return ig_arena_alloc(&mock_arena, size);
}

ig_arena *ig_ctx_arena(ig_ctx *ctx)
{
	(void)ctx;
	return &mock_arena;
}

const ig_request *ig_req(const ig_ctx *ctx) { return &ctx->req; }
ig_str ig_request_id(const ig_ctx *ctx) { (void)ctx; return IG_STR("mock-id"); }
/* Metrics are the runtime's (tests/unit/net/api/test_operation checks the call). */
void ig_count_rejected(ig_ctx *ctx, int status) { (void)ctx; (void)status; }
void ig_count_rate_limited(ig_ctx *ctx) { (void)ctx; }
void ig_http_set_op_hooks(ig_ctx *ctx, const struct ig_op_hooks *hooks) { (void)ctx; (void)hooks; }
/* Rate limits: every request at one instant (so a limit's burst decides
 * alone), from no address (a header-keyed limit needs none). */
uint64_t ig_http_start_us(const ig_ctx *ctx) { (void)ctx; return 1000000; }
bool ig_http_peer_addr(const ig_ctx *ctx, uint8_t out[16]) { (void)ctx; (void)out; return false; }
/* No door here: no principal, so a limit by subject keys by address. */
const struct ig_principal *ig_principal(const ig_ctx *ctx) { (void)ctx; return NULL; }

ig_str ig_req_header(const ig_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->req.num_headers; i++)
		if (ctx->req.headers[i].name.len == strlen(name) &&
		    strncasecmp(ctx->req.headers[i].name.ptr, name, strlen(name)) == 0)
			return ctx->req.headers[i].value;
	return (ig_str){ NULL, 0 };
}
uint32_t ig_core_index(const ig_ctx *ctx) { (void)ctx; return 0; }
uint32_t ig_core_count(const ig_ctx *ctx) { (void)ctx; return 1; }
ig_wbuf *ig_body(ig_ctx *ctx) { return &ctx->body; }
void ig_set_content_type(ig_ctx *ctx, const char *ct) { ctx->content_type = ct; }
bool ig_cancelled(const ig_ctx *ctx) { (void)ctx; return false; }
bool ig_has_errors(const ig_ctx *ctx) { return ctx->errors_count > 0; }

void ig_add_header(ig_ctx *ctx, const char *name, ig_str value)
{
	ig_wbuf_put(&ctx->headers, name, strlen(name));
	ig_wbuf_lit(&ctx->headers, ": ");
	ig_wbuf_put(&ctx->headers, value.ptr, value.len);
	ig_wbuf_lit(&ctx->headers, "; ");
}

void ig_set_encoder(ig_ctx *ctx, ig_encode_fn *encode, const void *out)
{
	ctx->encode = encode;
	ctx->out = out;
}

/* The route is printed with the status: the template the router matched. */
void ig_set_route(ig_ctx *ctx, uint32_t index)
{
	ctx->route = ig_api_app.routes[index];
}

bool ig_http_answered(const ig_ctx *ctx) { return ctx->finished != 0; }

void ig_finish(ig_ctx *ctx, int status)
{
	if (ctx->finished++) {
		printf("finished twice\n");
		return;
	}
	ctx->status = status;
	if (ctx->encode)
		ctx->encode(ctx, status, ctx->out);
}

static void put_str(ig_wbuf *w, const char *s)
{
	ig_json_string(w, s, strlen(s));
}

void ig_respond_problem(ig_ctx *ctx, int status, const char *detail)
{
	ctx->body.len = 0;
	ig_wbuf_lit(&ctx->body, "{\"detail\":");
	put_str(&ctx->body, detail);
	ig_wbuf_lit(&ctx->body, "}");
	ctx->content_type = "application/problem+json";
	ctx->encode = NULL;
	ig_finish(ctx, status);
}

/* The runtime's members, with a stand-in reason: the response checks
 * hold it against the Problem schema schemac provides. */
void ig_encode_problem(ig_ctx *ctx, int status)
{
	ctx->body.len = 0;
	ig_wbuf_lit(&ctx->body, "{\"type\":\"about:blank\",\"title\":\"(reason)\",\"status\":");
	ig_json_int(&ctx->body, status);
	ig_wbuf_lit(&ctx->body, ",\"detail\":\"(reason)\",\"request_id\":\"mock-id\"}");
	ctx->content_type = "application/problem+json";
}

int ig_redirect(ig_ctx *ctx, int status, ig_str location)
{
	if (status < 300 || status > 399)
		return 500;
	ig_add_header(ctx, "Location", location);
	ctx->body.len = 0;
	ctx->content_type = NULL;
	ctx->encode = NULL;
	return status;
}

void ig_error_add(ig_ctx *ctx, const char *in, const char *name, const char *keyword, const char *message)
{
	ig_wbuf *w = &ctx->errors;
	if (ctx->errors_count++)
		ig_wbuf_lit(w, ",");
	if (strcmp(in, "body") == 0) { /* as the runtime: a pointer into the body */
		ig_wbuf_lit(w, "{\"pointer\":");
		put_str(w, name);
	} else {
		ig_wbuf_lit(w, "{\"in\":");
		put_str(w, in);
		ig_wbuf_lit(w, ",\"name\":");
		put_str(w, name);
	}
	ig_wbuf_lit(w, ",\"keyword\":");
	put_str(w, keyword);
	ig_wbuf_lit(w, ",\"message\":");
	put_str(w, message);
	ig_wbuf_lit(w, "}");
}

void ig_respond_errors(ig_ctx *ctx, const char *detail)
{
	ctx->body.len = 0;
	ig_wbuf_lit(&ctx->body, "{\"detail\":");
	put_str(&ctx->body, detail);
	ig_wbuf_lit(&ctx->body, ",\"errors\":[");
	ig_wbuf_put(&ctx->body, ctx->errors.ptr, ctx->errors.len);
	ig_wbuf_lit(&ctx->body, "]}");
	ctx->content_type = "application/problem+json";
	ctx->encode = NULL;
	ig_finish(ctx, 400);
}

void ig_after(ig_ctx *ctx, uint32_t ms, ig_ctx_fn *fn, void *arg)
{
	ctx->timer_fn = fn;
	ctx->timer_arg = arg;
	ctx->timer_ms = ms;
}

/* The generated code's app, as net/api/main.c would hand it to ig_main. */
int main(int argc, char **argv)
{
	const struct ig_app *app = &ig_api_app;
	if (argc == 2 && strcmp(argv[1], "--openapi") == 0) {
		/* As served: the generated route unpacks the document. */
		ig_ctx ctx = { .content_type = NULL };
		ctx.body.arena = &mock_arena;
		ctx.req.method = IG_STR("GET");
		ctx.req.target = ctx.req.path = IG_STR("/openapi.json");
		app->route(&ctx);
		if (!ctx.finished || ctx.status != 200 || ctx.body.len != app->openapi_len)
			return 1;
		fwrite(ctx.body.ptr, 1, ctx.body.len, stdout);
		return 0;
	}
	setvbuf(stdout, NULL, _IONBF, 0); /* logs are written straight to fd 1 */
	printf("app \"%s\" %s, document %zu bytes\n", app->name, app->version, app->openapi_len);
	for (int i = 1; i < argc; i++) {
		ig_ctx ctx = { .content_type = NULL };
		ctx.body.arena = &mock_arena;
		/* "METHOD TARGET ~ Header: value ~ body TEXT" */
		char *line = strdup(argv[i]), *part = line, *next;
		char *method = line, *target = strchr(line, ' ');
		if (!target) {
			printf("bad case %s\n", argv[i]);
			return 1;
		}
		*target++ = 0;
		for (part = strstr(target, " ~ "); part; part = next) {
			*part = 0;
			part += 3;
			next = strstr(part, " ~ ");
			if (next && strncmp(part, "body ", 5) != 0)
				*next = 0;
			else
				next = NULL; /* the body is the rest, " ~ " and all */
			if (strncmp(part, "body ", 5) == 0) {
				ctx.req.body = (ig_str){ part + 5, strlen(part + 5) };
			} else {
				char *colon = strstr(part, ": ");
				if (!colon || ctx.req.num_headers == 16) {
					printf("bad header %s\n", part);
					return 1;
				}
				ctx.headers_in[ctx.req.num_headers++] = (ig_header){
					{ part, (size_t)(colon - part) }, { colon + 2, strlen(colon + 2) },
				};
			}
		}
		ctx.req.headers = ctx.headers_in;
		const char *path = target, *q = strchr(target, '?');
		/* The runtime routes HEAD as GET. */
		ctx.req.head = strcmp(method, "HEAD") == 0;
		ctx.req.method = ctx.req.head ? IG_STR("GET") : (ig_str){ method, strlen(method) };
		ctx.req.target = (ig_str){ target, strlen(target) };
		ctx.req.path = (ig_str){ path, q ? (size_t)(q - path) : strlen(path) };
		ctx.req.query = q ? (ig_str){ q + 1, strlen(q + 1) } : (ig_str){ NULL, 0 };
		app->route(&ctx);
		if (!ctx.finished && ctx.timer_fn) {
			printf("(pending %u ms) ", (unsigned)ctx.timer_ms);
			ctx.timer_fn(&ctx, ctx.timer_arg);
		}
		if (!ctx.finished) {
			printf("%s %s -> not finished\n", method, target);
			continue;
		}
		printf("%s %s -> %d (%s) %s [%.*s] %.*s\n", method, target, ctx.status,
		       ctx.route ? ctx.route : "no route",
		       ctx.content_type ? ctx.content_type : ctx.body.len ? "application/json" : "no content type",
		       (int)ctx.headers.len, ctx.headers.len ? ctx.headers.ptr : "",
		       (int)ctx.body.len, ctx.body.len ? ctx.body.ptr : "");
		free(ctx.body.ptr);
		free(ctx.headers.ptr);
		free(ctx.errors.ptr);
		free(line);
	}
	return 0;
}

/* The handler on the caller's stack: the stand-in's handlers never wait
 * (net/http/wait.c runs them on a coroutine of their core's). */
int ig_wait_run(ig_ctx *ctx, struct ig_wait_work *work)
{
	work->status = work->handle(ctx, work->in, work->out);
	return 1;
}
