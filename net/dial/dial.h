/* One outbound connection attempt on a core's loop, for every part that
 * connects out (net/client, net/pg; the Pub/Sub brokers next): the name's
 * lookup (net/dns, with the core's one resolver), the connects over the
 * process's stack (net/stack.h), the next address after a failure, one
 * deadline over all of it, and TLS. It hands over a connected transport
 * or says why there is none; what goes over the stream is the caller's.
 * The caller embeds struct ig_dial in its connection: a dial allocates
 * nothing (the resolver is made once per core, on the first name). */
#ifndef NET_DIAL_DIAL_H
#define NET_DIAL_DIAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "kernel/runtime/timer.h"

struct ig_loop;
struct ig_transport;
struct sock_core;
struct dns_query;
struct dns_resolver;
struct tls_trust;

#define IG_DIAL_MAX_ADDRS 4 /* addresses of a name tried in turn */

/* Why a dial failed. why (the failed callback's) says more. */
enum ig_dial_error {
	IG_DIAL_RESOLVE = 1, /* the name has no address: why is the resolver's
				message, which names the host */
	IG_DIAL_CONNECT,     /* every address failed: why is the last one's
				errno text; ig_dial_address is that address */
	IG_DIAL_TIMEOUT,     /* the deadline passed; the dial's state says
				whether during the lookup or the connects */
	IG_DIAL_TLS,         /* TLS could not start (no trust anchors, out of
				memory, too many handshakes): why says which */
};

/* TLS over a dialed stream. */
struct ig_dial_tls {
	bool verify;                   /* check the chain and the name */
	const struct tls_trust *trust; /* verify's anchors; NULL: the default ones */
	const char *server_name;       /* SNI and the name verified (NUL-terminated) */
};

struct ig_dial;

/* What a dial tells its owner, once, on the loop's thread. After either
 * call the dial holds nothing: the owner may start it again from inside. */
struct ig_dial_ops {
	/* t is connected: sock itself, or TLS over sock when the dial asked
	   for TLS (its handshake starts at the engine's first writev or
	   resume_read). The owner sets t->engine_ops and t->engine before it
	   returns; from then on both are the owner's. ig_dial_address says
	   where it went. */
	void (*connected)(struct ig_dial *d, struct ig_transport *t, struct ig_transport *sock, void *arg);
	/* No stream: kind and why (valid during the call). After a timeout,
	   d->state is the phase that ran out (resolving or connecting). */
	void (*failed)(struct ig_dial *d, enum ig_dial_error kind, const char *why, void *arg);
};

/* What to dial. host and addr, and what tls points to, must live until
 * the dial ends. */
struct ig_dial_params {
	struct sock_core *sock;        /* the caller's kernel-socket core */
	const char *host;              /* a name or an IP literal (NUL-terminated) */
	uint16_t port;
	const struct sockaddr *addr;   /* instead of host: this address (a unix
					  socket, say), no lookup */
	socklen_t addr_len;
	uint32_t timeout_ms;           /* lookup and connects; 0: no deadline */
	const struct ig_dial_tls *tls; /* TLS once connected; NULL: plain
					  (ig_dial_tls can start it later) */
};

enum ig_dial_state {
	IG_DIAL_IDLE,       /* not started, or ended */
	IG_DIAL_RESOLVING,  /* waiting for the resolver */
	IG_DIAL_CONNECTING, /* a connect under way */
};

union ig_dial_addr {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/* Embedded in its owner; zeroed, or ended, before ig_dial_start. */
struct ig_dial {
	const struct ig_dial_ops *ops;
	void *arg;
	struct ig_loop *loop;
	struct ig_dial_params p;
	enum ig_dial_state state;
	struct dns_query *query;   /* IG_DIAL_RESOLVING, until the answer */
	struct ig_transport *sock; /* the socket while it connects */
	struct ig_dial_tls tls;    /* p.tls points here */
	struct ig_timer timer;
	uint64_t deadline_ms;      /* 0: none */
	uint8_t next, count;       /* addrs[next] is tried next, of count */
	union ig_dial_addr addrs[IG_DIAL_MAX_ADDRS];
};

/* Starts dialing; ops hear of the outcome, maybe before this returns (a
 * literal address that cannot be connected, a name that fails at once). */
void ig_dial_start(struct ig_dial *d, struct ig_loop *loop, const struct ig_dial_params *p,
		   const struct ig_dial_ops *ops, void *arg);

/* Stops a dial under way (its socket closed, its lookup withdrawn): no
 * callback follows. Nothing when it has ended (a stream it handed over
 * is the owner's). */
void ig_dial_cancel(struct ig_dial *d);

/* The address the dial is connecting to, or connected to (for a cancel
 * request that must reach the same server), or failed on last; its
 * length in *len. NULL before any connect. */
const struct sockaddr *ig_dial_address(const struct ig_dial *d, socklen_t *len);

/* That address as text: "192.0.2.7:5432", "[::1]:443", or a unix
 * socket's path; "?" before any connect. */
void ig_dial_address_text(const struct ig_dial *d, char *out, size_t cap);

/* Puts TLS over the connected socket sock, whose engine moves to the TLS
 * transport returned: for a protocol that negotiates in clear first
 * (PostgreSQL's SSLRequest). Its handshake starts at the engine's next
 * writev or resume_read. NULL with *why when it cannot start; sock is
 * then still the caller's, with its engine. */
struct ig_transport *ig_dial_tls(struct ig_loop *loop, struct ig_transport *sock,
				 const struct ig_dial_tls *tls, const char **why);

/* The core's resolver, made on first use (one per core, shared by every
 * dialer on it); NULL if memory is short. */
struct dns_resolver *ig_dial_resolver(struct ig_loop *loop);

#endif
