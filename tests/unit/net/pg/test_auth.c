/* Unit tests of net/pg/auth: RFC 7677's SCRAM-SHA-256 example message for
 * message, the server's messages refused when they are not SCRAM's (wrong
 * nonce, bad salt, iteration count, a forged signature, steps out of
 * order), and md5 against a value computed independently. */
#include "net/pg/auth.h"
#include "tests/unit/check.h"

#include <string.h>

#define RFC_NONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_FIRST "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define RFC_CLIENT_FINAL                                                                                       \
	"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define RFC_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

static enum pg_scram_status final_of(struct pg_scram *s, const char *server_first, char *out, size_t *n)
{
	char first[PG_SCRAM_FIRST_MAX];
	ig_pg_scram_client_first_with(s, "user", RFC_NONCE, first, sizeof first);
	return ig_pg_scram_client_final(s, "pencil", server_first, strlen(server_first), out, PG_SCRAM_FINAL_MAX, n);
}

static void test_rfc7677(void)
{
	struct pg_scram s;
	char first[PG_SCRAM_FIRST_MAX], final[PG_SCRAM_FINAL_MAX];
	size_t n = ig_pg_scram_client_first_with(&s, "user", RFC_NONCE, first, sizeof first);
	check_slice(first, n, "n,,n=user,r=" RFC_NONCE, "RFC 7677: client-first-message", "first");
	size_t fn = 0;
	CHECK_INT(ig_pg_scram_client_final(&s, "pencil", RFC_SERVER_FIRST, strlen(RFC_SERVER_FIRST), final, sizeof final,
					&fn),
		  PG_SCRAM_OK, "RFC 7677: server-first-message accepted");
	check_slice(final, fn, RFC_CLIENT_FINAL, "RFC 7677: client-final-message and its proof", "final");
	CHECK_INT(ig_pg_scram_verify_server_final(&s, RFC_SERVER_FINAL, strlen(RFC_SERVER_FINAL)), PG_SCRAM_OK,
		  "RFC 7677: the server's signature verifies");
	CHECK_INT(ig_pg_scram_verify_server_final(&s, RFC_SERVER_FINAL, strlen(RFC_SERVER_FINAL)), PG_SCRAM_OUT_OF_ORDER,
		  "a second server-final is out of order");

	/* The same exchange with another password: the proof differs and the
	 * real server's signature does not verify. */
	ig_pg_scram_client_first_with(&s, "user", RFC_NONCE, first, sizeof first);
	ig_pg_scram_client_final(&s, "pencil2", RFC_SERVER_FIRST, strlen(RFC_SERVER_FIRST), final, sizeof final, &fn);
	CHECK(fn == strlen(RFC_CLIENT_FINAL) && memcmp(final, RFC_CLIENT_FINAL, fn) != 0,
	      "a wrong password gives another proof");
	CHECK_INT(ig_pg_scram_verify_server_final(&s, RFC_SERVER_FINAL, strlen(RFC_SERVER_FINAL)), PG_SCRAM_BAD_SIGNATURE,
		  "with a wrong password the server's signature does not verify");
}

static void test_refusals(void)
{
	struct pg_scram s;
	char out[PG_SCRAM_FINAL_MAX];
	size_t n;
	static const struct {
		const char *server_first;
		enum pg_scram_status want;
		const char *name;
	} cases[] = {
		{ "r=XXXXNGfwEbeRWgbNEkqO%hvY,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", PG_SCRAM_NONCE_MISMATCH,
		  "a nonce that does not start with ours" },
		{ "r=" RFC_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", PG_SCRAM_NONCE_MISMATCH,
		  "a nonce that adds nothing to ours" },
		{ "r=" RFC_NONCE "abc,s=W22Z*J0SNY7soEsUEjb6gQ==,i=4096", PG_SCRAM_BAD_SALT, "a salt that is not base64" },
		{ "r=" RFC_NONCE "abc,s=,i=4096", PG_SCRAM_BAD_SALT, "an empty salt" },
		{ "r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0", PG_SCRAM_BAD_ITERATIONS, "0 iterations" },
		{ "r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=100001", PG_SCRAM_BAD_ITERATIONS,
		  "iterations over the bound (the loop would stall)" },
		{ "r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=12x", PG_SCRAM_MALFORMED, "a count that is not a number" },
		{ "m=ext,r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", PG_SCRAM_MALFORMED,
		  "a mandatory extension" },
		{ "r=" RFC_NONCE "abc,i=4096", PG_SCRAM_MALFORMED, "no salt" },
		{ "", PG_SCRAM_MALFORMED, "an empty message" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_INT(final_of(&s, cases[i].server_first, out, &n), cases[i].want, cases[i].name);

	CHECK_INT(final_of(&s, RFC_SERVER_FIRST, out, &n), PG_SCRAM_OK, "the RFC's server-first again");
	CHECK_INT(ig_pg_scram_verify_server_final(&s, "e=invalid-proof", 15), PG_SCRAM_SERVER_ERROR,
		  "server-final e=... is the server refusing");
	final_of(&s, RFC_SERVER_FIRST, out, &n);
	const char forged[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95H4=";
	CHECK_INT(ig_pg_scram_verify_server_final(&s, forged, strlen(forged)), PG_SCRAM_BAD_SIGNATURE,
		  "a signature one bit off does not verify");
	final_of(&s, RFC_SERVER_FIRST, out, &n);
	CHECK_INT(ig_pg_scram_verify_server_final(&s, "v=6rri", 6), PG_SCRAM_MALFORMED, "a truncated signature");

	struct pg_scram fresh = { 0 };
	CHECK_INT(ig_pg_scram_client_final(&fresh, "pw", RFC_SERVER_FIRST, strlen(RFC_SERVER_FIRST), out, sizeof out, &n),
		  PG_SCRAM_OUT_OF_ORDER, "client-final before client-first is out of order");
	CHECK_INT(ig_pg_scram_verify_server_final(&fresh, RFC_SERVER_FINAL, strlen(RFC_SERVER_FINAL)),
		  PG_SCRAM_OUT_OF_ORDER, "server-final before client-final is out of order");

	/* The nonce made from random bytes: 24 base64 characters, a user
	 * name left empty (PostgreSQL takes the startup message's). */
	uint8_t rnd[PG_SCRAM_NONCE_RANDOM];
	for (int i = 0; i < PG_SCRAM_NONCE_RANDOM; i++)
		rnd[i] = (uint8_t)(i * 37 + 1);
	char first[PG_SCRAM_FIRST_MAX];
	n = ig_pg_scram_client_first(&s, rnd, first, sizeof first);
	CHECK(n == 8 + PG_SCRAM_NONCE_LEN && memcmp(first, "n,,n=,r=", 8) == 0 && !memchr(first + 8, ',', n - 8),
	      "client-first from random bytes: n,,n=,r= and 24 nonce characters");
	CHECK_INT(ig_pg_scram_client_first(&s, rnd, first, 10), 0, "client-first into too small a buffer writes nothing");
	n = ig_pg_scram_client_first_with(&s, "a,b=c", "xyz", first, sizeof first);
	check_slice(first, n, "n,,n=a=2Cb=3Dc,r=xyz", "a user name's ',' and '=' are escaped", "first");
	CHECK(ig_pg_scram_status_text(PG_SCRAM_BAD_SIGNATURE)[0] != 0, "every status has a text");
}

static void test_md5(void)
{
	char out[36];
	const uint8_t salt[4] = { 1, 2, 3, 4 };
	ig_pg_md5_password("bob", "secret", salt, out);
	/* python3: 'md5' + md5(md5(b'secretbob').hexdigest().encode() + bytes([1,2,3,4])).hexdigest() */
	CHECK(strcmp(out, "md5f21dfe33ff3a9e03dbc3e008251fe5cc") == 0, "md5: md5(hex(md5(password user)) salt)");
	CHECK(out[35] == 0 && strlen(out) == 35, "md5: 35 characters and a NUL");
}

int main(void)
{
	test_rfc7677();
	test_refusals();
	test_md5();
	return check_done();
}
