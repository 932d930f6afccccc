/* The TLS backend contract: what net/tls/tls.c (the transport wrapper) needs
 * from a TLS library. Exactly one backend is linked, chosen at build time:
 * bearssl.c (default) or mbedtls.c (make TLS=mbedtls).
 *
 * The model is BearSSL's record engine: the engine does no I/O and calls
 * no clock; the caller moves bytes through four buffers, asking which are
 * ready with ig_tls_engine_state():
 *
 *   network -> recvrec_buf/ack -> [engine] -> recvapp_buf/ack -> engine above
 *   network <- sendrec_buf/ack <- [engine] <- sendapp_buf/ack <- engine above
 *
 * A buffer returned by *_buf stays valid until the matching *_ack or until
 * any other call on the engine. A backend that is not built this way (mbedtls)
 * emulates it with memory BIOs.
 *
 * Lifetimes: a tls_credentials is read-only once built (shared by all
 * cores) and counted: a reload (SIGHUP) replaces it while connections
 * still use the old one, which is freed with the last reference. A tls_core is per core and used on
 * that core's thread only. The server's session cache is either per core
 * or one per credentials shared by the cores under a lock that only a
 * handshake takes (BearSSL: shared, as SO_REUSEPORT sends a returning
 * client to any core). A tls_engine is per connection, ig_tls_engine_size()
 * bytes, taken from a per-core pool by the caller; ig_tls_engine_free
 * releases what the backend holds beyond that. */
#ifndef NET_TLS_BACKEND_H
#define NET_TLS_BACKEND_H

#include "net/tls/peer_name.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Engine states, as bit flags (the same meaning as BR_SSL_*). */
#define TLS_CLOSED  0x0001 /* finished: ig_tls_engine_error says why */
#define TLS_SENDREC 0x0002 /* records are ready to go to the network */
#define TLS_RECVREC 0x0004 /* the engine wants bytes from the network */
#define TLS_SENDAPP 0x0008 /* application data may be written */
#define TLS_RECVAPP 0x0010 /* application data is ready to read */

struct tls_credentials; /* server: certificate chain and private key */
struct tls_trust;       /* client: trust anchors */
struct tls_core;        /* per core: session cache, scratch */
struct tls_engine;      /* per connection */

/* ---- process-wide, at startup (may allocate) ---- */

/* Seeds the backend's random generator from getrandom(2). Returns 0, or
 * with a message: IG_TLS_NO_ENTROPY when a blocking getrandom answered
 * EAGAIN (kernel/metal's answer without a source fit for keys: no
 * virtio-rng device, no RDRAND), else -1. There is no fallback to a
 * weaker seed. */
#define IG_TLS_NO_ENTROPY (-2)
int ig_tls_backend_init(char *err, size_t errlen);

/* Parses a PEM certificate chain (leaf first) and its PEM private key (RSA
 * or EC, PKCS#1/SEC1/PKCS#8). Checks that the key matches the leaf. NULL
 * with a message on any problem. */
struct tls_credentials *ig_tls_credentials_load(const char *cert_pem, size_t cert_len,
					     const char *key_pem, size_t key_len,
					     char *err, size_t errlen);

/* References to credentials, from any thread: ig_tls_credentials_load
 * returns one, the caller's; the last unref frees them (and their
 * session cache, for a backend that has one per credentials). */
void ig_tls_credentials_ref(struct tls_credentials *c);
void ig_tls_credentials_unref(struct tls_credentials *c);
/* The leaf certificate's serial number, its DER INTEGER's bytes, into out
 * (cap bytes; 20 is RFC 5280's most): the length, or 0. Not on a hot path
 * (mbedtls parses the certificate for it). */
size_t ig_tls_credentials_serial(const struct tls_credentials *c, unsigned char *out, size_t cap);

/* Trust anchors for the client role: the compiled-in set (from Debian's
 * ca-certificates, see tools/anchors), plus, or instead of, the
 * certificates of a PEM bundle (pem may be NULL). */
struct tls_trust *ig_tls_trust_load(const char *pem, size_t pem_len, bool replace_builtin,
				 char *err, size_t errlen);
/* The certificates of a PEM bundle alone (mutual TLS's CAs): a binary that
 * calls only this links no compiled-in anchor. */
struct tls_trust *ig_tls_trust_load_pem(const char *pem, size_t pem_len, char *err, size_t errlen);

/* Server role, mutual TLS: from then on every server handshake asks the
 * client for a certificate and verifies its chain against ca (kept for
 * the process's life). A client that sends none still completes the
 * handshake (ig_tls_engine_peer_subject then says so); one whose chain
 * does not verify is refused in the handshake. A session in which a
 * certificate was verified is never resumed (the session cache does not
 * store it), so a resumed session never lacks the principal its first
 * handshake had. At startup, before any core is made. 0, or -1 with a
 * message (a backend that cannot). */
int ig_tls_backend_set_client_ca(const struct tls_trust *ca, char *err, size_t errlen);

/* ---- per core ---- */

/* session_cache_bytes: memory for the server's session cache (0: no
 * resumption); a shared cache is made once, at this size, by the first
 * core that asks (BearSSL: at most 2 GiB, its LRU's offsets are 32-bit).
 * Called on the core's own thread. */
struct tls_core *ig_tls_backend_core_new(const struct tls_credentials *server, size_t session_cache_bytes);

/* On the core's thread: new server handshakes use server, with a new
 * session cache (old sessions do not resume); connections begun before
 * keep theirs, released with the last of them. The core takes its own
 * reference. 0, or -1 (out of memory, or material this core cannot use)
 * and the core keeps what it had. */
int ig_tls_backend_core_set_credentials(struct tls_core *core, const struct tls_credentials *server);

/* How a backend counts the connections of one generation of a core's
 * server credentials (on the core's thread only, no atomics): begun with
 * conns++, freed when tls_gen_release says so, or at once when
 * tls_gen_retire (the core adopting newer credentials) finds none. */
struct tls_gen_use {
	uint32_t conns; /* engines begun with it, not yet freed */
	bool retired;   /* the core has newer credentials */
};
static inline bool tls_gen_retire(struct tls_gen_use *u)
{
	u->retired = true;
	return u->conns == 0;
}
static inline bool tls_gen_release(struct tls_gen_use *u)
{
	return --u->conns == 0 && u->retired;
}

/* ---- per connection ---- */

size_t ig_tls_engine_size(void);
/* What the backend allocates for one engine beyond ig_tls_engine_size()
 * while it lives, its most (mbedtls: the record buffers; BearSSL: 0): the
 * memory budget charges it with the connection (tls.c). */
size_t ig_tls_engine_heap_bytes(void);

/* Server role, ALPN "http/1.1". Returns 0 or -1. */
int ig_tls_engine_init_server(struct tls_engine *e, struct tls_core *core);
/* Client role: SNI and name verification against peer (peer_name.h; NULL:
 * no name, only allowed without trust), chain verification against trust;
 * ALPN "http/1.1". Returns 0 or -1. trust NULL: the connection is
 * encrypted but the peer is not verified at all (PostgreSQL's
 * sslmode=require and prefer). */
int ig_tls_engine_init_client(struct tls_engine *e, struct tls_core *core,
			   const struct tls_trust *trust, const struct tls_peer_name *peer);
/* Releases what the backend allocated for e (nothing for BearSSL). */
void ig_tls_engine_free(struct tls_engine *e);

/* Client role, session resumption (optional to use). After the handshake,
 * ig_tls_engine_session_get copies the session out (false if there is none
 * or it does not fit); ig_tls_engine_session_resume, called right after
 * ig_tls_engine_init_client and before any other call on e, offers a saved
 * session to the server (0, or -1 if it cannot be offered: go on with a
 * full handshake). ig_tls_engine_resumed then tells whether it was taken. */
#define TLS_SESSION_MAX 512
struct tls_session {
	size_t len;
	unsigned char data[TLS_SESSION_MAX];
};
bool ig_tls_engine_session_get(struct tls_engine *e, struct tls_session *s);
int ig_tls_engine_session_resume(struct tls_engine *e, const struct tls_session *s);

unsigned ig_tls_engine_state(struct tls_engine *e);
unsigned char *ig_tls_engine_sendrec_buf(struct tls_engine *e, size_t *len);
void ig_tls_engine_sendrec_ack(struct tls_engine *e, size_t len);
unsigned char *ig_tls_engine_recvrec_buf(struct tls_engine *e, size_t *len);
void ig_tls_engine_recvrec_ack(struct tls_engine *e, size_t len);
unsigned char *ig_tls_engine_sendapp_buf(struct tls_engine *e, size_t *len);
void ig_tls_engine_sendapp_ack(struct tls_engine *e, size_t len);
unsigned char *ig_tls_engine_recvapp_buf(struct tls_engine *e, size_t *len);
void ig_tls_engine_recvapp_ack(struct tls_engine *e, size_t len);
/* Turns buffered application data into records now. */
void ig_tls_engine_flush(struct tls_engine *e);
/* Starts a close_notify; the state goes to TLS_CLOSED once it is sent. */
void ig_tls_engine_close(struct tls_engine *e);

/* True once the handshake has completed (application data may flow). */
bool ig_tls_engine_established(struct tls_engine *e);
/* 0 after a clean close; otherwise a backend error code. */
int ig_tls_engine_error(struct tls_engine *e);
/* A short human text for ig_tls_engine_error (for logs and client errors),
 * for example "certificate not trusted" or "host name mismatch". */
const char *ig_tls_engine_error_text(struct tls_engine *e);
/* After the handshake: the negotiated version ("TLSv1.2"), suite (IANA
 * name), ALPN protocol (or NULL), and whether the session was resumed. */
const char *ig_tls_engine_version(struct tls_engine *e);
const char *ig_tls_engine_suite(struct tls_engine *e);
const char *ig_tls_engine_alpn(struct tls_engine *e);
bool ig_tls_engine_resumed(struct tls_engine *e);
/* Server role, once established: the subject CN of the client
 * certificate verified in this handshake (UTF-8, NUL-terminated, at most
 * TLS_SUBJECT_MAX bytes with its NUL; "" when it has no CN or a longer
 * one), valid while e is; NULL when no certificate was verified. */
#define TLS_SUBJECT_MAX 256
const char *ig_tls_engine_peer_subject(struct tls_engine *e);

/* The backend's name ("bearssl 0.6", "mbedtls 2.28.3"), for the startup log. */
const char *ig_tls_backend_name(void);
/* True if the server's session cache is one shared by the cores (size it
 * for all of them), false if each core has its own. */
bool ig_tls_backend_shares_session_cache(void);

#endif
