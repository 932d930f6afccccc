/* The door's check (security.h): for each alternative of an operation's
 * security, each scheme's credentials are found in the request, judged
 * (a JWT by net/auth through this core's token cache, an API key or basic
 * pair by the app's ig_auth_handler, a client certificate by the TLS
 * handshake before any request) and their scopes compared; the first
 * alternative that passes admits the request, else the answer is built
 * here. It runs before the decoder: a caller without credentials learns
 * nothing about the operation's parameters, and pays no decoding. A
 * stream that declares it takes its bearer token from the query's
 * access_token too (RFC 6750 2.3): a browser's EventSource and WebSocket
 * cannot send Authorization. */
#include "security.h"
#include "params.h"
#include "auth_metrics.h"
#include "net/auth/settings.h"
#include "rate_limit.h"
#include "rate_table.h"
#include "net/http/exchange.h"
#include "kernel/runtime/base64.h"
#include "kernel/runtime/loop.h"
#include "ingot/api_hooks.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <time.h>

/* ---- the principal's accessors (ingot/auth.h) ---- */

bool ig_secret_eq(ig_str a, ig_str b)
{
	/* Every byte of the longer is read whatever differs; the length
	   difference is folded in rather than returned early. */
	size_t n = a.len > b.len ? a.len : b.len;
	unsigned diff = (unsigned)(a.len != b.len);
	for (size_t i = 0; i < n; i++) {
		unsigned char x = i < a.len ? (unsigned char)a.ptr[i] : 0;
		unsigned char y = i < b.len ? (unsigned char)b.ptr[i] : 0;
		diff |= (unsigned)(x ^ y);
	}
	return diff == 0;
}

bool ig_principal_has_scope(const struct ig_principal *p, const char *scope, size_t len)
{
	for (size_t i = 0; i < p->nscopes; i++)
		if (ig_str_eq(p->scopes[i], scope, len))
			return true;
	return false;
}

bool ig_principal_claim(ig_ctx *ctx, const char *name, ig_str *out)
{
	const struct ig_principal *p = ig_principal(ctx);
	if (!p || !p->token)
		return false;
	return ig_jwt_claim_str(p->token, name, out);
}

const ig_json_value *ig_principal_claim_value(const ig_ctx *ctx, const char *name)
{
	const struct ig_principal *p = ig_principal(ctx);
	if (!p || !p->token)
		return NULL;
	const struct ig_jwt *t = p->token;
	return ig_json_get(t->claims, name, strlen(name));
}

/* ---- this core's state: the token cache ---- */

struct door_core {
	struct ig_token_cache cache;
	struct door_core *all_next;
};

static struct ig_loop_slot door_slot;
/* Every core's, for the process's life: reachable for a leak checker
 * after their thread is gone (as net/http/wait.c's cores). */
static _Atomic(struct door_core *) all_door_cores;

/* Made on the first bearer token a core sees: an open-only service never
 * touches its pages. NULL when memory is short (tokens are then verified
 * without a cache). */
static struct door_core *door_core(ig_ctx *ctx)
{
	struct ig_loop *loop = ig_ctx_loop(ctx);
	struct door_core *d = ig_loop_slot_get(loop, &door_slot);
	if (d)
		return d;
	void **slot = ig_loop_slot(loop, &door_slot);
	if (!slot || !(d = calloc(1, sizeof *d)))
		return NULL;
	ig_token_cache_init(&d->cache);
	d->all_next = atomic_load(&all_door_cores);
	while (!atomic_compare_exchange_weak(&all_door_cores, &d->all_next, d))
		;
	*slot = d;
	return d;
}

/* ---- failed attempts: a GCRA bucket per client address ---- */

/* In the rate limits' shared table (rate_table.h), so that the limit holds
 * across cores: INGOT_AUTH_FAILURES_PER_MIN failures may come at once,
 * then one each minute / limit. A limit's id is its index in the document,
 * so this one's (the highest) is never a limit's. */
#define FAILURES_ID UINT32_MAX

struct failures {
	uint64_t hash; /* 0: no limit, or the address is not known */
	uint64_t now_us, interval_us;
	uint32_t burst;
};

static void failures_find(ig_ctx *ctx, struct failures *f)
{
	int64_t limit = ig_auth_settings_values.failures_per_min;
	uint8_t client[16];
	*f = (struct failures){ 0 };
	if (!limit || !ig_rate_client(ctx, client))
		return;
	f->hash = ig_rate_hash(FAILURES_ID, client, sizeof client);
	f->now_us = ig_http_start_us(ctx);
	f->interval_us = 60000000u / (uint64_t)limit;
	f->burst = (uint32_t)limit;
}

/* Whether the client has spent its failures: the whole seconds until one
 * more would be counted, or 0 when it may try. Spends nothing, and claims
 * no bucket for a client that never failed. */
static uint64_t failures_wait_s(const struct failures *f)
{
	_Atomic uint64_t *bucket = f->hash ? ig_rate_bucket_find(f->hash) : NULL;
	struct ig_gcra_verdict v;
	if (!bucket)
		return 0;
	ig_gcra_peek(bucket, f->now_us, f->interval_us, f->burst, &v);
	return v.allowed ? 0 : (v.wait_us + 999999) / 1000000;
}

/* One more failure. Refused (another core's failures came first) it is
 * not counted: the check above let it through. */
static void failures_add(const struct failures *f)
{
	struct ig_gcra_verdict v;
	if (f->hash)
		ig_gcra_take(ig_rate_bucket(f->hash), f->now_us, f->interval_us, f->burst, &v);
}

/* ---- credentials ---- */

/* What one scheme's check found. */
enum use_result {
	USE_PASS,
	USE_ABSENT,  /* nothing was sent for it */
	USE_INVALID, /* sent and refused */
	USE_SCOPE,   /* valid, but a required scope is missing */
};

/* The value of name in list, pairs "name=value" separated by sep (the
 * query's '&', the Cookie field's ';' with spaces after it), raw (not
 * %-decoded), or {NULL, 0}. */
static ig_str pair_value(ig_str list, char sep, const char *name)
{
	size_t n = strlen(name);
	const char *p = list.ptr, *end = list.ptr + list.len;
	while (p && p < end) {
		while (p < end && *p == ' ')
			p++;
		const char *next = memchr(p, sep, (size_t)(end - p));
		const char *stop = next ? next : end;
		if ((size_t)(stop - p) > n && p[n] == '=' && memcmp(p, name, n) == 0)
			return (ig_str){ p + n + 1, (size_t)(stop - p - n - 1) };
		p = next ? next + 1 : NULL;
	}
	return (ig_str){ NULL, 0 };
}

/* The credentials after "<scheme> " in Authorization (the scheme's name
 * compared without case), or {NULL, 0}. */
static ig_str authorization(ig_ctx *ctx, const char *scheme, size_t n)
{
	ig_str a = ig_req_header(ctx, "Authorization");
	if (a.len <= n || a.ptr[n] != ' ' || strncasecmp(a.ptr, scheme, n) != 0)
		return (ig_str){ NULL, 0 };
	size_t i = n;
	while (i < a.len && a.ptr[i] == ' ')
		i++;
	return (ig_str){ a.ptr + i, a.len - i };
}

/* sec->query_token's: the query's access_token, %-decoded into the arena,
 * into *tok ({NULL, 0}: none, or empty). False when RFC 6750 3.1 calls the
 * request invalid_request: the token sent two ways (a Bearer Authorization
 * as well), or the parameter twice. A value that does not decode is kept
 * raw: the verifier refuses it as any malformed token. */
static bool query_token(ig_ctx *ctx, ig_str *tok)
{
	*tok = (ig_str){ NULL, 0 };
	ig_str query = ig_req(ctx)->query, name, raw, found = { NULL, 0 };
	unsigned n = 0;
	ig_query q;
	ig_query_init(&q, query);
	while (ig_query_next(&q, &name, &raw))
		if (ig_query_name_is(name, "access_token", 12)) {
			found = raw;
			n++;
		}
	if (!n)
		return true;
	if (n > 1 || authorization(ctx, "Bearer", 6).ptr)
		return false;
	if (found.len && ig_param_string(ctx, found, IG_IN_QUERY, tok) != IG_PARAM_OK)
		*tok = found;
	return true;
}

static bool scopes_held(const struct ig_sec_use *u, const struct ig_principal *p)
{
	for (size_t i = 0; i < u->nscopes; i++)
		if (!ig_principal_has_scope(p, u->scopes[i], strlen(u->scopes[i])))
			return false;
	return true;
}

#define MAX_SCOPES 32

/* INGOT_JWKS_FILE looked at again (a stat at most once a second) by core
 * 0's bearer requests: the thread its SIGHUP reload runs on, as
 * ig_jwks_file_refresh asks. The other cores see a new set once core 0
 * has served a token after the change. */
static void refresh_keys(int64_t now)
{
	const char *why = ig_jwks_file_refresh(now);
	struct ig_logline l;
	if (why && ig_log_begin(&l, IG_LOG_ERROR, "JWKS reload failed: the old keys stay")) {
		ig_log_cstr(&l, "error", why);
		ig_log_end(&l);
	}
}

/* qtok: the query's token (query_token), which then is the only one. */
static enum use_result check_bearer(ig_ctx *ctx, const struct ig_sec_use *u, struct ig_principal *p, ig_str qtok)
{
	ig_str tok = qtok.len ? qtok : authorization(ctx, "Bearer", 6);
	if (!tok.len)
		return USE_ABSENT;
	struct ig_jwt *jwt = ig_alloc(ctx, sizeof *jwt);
	ig_str *scopes = ig_alloc(ctx, MAX_SCOPES * sizeof *scopes);
	if (!jwt || !scopes)
		return USE_INVALID;
	int64_t now = (int64_t)time(NULL);
	if (ig_core_index(ctx) == 0)
		refresh_keys(now);
	/* The keys first: discovery's issuer is set before the first fetched
	   set is published, so the policy read after sees it. */
	const struct ig_jwks *keys = ig_jwks_current();
	struct ig_jwt_policy policy;
	ig_auth_policy(&policy);
	struct door_core *d = door_core(ctx);
	struct ig_token_cache *cache = d ? &d->cache : NULL;
	enum ig_jwt_error e = cache ? ig_jwt_verify_cached(cache, tok.ptr, tok.len, keys, &policy, now,
							   ig_ctx_arena(ctx), jwt)
				    : ig_jwt_verify(tok.ptr, tok.len, keys, &policy, now, ig_ctx_arena(ctx), jwt);
	if (e != IG_JWT_OK) {
		/* Fetched keys may have rotated: their source refetches (at most
		   once a minute); this request is refused all the same. */
		if (e == IG_JWT_UNKNOWN_KID && ig_jwks_unknown_kid_hook)
			ig_jwks_unknown_kid_hook(ctx);
		ig_auth_count_failure(IG_SEC_BEARER, (unsigned)e);
		return USE_INVALID;
	}
	void *data = NULL;
	/* x-ingot-principal: the payload's text read again by the schema's
	   decoder (the tree above is a generic one). */
	if (u->scheme->claims && !(data = u->scheme->claims(ctx, jwt->payload.ptr, jwt->payload.len))) {
		ig_auth_count_failure(IG_SEC_BEARER, IG_AUTH_BAD_CLAIMS);
		return USE_INVALID;
	}
	size_t n = ig_jwt_scopes(jwt, scopes, MAX_SCOPES);
	*p = (struct ig_principal){ .subject = jwt->sub, .scopes = scopes, .nscopes = n < MAX_SCOPES ? n : MAX_SCOPES,
				    .scheme = u->scheme->name, .data = data, .token = jwt };
	return USE_PASS;
}

static enum use_result check_handler(ig_ctx *ctx, const struct ig_sec_use *u, struct ig_principal *p)
{
	const struct ig_sec_scheme *s = u->scheme;
	struct ig_credentials cred = { .scheme = s->name };
	if (s->type == IG_SEC_BASIC) {
		ig_str b = authorization(ctx, "Basic", 5);
		if (!b.len)
			return USE_ABSENT;
		cred.kind = IG_CRED_BASIC;
		uint8_t *plain = ig_alloc(ctx, b.len);
		long n = plain ? ig_base64_decode(b.ptr, b.len, plain, b.len) : -1;
		const char *colon = n > 0 ? memchr(plain, ':', (size_t)n) : NULL;
		if (!colon) {
			ig_auth_count_failure(s->type, IG_AUTH_MALFORMED);
			return USE_INVALID;
		}
		cred.user = (ig_str){ (const char *)plain, (size_t)(colon - (const char *)plain) };
		cred.password = (ig_str){ colon + 1, (size_t)((const char *)plain + n - colon - 1) };
	} else {
		cred.kind = IG_CRED_API_KEY;
		cred.key = s->in == IG_SEC_IN_HEADER ? ig_req_header(ctx, s->param)
			   : s->in == IG_SEC_IN_QUERY ? pair_value(ig_req(ctx)->query, '&', s->param)
						       : pair_value(ig_req_header(ctx, "Cookie"), ';', s->param);
		if (!cred.key.len)
			return USE_ABSENT;
	}
	*p = (struct ig_principal){ 0 };
	if (s->handler(ctx, &cred, p) != IG_AUTH_OK) {
		ig_auth_count_failure(s->type, IG_AUTH_REFUSED_BY_APP);
		return USE_INVALID;
	}
	p->scheme = s->name;
	return USE_PASS;
}

/* The handshake verified the chain (net/tls): a certificate that did not
 * verify never got this far, so here it is there or absent. The subject
 * is copied: the connection may go while the handler runs. */
static enum use_result check_mutual_tls(ig_ctx *ctx, const struct ig_sec_use *u, struct ig_principal *p)
{
	const char *subject = ig_http_peer_subject(ctx);
	if (!subject)
		return USE_ABSENT;
	size_t n = strlen(subject);
	char *copy = ig_alloc(ctx, n + 1);
	if (!copy)
		return USE_INVALID;
	memcpy(copy, subject, n + 1);
	*p = (struct ig_principal){ .subject = { copy, n }, .scheme = u->scheme->name };
	return USE_PASS;
}

static enum use_result check_use(ig_ctx *ctx, const struct ig_sec_use *u, struct ig_principal *p, ig_str qtok)
{
	enum ig_sec_type t = u->scheme->type;
	enum use_result r = t == IG_SEC_BEARER ? check_bearer(ctx, u, p, qtok)
			    : t == IG_SEC_MUTUAL_TLS ? check_mutual_tls(ctx, u, p)
						     : check_handler(ctx, u, p);
	if (r == USE_PASS && !scopes_held(u, p))
		r = USE_SCOPE;
	return r;
}

/* ---- the answers ---- */

/* 403: the scopes of the alternative that lacked only scopes, in RFC
 * 6750's form whatever its schemes (an apiKey's scopes are the auth
 * handler's; no other registered challenge carries a scope). */
static void answer_scope(ig_ctx *ctx, const struct ig_sec_alt *alt)
{
	ig_wbuf w = { .arena = ig_ctx_arena(ctx) };
	ig_wbuf_lit(&w, "Bearer error=\"insufficient_scope\", scope=\"");
	bool first = true;
	for (size_t i = 0; i < alt->nuses; i++)
		for (size_t k = 0; k < alt->uses[i].nscopes; k++) {
			if (!first)
				ig_wbuf_lit(&w, " ");
			ig_wbuf_put(&w, alt->uses[i].scopes[k], strlen(alt->uses[i].scopes[k]));
			first = false;
		}
	ig_wbuf_lit(&w, "\"");
	ig_add_header(ctx, "WWW-Authenticate", (ig_str){ w.ptr, w.len });
	ig_respond_problem(ctx, 403, "insufficient_scope");
}

/* 401: a challenge per kind of scheme the operation takes. */
static void answer_unauthorized(ig_ctx *ctx, const struct ig_security *sec, bool token_refused)
{
	bool bearer = false, basic = false, key = false;
	for (size_t a = 0; a < sec->nalts; a++)
		for (size_t i = 0; i < sec->alts[a].nuses; i++) {
			const struct ig_sec_scheme *s = sec->alts[a].uses[i].scheme;
			bearer |= s->type == IG_SEC_BEARER;
			basic |= s->type == IG_SEC_BASIC;
			key |= s->type == IG_SEC_API_KEY;
		}
	if (bearer)
		ig_add_header(ctx, "WWW-Authenticate",
			      token_refused ? IG_STR("Bearer error=\"invalid_token\"") : IG_STR("Bearer"));
	if (basic)
		ig_add_header(ctx, "WWW-Authenticate", IG_STR("Basic realm=\"api\", charset=\"UTF-8\""));
	/* No registered scheme says so for an API key or a client
	   certificate (a 401 must carry a challenge, RFC 9110). */
	if (!bearer && !basic)
		ig_add_header(ctx, "WWW-Authenticate", key ? IG_STR("ApiKey realm=\"api\"") : IG_STR("MutualTLS realm=\"api\""));
	ig_respond_problem(ctx, 401, token_refused ? "invalid_token" : "authentication required");
}

bool ig_security_check(ig_ctx *ctx, const struct ig_security *sec)
{
	struct failures fails;
	failures_find(ctx, &fails);
	uint64_t wait = failures_wait_s(&fails);
	if (wait) {
		ig_auth_count_failure(sec->alts[0].uses[0].scheme->type, IG_AUTH_RATE_LIMITED);
		char buf[24];
		int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)wait);
		ig_add_header(ctx, "Retry-After", (ig_str){ buf, (size_t)n });
		ig_respond_problem(ctx, 429, "too many failed authentication attempts");
		return false;
	}
	ig_str qtok = { NULL, 0 };
	if (sec->query_token && !query_token(ctx, &qtok)) {
		ig_auth_count_failure(IG_SEC_BEARER, IG_AUTH_INVALID_REQUEST);
		ig_add_header(ctx, "WWW-Authenticate", IG_STR("Bearer error=\"invalid_request\""));
		ig_respond_problem(ctx, 400, "invalid_request");
		return false;
	}
	const struct ig_sec_alt *scope_alt = NULL;
	bool token_refused = false, refused = false;
	for (size_t a = 0; a < sec->nalts; a++) {
		const struct ig_sec_alt *alt = &sec->alts[a];
		struct ig_principal first = { 0 };
		bool pass = true, scope_only = true;
		for (size_t i = 0; i < alt->nuses; i++) {
			struct ig_principal p;
			enum use_result r = check_use(ctx, &alt->uses[i], &p, qtok);
			if (r == USE_INVALID) {
				refused = true;
				token_refused |= alt->uses[i].scheme->type == IG_SEC_BEARER;
			}
			if (r != USE_PASS) {
				pass = false;
				scope_only &= r == USE_SCOPE;
				if (r != USE_SCOPE)
					break;
			} else if (!first.scheme) { /* the first scheme that passed speaks */
				first = p;
			}
		}
		if (pass) {
			if (first.scheme) {
				struct ig_principal *keep = ig_alloc(ctx, sizeof *keep);
				if (!keep) {
					ig_respond_problem(ctx, 500, "out of request memory");
					return false;
				}
				*keep = first;
				ig_set_principal(ctx, keep);
			}
			return true;
		}
		if (scope_only && !scope_alt)
			scope_alt = alt;
	}
	if (scope_alt) {
		ig_auth_count_failure(scope_alt->uses[0].scheme->type, IG_AUTH_INSUFFICIENT_SCOPE);
		answer_scope(ctx, scope_alt);
		return false;
	}
	if (refused)
		failures_add(&fails);
	if (!refused)
		ig_auth_count_failure(sec->alts[0].nuses ? sec->alts[0].uses[0].scheme->type : IG_SEC_BEARER,
				      IG_AUTH_MISSING);
	answer_unauthorized(ctx, sec, token_refused);
	return false;
}

/* A bearer JWT that the door would take for a scheme without scopes, for
 * the runtime's own endpoints (push delivery: the start sets it as
 * ig_pubsub_push_config.jwt where the document has a bearer scheme). */
static const struct ig_sec_scheme runtime_bearer = { .name = "runtime", .type = IG_SEC_BEARER };
static const struct ig_sec_use runtime_use = { .scheme = &runtime_bearer };
static const struct ig_sec_alt runtime_alt = { .uses = &runtime_use, .nuses = 1 };
static const struct ig_security runtime_security = { .check = ig_security_check, .alts = &runtime_alt, .nalts = 1 };

bool ig_security_bearer(ig_ctx *ctx)
{
	return ig_security_check(ctx, &runtime_security);
}
