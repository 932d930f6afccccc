/* The kernel's sockets as the process's stack (net/stack.h's ops table
 * over net/sock): a listener per core, bound before the loops run and
 * joined on one port by SO_REUSEPORT, or a supervisor's socket (LISTEN_FDS)
 * that every core watches; outbound streams are net/sock's connects, and
 * datagrams (the resolver's) connected UDP sockets on the loop. */
#include "net/stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Room for the first accepted streams (16 of net/sock's): the pool's seed. */
#define SEED_BYTES 4096

struct ig_net_listener {
	_Alignas(64) struct sock_core core; /* its own cache lines: one core writes them */
	struct ig_net_listen_spec spec;
	int fd; /* -1 once closed */
	int port;
	bool serving;
};

static const char *kernel_configure(const char *net, const char *ip, const char *gw, char *err, size_t errlen)
{
	(void)net, (void)err, (void)errlen;
	return ip[0] || gw[0] ? "INGOT_NET_IP and INGOT_NET_GW need INGOT_NET=tap:NAME or virtio" : NULL;
}

static int kernel_start(struct ig_loop *loop, uint32_t max_streams, char *err, size_t errlen)
{
	(void)loop, (void)max_streams, (void)err, (void)errlen;
	return 0; /* the kernel's stack is up */
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
	return 0; /* a unix socket */
}

static int kernel_open(struct ig_net_listener *l, const struct ig_net_listen_spec *spec, int *port, char *err,
		       size_t errlen)
{
	*l = (struct ig_net_listener){ .spec = *spec, .fd = spec->fd };
	l->core.listen_fd = -1;
	if (spec->fd >= 0)
		*port = bound_port(spec->fd);
	else if (spec->probe && *port && ig_sock_port_free(spec->host, *port, spec->probe, err, errlen) != 0)
		return -1;
	else if ((l->fd = (spec->exclusive ? ig_sock_listen_exclusive : ig_sock_listen)(spec->host, port, spec->backlog,
											       err, errlen)) < 0)
		return -1;
	l->port = *port;
	return 0;
}

static int kernel_serve(struct ig_net_listener *l, struct ig_loop *loop, void *seed, char *err, size_t errlen)
{
	const struct ig_net_listen_spec *s = &l->spec;
	ig_sock_core_init(&l->core, loop, l->fd, s->max_streams, s->accept, s->arg);
	l->core.keep_peer = s->keep_peer;
	if (s->reserve)
		ig_sock_core_reserve(&l->core, s->reserve, true);
	if (seed)
		ig_pool_seed(&l->core.streams, seed, SEED_BYTES / l->core.streams.obj_size);
	if (ig_sock_core_start(&l->core) != 0) {
		snprintf(err, errlen, "cannot watch the listener on port %d: %s", l->port, strerror(errno));
		return -1;
	}
	l->serving = true;
	return 0;
}

static int kernel_port(const struct ig_net_listener *l)
{
	return l->port;
}

static void kernel_stop_accepting(struct ig_net_listener *l)
{
	if (l->serving)
		ig_sock_core_stop_accepting(&l->core); /* closes the socket */
	else if (l->fd >= 0)
		close(l->fd); /* its loop never ran */
	l->fd = -1;
	l->serving = false;
}

static uint64_t kernel_refused(const struct ig_net_listener *l)
{
	return ig_counter_get(&l->core.refused);
}

static uint64_t kernel_shed(const struct ig_net_listener *l)
{
	return ig_counter_get(&l->core.shed);
}

static struct ig_transport *kernel_connect(struct sock_core *sc, struct ig_loop *loop, const struct sockaddr *addr,
					   socklen_t len)
{
	(void)loop; /* sc's */
	return ig_sock_connect(sc, addr, len);
}

/* A datagram endpoint: a UDP socket connected to its peer, so the kernel
 * picks the port, drops anyone else's datagrams and reports an ICMP port
 * unreachable as ECONNREFUSED. */
struct kernel_dgram {
	int fd; /* -1 once closed */
	struct ig_io io;
	struct ig_loop *loop;
};
_Static_assert(sizeof(struct kernel_dgram) <= IG_NET_DGRAM_PRIV, "IG_NET_DGRAM_PRIV too small");

static struct kernel_dgram *kernel_dgram(struct ig_net_dgram *d)
{
	return (struct kernel_dgram *)d->priv;
}

/* One datagram per event: fn may close d (and open it again), so the
 * loop's level-triggered readiness brings the next one. */
static void on_dgram_readable(struct ig_io *io, uint32_t events)
{
	(void)events;
	struct kernel_dgram *k = (struct kernel_dgram *)((char *)io - offsetof(struct kernel_dgram, io));
	struct ig_net_dgram *d = (struct ig_net_dgram *)((char *)k - offsetof(struct ig_net_dgram, priv));
	/* An event of the batch in which fn closed it. */
	if (k->fd < 0)
		return;
	uint8_t buf[IG_NET_DGRAM_MAX];
	ssize_t n;
	do
		n = recv(k->fd, buf, sizeof buf, 0);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		d->fn(d, buf, (size_t)n, 0);
	else if (errno != EAGAIN && errno != EWOULDBLOCK)
		d->fn(d, NULL, 0, errno);
}

static int kernel_dgram_open(struct ig_net_dgram *d, struct ig_loop *loop, const struct sockaddr *addr, socklen_t len)
{
	struct kernel_dgram *k = kernel_dgram(d);
	*k = (struct kernel_dgram){ .fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0),
				    .io.fn = on_dgram_readable, .loop = loop };
	if (k->fd < 0)
		return errno;
	if (connect(k->fd, addr, len) != 0 || ig_loop_add(loop, k->fd, EPOLLIN, &k->io) != 0) {
		int e = errno;
		close(k->fd);
		k->fd = -1;
		return e;
	}
	return 0;
}

static int kernel_dgram_send(struct ig_net_dgram *d, const void *data, size_t len)
{
	return send(kernel_dgram(d)->fd, data, len, 0) == (ssize_t)len ? 0 : errno;
}

static void kernel_dgram_close(struct ig_net_dgram *d)
{
	struct kernel_dgram *k = kernel_dgram(d);
	if (k->fd < 0)
		return;
	ig_loop_del(k->loop, k->fd);
	close(k->fd);
	k->fd = -1;
}

static void kernel_finish(struct ig_loop *loop, uint32_t max_ms)
{
	(void)loop, (void)max_ms; /* the kernel sends what was written after the exit */
}

const struct ig_net_stack ig_kernel_stack = {
	.name = "kernel",
	.takes_fds = true,
	.streams_are_fds = true,
	.listener_size = sizeof(struct ig_net_listener),
	.seed_size = SEED_BYTES,
	.configure = kernel_configure,
	.start = kernel_start,
	.open = kernel_open,
	.serve = kernel_serve,
	.port = kernel_port,
	.stop_accepting = kernel_stop_accepting,
	.refused = kernel_refused,
	.shed = kernel_shed,
	.connect = kernel_connect,
	.stream_error = ig_sock_stream_error,
	.dgram_open = kernel_dgram_open,
	.dgram_send = kernel_dgram_send,
	.dgram_close = kernel_dgram_close,
	.finish = kernel_finish,
};
