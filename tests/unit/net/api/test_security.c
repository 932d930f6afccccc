/* Unit tests of net/api/security.c, the door, over hand-written tables of
 * the shape schemac emits: apiKey in a header, query and cookie, http
 * basic, the auth handler's answers and scopes, alternatives (any) and
 * requirement objects (all), 401 and 403 with their challenges, mutualTLS
 * (the connection's verified certificate, or none), a bearer
 * token with no key set, an unknown kid told to the keys' fetcher (its
 * upcall), a verified token's claims by name and through a typed
 * principal's decoder (x-ingot-principal), a stream's token in the query's
 * access_token (x-ingot-access-token-query), the limit on failed attempts
 * per address, and ig_secret_eq. The exchange (net/http) is a stand-in that records what
 * the door asked of it; JWT verification is net/auth's own. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/api/rate_limit.h"
#include "net/api/security.h"
#include "net/http/client_addr.h"
#include "net/auth/settings.h"
#include "net/metrics/metrics.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ig_pool blocks;
static struct ig_loop loop;

/* ---- the exchange, recorded ---- */

struct ig_ctx {
	ig_arena arena;
	ig_request req;
	ig_header fields[4];
	const char *peer;
	const char *cert_subject; /* the TLS handshake's verified client certificate */
	int status;
	const char *problem;
	char challenge[3][128];
	int nchallenges;
	char retry_after[8];
	const struct ig_principal *principal;
};

static void ctx_start(ig_ctx *c, const char *peer)
{
	memset(c, 0, sizeof *c);
	ig_arena_init(&c->arena, &blocks, 1 << 20);
	c->req.method = IG_STR("GET");
	c->req.headers = c->fields;
	c->peer = peer;
}

static void add_field(ig_ctx *c, const char *name, const char *value)
{
	c->fields[c->req.num_headers++] = (ig_header){ { name, strlen(name) }, { value, strlen(value) } };
}

void *ig_alloc(ig_ctx *c, size_t size) { return ig_arena_alloc(&c->arena, size); }
ig_arena *ig_ctx_arena(ig_ctx *c) { return &c->arena; }
const ig_request *ig_req(const ig_ctx *c) { return &c->req; }
struct ig_loop *ig_ctx_loop(ig_ctx *c) { (void)c; return &loop; }
const struct ig_principal *ig_principal(const ig_ctx *c) { return c->principal; }
void ig_set_principal(ig_ctx *c, const struct ig_principal *p) { c->principal = p; }

ig_str ig_req_header(const ig_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->req.num_headers; i++)
		if (c->fields[i].name.len == strlen(name) && strncasecmp(c->fields[i].name.ptr, name, strlen(name)) == 0)
			return c->fields[i].value;
	return (ig_str){ NULL, 0 };
}

/* The loop's clock, which the failures' buckets (net/api/rate_table.h)
 * count in. */
static uint64_t now_us = 1000000;
uint64_t ig_http_start_us(const ig_ctx *c)
{
	(void)c;
	return now_us;
}
void ig_count_rate_limited(ig_ctx *c) { (void)c; }

bool ig_http_peer_addr(const ig_ctx *c, uint8_t out[16])
{
	return c->peer && ig_addr_parse((ig_str){ c->peer, strlen(c->peer) }, out);
}

const char *ig_http_peer_subject(const ig_ctx *c)
{
	return c->cert_subject;
}

void ig_add_header(ig_ctx *c, const char *name, ig_str value)
{
	if (strcmp(name, "WWW-Authenticate") == 0 && c->nchallenges < 3)
		snprintf(c->challenge[c->nchallenges++], sizeof c->challenge[0], "%.*s", (int)value.len, value.ptr);
	else if (strcmp(name, "Retry-After") == 0)
		snprintf(c->retry_after, sizeof c->retry_after, "%.*s", (int)value.len, value.ptr);
}

/* net/api/params.c's body errors (the door reads no body). */
void ig_error_add(ig_ctx *c, const char *in, const char *name_or_pointer, const char *keyword, const char *message)
{
	(void)c, (void)in, (void)name_or_pointer, (void)keyword, (void)message;
	abort();
}

void ig_respond_problem(ig_ctx *c, int status, const char *detail)
{
	c->status = status;
	c->problem = detail;
}

/* The runtime's per-core slots, one part here. */
void **ig_loop_slot(struct ig_loop *l, struct ig_loop_slot *key)
{
	atomic_store(&key->index, 1);
	return &l->slots[0];
}

/* net/auth's settings: no key set (every token IG_JWT_NO_KEYS). */
struct ig_auth_settings_values ig_auth_settings_values = { .jwks_file = "", .issuer = "", .audience = "",
							   .leeway_s = 60, .failures_per_min = 100 };
static const struct ig_jwks *test_keys;
const struct ig_jwks *ig_jwks_current(void) { return test_keys; }
/* The fetcher's upcall (net/api/jwks_remote.c sets it when keys are
   fetched): counted. */
static int unknown_kids;
static void count_unknown_kid(struct ig_ctx *ctx) { (void)ctx; unknown_kids++; }
void (*ig_jwks_unknown_kid_hook)(struct ig_ctx *ctx);
static int refreshes;
const char *ig_jwks_file_refresh(int64_t now_s) { (void)now_s; refreshes++; return NULL; }
uint32_t ig_core_index(const ig_ctx *c) { (void)c; return 0; }
void ig_auth_policy(struct ig_jwt_policy *out) { *out = (struct ig_jwt_policy){ .leeway_s = 60 }; }
void ig_expo_family(struct ig_expo *e, const char *name, const char *type, const char *help)
{
	(void)e, (void)name, (void)type, (void)help;
}
void ig_expo_sample(struct ig_expo *e, const char *name, const struct ig_label *labels, size_t nlabels, double value)
{
	(void)e, (void)name, (void)labels, (void)nlabels, (void)value;
}

/* ---- the app's auth handler ---- */

static int handler_calls;
static struct ig_credentials last;

enum ig_auth_result ig_auth_handler(ig_ctx *ctx, const struct ig_credentials *cred, struct ig_principal *out)
{
	(void)ctx;
	handler_calls++;
	last = *cred;
	static const ig_str admin_scopes[] = { { "admin", 5 } };
	if (cred->kind == IG_CRED_API_KEY && ig_secret_eq(cred->key, IG_STR("k-123"))) {
		out->subject = IG_STR("key-user");
		return IG_AUTH_OK;
	}
	if (cred->kind == IG_CRED_API_KEY && ig_secret_eq(cred->key, IG_STR("k-admin"))) {
		out->subject = IG_STR("key-admin");
		out->scopes = admin_scopes;
		out->nscopes = 1;
		return IG_AUTH_OK;
	}
	if (cred->kind == IG_CRED_BASIC && ig_secret_eq(cred->user, IG_STR("ann")) &&
	    ig_secret_eq(cred->password, IG_STR("pa:ss")))
	{
		out->subject = IG_STR("ann");
		return IG_AUTH_OK;
	}
	return IG_AUTH_REFUSED;
}

/* ---- the tables, as schemac writes them ---- */

static const struct ig_sec_scheme hdr = { "hdr", IG_SEC_API_KEY, IG_SEC_IN_HEADER, "X-Key", ig_auth_handler, NULL };
static const struct ig_sec_scheme qry = { "qry", IG_SEC_API_KEY, IG_SEC_IN_QUERY, "key", ig_auth_handler, NULL };
static const struct ig_sec_scheme cki = { "cki", IG_SEC_API_KEY, IG_SEC_IN_COOKIE, "sid", ig_auth_handler, NULL };
static const struct ig_sec_scheme basic = { "basic", IG_SEC_BASIC, IG_SEC_IN_HEADER, NULL, ig_auth_handler, NULL };
static const struct ig_sec_scheme jwt = { "jwt", IG_SEC_BEARER, IG_SEC_IN_HEADER, NULL, NULL, NULL };

static const char *const admin[] = { "admin" };
/* [{hdr}, {qry}, {cki}, {basic}] */
static const struct ig_sec_use u_hdr[] = { { &hdr, NULL, 0 } }, u_qry[] = { { &qry, NULL, 0 } },
			       u_cki[] = { { &cki, NULL, 0 } }, u_basic[] = { { &basic, NULL, 0 } };
static const struct ig_sec_alt any_alts[] = { { u_hdr, 1 }, { u_qry, 1 }, { u_cki, 1 }, { u_basic, 1 } };
static const struct ig_security any = { ig_security_check, any_alts, 4, false };
/* [{hdr: [admin]}, {jwt: [admin]}] */
static const struct ig_sec_use u_hdr_admin[] = { { &hdr, admin, 1 } }, u_jwt_admin[] = { { &jwt, admin, 1 } };
static const struct ig_sec_alt scoped_alts[] = { { u_hdr_admin, 1 }, { u_jwt_admin, 1 } };
static const struct ig_security scoped = { ig_security_check, scoped_alts, 2, false };
/* [{hdr, basic}]: both */
static const struct ig_sec_use u_both[] = { { &hdr, NULL, 0 }, { &basic, NULL, 0 } };
static const struct ig_sec_alt both_alts[] = { { u_both, 2 } };
static const struct ig_security both = { ig_security_check, both_alts, 1, false };

/* [{cert}] and [{cert}, {hdr}] */
static const struct ig_sec_scheme cert = { "cert", IG_SEC_MUTUAL_TLS, IG_SEC_IN_HEADER, NULL, NULL, NULL };
static const struct ig_sec_use u_cert[] = { { &cert, NULL, 0 } };
static const struct ig_sec_alt cert_alts[] = { { u_cert, 1 }, { u_hdr, 1 } };
static const struct ig_security cert_only = { ig_security_check, cert_alts, 1, false };
static const struct ig_security cert_or_key = { ig_security_check, cert_alts, 2, false };

static bool run(ig_ctx *c, const struct ig_security *sec)
{
	return sec->check(c, sec);
}

/* x-ingot-principal's decoder as schemac writes it, for a schema
 * {email: string, required}: here over the parsed tree. */
struct user {
	ig_str email;
};
static int decodes;
static void *decode_user(ig_ctx *ctx, const char *json, size_t len)
{
	decodes++;
	ig_json_reader r;
	ig_jr_init(&r, json, len, &ctx->arena, 8);
	const ig_json_value *v = ig_jr_value(&r), *email = v ? ig_json_get(v, "email", 5) : NULL;
	struct user *u = ig_alloc(ctx, sizeof *u);
	if (!u || !email || email->type != IG_JSON_STRING)
		return NULL;
	u->email = email->s;
	return u;
}
static const struct ig_sec_scheme typed_jwt = { "typed", IG_SEC_BEARER, IG_SEC_IN_HEADER, NULL, NULL, decode_user };
static const struct ig_sec_use u_typed[] = { { &typed_jwt, NULL, 0 } }, u_jwt[] = { { &jwt, NULL, 0 } };
static const struct ig_sec_alt typed_alts[] = { { u_typed, 1 } }, jwt_alts[] = { { u_jwt, 1 } };
static const struct ig_security typed = { ig_security_check, typed_alts, 1, false }, plain_jwt = { ig_security_check, jwt_alts, 1, false };

/* HS256 with kid k1 under the key "0123456789abcdef0123456789abcdef" (no
 * exp: never cached, so each request verifies). */
#define TOKEN_ANN                                                                                                      \
	"Bearer eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbm4iLCJlbWFpbCI6ImFubkBleGFtcGxlLmNvbSIsInNjb3BlIjoiYWRt" \
	"aW4iLCJuIjo3fQ.jh05jmDT8aZTqBLvnu79_V8FKTqZKEmRZsSsgMbbMBk"
/* {"sub":"bob","email":42}: signed, but its email breaks the schema. */
#define TOKEN_BOB_NUMBER                                                                                               \
	"Bearer eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJib2IiLCJlbWFpbCI6NDJ9.a0HEY3aVU8fCU8sQ9649vMUYYNJMtCqvLGtG" \
	"pBiugGQ"

static void test_claims(void)
{
	static struct ig_jwks keys = { .generation = 7, .count = 1,
				       .keys = { { .type = IG_JWK_OCT, .kid_len = 2, .kid = "k1", .len = 32,
						   .material = "0123456789abcdef0123456789abcdef" } } };
	test_keys = &keys;
	ig_ctx c;
	ig_str s;

	ctx_start(&c, "192.0.2.5");
	add_field(&c, "Authorization", TOKEN_ANN);
	CHECK(run(&c, &plain_jwt), "a signed token passes");
	CHECK(c.principal && ig_str_eq(c.principal->subject, "ann", 3), "its sub is the subject");
	CHECK(c.principal && !c.principal->data, "without x-ingot-principal no struct");
	CHECK(ig_principal_claim(&c, "email", &s) && ig_str_eq(s, "ann@example.com", 15), "a string claim by name");
	CHECK(!ig_principal_claim(&c, "n", &s), "a number is no string claim");
	const ig_json_value *n = ig_principal_claim_value(&c, "n");
	CHECK(n && n->type == IG_JSON_INT && n->i == 7, "but is a claim's value");
	CHECK(!ig_principal_claim_value(&c, "nope"), "an absent claim is NULL");

	ctx_start(&c, "192.0.2.5");
	add_field(&c, "Authorization", TOKEN_ANN);
	decodes = 0;
	CHECK(run(&c, &typed), "a token whose claims fit the principal's schema passes");
	const struct user *u = c.principal ? c.principal->data : NULL;
	CHECK(u && ig_str_eq(u->email, "ann@example.com", 15), "its claims decoded into the struct");
	CHECK_INT(decodes, 1, "once");

	ctx_start(&c, "192.0.2.5");
	add_field(&c, "Authorization", TOKEN_BOB_NUMBER);
	CHECK(run(&c, &plain_jwt), "a claim of another type passes where no schema is named");
	ctx_start(&c, "192.0.2.5");
	add_field(&c, "Authorization", TOKEN_BOB_NUMBER);
	CHECK(!run(&c, &typed), "but breaks the principal's schema: refused");
	CHECK_INT(c.status, 401, "401");
	CHECK(!c.principal, "with no principal");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer error=\"invalid_token\"") == 0, "invalid_token");

	ctx_start(&c, "192.0.2.5");
	add_field(&c, "X-Key", "k-123");
	CHECK(run(&c, &any) && !ig_principal_claim_value(&c, "sub"), "an API key's principal has no claims");
	ctx_start(&c, "192.0.2.5");
	CHECK(!ig_principal_claim_value(&c, "sub"), "nor has a request without a principal");
	test_keys = NULL;
}

static void test_api_keys(void)
{
	ig_ctx c;
	ctx_start(&c, "192.0.2.1");
	add_field(&c, "x-key", "k-123");
	CHECK(run(&c, &any), "apiKey in a header passes");
	CHECK(c.principal && ig_str_eq(c.principal->subject, "key-user", 8), "its principal is the handler's");
	CHECK(c.principal && strcmp(c.principal->scheme, "hdr") == 0, "named by its scheme");

	ctx_start(&c, "192.0.2.1");
	c.req.query = IG_STR("a=1&key=k-123&b=2");
	CHECK(run(&c, &any), "apiKey in the query passes");
	CHECK(ig_str_eq(last.key, "k-123", 5), "the query's value is handed over");

	ctx_start(&c, "192.0.2.1");
	c.req.query = IG_STR("keyx=k-123&xkey=k-123");
	CHECK(!run(&c, &any), "only the exact query name counts");
	CHECK_INT(c.status, 401, "no credential: 401");

	ctx_start(&c, "192.0.2.1");
	add_field(&c, "Cookie", "theme=dark; sid=k-123; x=y");
	CHECK(run(&c, &any), "apiKey in a cookie passes");

	ctx_start(&c, "192.0.2.1");
	add_field(&c, "X-Key", "k-wrong");
	handler_calls = 0;
	CHECK(!run(&c, &any), "a wrong key is refused");
	CHECK_INT(c.status, 401, "401");
	CHECK(c.principal == NULL, "no principal");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "Basic realm=\"api\", charset=\"UTF-8\"") == 0,
	      "the challenge of the basic scheme it could use");
	CHECK_INT(handler_calls, 1, "the handler is called only for credentials sent");
}

static void test_basic(void)
{
	ig_ctx c;
	ctx_start(&c, "192.0.2.2");
	add_field(&c, "Authorization", "Basic YW5uOnBhOnNz"); /* ann:pa:ss */
	CHECK(run(&c, &any), "basic passes");
	CHECK(ig_str_eq(last.user, "ann", 3) && ig_str_eq(last.password, "pa:ss", 5),
	      "user and password split at the first colon");

	ctx_start(&c, "192.0.2.2");
	add_field(&c, "Authorization", "Basic !!!");
	CHECK(!run(&c, &any), "basic that is not base64 is refused");
	CHECK_INT(c.status, 401, "401");

	ctx_start(&c, "192.0.2.2");
	add_field(&c, "Authorization", "Basic YW5u"); /* ann, no colon */
	CHECK(!run(&c, &any), "basic without a colon is refused");

	/* Both schemes of one requirement object must pass. */
	ctx_start(&c, "192.0.2.2");
	add_field(&c, "X-Key", "k-123");
	CHECK(!run(&c, &both), "a requirement object needs all its schemes");
	ctx_start(&c, "192.0.2.2");
	add_field(&c, "X-Key", "k-123");
	add_field(&c, "Authorization", "Basic YW5uOnBhOnNz");
	CHECK(run(&c, &both), "with both, it passes");
	CHECK(c.principal && ig_str_eq(c.principal->subject, "key-user", 8), "the first scheme's principal");
}

static void test_scopes(void)
{
	ig_ctx c;
	ctx_start(&c, "192.0.2.3");
	add_field(&c, "X-Key", "k-123");
	CHECK(!run(&c, &scoped), "a valid key without the scope is refused");
	CHECK_INT(c.status, 403, "403");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer error=\"insufficient_scope\", scope=\"admin\"") == 0,
	      "insufficient_scope names the scope");

	ctx_start(&c, "192.0.2.3");
	add_field(&c, "X-Key", "k-admin");
	CHECK(run(&c, &scoped), "the handler's scopes count");
	CHECK(c.principal && ig_principal_has_scope(c.principal, "admin", 5), "and reach the principal");

	/* No key set: every token is invalid_token. */
	ctx_start(&c, "192.0.2.3");
	add_field(&c, "Authorization", "Bearer a.b.c");
	CHECK(!run(&c, &scoped), "a token without keys is refused");
	CHECK_INT(c.status, 401, "401");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer error=\"invalid_token\"") == 0, "invalid_token");
	CHECK(refreshes > 0, "core 0's bearer request looks at the JWKS file");

	ctx_start(&c, "192.0.2.3");
	CHECK(!run(&c, &scoped), "nothing sent is refused");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer") == 0, "Bearer without an error attribute");

	/* Fetched keys: a kid no key has tells their source (which refetches);
	   the token is refused all the same. A known kid's bad signature,
	   or no hook (keys from a file), tells nothing. */
	static struct ig_jwks keys = { .generation = 1, .count = 1,
				       .keys = { { .type = IG_JWK_OCT, .kid_len = 2, .kid = "k1", .len = 32 } } };
	test_keys = &keys;
	ig_jwks_unknown_kid_hook = count_unknown_kid;
	ctx_start(&c, "192.0.2.3");
	add_field(&c, "Authorization", "Bearer eyJhbGciOiJIUzI1NiIsImtpZCI6ImsyIn0.eyJzdWIiOiJ4In0.AAAA");
	CHECK(!run(&c, &scoped) && c.status == 401, "an unknown kid is refused");
	CHECK_INT(unknown_kids, 1, "and its source is told");
	ctx_start(&c, "192.0.2.3");
	add_field(&c, "Authorization", "Bearer eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4In0.AAAA");
	CHECK(!run(&c, &scoped) && c.status == 401, "a known kid's bad signature is refused");
	CHECK_INT(unknown_kids, 1, "without a word to the source");
	ig_jwks_unknown_kid_hook = NULL;
	ctx_start(&c, "192.0.2.3");
	add_field(&c, "Authorization", "Bearer eyJhbGciOiJIUzI1NiIsImtpZCI6ImsyIn0.eyJzdWIiOiJ4In0.AAAA");
	CHECK(!run(&c, &scoped) && c.status == 401 && unknown_kids == 1, "no hook: refused, nothing told");
	test_keys = NULL;
}

static void test_limit(void)
{
	ig_auth_settings_values.failures_per_min = 3;
	ig_ctx c;
	int refused = 0;
	for (; refused < 7; refused++) {
		ctx_start(&c, "198.51.100.9");
		add_field(&c, "X-Key", "k-wrong");
		run(&c, &any);
		if (c.status == 429)
			break;
	}
	CHECK_INT(refused, 3, "the address is stopped after the limit's failures, all at once");
	CHECK(strcmp(c.retry_after, "20") == 0, "with Retry-After: until one more failure may count (a minute / 3)");
	ctx_start(&c, "198.51.100.9");
	add_field(&c, "X-Key", "k-123");
	handler_calls = 0;
	CHECK(!run(&c, &any) && c.status == 429, "then even good credentials wait");
	CHECK_INT(handler_calls, 0, "without a call to the handler");
	ctx_start(&c, "198.51.100.10");
	add_field(&c, "X-Key", "k-123");
	CHECK(run(&c, &any), "another address is not limited");
	ctx_start(&c, "198.51.100.11");
	for (int i = 0; i < 5; i++) {
		ctx_start(&c, "198.51.100.11");
		run(&c, &any);
	}
	CHECK_INT(c.status, 401, "sending nothing is not a failed attempt");
	now_us += 19999999;
	ctx_start(&c, "198.51.100.9");
	add_field(&c, "X-Key", "k-123");
	CHECK(!run(&c, &any) && c.status == 429 && strcmp(c.retry_after, "1") == 0,
	      "a microsecond before a minute / 3 has passed, still 429");
	now_us += 1;
	ctx_start(&c, "198.51.100.9");
	add_field(&c, "X-Key", "k-wrong");
	run(&c, &any);
	CHECK_INT(c.status, 401, "then one more failure is judged (401)...");
	ctx_start(&c, "198.51.100.9");
	add_field(&c, "X-Key", "k-wrong");
	run(&c, &any);
	CHECK_INT(c.status, 429, "...and counted: the next is 429 again");
	ig_auth_settings_values.failures_per_min = 100;
}

static void test_mutual_tls(void)
{
	ig_ctx c;
	ctx_start(&c, "192.0.2.4");
	char subject[] = "alice.example";
	c.cert_subject = subject;
	CHECK(run(&c, &cert_only), "a verified client certificate passes");
	CHECK(c.principal && ig_str_eq(c.principal->subject, "alice.example", 13), "its CN is the subject");
	CHECK(c.principal && strcmp(c.principal->scheme, "cert") == 0, "named by its scheme");
	CHECK(c.principal && c.principal->subject.ptr != subject, "copied: the connection may go first");

	ctx_start(&c, "192.0.2.4");
	CHECK(!run(&c, &cert_only), "no verified certificate is refused");
	CHECK_INT(c.status, 401, "401");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "MutualTLS realm=\"api\"") == 0, "its challenge");

	ctx_start(&c, "192.0.2.4");
	add_field(&c, "X-Key", "k-123");
	CHECK(run(&c, &cert_or_key), "without a certificate, another alternative may pass");
	CHECK(c.principal && strcmp(c.principal->scheme, "hdr") == 0, "and speaks");
	ctx_start(&c, "192.0.2.4");
	CHECK(!run(&c, &cert_or_key), "neither: refused");
	CHECK(c.nchallenges == 1 && strcmp(c.challenge[0], "ApiKey realm=\"api\"") == 0, "the API key's challenge");
}

/* x-ingot-access-token-query: the same token, from ?access_token=. */
static const struct ig_security query_jwt = { ig_security_check, jwt_alts, 1, true };

static void with_query(ig_ctx *c, const char *query)
{
	c->req.query = (ig_str){ query, strlen(query) };
}

static void test_query_token(void)
{
	static struct ig_jwks keys = { .generation = 7, .count = 1,
				       .keys = { { .type = IG_JWK_OCT, .kid_len = 2, .kid = "k1", .len = 32,
						   .material = "0123456789abcdef0123456789abcdef" } } };
	test_keys = &keys;
	const char *tok = TOKEN_ANN + 7; /* after "Bearer " */
	char q[512], bad[512];
	snprintf(q, sizeof q, "n=3&access_token=%s", tok);
	ig_ctx c;

	ctx_start(&c, "192.0.2.6");
	with_query(&c, q);
	CHECK(run(&c, &query_jwt), "a stream that declares it: the query's token passes");
	CHECK(c.principal && ig_str_eq(c.principal->subject, "ann", 3), "its sub is the subject");

	ctx_start(&c, "192.0.2.6");
	with_query(&c, q);
	CHECK(!run(&c, &plain_jwt), "an operation that does not declare it ignores the query's token");
	CHECK(c.status == 401 && c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer") == 0,
	      "401 as with no token at all");

	/* %-encoded as a form would: "_" as %5F in the name, "." as %2E. */
	char enc[512];
	size_t k = (size_t)snprintf(enc, sizeof enc, "access%%5Ftoken=");
	for (const char *p = tok; *p && k + 4 < sizeof enc; p++)
		k += (size_t)(*p == '.' ? snprintf(enc + k, sizeof enc - k, "%%2E") : snprintf(enc + k, sizeof enc - k, "%c", *p));
	ctx_start(&c, "192.0.2.6");
	with_query(&c, enc);
	CHECK(run(&c, &query_jwt), "%-encoded name and value are decoded");

	snprintf(bad, sizeof bad, "access_token=%.*sx", (int)strlen(tok) - 1, tok);
	ctx_start(&c, "192.0.2.6");
	with_query(&c, bad);
	CHECK(!run(&c, &query_jwt), "a bad signature from the query is refused");
	CHECK(c.status == 401 && c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer error=\"invalid_token\"") == 0,
	      "401 invalid_token, as from the header");
	ctx_start(&c, "192.0.2.6");
	with_query(&c, "access_token=%zz");
	CHECK(!run(&c, &query_jwt) && c.status == 401 && strcmp(c.challenge[0], "Bearer error=\"invalid_token\"") == 0,
	      "a value that does not decode is an invalid token");

	ctx_start(&c, "192.0.2.6");
	with_query(&c, q);
	add_field(&c, "Authorization", TOKEN_ANN);
	CHECK(!run(&c, &query_jwt), "a token in the header and the query is refused");
	CHECK(c.status == 400 && c.nchallenges == 1 && strcmp(c.challenge[0], "Bearer error=\"invalid_request\"") == 0 &&
		      strcmp(c.problem, "invalid_request") == 0,
	      "400 invalid_request (RFC 6750 3.1: one method at most)");
	snprintf(bad, sizeof bad, "access_token=%s&access_token=%s", tok, tok);
	ctx_start(&c, "192.0.2.6");
	with_query(&c, bad);
	CHECK(!run(&c, &query_jwt) && c.status == 400, "the parameter twice: 400");

	ctx_start(&c, "192.0.2.6");
	add_field(&c, "Authorization", TOKEN_ANN);
	CHECK(run(&c, &query_jwt), "a stream that declares it still takes the header");
	ctx_start(&c, "192.0.2.6");
	with_query(&c, "access_token=");
	CHECK(!run(&c, &query_jwt) && c.status == 401 && strcmp(c.challenge[0], "Bearer") == 0,
	      "an empty access_token is no token");
	test_keys = NULL;
}

static void test_secret_eq(void)
{
	CHECK(ig_secret_eq(IG_STR("abc"), IG_STR("abc")), "equal");
	CHECK(!ig_secret_eq(IG_STR("abc"), IG_STR("abd")), "one byte differs");
	CHECK(!ig_secret_eq(IG_STR("abc"), IG_STR("abcd")), "a prefix is not equal");
	CHECK(!ig_secret_eq(IG_STR(""), IG_STR("a")), "empty is not equal to one byte");
	CHECK(ig_secret_eq(IG_STR(""), IG_STR("")), "empty equals empty");
}

int main(void)
{
	ig_log_threshold = -1;
	ig_pool_init(&blocks, 16384, 16, 1 << 10);
	test_api_keys();
	test_basic();
	test_scopes();
	test_limit();
	test_mutual_tls();
	test_claims();
	test_query_token();
	test_secret_eq();
	return check_done();
}
