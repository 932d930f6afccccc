/* TCP on the loop: per-core SO_REUSEPORT listeners and accepted streams
 * that implement the transport interface (net/transport.h). One sock_core
 * per loop; nothing here is shared between cores. */
#ifndef NET_SOCK_H
#define NET_SOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/loop.h"
#include "kernel/pool.h"
#include "net/transport.h"

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
	uint64_t refused; /* accepted and closed at once: over max_streams */
	sock_accept_fn *accept;
	void *accept_arg;
};

/* Creates a listening socket bound to host:port with SO_REUSEPORT. If
 * *port is 0 the kernel picks one and *port is set, so that the listeners
 * of the other cores can join the same port. Returns the fd or -1 with a
 * message in err. */
int sock_listen(const char *host, int *port, int backlog, char *err, size_t errlen);

void sock_core_init(struct sock_core *c, struct ig_loop *loop, int listen_fd,
		    uint32_t max_streams, sock_accept_fn *accept, void *arg);
/* Bytes per stream, for seeding c->streams with a first chunk. */
size_t sock_stream_size(void);
/* Starts accepting on the loop. */
int sock_core_start(struct sock_core *c);
/* Accepts what is already queued, then closes the listener. */
void sock_core_stop_accepting(struct sock_core *c);

#endif
