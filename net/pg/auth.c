/* SCRAM-SHA-256 and md5 for the PostgreSQL client (see auth.h), on
 * BearSSL's hashes. The server's SCRAM messages are untrusted: every
 * attribute is checked before it is used, and the iteration count is
 * bounded because the key derivation runs on the core's loop. */
#include "net/pg/auth.h"
#include "kernel/runtime/base64.h"

#include <bearssl_hash.h>
#include <bearssl_hmac.h>
#include <string.h>

/* ---- HMAC-SHA-256 ---- */

static void hmac(const void *key, size_t key_len, const void *msg, size_t len, uint8_t out[32])
{
	br_hmac_key_context kc;
	br_hmac_context ctx;
	br_hmac_key_init(&kc, &br_sha256_vtable, key, key_len);
	br_hmac_init(&ctx, &kc, 0);
	br_hmac_update(&ctx, msg, len);
	br_hmac_out(&ctx, out);
}

/* Secrets are wiped where the compiler cannot drop the stores. */
static void wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;
	while (n--)
		*v++ = 0;
}

/* RFC 5802's Hi(): PBKDF2-HMAC-SHA-256 with one output block. */
static void salted_password(const char *password, const uint8_t *salt, size_t salt_len, uint32_t iterations,
			    uint8_t out[32])
{
	br_hmac_key_context kc;
	br_hmac_context ctx;
	uint8_t u[32];
	static const uint8_t block1[4] = { 0, 0, 0, 1 };
	br_hmac_key_init(&kc, &br_sha256_vtable, password, strlen(password));
	br_hmac_init(&ctx, &kc, 0);
	br_hmac_update(&ctx, salt, salt_len);
	br_hmac_update(&ctx, block1, 4);
	br_hmac_out(&ctx, u);
	memcpy(out, u, 32);
	for (uint32_t i = 1; i < iterations; i++) {
		br_hmac_init(&ctx, &kc, 0);
		br_hmac_update(&ctx, u, 32);
		br_hmac_out(&ctx, u);
		for (int k = 0; k < 32; k++)
			out[k] ^= u[k];
	}
	wipe(u, sizeof u);
	wipe(&kc, sizeof kc);
	wipe(&ctx, sizeof ctx);
}

/* ---- SCRAM-SHA-256 ---- */

size_t ig_pg_scram_client_first_with(struct pg_scram *s, const char *user, const char *nonce, char *out, size_t cap)
{
	*s = (struct pg_scram){ 0 };
	size_t nonce_len = strlen(nonce);
	if (nonce_len == 0 || nonce_len > PG_SCRAM_NONCE_LEN || strchr(nonce, ','))
		return 0;
	memcpy(s->nonce, nonce, nonce_len + 1);
	/* client-first-message-bare: "n=" saslname ",r=" nonce, where saslname
	 * writes ',' and '=' as "=2C" and "=3D". */
	char *b = s->first_bare;
	size_t n = 2, room = sizeof s->first_bare;
	memcpy(b, "n=", 2);
	for (const char *u = user; *u; u++) {
		const char *esc = *u == ',' ? "=2C" : *u == '=' ? "=3D" : NULL;
		size_t w = esc ? 3 : 1;
		if (room - n < w + 3 + nonce_len)
			return 0;
		memcpy(b + n, esc ? esc : u, w);
		n += w;
	}
	if (room - n < 3 + nonce_len)
		return 0;
	memcpy(b + n, ",r=", 3);
	memcpy(b + n + 3, nonce, nonce_len);
	n += 3 + nonce_len;
	s->first_bare_len = n;
	if (cap < n + 3)
		return 0;
	memcpy(out, "n,,", 3); /* gs2 header: no channel binding, no authzid */
	memcpy(out + 3, b, n);
	s->step = 1;
	return n + 3;
}

size_t ig_pg_scram_client_first(struct pg_scram *s, const uint8_t random[PG_SCRAM_NONCE_RANDOM], char *out,
			     size_t cap)
{
	char nonce[PG_SCRAM_NONCE_LEN + 1];
	nonce[ig_base64_encode(random, PG_SCRAM_NONCE_RANDOM, nonce)] = 0;
	return ig_pg_scram_client_first_with(s, "", nonce, out, cap);
}

/* The value of the attribute `name` at *p in msg[0..end): "name=value"
 * up to the next ',' or the end; advances past the ','. */
static bool scram_attr(const char **p, const char *end, char name, const char **v, size_t *vlen)
{
	const char *q = *p;
	if (end - q < 2 || q[0] != name || q[1] != '=')
		return false;
	q += 2;
	const char *comma = memchr(q, ',', (size_t)(end - q));
	const char *stop = comma ? comma : end;
	*v = q;
	*vlen = (size_t)(stop - q);
	*p = comma ? comma + 1 : end;
	return true;
}

enum pg_scram_status ig_pg_scram_client_final(struct pg_scram *s, const char *password, const char *server_first,
					   size_t len, char *out, size_t cap, size_t *out_len)
{
	if (s->step != 1)
		return PG_SCRAM_OUT_OF_ORDER;
	if (len > PG_SCRAM_SERVER_MAX)
		return PG_SCRAM_TOO_LONG;
	const char *p = server_first, *end = server_first + len;
	const char *nonce, *salt64, *iter;
	size_t nonce_len, salt64_len, iter_len;
	/* "m=" (a mandatory extension) fails here, as RFC 5802 asks. */
	if (!scram_attr(&p, end, 'r', &nonce, &nonce_len) || !scram_attr(&p, end, 's', &salt64, &salt64_len) ||
	    !scram_attr(&p, end, 'i', &iter, &iter_len))
		return PG_SCRAM_MALFORMED;
	size_t ours = strlen(s->nonce);
	if (nonce_len <= ours || memcmp(nonce, s->nonce, ours) != 0)
		return PG_SCRAM_NONCE_MISMATCH;
	for (size_t i = 0; i < nonce_len; i++)
		if (nonce[i] < 0x21 || nonce[i] > 0x7e) /* printable, and ',' was a separator */
			return PG_SCRAM_MALFORMED;
	uint8_t salt[64];
	long salt_len = ig_base64_decode(salt64, salt64_len, salt, sizeof salt);
	if (salt_len <= 0)
		return PG_SCRAM_BAD_SALT;
	uint32_t iterations = 0;
	if (iter_len == 0 || iter_len > 9)
		return PG_SCRAM_BAD_ITERATIONS;
	for (size_t i = 0; i < iter_len; i++) {
		if (iter[i] < '0' || iter[i] > '9')
			return PG_SCRAM_MALFORMED;
		iterations = iterations * 10 + (uint32_t)(iter[i] - '0');
	}
	if (iterations == 0 || iterations > PG_SCRAM_MAX_ITERATIONS)
		return PG_SCRAM_BAD_ITERATIONS;

	/* client-final-message-without-proof: c=base64("n,,"), r=nonce */
	size_t need = 9 + nonce_len + 3 + 44;
	if (cap < need)
		return PG_SCRAM_TOO_LONG;
	memcpy(out, "c=biws,r=", 9);
	memcpy(out + 9, nonce, nonce_len);
	size_t without_proof = 9 + nonce_len;

	uint8_t salted[32], client_key[32], stored_key[32], server_key[32], client_sig[32];
	salted_password(password, salt, (size_t)salt_len, iterations, salted);
	hmac(salted, 32, "Client Key", 10, client_key);
	hmac(salted, 32, "Server Key", 10, server_key);
	br_sha256_context h;
	br_sha256_init(&h);
	br_sha256_update(&h, client_key, 32);
	br_sha256_out(&h, stored_key);

	/* AuthMessage = client-first-bare "," server-first "," without-proof,
	 * fed to both HMACs piecewise rather than built in a buffer. */
	const void *parts[5] = { s->first_bare, ",", server_first, ",", out };
	size_t lens[5] = { s->first_bare_len, 1, len, 1, without_proof };
	br_hmac_key_context kc;
	br_hmac_context ctx;
	br_hmac_key_init(&kc, &br_sha256_vtable, stored_key, 32);
	br_hmac_init(&ctx, &kc, 0);
	for (int i = 0; i < 5; i++)
		br_hmac_update(&ctx, parts[i], lens[i]);
	br_hmac_out(&ctx, client_sig);
	br_hmac_key_init(&kc, &br_sha256_vtable, server_key, 32);
	br_hmac_init(&ctx, &kc, 0);
	for (int i = 0; i < 5; i++)
		br_hmac_update(&ctx, parts[i], lens[i]);
	br_hmac_out(&ctx, s->server_signature);

	uint8_t proof[32];
	for (int k = 0; k < 32; k++)
		proof[k] = client_key[k] ^ client_sig[k];
	memcpy(out + without_proof, ",p=", 3);
	ig_base64_encode(proof, 32, out + without_proof + 3);
	*out_len = need;
	wipe(salted, 32);
	wipe(client_key, 32);
	wipe(stored_key, 32);
	wipe(server_key, 32);
	wipe(client_sig, 32);
	wipe(proof, 32);
	wipe(&kc, sizeof kc);
	wipe(&ctx, sizeof ctx);
	s->step = 2;
	return PG_SCRAM_OK;
}

enum pg_scram_status ig_pg_scram_verify_server_final(struct pg_scram *s, const char *msg, size_t len)
{
	if (s->step != 2)
		return PG_SCRAM_OUT_OF_ORDER;
	if (len >= 2 && msg[0] == 'e' && msg[1] == '=')
		return PG_SCRAM_SERVER_ERROR;
	const char *p = msg, *v;
	size_t vlen;
	if (!scram_attr(&p, msg + len, 'v', &v, &vlen))
		return PG_SCRAM_MALFORMED;
	uint8_t sig[33];
	if (ig_base64_decode(v, vlen, sig, sizeof sig) != 32)
		return PG_SCRAM_MALFORMED;
	uint8_t diff = 0; /* the whole signature compared, however early it differs */
	for (int k = 0; k < 32; k++)
		diff |= sig[k] ^ s->server_signature[k];
	if (diff)
		return PG_SCRAM_BAD_SIGNATURE;
	s->step = 3;
	return PG_SCRAM_OK;
}

const char *ig_pg_scram_status_text(enum pg_scram_status st)
{
	switch (st) {
	case PG_SCRAM_OK: return "ok";
	case PG_SCRAM_MALFORMED: return "malformed SCRAM message from the server";
	case PG_SCRAM_NONCE_MISMATCH: return "the server's SCRAM nonce does not extend the client's";
	case PG_SCRAM_BAD_ITERATIONS: return "SCRAM iteration count out of range";
	case PG_SCRAM_BAD_SALT: return "bad SCRAM salt";
	case PG_SCRAM_TOO_LONG: return "SCRAM message too long";
	case PG_SCRAM_SERVER_ERROR: return "the server refused the SCRAM authentication";
	case PG_SCRAM_BAD_SIGNATURE: return "the server's SCRAM signature is wrong (it does not know the password)";
	case PG_SCRAM_OUT_OF_ORDER: return "SCRAM step out of order";
	}
	return "unknown SCRAM status";
}

/* ---- md5 ---- */

static void md5_hex(const void *a, size_t alen, const void *b, size_t blen, char out[32])
{
	static const char hex[] = "0123456789abcdef";
	br_md5_context c;
	uint8_t d[16];
	br_md5_init(&c);
	br_md5_update(&c, a, alen);
	br_md5_update(&c, b, blen);
	br_md5_out(&c, d);
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	wipe(d, sizeof d);
	wipe(&c, sizeof c);
}

void ig_pg_md5_password(const char *user, const char *password, const uint8_t salt[4], char out[36])
{
	char inner[32];
	md5_hex(password, strlen(password), user, strlen(user), inner);
	memcpy(out, "md5", 3);
	md5_hex(inner, 32, salt, 4, out + 3);
	out[35] = 0;
	wipe(inner, sizeof inner);
}
