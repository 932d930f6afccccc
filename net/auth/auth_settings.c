/* The rows of the settings table for JWT bearer tokens, and the live key
 * set: from INGOT_JWKS_FILE (read by the check at the start, read again by
 * ig_jwks_file_refresh when the file changed), or fetched over HTTP by
 * net/api/jwks_remote.c (INGOT_JWKS_URL, OpenID Connect discovery), which
 * hands the JSON to ig_jwks_load_json. Replacing the set never blocks a
 * core: the new one is built aside and published with one atomic store
 * (publishers, rare, take a mutex); the one before the previous is freed
 * (a verify holds a set for microseconds; file reloads come at least a
 * second apart, fetched sets at most twice a minute). SIGHUP's
 * handler (net/server/reload.c, on core 0) reads the file again through
 * ig_jwks_sighup; a change between signals is seen by whoever calls
 * ig_jwks_file_refresh (the door's owner: a core-0 timer). */
#include "net/auth/settings.h"
#include "ingot/log.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/file.h"
#include "kernel/runtime/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define JWKS_FILE_MAX (1u << 20)
/* The parse's scratch: the tree of a 16-key JWKS is a few KiB. */
#define SCRATCH_BLOCK (16 * 1024)
#define SCRATCH_BLOCKS 8

static const struct ig_auth_settings_values auth_defaults = {
	.jwks_file = "", .jwks_url = "", .oidc_discovery_url = "", .issuer = "", .audience = "", .leeway_s = 60, .failures_per_min = 100,
};

struct ig_auth_settings_values ig_auth_settings_values;

static const struct ig_option auth_rows[] = {
	{ "INGOT_JWKS_FILE", IG_OPT_STR, &ig_auth_settings_values.jwks_file, 0, 0,
	  IG_HELP("JWKS file (a secret: may hold oct HMAC keys) that bearer JWTs are verified with; read again when it changes") },
	{ "INGOT_JWKS_URL", IG_OPT_STR, &ig_auth_settings_values.jwks_url, 0, 0,
	  IG_HELP("http(s) URL of the JWKS: fetched at the start (not ready until it is), every max-age (60-3600 s; else 600 s) and on an unknown kid (once a minute)") },
	{ "INGOT_OIDC_DISCOVERY_URL", IG_OPT_STR, &ig_auth_settings_values.oidc_discovery_url, 0, 0,
	  IG_HELP("OpenID Connect discovery document whose jwks_uri (and issuer) to use; default: an openIdConnect scheme's openIdConnectUrl") },
	{ "INGOT_JWT_ISSUER", IG_OPT_STR, &ig_auth_settings_values.issuer, 0, 0,
	  IG_HELP("the iss a JWT must have; not set: discovery's issuer, else not checked") },
	{ "INGOT_JWT_AUDIENCE", IG_OPT_STR, &ig_auth_settings_values.audience, 0, 0,
	  IG_HELP("an aud a JWT must have (aud a string or an array); not set: not checked") },
	{ "INGOT_JWT_LEEWAY_S", IG_OPT_INT, &ig_auth_settings_values.leeway_s, 0, 3600,
	  IG_HELP("seconds of clock skew allowed for a JWT's exp and nbf") },
	{ "INGOT_AUTH_FAILURES_PER_MIN", IG_OPT_INT, &ig_auth_settings_values.failures_per_min, 0, 1000000,
	  IG_HELP("failed authentication attempts a client address may make in a minute before 429; 0: no limit") },
};

static struct ig_jwks *_Atomic current;
/* Publishers: the file's (core 0, SIGHUP) and the fetcher's (any core). */
static pthread_mutex_t publishing = PTHREAD_MUTEX_INITIALIZER;
/* OpenID Connect discovery's issuer (malloc'd, set once before the first
 * fetched set is published): the policy's when INGOT_JWT_ISSUER is not. */
static const char *_Atomic discovered_issuer;
/* Sets published before current, oldest first: freed two loads later. */
static struct ig_jwks *retired[2];
static uint64_t generation;
void (*ig_jwks_unknown_kid_hook)(struct ig_ctx *ctx);
/* What the last read saw, and when the file was last looked at. */
static struct stat last_stat;
static int64_t last_check = INT64_MIN;

const struct ig_jwks *ig_jwks_current(void)
{
	return atomic_load_explicit(&current, memory_order_acquire);
}

/* The key set in json[0..len) into a new set (NULL and why, else the set). */
static struct ig_jwks *parse_set(const char *json, size_t len, const char **why)
{
	struct ig_jwks *set = calloc(1, sizeof *set);
	void *scratch = malloc(SCRATCH_BLOCK * SCRATCH_BLOCKS);
	*why = "out of memory reading the JWKS";
	if (set && scratch) {
		struct ig_pool blocks;
		ig_arena arena;
		ig_pool_init(&blocks, SCRATCH_BLOCK, SCRATCH_BLOCKS, SCRATCH_BLOCKS);
		ig_pool_seed(&blocks, scratch, SCRATCH_BLOCKS);
		ig_arena_init(&arena, &blocks, SCRATCH_BLOCK * (SCRATCH_BLOCKS - 1));
		*why = ig_jwks_parse(json, len, &arena, set);
		ig_arena_reset(&arena);
	}
	free(scratch);
	if (*why) {
		free(set);
		return NULL;
	}
	return set;
}

static bool same_keys(const struct ig_jwks *a, const struct ig_jwks *b)
{
	return a && b && a->count == b->count && memcmp(a->keys, b->keys, a->count * sizeof a->keys[0]) == 0;
}

/* Makes set the current one (a new generation) unless only_if_changed
 * and it holds the current keys. Returns whether it did. */
static bool publish(struct ig_jwks *set, bool only_if_changed)
{
	pthread_mutex_lock(&publishing);
	struct ig_jwks *now = atomic_load_explicit(&current, memory_order_relaxed);
	if (only_if_changed && same_keys(now, set)) {
		pthread_mutex_unlock(&publishing);
		free(set);
		return false;
	}
	set->generation = ++generation;
	free(retired[0]);
	retired[0] = retired[1];
	retired[1] = atomic_exchange_explicit(&current, set, memory_order_acq_rel);
	pthread_mutex_unlock(&publishing);
	return true;
}

const char *ig_jwks_load_json(const char *json, size_t len, bool *changed)
{
	const char *why;
	struct ig_jwks *set = parse_set(json, len, &why);
	*changed = set && publish(set, true);
	return set ? NULL : why;
}

void ig_auth_set_discovered_issuer(const char *issuer)
{
	char *copy = strdup(issuer);
	const char *old = NULL;
	if (copy && atomic_compare_exchange_strong(&discovered_issuer, &old, copy))
		return;
	free(copy); /* once only: a verify may hold the first */
}

const char *ig_jwks_load_file(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof st);
	size_t len;
	char *text = ig_read_file(path, JWKS_FILE_MAX, 0, &len, err, errlen);
	if (!text)
		return err;
	const char *why;
	struct ig_jwks *set = parse_set(text, len, &why);
	free(text);
	if (!set)
		return why;
	publish(set, false);
	last_stat = st;
	return NULL;
}

const char *ig_jwks_file_refresh(int64_t now_s)
{
	static char err[160];
	const char *path = ig_auth_settings_values.jwks_file;
	if (!path || !path[0] || now_s == last_check)
		return NULL;
	last_check = now_s;
	struct stat st;
	if (stat(path, &st) != 0)
		return "INGOT_JWKS_FILE: cannot stat the file; the keys stay";
	if (st.st_size == last_stat.st_size && st.st_mtim.tv_sec == last_stat.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == last_stat.st_mtim.tv_nsec && st.st_ino == last_stat.st_ino)
		return NULL;
	return ig_jwks_load_file(path, err, sizeof err);
}

void ig_jwks_sighup(void)
{
	const char *path = ig_auth_settings_values.jwks_file;
	if (!path || !path[0])
		return;
	char err[160];
	const char *why = ig_jwks_load_file(path, err, sizeof err);
	const struct ig_jwks *set = ig_jwks_current();
	struct ig_logline l;
	if (ig_log_begin(&l, why ? IG_LOG_ERROR : IG_LOG_INFO,
			 why ? "JWKS reload failed: the old keys stay" : "JWKS reloaded")) {
		ig_log_cstr(&l, "file", path);
		if (why)
			ig_log_cstr(&l, "error", why);
		else
			ig_log_int(&l, "keys", (int64_t)set->count);
		ig_log_end(&l);
	}
}

void ig_auth_policy(struct ig_jwt_policy *out)
{
	const struct ig_auth_settings_values *v = &ig_auth_settings_values;
	const char *issuer = v->issuer;
	if (!issuer || !issuer[0])
		issuer = atomic_load_explicit(&discovered_issuer, memory_order_acquire);
	*out = (struct ig_jwt_policy){
		.issuer = { issuer, issuer ? strlen(issuer) : 0 },
		.audience = { v->audience, v->audience ? strlen(v->audience) : 0 },
		.leeway_s = v->leeway_s,
		.max_len = IG_JWT_MAX_LEN,
	};
}

static bool http_url(const char *u)
{
	return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

/* Only what is set is looked at: an unset part costs the start nothing. */
static const char *check_auth(char *err, size_t errlen)
{
	const struct ig_auth_settings_values *v = &ig_auth_settings_values;
	if (!v->jwks_file[0] && !v->jwks_url[0] && !v->oidc_discovery_url[0])
		return NULL;
	if (v->jwks_file[0] && (v->jwks_url[0] || v->oidc_discovery_url[0]))
		return "INGOT_JWKS_FILE and INGOT_JWKS_URL or INGOT_OIDC_DISCOVERY_URL: set one source of keys, not both";
	if (v->jwks_url[0] && v->oidc_discovery_url[0])
		return "INGOT_JWKS_URL and INGOT_OIDC_DISCOVERY_URL: set one, not both";
	if (v->jwks_url[0] && !http_url(v->jwks_url))
		return "INGOT_JWKS_URL: not an http:// or https:// URL";
	if (v->oidc_discovery_url[0] && !http_url(v->oidc_discovery_url))
		return "INGOT_OIDC_DISCOVERY_URL: not an http:// or https:// URL";
	if (!v->jwks_file[0])
		return NULL;
	char why[160];
	const char *e = ig_jwks_load_file(v->jwks_file, why, sizeof why);
	if (!e)
		return NULL;
	snprintf(err, errlen, "INGOT_JWKS_FILE: %s", e);
	return err;
}

const struct ig_settings ig_auth_settings = {
	.part = "authentication (bearer JWT)", .opts = auth_rows, .count = sizeof auth_rows / sizeof auth_rows[0],
	.check = check_auth, .values = &ig_auth_settings_values, .defaults = &auth_defaults,
	.size = sizeof ig_auth_settings_values,
};
