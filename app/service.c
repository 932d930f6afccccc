/* The reference service's handlers, one per operationId of
 * schemas/service.json. They only fill the output struct: routing,
 * parameters, request bodies, validation and JSON encoding are generated
 * (build/gen/api.c). The integration tests and the benchmarks compare its
 * bodies byte for byte. /proxy/json and /fanout call an upstream through
 * the core's outbound client and wait (include/ingot/client.h's linear calls). */
#include "api.h"
#include "ingot/client.h"
#include "ingot/lifecycle.h"
#include "ingot/settings.h"

#include <bearssl.h>
#include <stdlib.h>
#include <time.h>

int getHealth(ig_ctx *ctx, const struct getHealth_in *in, struct getHealth_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.status = IG_STR("ok");
	return 200;
}

/* Its limit (x-ingot-rate-limit) is the runtime's: a request that reaches
 * the handler was admitted. */
int getLimited(ig_ctx *ctx, const struct getLimited_in *in, struct getLimited_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.ok = true;
	return 200;
}

/* Static data: the body is rebuilt by the encoder on every request, so
 * this measures encoding, not building the values. */
static const ig_str widget_tags[] = { { "a", 1 }, { "b", 1 }, { "c", 1 } };

int getJson(ig_ctx *ctx, const struct getJson_in *in, struct getJson_out *out)
{
	(void)ctx;
	(void)in;
	out->r200 = (struct getJson_200){
		.id = 1,
		.name = IG_STR("widget"),
		.tags = { widget_tags, IG_COUNTOF(widget_tags) },
		.price = 12.5,
		.stock = { .warehouse = IG_STR("north"), .count = 42 },
		.active = true,
	};
	return 200;
}

/* Read through a volatile so the compiler can't fold the loop into a
 * constant: the point of /compute is CPU work on every request. */
static volatile uint64_t compute_rounds = 1000000;

int getCompute(ig_ctx *ctx, const struct getCompute_in *in, struct getCompute_out *out)
{
	(void)ctx;
	(void)in;
	uint64_t rounds = compute_rounds, result = 0;
	for (uint64_t i = 0; i < rounds; i++)
		result = (result + i * 31) % 1000000007;
	out->r200.result = (int64_t)result;
	return 200;
}

/* Hashed on every request, like /compute: the cost is the point. */
int getHash(ig_ctx *ctx, const struct getHash_in *in, struct getHash_out *out)
{
	static const char hexdigits[] = "0123456789abcdef";
	(void)in;
	br_sha256_context sha;
	unsigned char digest[32];
	br_sha256_init(&sha);
	for (int i = 0; i < 100; i++)
		br_sha256_update(&sha, "hello world", 11);
	br_sha256_out(&sha, digest);

	char *hex = ig_alloc(ctx, 2 * sizeof digest);
	if (!hex)
		return 500;
	for (size_t i = 0; i < sizeof digest; i++) {
		hex[2 * i] = hexdigits[digest[i] >> 4];
		hex[2 * i + 1] = hexdigits[digest[i] & 15];
	}
	out->r200.sha256 = (ig_str){ hex, 2 * sizeof digest };
	return 200;
}

/* "<prefix><id><suffix>" in the arena: the encoder reads it after we return. */
static ig_str with_id(ig_ctx *ctx, const char *prefix, size_t plen, int64_t id, const char *suffix, size_t slen)
{
	char *s = ig_alloc(ctx, plen + 20 + slen);
	if (!s)
		return (ig_str){ NULL, 0 };
	memcpy(s, prefix, plen);
	size_t n = plen + ig_fmt_i64(s + plen, id);
	memcpy(s + n, suffix, slen);
	return (ig_str){ s, n + slen };
}

/* The synthetic post of an id: its text is made from the id. */
static int synthetic_post(ig_ctx *ctx, int64_t id, struct Post *post)
{
	ig_str title = with_id(ctx, "post ", 5, id, "", 0);
	ig_str body = with_id(ctx, "This is post ", 13, id, ".", 1);
	if (!title.ptr || !body.ptr)
		return -1;
	*post = (struct Post){ .id = id, .title = title, .body = body, .likes = 0 };
	return 0; /* no tags: has_tags stays false and "tags" is omitted */
}

int getBlogPost(ig_ctx *ctx, const struct getBlogPost_in *in, struct getBlogPost_out *out)
{
	return synthetic_post(ctx, in->id, &out->r200) ? 500 : 200;
}

int listBlogPosts(ig_ctx *ctx, const struct listBlogPosts_in *in, struct listBlogPosts_out *out)
{
	/* Posts offset+1 .. offset+limit, as far as ids go (offset may be huge). */
	int64_t n = in->limit;
	if (in->offset > INT64_MAX - n)
		n = INT64_MAX - in->offset;
	struct Post *posts = ig_alloc(ctx, (size_t)(n ? n : 1) * sizeof *posts);
	if (!posts)
		return 500;
	for (int64_t i = 0; i < n; i++)
		if (synthetic_post(ctx, in->offset + i + 1, &posts[i]))
			return 500;
	out->r200 = (struct PostList){ .posts = { posts, (size_t)n }, .limit = in->limit, .offset = in->offset };
	return 200;
}

/* Ids unique across cores without a lock: each core counts on its own
 * (its loop is its thread) and takes the ids congruent to its index. */
static _Thread_local uint64_t posts_created;

static struct Post post_from(int64_t id, const struct PostInput *p)
{
	return (struct Post){
		.id = id,
		.title = p->title,
		.body = p->body,
		.likes = p->likes,
		.has_tags = p->has_tags,
		.tags = { p->tags.items, p->tags.len },
	};
}

int createBlogPost(ig_ctx *ctx, const struct createBlogPost_in *in, struct createBlogPost_out *out)
{
	uint64_t id = posts_created++ * ig_core_count(ctx) + ig_core_index(ctx) + 1;
	ig_str location = with_id(ctx, "/blog/", 6, (int64_t)id, "", 0);
	if (!location.ptr)
		return 500;
	ig_add_header(ctx, "Location", location);
	out->r201 = post_from((int64_t)id, &in->body);
	return 201;
}

int updateBlogPost(ig_ctx *ctx, const struct updateBlogPost_in *in, struct updateBlogPost_out *out)
{
	(void)ctx;
	out->r200 = post_from(in->id, &in->body);
	return 200;
}

/* The validation benchmark: the decoded request, echoed. */
static void echo(struct ValidateOutput *o, int64_t page, const ig_str *tags, size_t ntags, ig_str foo,
		 const struct ValidateInput *body)
{
	*o = (struct ValidateOutput){
		.page = page, .tags = { tags, ntags }, .foo = foo, .body = *body,
	};
}

int validateRequest(ig_ctx *ctx, const struct validateRequest_in *in, struct validateRequest_out *out)
{
	(void)ctx;
	echo(&out->r200, in->page, in->tags.items, in->tags.len, in->x_foo, &in->body);
	return 200;
}

int noValidateRequest(ig_ctx *ctx, const struct noValidateRequest_in *in, struct noValidateRequest_out *out)
{
	(void)ctx;
	echo(&out->r200, in->page, in->tags.items, in->tags.len, in->x_foo, &in->body);
	return 200;
}

/* A handler that waits, written top to bottom: ig_sleep suspends it on
 * its coroutine while the core serves others. A client that leaves (or a
 * drain that ends) makes it return at once; the answer is then dropped. */
int getDelay(ig_ctx *ctx, const struct getDelay_in *in, struct getDelay_out *out)
{
	if (ig_sleep(ctx, (uint32_t)in->ms) != IG_WAIT_OK)
		return 503;
	out->r200.delayed_ms = in->ms;
	return 200;
}

/* ---- outbound: routes that call an upstream through the core's client ---- */

/* The app's settings, in the runtime's settings table (--help lists them
 * under the app's name; each is a flag too, --upstream). UPSTREAM needs no
 * init hook: its URLs are made per core on first use, once the listening port is known. */
static const char *upstream_setting = "";
const char *reports_api_keys = ""; /* app/auth.c's auth handler reads it */
static bool heartbeat_cron;
const char *files_dir = ""; /* app/files.c's GET /files/{name} reads it */
static const struct ig_option app_rows[] = {
	IG_SECRET("REPORTS_API_KEYS", &reports_api_keys,
		  "the API keys GET /reports/{name} takes in X-API-Key (comma-separated); empty: none"),
	IG_SETTING_STR("UPSTREAM", &upstream_setting,
		       "the upstream of /proxy/json and /fanout: an http(s) origin, optionally with a path prefix; "
		       "empty: this service on 127.0.0.1 and its PORT"),
	IG_SETTING_STR("FILES_DIR", &files_dir,
		       "the directory GET /files/{name} sends files of; empty: none (404)"),
	IG_SETTING_BOOL("HEARTBEAT_CRON", &heartbeat_cron,
			IG_HELP("schedule the cron job heartbeat here (every second, a row per tick: app/cron.c); "
				"a platform's trigger runs it either way")),
};
const struct ig_settings ig_app_settings = { .opts = app_rows, .count = IG_COUNTOF(app_rows) };

/* HEARTBEAT_CRON: whether this process's timer schedules the heartbeat. */
static const struct ig_cron_switch cron_switches[] = { { "heartbeat", &heartbeat_cron } };
const struct ig_lifecycle ig_app_lifecycle = { .cron_switches = cron_switches,
					       .cron_switch_count = IG_COUNTOF(cron_switches) };

/* The upstream's URLs, made once per core (each core is one thread, so no
 * lock): UPSTREAM (an origin, optionally with a path prefix), or the
 * service itself at 127.0.0.1 and the port it listens on (so HOST must
 * take loopback: 0.0.0.0 or 127.0.0.1). An unusable value leaves the URLs
 * empty: every call then fails as a bad request (502). */
struct upstream_urls {
	bool ready;
	char json[320], health[320];
};
static _Thread_local struct upstream_urls upstream;

static void join_url(char *out, size_t cap, const char *base, size_t blen, const char *path)
{
	size_t plen = strlen(path);
	if (blen + plen >= cap) {
		out[0] = '\0';
		return;
	}
	memcpy(out, base, blen);
	memcpy(out + blen, path, plen + 1);
}

static const struct upstream_urls *upstream_urls(ig_ctx *ctx)
{
	if (upstream.ready)
		return &upstream;
	char self[40] = "http://127.0.0.1:";
	const char *base = upstream_setting;
	size_t blen;
	if (base && *base) {
		blen = strlen(base);
	} else {
		blen = strlen(self);
		blen += ig_fmt_u64(self + blen, ig_listen_port(ctx));
		base = self;
	}
	while (blen && base[blen - 1] == '/')
		blen--;
	join_url(upstream.json, sizeof upstream.json, base, blen, "/json");
	join_url(upstream.health, sizeof upstream.health, base, blen, "/health");
	upstream.ready = true;
	return &upstream;
}

static uint64_t monotonic_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A problem+json (RFC 9457) for what the runtime's ig_fetch_respond_error
 * does not answer: an upstream's status other than 200 ("error":"status"),
 * no client on this core ("busy"); same members as the runtime's, so a
 * caller tells the cases apart by "error" without parsing the detail. */
static int upstream_problem(ig_ctx *ctx, int status, const char *error, const char *detail, int upstream_status)
{
	ig_wbuf *w = ig_body(ctx);
	w->len = 0;
	if (status == 504)
		ig_wbuf_lit(w, "{\"type\":\"about:blank\",\"title\":\"Gateway Timeout\",\"status\":504,\"detail\":");
	else if (status == 503)
		ig_wbuf_lit(w, "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":");
	else
		ig_wbuf_lit(w, "{\"type\":\"about:blank\",\"title\":\"Bad Gateway\",\"status\":502,\"detail\":");
	ig_json_string(w, detail ? detail : "", detail ? strlen(detail) : 0);
	ig_wbuf_lit(w, ",\"error\":");
	ig_json_string(w, error, strlen(error));
	if (upstream_status) {
		ig_wbuf_lit(w, ",\"upstream_status\":");
		ig_json_int(w, upstream_status);
	}
	ig_str id = ig_request_id(ctx);
	ig_wbuf_lit(w, ",\"request_id\":");
	ig_json_string(w, id.ptr, id.len);
	ig_wbuf_lit(w, "}");
	ig_set_content_type(ctx, "application/problem+json");
	return status;
}

static int proxy_answer(ig_ctx *ctx, const ig_response *res)
{
	if (res->error != IG_CLIENT_OK)
		return ig_fetch_respond_error(ctx, res); /* names the kind, logs the whole error */
	if (res->status != 200) {
		struct ig_logline l;
		if (ig_log_req(ctx, &l, IG_LOG_WARN, "upstream status")) {
			ig_log_int(&l, "upstream_status", res->status);
			ig_log_end(&l);
		}
		return upstream_problem(ctx, 502, "status", "the upstream answered a status other than 200", res->status);
	}
	ig_wbuf *w = ig_body(ctx);
	w->len = 0;
	ig_wbuf_put(w, res->body.ptr, res->body.len);
	ig_set_content_type(ctx, "application/json");
	return 200;
}

/* GET /proxy/json: the upstream's /json, the handler waiting for it on its
 * coroutine (the response lands in the request's arena). */
int proxyJson(ig_ctx *ctx, const struct proxyJson_in *in, struct proxyJson_out *out)
{
	(void)in;
	(void)out;
	ig_dispatcher *agent = ig_core_agent(ctx);
	if (!agent)
		return upstream_problem(ctx, 503, "busy", "no client for the upstream on this core", 0);
	const ig_fetch_opts opts = { .url = upstream_urls(ctx)->json, .parent = ctx };
	return proxy_answer(ctx, ig_fetch_wait(ctx, agent, &opts));
}

/* GET /fanout?n=: n calls at once (ig_fetch_send), waited for together;
 * slowest_ms is how long the whole fan-out took, from the first start. */
int fanout(ig_ctx *ctx, const struct fanout_in *in, struct fanout_out *out)
{
	ig_dispatcher *agent = ig_core_agent(ctx);
	uint32_t n = (uint32_t)in->n, succeeded = 0;
	const ig_response **res = ig_alloc(ctx, n * sizeof *res);
	if (!agent || !res)
		return upstream_problem(ctx, 503, "busy", "no client for the upstream on this core", 0);
	const ig_fetch_opts opts = { .url = upstream_urls(ctx)->health, .parent = ctx };
	uint64_t start_us = monotonic_us();
	for (uint32_t i = 0; i < n; i++)
		res[i] = ig_fetch_send(ctx, agent, &opts);
	if (ig_wait_all(ctx) != IG_WAIT_OK)
		return 503; /* cancelled: nobody reads the answer */
	for (uint32_t i = 0; i < n; i++)
		succeeded += res[i]->error == IG_CLIENT_OK && res[i]->status == 200;
	out->r200 = (struct fanout_200){ .requested = n, .succeeded = succeeded,
					 .slowest_ms = (double)(monotonic_us() - start_us) / 1000.0 };
	return 200;
}
