/* The rows of the settings table for JWT bearer tokens, and the live key
 * set from INGOT_JWKS_FILE: read by the check at the start, read again by
 * ig_jwks_file_refresh when the file changed. Replacing the set never
 * blocks a core: the new one is built aside and published with one atomic
 * store; the one before the previous is freed (a verify holds a set for
 * microseconds, and refreshes come at least a second apart). SIGHUP's
 * handler (net/server/reload.c, on core 0) reads the file again through
 * ig_jwks_sighup; a change between signals is seen by whoever calls
 * ig_jwks_file_refresh (the door's owner: a core-0 timer). */
#include "net/auth/settings.h"
#include "ingot/log.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/file.h"
#include "kernel/runtime/pool.h"

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
	.jwks_file = "", .issuer = "", .audience = "", .leeway_s = 60, .failures_per_min = 100,
};

struct ig_auth_settings_values ig_auth_settings_values;

static const struct ig_option auth_rows[] = {
	{ "INGOT_JWKS_FILE", IG_OPT_STR, &ig_auth_settings_values.jwks_file, 0, 0,
	  "JWKS file (a secret: may hold oct HMAC keys) that bearer JWTs are verified with; read again when it changes" },
	{ "INGOT_JWT_ISSUER", IG_OPT_STR, &ig_auth_settings_values.issuer, 0, 0,
	  "the iss a JWT must have; not set: not checked" },
	{ "INGOT_JWT_AUDIENCE", IG_OPT_STR, &ig_auth_settings_values.audience, 0, 0,
	  "an aud a JWT must have (aud a string or an array); not set: not checked" },
	{ "INGOT_JWT_LEEWAY_S", IG_OPT_INT, &ig_auth_settings_values.leeway_s, 0, 3600,
	  "seconds of clock skew allowed for a JWT's exp and nbf" },
	{ "INGOT_AUTH_FAILURES_PER_MIN", IG_OPT_INT, &ig_auth_settings_values.failures_per_min, 0, 1000000,
	  "failed authentication attempts a client address may make in a minute before 429; 0: no limit" },
};

static struct ig_jwks *_Atomic current;
/* Sets published before current, oldest first: freed two loads later. */
static struct ig_jwks *retired[2];
static uint64_t generation;
/* What the last read saw, and when the file was last looked at. */
static struct stat last_stat;
static int64_t last_check = INT64_MIN;

const struct ig_jwks *ig_jwks_current(void)
{
	return atomic_load_explicit(&current, memory_order_acquire);
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
	struct ig_jwks *set = calloc(1, sizeof *set);
	void *scratch = malloc(SCRATCH_BLOCK * SCRATCH_BLOCKS);
	const char *why = "out of memory reading the JWKS";
	if (set && scratch) {
		struct ig_pool blocks;
		ig_arena arena;
		ig_pool_init(&blocks, SCRATCH_BLOCK, SCRATCH_BLOCKS, SCRATCH_BLOCKS);
		ig_pool_seed(&blocks, scratch, SCRATCH_BLOCKS);
		ig_arena_init(&arena, &blocks, SCRATCH_BLOCK * (SCRATCH_BLOCKS - 1));
		why = ig_jwks_parse(text, len, &arena, set);
		ig_arena_reset(&arena);
	}
	free(scratch);
	free(text);
	if (why) {
		free(set);
		return why;
	}
	set->generation = ++generation;
	free(retired[0]);
	retired[0] = retired[1];
	retired[1] = atomic_exchange_explicit(&current, set, memory_order_acq_rel);
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
	*out = (struct ig_jwt_policy){
		.issuer = { v->issuer, v->issuer ? strlen(v->issuer) : 0 },
		.audience = { v->audience, v->audience ? strlen(v->audience) : 0 },
		.leeway_s = v->leeway_s,
		.max_len = IG_JWT_MAX_LEN,
	};
}

static const char *check_auth(char *err, size_t errlen)
{
	if (!ig_auth_settings_values.jwks_file[0])
		return NULL;
	char why[160];
	const char *e = ig_jwks_load_file(ig_auth_settings_values.jwks_file, why, sizeof why);
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
