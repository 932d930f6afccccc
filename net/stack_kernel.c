/* The kernel's sockets as the process's stack (net/stack.h's ops table
 * over net/sock): a listener per core, bound before the loops run and
 * joined on one port by SO_REUSEPORT, or a supervisor's socket (LISTEN_FDS)
 * that every core watches; outbound streams are net/sock's connects. */
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

static void kernel_finish(struct ig_loop *loop, uint32_t max_ms)
{
	(void)loop, (void)max_ms; /* the kernel sends what was written after the exit */
}

const struct ig_net_stack ig_kernel_stack = {
	.name = "kernel",
	.one_loop = false,
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
	.finish = kernel_finish,
};
