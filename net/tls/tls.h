/* TLS as a transport over a transport (net/transport.h): the engine above
 * (net/http's connection, net/client's connection) sees plaintext through
 * the same seam it uses for a plain socket; below is any transport (a
 * socket from net/sock). The loop drives everything; nothing blocks.
 *
 * Per core: one ig_tls_core holds the backend's per-core state (session
 * cache), a pool of connection states, the handshake limits and counters
 * (which the metrics source reads from core 0).
 * It is created and used on that core's thread only.
 *
 * The backend (BearSSL or mbedtls) is behind net/tls/backend.h. */
#ifndef NET_TLS_TLS_H
#define NET_TLS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/metrics/metrics.h"
#include "net/tls/backend.h"
#include "net/transport.h"

struct ig_loop;
struct ig_tls_core;
struct ig_mem_credit;

struct ig_tls_limits {
	uint32_t handshake_timeout_ms; /* a handshake not done by then is cut */
	uint32_t max_handshakes;       /* concurrent handshakes on this core;
					  at the limit the oldest whose peer
					  sent nothing yet is closed to make
					  room, else the newcomer is refused */
	size_t session_cache_bytes;    /* server: session cache (shared by the
					  cores if ig_tls_backend_shares_session_cache():
					  size it for all) */
	uint32_t close_timeout_ms;     /* a graceful close waits this long to
					  send what is left and close_notify
					  (0: 5000) */
	/* Server role: the core's credit in the process's memory budget
	   (kernel/runtime/membudget.h), charged for every connection's
	   buffers while it lives; a handshake that finds no room is refused.
	   NULL: not charged (the client role's own connections). */
	struct ig_mem_credit *mem;
};

/* A core's handshakes: written by that core only, read from any thread
 * (the metrics source on core 0, the "stopped" line) with ig_counter_get. */
struct ig_tls_stats {
	ig_counter full;      /* completed with a full handshake */
	ig_counter resumed;   /* completed by resuming a session */
	ig_counter failed;    /* the peer or the backend broke it off */
	ig_counter timed_out; /* not done within handshake_timeout_ms */
	ig_counter refused;   /* at max_handshakes: never started, or evicted */
	struct ig_histogram handshake_us; /* start to done, of the completed */
};

/* server may be NULL (a core that only makes client connections). */
struct ig_tls_core *ig_tls_core_new(struct ig_loop *loop, const struct tls_credentials *server,
				    const struct ig_tls_limits *limits);
const struct ig_tls_stats *ig_tls_core_stats(const struct ig_tls_core *c);
/* The server-role cores (made with credentials) of the process, from any
 * thread: the first after prev (NULL: the first of all), or NULL. A core
 * lives as long as the process. */
const struct ig_tls_core *ig_tls_next_server_core(const struct ig_tls_core *prev);
/* The TLS metrics source (net/metrics/metrics.h): the server role's
 * handshakes by result and their duration, summed over its cores
 * (tls_metrics.c). Register it once, at startup, before the loops run:
 * inline and data only, so that the start runs no code of net/tls, which
 * net/cold.ld keeps off the startup path's pages. */
extern struct ig_metrics_source ig_tls_metrics_source;
static inline void ig_tls_metrics_register(void)
{
	ig_metrics_register(&ig_tls_metrics_source);
}

/* Puts TLS over lower (which must have no engine yet). Returns the
 * transport for the engine above, which then sets engine_ops and engine
 * on it as it would on a socket; NULL when at max_handshakes (and no
 * silent handshake could be closed to make room), when the memory budget
 * has no room for its buffers (counted and logged there), or out of
 * memory (the caller then closes lower). Application bytes flow only once
 * the handshake is done; the engine above may write before that (its
 * bytes wait). A handshake failure reaches the engine above as closed(). */
struct ig_transport *ig_tls_server(struct ig_tls_core *c, struct ig_transport *lower);
/* Client role: SNI and verification against server_name (a host name or
 * an IP literal, checked against the certificate's iPAddress names),
 * chain verification against trust (NULL: no verification at all, an
 * encrypted channel to whoever answers: PostgreSQL's sslmode=require).
 * The handshake starts with the first
 * writev or resume_read of the engine above, or the lower transport's
 * next writable event, whichever comes first. */
struct ig_transport *ig_tls_client(struct ig_tls_core *c, struct ig_transport *lower,
				   const struct tls_trust *trust, const char *server_name);

/* Startup, server role: seeds the backend (ig_tls_backend_init) and loads
 * the certificate chain and key, each from PEM text (cert_pem, key_pem)
 * or else from a PEM file (cert_path, key_path). NULL with a message that
 * says which input is wrong and why; *no_entropy is then true when what
 * failed is the seed, for want of a source fit for keys (backend.h's
 * IG_TLS_NO_ENTROPY), false otherwise. */
const struct tls_credentials *ig_tls_server_credentials(const char *cert_path, const char *cert_pem,
							const char *key_path, const char *key_pem,
							bool *no_entropy, char *err, size_t errlen);

/* Startup, server role, after ig_tls_server_credentials and before any
 * core: mutual TLS (backend.h's ig_tls_backend_set_client_ca) with the
 * CAs of the PEM file at path (INGOT_TLS_CLIENT_CA), and only those. 0, or
 * -1 with a message naming the setting. */
int ig_tls_client_ca_load(const char *path, char *err, size_t errlen);

/* Reload (SIGHUP), server role. ig_tls_reload_credentials loads the
 * chain and key from their files again (as ig_tls_server_credentials
 * does; the caller owns the reference returned, ig_tls_credentials_unref).
 * ig_tls_core_post_credentials hands them to core c from any thread
 * (taking its own reference); the caller then wakes c's loop, and on c's
 * thread ig_tls_core_adopt_credentials makes them the ones new
 * connections use, with a new session cache, while open connections keep
 * theirs: 1 adopted, 0 nothing was posted, -1 failed (c keeps its old
 * credentials). */
struct tls_credentials *ig_tls_reload_credentials(const char *cert_path, const char *key_path,
						  char *err, size_t errlen);
/* The leaf's serial number in hexadecimal, upper case, without leading
 * zero bytes (as openssl x509 -serial prints it), into hex (41 bytes
 * hold any); "" when the backend cannot tell. */
void ig_tls_credentials_serial_hex(const struct tls_credentials *cred, char *hex, size_t len);
void ig_tls_core_post_credentials(struct ig_tls_core *c, const struct tls_credentials *cred);
int ig_tls_core_adopt_credentials(struct ig_tls_core *c);

/* For the engine above, after closed(): why the TLS layer failed (for
 * instance "certificate not trusted", "host name mismatch",
 * "handshake timeout"), or NULL if it did not. Valid until the next
 * ig_tls_* call on this core. */
const char *ig_tls_last_error(const struct ig_tls_core *c);

/* The client-role core of the calling thread's loop, made on first use. */
struct ig_tls_core *ig_tls_client_core(struct ig_loop *loop);
/* The process's default trust anchors: the compiled-in set, changed by
 * INGOT_TLS_CA_FILE (a PEM bundle) and INGOT_TLS_CA_MODE ("add", the
 * default, or "replace"), settings of ig_tls_trust_settings. Loaded once,
 * from any thread: at startup by the settings' check when a file is set,
 * else on first use. NULL with *err set if the file is unreadable or holds
 * no certificate. */
const struct tls_trust *ig_tls_default_trust(const char **err);

/* The rows of the settings table for the default trust (kernel/runtime/config.h,
 * net/tls/trust_settings.c) and their parsed values: zero until parsed,
 * then ca_file "" when not set. */
struct ig_settings;
extern const struct ig_settings ig_tls_trust_settings;
enum tls_ca_mode { TLS_CA_ADD, TLS_CA_REPLACE /* only the file's anchors */ };
struct ig_tls_trust_config {
	const char *ca_file;
	int ca_mode; /* enum tls_ca_mode */
};
extern struct ig_tls_trust_config ig_tls_trust_config;

#endif
