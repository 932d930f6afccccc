/* Unit tests of net/api/jwks_remote.c, the keys' fetcher, over stand-ins
 * for the outbound client (each ig_fetch recorded, answered by the test),
 * the timers (the last deadline kept), the monotonic clock and net/auth's
 * key set: which URL prepare picks (a setting over the document, no fetch
 * beside INGOT_JWKS_FILE), discovery then the keys, readiness only after
 * keys, the refresh after max-age within 60 s..1 h or 10 min, the backoff
 * after failures (1 s doubling, again from 1 s after a success), and the
 * unknown kid's refetch: once a minute, never two at once. */
#include "net/api/security.h"
#include "net/auth/settings.h"
#include "net/client/settings.h"
#include "kernel/runtime/loop.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <string.h>

/* ---- stand-ins ---- */

struct ig_auth_settings_values ig_auth_settings_values = { .jwks_file = "", .jwks_url = "", .oidc_discovery_url = "",
							   .issuer = "", .audience = "" };
void (*ig_jwks_unknown_kid_hook)(struct ig_ctx *ctx);
ig_client_opts ig_client_settings_opts;

static struct ig_jwks set = { .generation = 1, .count = 2 };
static bool have_keys, load_fails;
static int loads;
const struct ig_jwks *ig_jwks_current(void) { return have_keys ? &set : NULL; }
const char *ig_jwks_load_json(const char *json, size_t len, bool *changed)
{
	(void)json, (void)len;
	loads++;
	*changed = !load_fails;
	if (load_fails)
		return "JWKS: not JSON";
	have_keys = true;
	return NULL;
}
static char issuer[64];
void ig_auth_set_discovered_issuer(const char *iss) { snprintf(issuer, sizeof issuer, "%s", iss); }

static int backends_registered, backend_up = -1;
int ig_backend_register(const char *name) { return strcmp(name, "jwks") == 0 ? ++backends_registered : -1; }
void ig_backend_set_up(int id, bool up) { backend_up = up ? id : -1; }

static uint64_t now_us;
uint64_t ig_monotonic_us(void) { return now_us; }

static struct ig_timer *timer;
static uint64_t deadline;
void ig_timer_set(struct ig_timers *w, struct ig_timer *t, uint64_t d)
{
	(void)w;
	timer = t;
	deadline = d;
}

static ig_dispatcher agent0, core_agent;
static int agents_made;
ig_dispatcher *ig_agent_new(struct ig_loop *loop, const ig_client_opts *opts)
{
	(void)loop, (void)opts;
	agents_made++;
	return &agent0;
}
ig_dispatcher *ig_core_agent(ig_ctx *ctx) { (void)ctx; return &core_agent; }
const char *ig_client_error_name(enum ig_client_error e) { return e == IG_CLIENT_CONNECT ? "connect" : "other"; }

/* The calls started and not yet answered, oldest first. */
struct started {
	ig_dispatcher *d;
	char url[128];
	ig_response_fn *done;
	void *arg;
};
static struct started calls[8];
static int ncalls;
ig_call *ig_fetch(ig_dispatcher *d, ig_arena *arena, const ig_fetch_opts *o, ig_response_fn *done, void *arg)
{
	(void)arena;
	if (ncalls < 8) {
		calls[ncalls] = (struct started){ .d = d, .done = done, .arg = arg };
		snprintf(calls[ncalls].url, sizeof calls[ncalls].url, "%s", o->url);
		ncalls++;
	}
	return NULL;
}

static char last_log[128];
bool ig_log_begin(struct ig_logline *l, enum ig_log_level level, const char *msg)
{
	(void)l, (void)level;
	snprintf(last_log, sizeof last_log, "%s", msg);
	return true;
}
void ig_log_cstr(struct ig_logline *l, const char *key, const char *v) { (void)l, (void)key, (void)v; }
void ig_log_int(struct ig_logline *l, const char *key, int64_t v) { (void)l, (void)key, (void)v; }
void ig_log_end(struct ig_logline *l) { (void)l; }

/* ---- helpers ---- */

static struct ig_loop loop0;

/* Answers the oldest call started: status (0: err), body, a Cache-Control. */
static void answer(int status, enum ig_client_error err, const char *body, const char *cache_control)
{
	if (!ncalls)
		return;
	struct started c = calls[0];
	memmove(calls, calls + 1, sizeof calls[0] * (size_t)--ncalls);
	ig_header h = { IG_STR("cache-control"), { cache_control, cache_control ? strlen(cache_control) : 0 } };
	ig_response res = { .error = err, .status = status, .headers = &h, .header_count = cache_control ? 1 : 0,
			    .body = { body, body ? strlen(body) : 0 } };
	c.done(&res, c.arg);
}

static bool next_url_is(const char *url) { return ncalls && strcmp(calls[ncalls - 1].url, url) == 0; }

static void fire(void)
{
	timer->fn(timer);
}

#define KEYS "{\"keys\":[]}"

/* ---- tests ---- */

static void test_prepare(void)
{
	struct ig_app_jwt doc = { .discovery_url = "http://doc.test/disc" }, none = { 0 };
	ig_auth_settings_values.jwks_file = "/etc/jwks.json";
	CHECK(!ig_jwks_remote_prepare(&doc), "INGOT_JWKS_FILE: nothing fetched, whatever the document says");
	ig_auth_settings_values.jwks_file = "";
	CHECK(!ig_jwks_remote_prepare(&none) && !ig_jwks_unknown_kid_hook && backends_registered == 0,
	      "no URL anywhere: nothing fetched, no backend, no hook");

	CHECK(ig_jwks_remote_prepare(&doc) && backends_registered == 1 && ig_jwks_unknown_kid_hook,
	      "the document's openIdConnectUrl: fetched, readiness waits, the hook is set");
	ig_jwks_remote_core_start(&loop0);
	CHECK(agents_made == 1 && next_url_is("http://doc.test/disc") && calls[0].d == &agent0,
	      "core 0 starts with the document's discovery, on its own agent");
	ncalls = 0;

	ig_auth_settings_values.oidc_discovery_url = "http://set.test/disc";
	CHECK(ig_jwks_remote_prepare(&doc), "INGOT_OIDC_DISCOVERY_URL");
	ig_jwks_remote_core_start(&loop0);
	CHECK(next_url_is("http://set.test/disc"), "the setting wins over the document");
}

static void test_chain(void)
{
	loop0.clock.now_ms = 1000;
	answer(200, IG_CLIENT_OK, "{\"issuer\":\"https://iss.test\",\"jwks_uri\":\"http://keys.test/jwks\"}", NULL);
	CHECK(strcmp(issuer, "https://iss.test") == 0, "discovery's issuer handed to net/auth");
	CHECK(next_url_is("http://keys.test/jwks"), "then its jwks_uri fetched at once");

	answer(500, IG_CLIENT_OK, "{}", NULL);
	CHECK(strcmp(last_log, "JWKS fetch failed: no keys yet") == 0 && backend_up == -1, "a 500: logged, not ready");
	CHECK_INT(deadline, 1000 + 1000, "retried after 1 s");
	fire();
	CHECK(next_url_is("http://keys.test/jwks"), "the retry fetches the keys (discovery is done)");
	answer(0, IG_CLIENT_CONNECT, NULL, NULL);
	CHECK_INT(deadline, 1000 + 2000, "then after 2 s");
	fire();
	load_fails = true;
	answer(200, IG_CLIENT_OK, "{}", NULL);
	CHECK(loads == 1 && backend_up == -1, "a document net/auth refuses: not ready");
	CHECK_INT(deadline, 1000 + 4000, "then after 4 s");
	load_fails = false;

	fire();
	answer(200, IG_CLIENT_OK, KEYS, "public, max-age=30");
	CHECK(loads == 2 && backend_up == backends_registered, "keys: ready");
	CHECK(strcmp(last_log, "JWKS fetched: new keys") == 0, "and logged");
	CHECK_INT(deadline, 1000 + 60000, "max-age=30: again after 60 s, the least");
	fire();
	answer(200, IG_CLIENT_OK, KEYS, "public, max-age=7200");
	CHECK_INT(deadline, 1000 + 3600000, "max-age=7200: after an hour, the most");
	fire();
	answer(200, IG_CLIENT_OK, KEYS, "s-maxage=5, max-age=90, must-revalidate");
	CHECK_INT(deadline, 1000 + 90000, "max-age=90 (not s-maxage)");
	fire();
	answer(200, IG_CLIENT_OK, KEYS, NULL);
	CHECK_INT(deadline, 1000 + 600000, "no max-age: after 10 min");
	fire();
	load_fails = true;
	answer(200, IG_CLIENT_OK, "{}", NULL);
	CHECK(strcmp(last_log, "JWKS fetch failed: the old keys stay") == 0 && backend_up == backends_registered,
	      "a failure once ready: logged, still ready");
	CHECK_INT(deadline, 1000 + 1000, "the backoff starts over at 1 s");
	load_fails = false;
	fire();
	answer(200, IG_CLIENT_OK, KEYS, "max-age=");
	CHECK_INT(deadline, 1000 + 600000, "a max-age without digits: the default");
	CHECK_INT(ncalls, 0, "nothing else started");
}

/* The door meets an unknown kid at ms on the monotonic clock: how many
 * calls are then running. */
static int unknown_kid_at(uint64_t ms)
{
	now_us = ms * 1000;
	ig_jwks_unknown_kid_hook((ig_ctx *)&loop0); /* only handed to ig_core_agent */
	return ncalls;
}

static void test_kid(void)
{
	CHECK(unknown_kid_at(100000) == 1 && calls[0].d == &core_agent && next_url_is("http://keys.test/jwks"),
	      "an unknown kid: the keys fetched again on the request's core");
	CHECK(strcmp(last_log, "JWKS refetch: a token's kid is unknown") == 0, "logged");
	CHECK_INT(unknown_kid_at(110000), 1, "another within the minute (this one running): none");
	answer(200, IG_CLIENT_OK, KEYS, NULL);
	CHECK_INT(unknown_kid_at(110000), 0, "nor once it has ended");
	CHECK_INT(unknown_kid_at(160000), 1, "a minute after the first: one");
	CHECK_INT(unknown_kid_at(230000), 1, "a minute later with the last still running: none at once");
	answer(0, IG_CLIENT_CONNECT, NULL, NULL);
	CHECK(strcmp(last_log, "JWKS fetch failed: the old keys stay") == 0, "its failure logged");
	CHECK_INT(unknown_kid_at(240000), 0, "the minute that one took counts");
	CHECK_INT(unknown_kid_at(290001), 1, "and then one again");
	answer(200, IG_CLIENT_OK, KEYS, NULL);
}

int main(void)
{
	test_prepare();
	test_chain();
	test_kid();
	return check_done();
}
