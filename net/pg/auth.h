/* The client's side of PostgreSQL's password authentications: SCRAM-SHA-256
 * (RFC 5802 / RFC 7677, without channel binding: "n,,") and md5. Pure
 * computation on the caller's state and buffers (BearSSL's SHA-256, HMAC
 * and MD5); the messages go out through wire.h's pg_put_sasl_* and
 * ig_pg_put_password. The password is never copied into anything but the
 * caller's output, and no error carries it. */
#ifndef NET_PG_AUTH_H
#define NET_PG_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PG_SCRAM_MECHANISM "SCRAM-SHA-256"
#define PG_SCRAM_NONCE_RANDOM 18   /* random bytes the caller supplies */
#define PG_SCRAM_NONCE_LEN 24      /* their base64 */
#define PG_SCRAM_FIRST_MAX 64      /* client-first-message's length bound */
#define PG_SCRAM_FINAL_MAX 256     /* client-final-message's length bound */
#define PG_SCRAM_MAX_ITERATIONS 100000 /* a hostile server cannot stall the loop for long */
#define PG_SCRAM_SERVER_MAX 512    /* the longest server-first-message accepted */

enum pg_scram_status {
	PG_SCRAM_OK,
	PG_SCRAM_MALFORMED,          /* the server's message is not SCRAM's syntax */
	PG_SCRAM_NONCE_MISMATCH,     /* its nonce does not extend ours */
	PG_SCRAM_BAD_ITERATIONS,     /* 0, or over PG_SCRAM_MAX_ITERATIONS */
	PG_SCRAM_BAD_SALT,           /* not base64, or empty or too long */
	PG_SCRAM_TOO_LONG,           /* a message over its bound */
	PG_SCRAM_SERVER_ERROR,       /* server-final "e=...": authentication refused */
	PG_SCRAM_BAD_SIGNATURE,      /* the server does not know the password: not it */
	PG_SCRAM_OUT_OF_ORDER,       /* a step called before the one it follows */
};

/* One exchange's state; zero it (or let ig_pg_scram_client_first set it). */
struct pg_scram {
	int step; /* 0 fresh, 1 first sent, 2 final sent, 3 verified */
	char nonce[PG_SCRAM_NONCE_LEN + 1];
	/* client-first-message-bare, then server-first-message, for the
	 * AuthMessage that the final step signs */
	char first_bare[PG_SCRAM_FIRST_MAX];
	size_t first_bare_len;
	uint8_t server_signature[32]; /* expected in server-final */
};

/* Starts an exchange: writes the client-first-message ("n,,n=,r=NONCE"; the
 * user name is the startup message's, so it is empty here) into out and
 * returns its length (< PG_SCRAM_FIRST_MAX; 0 if cap is too small), from
 * random[] made by the caller's secure source. */
size_t ig_pg_scram_client_first(struct pg_scram *s, const uint8_t random[PG_SCRAM_NONCE_RANDOM], char *out,
			     size_t cap);
/* The same with a given user name and printable nonce (at most
 * PG_SCRAM_NONCE_LEN characters, no ','): for test vectors (RFC 7677's). */
size_t ig_pg_scram_client_first_with(struct pg_scram *s, const char *user, const char *nonce, char *out, size_t cap);

/* Reads the server-first-message (r=, s=, i=) and writes the
 * client-final-message with its proof into out (cap >= PG_SCRAM_FINAL_MAX),
 * *out_len its length. SaltedPassword is PBKDF2-HMAC-SHA-256 of the
 * password as given: SASLprep leaves an ASCII password as it is (libpq
 * does the same), and a non-ASCII one is used as its UTF-8 bytes. */
enum pg_scram_status ig_pg_scram_client_final(struct pg_scram *s, const char *password, const char *server_first,
					   size_t len, char *out, size_t cap, size_t *out_len);

/* Checks the server-final-message ("v=SIGNATURE"): PG_SCRAM_OK only when
 * the server proved it knows the password. */
enum pg_scram_status ig_pg_scram_verify_server_final(struct pg_scram *s, const char *msg, size_t len);

/* A short English text for a status (never holds anything from the wire). */
const char *ig_pg_scram_status_text(enum pg_scram_status st);

/* The md5 answer to AuthenticationMD5Password: "md5" then the hex of
 * md5(hex(md5(password + user)) + salt), NUL-terminated in out[36]. */
void ig_pg_md5_password(const char *user, const char *password, const uint8_t salt[4], char out[36]);

#endif
