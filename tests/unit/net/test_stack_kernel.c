/* The kernel's sockets as net/stack.h's stack, on a real loop over
 * loopback: a listener per core on one port (the first picks it, the next
 * joins), an exclusive one refused on a port that is held, stop_accepting
 * closing the socket whether or not the listener ever served, streams
 * taken from the seed the server gives, refusals over max_streams counted,
 * a supervisor's socket served as given, and datagram endpoints: only
 * their peer's datagrams delivered, a closed port reported. */
#include "net/stack.h"
#include "tests/unit/check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LISTENERS 4
static _Alignas(64) char listener_mem[MAX_LISTENERS][1024];
static _Alignas(16) char seed[8192];
static struct ig_loop loop;
static const struct ig_net_stack *s = &ig_kernel_stack;

static struct ig_transport *accepted[4];
static int accept_count;

static char *eng_lend(void *e, size_t *cap)
{
	(void)e;
	*cap = 0;
	return NULL;
}
static void eng_received(void *e, size_t n) { (void)e, (void)n; }
static void eng_writable(void *e) { (void)e; }
static void eng_closed(void *e) { (void)e; }
static const struct ig_stream_ops eng_ops = { eng_lend, eng_received, eng_writable, eng_closed };

static void *on_accept(void *arg, struct ig_transport *t)
{
	(void)arg;
	accepted[accept_count++] = t;
	t->engine = t;
	t->engine_ops = &eng_ops;
	loop.running = false;
	return t;
}

/* 0, or the errno of a refused connect. */
static int connect_to(int port, int *fd_out)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		abort();
	int rc = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
	*fd_out = fd;
	return rc;
}

static struct ig_net_listen_spec spec_for(int fd, bool exclusive, uint32_t max_streams)
{
	return (struct ig_net_listen_spec){ .host = "127.0.0.1", .backlog = 16, .exclusive = exclusive, .fd = fd,
					    .max_streams = max_streams, .accept = on_accept };
}

/* What a datagram endpoint delivered. */
struct got {
	struct ig_net_dgram d;
	char data[64];
	size_t len;
	int err, calls;
};

static void on_dgram(struct ig_net_dgram *d, const uint8_t *data, size_t len, int err)
{
	struct got *g = (struct got *)d;
	g->calls++;
	g->err = err;
	g->len = len < sizeof g->data ? len : sizeof g->data;
	if (data)
		memcpy(g->data, data, g->len);
	loop.running = false;
}

static int udp_socket(const char *ip, struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	socklen_t len = sizeof *a;
	*a = (struct sockaddr_in){ .sin_family = AF_INET };
	inet_pton(AF_INET, ip, &a->sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof *a) != 0 || getsockname(fd, (struct sockaddr *)a, &len) != 0)
		abort();
	return fd;
}

static void test_dgram(void)
{
	struct sockaddr_in peer_a, other_a, mine;
	int peer = udp_socket("127.0.0.1", &peer_a), other = udp_socket("127.0.0.1", &other_a);
	struct got g = { .d.fn = on_dgram };
	CHECK_INT(s->dgram_open(&g.d, &loop, (struct sockaddr *)&peer_a, sizeof peer_a), 0, "a datagram endpoint opens");
	CHECK_INT(s->dgram_send(&g.d, "ping", 4), 0, "it sends");
	char buf[16];
	socklen_t len = sizeof mine;
	ssize_t n = recvfrom(peer, buf, sizeof buf, 0, (struct sockaddr *)&mine, &len);
	CHECK(n == 4 && memcmp(buf, "ping", 4) == 0 && mine.sin_port != 0, "the peer gets it from an ephemeral port");
	sendto(other, "forged", 6, 0, (struct sockaddr *)&mine, len);
	sendto(peer, "pong", 4, 0, (struct sockaddr *)&mine, len);
	ig_loop_run(&loop);
	CHECK(g.calls == 1 && g.err == 0 && g.len == 4 && memcmp(g.data, "pong", 4) == 0,
	      "only the peer's datagram is delivered, another sender's is dropped");
	s->dgram_close(&g.d);

	/* A peer whose port is closed: the kernel's ICMP answer is reported. */
	close(peer);
	g = (struct got){ .d.fn = on_dgram };
	CHECK_INT(s->dgram_open(&g.d, &loop, (struct sockaddr *)&peer_a, sizeof peer_a), 0, "it opens again");
	s->dgram_send(&g.d, "ping", 4);
	ig_loop_run(&loop);
	CHECK(g.calls == 1 && g.err == ECONNREFUSED && g.len == 0, "a closed port is ECONNREFUSED");
	s->dgram_close(&g.d);
	close(other);
}

int main(void)
{
	char err[160];
	CHECK(s->listener_size <= sizeof listener_mem[0] && s->listener_size % 64 == 0,
	      "a listener fits its slot, a whole number of cache lines");
	CHECK(s->seed_size <= sizeof seed / 2 && s->seed_size % 16 == 0, "a seed fits, 16-byte sized");
	CHECK(s->takes_fds, "socket activation's sockets served");
	CHECK(s->configure("kernel", "", "", err, sizeof err) == NULL, "INGOT_NET=kernel alone is accepted");
	CHECK(s->configure("kernel", "10.0.0.2/24", "", err, sizeof err) != NULL, "an lwIP address is refused");
	if (ig_loop_init(&loop, 0) != 0 || s->start(&loop, 16, err, sizeof err) != 0)
		abort();

	/* Two cores' listeners on one port: the first picks it. */
	struct ig_net_listener *a = (void *)listener_mem[0], *b = (void *)listener_mem[1];
	struct ig_net_listen_spec one = spec_for(-1, false, 1);
	int port = 0;
	CHECK(s->open(a, &one, &port, err, sizeof err) == 0 && port > 0, "the first listener picks a port");
	int picked = port;
	CHECK(s->open(b, &one, &port, err, sizeof err) == 0 && port == picked, "the next core's joins that port");
	struct ig_net_listener *x = (void *)listener_mem[2];
	struct ig_net_listen_spec excl = spec_for(-1, true, 1);
	err[0] = 0;
	CHECK(s->open(x, &excl, &port, err, sizeof err) != 0 && strstr(err, "cannot listen"),
	      "an exclusive listener on a port held fails, saying why");

	/* b never serves: stopping it closes its socket, so that every
	   connection to the port goes to a. */
	s->stop_accepting(b);
	s->stop_accepting(b); /* again: nothing */
	/* a serves with a seed, at most one stream: the first connection is
	   accepted into the seed, the second (in the backlog with it) refused
	   and counted. */
	CHECK(s->serve(a, &loop, seed, err, sizeof err) == 0, "a serves");
	CHECK_INT(s->port(a), picked, "its port");
	int c1, c2;
	CHECK(connect_to(picked, &c1) == 0 && connect_to(picked, &c2) == 0, "two connections to the port");
	ig_loop_run(&loop); /* until a accepts */
	CHECK_INT(accept_count, 1, "one accepted");
	CHECK((char *)accepted[0] >= seed && (char *)accepted[0] < seed + s->seed_size,
	      "the accepted stream is the seed's");
	CHECK_INT(s->refused(a), 1, "the second, over max_streams 1, is refused and counted");

	accepted[0]->ops->close(accepted[0], 0);
	s->stop_accepting(a);
	int c3;
	CHECK_INT(connect_to(picked, &c3), ECONNREFUSED, "once both stopped, nothing listens on the port");
	close(c1), close(c2), close(c3);

	/* A supervisor's socket: served as given, its port read from it. */
	int given_port = 0;
	int given = ig_sock_listen_exclusive("127.0.0.1", &given_port, 16, err, sizeof err);
	struct ig_net_listener *g = (void *)listener_mem[3];
	struct ig_net_listen_spec gs = spec_for(given, false, 4);
	port = 0;
	CHECK(given >= 0 && s->open(g, &gs, &port, err, sizeof err) == 0 && port == given_port,
	      "a given socket's port is its bound one");
	CHECK(s->serve(g, &loop, NULL, err, sizeof err) == 0, "it serves, without a seed");
	int c4;
	CHECK(connect_to(given_port, &c4) == 0, "a connection to it");
	while (accept_count == 1)
		ig_loop_run(&loop);
	CHECK_INT(accept_count, 2, "is accepted");
	accepted[1]->ops->close(accepted[1], 0);
	s->stop_accepting(g);
	int c5;
	CHECK_INT(connect_to(given_port, &c5), ECONNREFUSED, "stopping closes the given socket");
	close(c4), close(c5);
	test_dgram();
	ig_loop_run_deferred(&loop);
	ig_loop_close(&loop);
	return check_done();
}
