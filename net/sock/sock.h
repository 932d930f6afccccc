/* TCP on the loop: per-core SO_REUSEPORT listeners, accepted streams and
 * outbound (connected) streams, all implementing the transport interface
 * (net/transport.h). A sock_core per loop and role; nothing here is shared
 * between cores. */
#ifndef NET_SOCK_H
#define NET_SOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <sys/socket.h>

#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/metrics/metrics.h"
#include "net/transport.h"

/* Spare descriptors a listener keeps at most (ig_sock_core_reserve). */
#define IG_SOCK_SPARES_MAX 8

/* Called for each accepted stream: returns the engine, having set
 * t->engine_ops and t->engine, or NULL to refuse (the stream is closed). */
typedef void *sock_accept_fn(void *arg, struct ig_transport *t);

struct sock_core {
	struct ig_loop *loop;
	int listen_fd;
	struct ig_io listen_io;
	struct ig_pool streams;
	uint32_t open_streams; /* with an engine; lingering ones excluded */
	uint32_t max_streams;
	uint32_t linger_ms;
	ig_counter refused; /* accepted and closed at once: over max_streams (a metric) */
	sock_accept_fn *accept;
	void *accept_arg;
	bool keep_peer; /* keep each accepted stream's peer address (the
			   transport's peer op); set before ig_sock_core_start */
	/* Last, apart from what every accept reads: the descriptor limit
	   (EMFILE/ENFILE in accept), the spare descriptors held for it and
	   the pause that replaces a spin on a listener that stays readable. */
	int spare[IG_SOCK_SPARES_MAX];
	uint8_t spares, spares_want;
	bool spares_serve; /* a spare lets a connection in (the admin's), not shed */
	uint32_t backoff_ms; /* the pause after the last EMFILE; 0: none */
	struct ig_timer backoff;
	ig_counter shed;   /* connections closed at the descriptor limit (a metric) */
	ig_counter pauses; /* times accepting stopped for a backoff */
	uint64_t logged_ms;
	uint32_t unlogged; /* pauses since the last line */
};

/* Creates a listening socket bound to host:port with SO_REUSEPORT. If
 * *port is 0 the kernel picks one and *port is set, so that the listeners
 * of the other cores can join the same port. Returns the fd or -1 with a
 * message in err. */
int ig_sock_listen(const char *host, int *port, int backlog, char *err, size_t errlen);
/* The same with SO_REUSEADDR only, not SO_REUSEPORT: a port another socket
 * listens on already fails (EADDRINUSE) instead of being shared. */
int ig_sock_listen_exclusive(const char *host, int *port, int backlog, char *err, size_t errlen);

/* Whether host:port is free of listeners: a socket bound there without
 * SO_REUSEPORT (SO_REUSEADDR: a previous run's TIME_WAIT is no listener)
 * and closed. 0, or -1 with err naming setting and the port. A process
 * starting between this and its bind is not seen (microseconds). */
int ig_sock_port_free(const char *host, int port, const char *setting, char *err, size_t errlen);

void ig_sock_core_init(struct sock_core *c, struct ig_loop *loop, int listen_fd,
		    uint32_t max_streams, sock_accept_fn *accept, void *arg);
/* Before ig_sock_core_start: the spare descriptors the listener keeps
 * for the descriptor limit. By default one, with which a connection that
 * accept cannot take (EMFILE/ENFILE) is taken and closed at once (shed,
 * counted in shed) rather than left waiting; with serve, n (at most
 * IG_SOCK_SPARES_MAX) that let such connections in, for a listener that
 * must answer when the others cannot (the admin's). Either way, accepting
 * then pauses for a backoff (100 ms doubling to 1 s; the listener leaves
 * epoll, as EPOLLEXCLUSIVE cannot be modified), and a warning is logged at
 * most once a second. */
void ig_sock_core_reserve(struct sock_core *c, unsigned n, bool serve);
/* Starts accepting on the loop; opens the spares (best effort). */
int ig_sock_core_start(struct sock_core *c);
/* Accepts what is already queued, then closes the listener. */
void ig_sock_core_stop_accepting(struct sock_core *c);

/* ---- outbound streams ----
 * A sock_core for outbound streams has no listener: ig_sock_core_init(c,
 * loop, -1, max_streams, NULL, NULL), and no ig_sock_core_start.
 *
 * ig_sock_connect starts a non-blocking connect to addr (TCP_NODELAY, the
 * same edge-triggered stream as an accepted one) and returns its
 * transport, or NULL with errno set (no socket, the stream limit reached,
 * or a connect that failed at once). The caller sets t->engine_ops and
 * t->engine right after the call, before control returns to the loop: no
 * callback runs before then.
 *
 * Connected notification: the engine's first writable() is the connect
 * completing (checked with SO_ERROR); bytes that arrived with it are
 * delivered after it. A failed connect calls closed() instead, and
 * ig_sock_stream_error(t) gives its errno during that callback. The engine
 * may write before the connect completes: writev returns IG_WOULD_BLOCK
 * and the first writable() follows. */
struct ig_transport *ig_sock_connect(struct sock_core *c, const struct sockaddr *addr, socklen_t len);

/* The errno that failed the stream (a refused or unreachable connect, a
 * reset read), or 0. Valid until the stream is freed: during closed(), or
 * any time before the engine's own close. */
int ig_sock_stream_error(const struct ig_transport *t);

#endif
