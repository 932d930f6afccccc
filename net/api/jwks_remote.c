/* Bearer JWTs' keys fetched over HTTP through the outbound client: the
 * JWKS at INGOT_JWKS_URL, or at the jwks_uri of an OpenID Connect discovery
 * document (whose issuer becomes the policy's default). Core 0 fetches at
 * its start (readiness waits: the "jwks" backend), again every max-age,
 * and after a failure with backoff; an unknown kid on any core refetches,
 * at most once a minute per process. net/auth parses and publishes. */
#include "security.h"
#include "net/auth/settings.h"
#include "net/client/settings.h"
#include "ingot/client.h"
#include "ingot/json_read.h"
#include "ingot/log.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A document is small (16 keys of 4096-bit RSA: about 25 KiB); its
 * arena holds the body and the parse. */
#define BODY_MAX (256 * 1024)
#define BLOCK (16 * 1024)
#define ARENA_LIMIT (1024 * 1024)
#define TIMEOUT_MS 5000
/* When to fetch again after a success: the response's max-age within
 * these bounds, else REFRESH_S; after a failure 1 s, doubling to 60 s. */
#define REFRESH_S 600
#define REFRESH_MIN_S 60
#define REFRESH_MAX_S 3600
#define BACKOFF_MAX_S 60
#define KID_REFETCH_MS 60000
#define NEVER INT64_MIN
/* All of it but prepare, which every start runs: out of .text, in the
 * block net/cold.ld keeps off an idle process's pages. */
#define COLD __attribute__((cold))

enum what { DISCOVERY, KEYS };

/* One fetch at a time per slot: core 0's chain, and the kid refetch
 * (whichever core won it). The pool stays for the next fetch of its slot;
 * the arena is reset after each. */
struct fetch_slot {
	struct ig_pool blocks;
	ig_arena arena;
	enum what what;
	void (*done)(struct fetch_slot *f, bool ok, int64_t max_age);
};

static int backend = -1;
static const char *discovery_url;
/* The JWKS's: INGOT_JWKS_URL, or discovery's jwks_uri (malloc'd). Set
 * before the first set is published (so seen by any core that has keys). */
static const char *_Atomic jwks_url;

/* Core 0's. */
static struct ig_loop *loop0;
static ig_dispatcher *agent0;
static struct ig_timer timer0;
static struct fetch_slot chain;
static uint32_t backoff_s;
static bool ready;

/* The kid refetch: when the last began (monotonic ms), and whether one runs. */
static _Atomic int64_t kid_at_ms = NEVER;
static _Atomic bool kid_running;
static struct fetch_slot kid;

static const ig_header accept_json[] = { { IG_STR("Accept"), IG_STR("application/json") } };

/* Cache-Control's max-age, or -1. */
COLD static int64_t max_age_of(const ig_response *res)
{
	for (size_t i = 0; i < res->header_count; i++) {
		const ig_header *h = &res->headers[i];
		if (h->name.len != 13 || strncasecmp(h->name.ptr, "Cache-Control", 13) != 0)
			continue;
		const char *v = h->value.ptr, *end = v + h->value.len;
		for (const char *p = v; p + 8 < end; p++) {
			if (strncasecmp(p, "max-age=", 8) != 0 || (p > v && p[-1] != ' ' && p[-1] != ','))
				continue;
			int64_t n = 0;
			const char *d = p + 8;
			for (; d < end && *d >= '0' && *d <= '9' && n < 1000000000; d++)
				n = n * 10 + (*d - '0');
			return d > p + 8 ? n : -1;
		}
	}
	return -1;
}

COLD static char *str_member(const ig_json_value *doc, const char *name)
{
	const ig_json_value *v = ig_json_get(doc, name, strlen(name));
	if (!v || v->type != IG_JSON_STRING || !v->s.len)
		return NULL;
	return strndup(v->s.ptr, v->s.len);
}

COLD static bool http_url(const char *u)
{
	return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

/* A discovery document: its jwks_uri becomes the JWKS's URL, its issuer
 * the default. Returns NULL, or why it is refused. */
COLD static const char *take_discovery(ig_str body, ig_arena *arena)
{
	ig_json_reader r;
	ig_jr_init(&r, body.ptr, body.len, arena, 8);
	const ig_json_value *doc = ig_jr_value(&r);
	if (!doc || !ig_jr_finish(&r) || doc->type != IG_JSON_OBJECT)
		return "the discovery document is not a JSON object";
	char *uri = str_member(doc, "jwks_uri");
	if (!uri || !http_url(uri)) {
		free(uri);
		return "the discovery document has no http(s) jwks_uri";
	}
	char *issuer = str_member(doc, "issuer");
	if (issuer)
		ig_auth_set_discovered_issuer(issuer);
	free(issuer);
	atomic_store_explicit(&jwks_url, uri, memory_order_release);
	return NULL;
}

/* One line per failure, never the URL (it may carry a credential). */
COLD static void log_failure(enum what what, const ig_response *res, const char *why, bool have_keys)
{
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_ERROR,
			  have_keys ? "JWKS fetch failed: the old keys stay" : "JWKS fetch failed: no keys yet"))
		return;
	ig_log_cstr(&l, "document", what == DISCOVERY ? "discovery" : "jwks");
	if (res->error != IG_CLIENT_OK)
		ig_log_cstr(&l, "error", ig_client_error_name(res->error));
	else if (res->status != 200)
		ig_log_int(&l, "status", res->status);
	else
		ig_log_cstr(&l, "error", why);
	ig_log_end(&l);
}

COLD static void on_response(ig_response *res, void *arg)
{
	struct fetch_slot *f = arg;
	const char *why = NULL;
	bool changed = false;
	int64_t max_age = -1;
	if (res->error != IG_CLIENT_OK || res->status != 200)
		why = "unavailable";
	else if (f->what == DISCOVERY)
		why = take_discovery(res->body, &f->arena);
	else if (!(why = ig_jwks_load_json(res->body.ptr, res->body.len, &changed)))
		max_age = max_age_of(res);
	if (why) {
		log_failure(f->what, res, why, ig_jwks_current() != NULL);
	} else if (changed) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_INFO, "JWKS fetched: new keys")) {
			ig_log_int(&l, "keys", (int64_t)ig_jwks_current()->count);
			ig_log_end(&l);
		}
	}
	ig_arena_reset(&f->arena);
	f->done(f, !why, max_age);
}

COLD static void fetch(struct fetch_slot *f, ig_dispatcher *d, enum what what)
{
	f->what = what;
	const ig_fetch_opts o = {
		.url = what == DISCOVERY ? discovery_url : atomic_load_explicit(&jwks_url, memory_order_acquire),
		.headers = accept_json,
		.header_count = IG_COUNTOF(accept_json),
		.connect_timeout_ms = TIMEOUT_MS,
		.headers_timeout_ms = TIMEOUT_MS,
		.body_timeout_ms = TIMEOUT_MS,
		.max_body_bytes = BODY_MAX,
	};
	ig_fetch(d, &f->arena, &o, on_response, f);
}

COLD static void slot_init(struct fetch_slot *f, void (*done)(struct fetch_slot *, bool, int64_t))
{
	ig_pool_init(&f->blocks, BLOCK, 4, ARENA_LIMIT / BLOCK);
	ig_arena_init(&f->arena, &f->blocks, ARENA_LIMIT);
	f->done = done;
}

/* ---- core 0's chain: discovery (once), then the keys, again and again ---- */

COLD static void chain_next(void)
{
	fetch(&chain, agent0, atomic_load_explicit(&jwks_url, memory_order_acquire) ? KEYS : DISCOVERY);
}

COLD static void on_timer(struct ig_timer *t)
{
	(void)t;
	chain_next();
}

COLD static void chain_done(struct fetch_slot *f, bool ok, int64_t max_age)
{
	if (ok && f->what == DISCOVERY) {
		chain_next();
		return;
	}
	int64_t wait_s;
	if (ok) {
		backoff_s = 0;
		wait_s = max_age < 0 ? REFRESH_S
			 : max_age < REFRESH_MIN_S ? REFRESH_MIN_S
			 : max_age > REFRESH_MAX_S ? REFRESH_MAX_S : max_age;
		if (!ready) {
			ready = true;
			ig_backend_set_up(backend, true);
		}
	} else {
		backoff_s = backoff_s ? (backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff_s * 2) : 1;
		wait_s = backoff_s;
	}
	ig_timer_set(&loop0->timers, &timer0, loop0->clock.now_ms + (uint64_t)wait_s * 1000);
}

/* ---- the kid refetch ---- */

COLD static void kid_done(struct fetch_slot *f, bool ok, int64_t max_age)
{
	(void)f, (void)ok, (void)max_age;
	atomic_store_explicit(&kid_running, false, memory_order_release);
}

/* On the request's core: the token is refused all the same (the door
 * stays synchronous); its client may try again once the set is in. */
COLD static void on_unknown_kid(ig_ctx *ctx)
{
	if (!atomic_load_explicit(&jwks_url, memory_order_acquire))
		return;
	int64_t now = (int64_t)(ig_monotonic_us() / 1000);
	int64_t last = atomic_load_explicit(&kid_at_ms, memory_order_relaxed);
	if (last != NEVER && now - last < KID_REFETCH_MS)
		return;
	if (!atomic_compare_exchange_strong(&kid_at_ms, &last, now))
		return; /* another core won this minute's */
	bool running = false;
	if (!atomic_compare_exchange_strong(&kid_running, &running, true))
		return;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "JWKS refetch: a token's kid is unknown"))
		ig_log_end(&l);
	ig_dispatcher *d = ig_core_agent(ctx);
	if (!d) {
		atomic_store(&kid_running, false);
		return;
	}
	fetch(&kid, d, KEYS);
}

/* ---- the start ---- */

bool ig_jwks_remote_prepare(const struct ig_app_jwt *jwt)
{
	const struct ig_auth_settings_values *v = &ig_auth_settings_values;
	if (v->jwks_file[0])
		return false;
	if (v->jwks_url[0])
		atomic_store(&jwks_url, v->jwks_url);
	else if (v->oidc_discovery_url[0])
		discovery_url = v->oidc_discovery_url;
	else if (jwt->discovery_url)
		discovery_url = jwt->discovery_url;
	else
		return false;
	backend = ig_backend_register("jwks");
	slot_init(&chain, chain_done);
	slot_init(&kid, kid_done);
	ig_jwks_unknown_kid_hook = on_unknown_kid;
	return true;
}

COLD void ig_jwks_remote_core_start(struct ig_loop *loop)
{
	loop0 = loop;
	timer0.fn = on_timer;
	agent0 = ig_agent_new(loop, &ig_client_settings_opts);
	if (!agent0) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "JWKS fetch failed: no memory for the outbound client"))
			ig_log_end(&l);
		return;
	}
	chain_next();
}
