/* net/sock's streams on a real loop over loopback: a stream that another
 * stream's callback closes while its own event waits later in the same
 * epoll batch (the drain closing idle connections, a client dropping its
 * upstream) must not be freed twice nor handed out again before the batch
 * is over; read_now hands over bytes whose event has not come yet; and at
 * the descriptor limit, what waits is shed on the spare descriptor and the
 * listener leaves epoll for a doubling backoff, or, with spares that
 * serve, is let in. */
#include "net/sock/sock.h"
#include "tests/unit/check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

static struct ig_loop loop;
static struct sock_core core;

struct engine {
	struct ig_transport *t;
	char buf[64];
	size_t got;
	int received_calls, closed_calls;
};

static struct engine engines[2];
static int accepted;
static bool close_other; /* the first stream to hear closes the other one */

static char *eng_lend(void *e, size_t *cap)
{
	struct engine *en = e;
	*cap = sizeof en->buf - en->got;
	return en->buf + en->got;
}

static void eng_received(void *e, size_t n)
{
	struct engine *en = e;
	en->got += n;
	en->received_calls++;
	if (close_other) {
		struct engine *o = en == &engines[0] ? &engines[1] : &engines[0];
		o->t->ops->close(o->t, 0);
		o->t = NULL;
		close_other = false;
		loop.running = false; /* this batch ends, then the loop returns */
	}
}

static void eng_writable(void *e)
{
	(void)e;
}

static void eng_closed(void *e)
{
	((struct engine *)e)->closed_calls++;
}

static const struct ig_stream_ops eng_ops = { eng_lend, eng_received, eng_writable, eng_closed };

static void *on_accept(void *arg, struct ig_transport *t)
{
	(void)arg;
	struct engine *en = &engines[accepted++];
	en->t = t;
	t->engine = en;
	t->engine_ops = &eng_ops;
	if (accepted == 2)
		loop.running = false;
	return en;
}

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		abort();
	return fd;
}

static int served; /* connections a serving reserve let in */

static void *on_accept_count(void *arg, struct ig_transport *t)
{
	(void)arg, (void)t;
	served++;
	return NULL; /* refused: net/sock closes it */
}

/* Whether fd is in loop's epoll: an ADD finds it there (EEXIST), or is
 * undone. */
static bool watched(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	if (epoll_ctl(loop.epfd, EPOLL_CTL_ADD, fd, &ev) == 0) {
		epoll_ctl(loop.epfd, EPOLL_CTL_DEL, fd, NULL);
		return false;
	}
	return errno == EEXIST;
}

/* Takes every descriptor left (under a soft limit of 64): dups of 0 in
 * held, their count returned. */
static int exhaust(int *held, int cap)
{
	int n = 0;
	while (n < cap && (held[n] = dup(0)) >= 0)
		n++;
	return n;
}

static bool closed_by_peer(int fd)
{
	char c;
	return read(fd, &c, 1) == 0;
}

static void descriptor_limit(void)
{
	char err[128];
	int port = 0, sport = 0;
	int lfd = ig_sock_listen("127.0.0.1", &port, 16, err, sizeof err);
	int sfd = ig_sock_listen("127.0.0.1", &sport, 16, err, sizeof err);
	static struct sock_core shed, serve;
	ig_sock_core_init(&shed, &loop, lfd, 16, on_accept_count, NULL);
	ig_sock_core_init(&serve, &loop, sfd, 16, on_accept_count, NULL);
	ig_sock_core_reserve(&serve, 2, true);
	CHECK(ig_sock_core_start(&shed) == 0 && ig_sock_core_start(&serve) == 0, "the listeners start");
	CHECK_INT(shed.spares, 1, "one spare kept by default");
	CHECK_INT(serve.spares, 2, "the serving reserve's spares");
	int c1 = connect_to(port), c2 = connect_to(port), s1 = connect_to(sport), s2 = connect_to(sport),
	    s3 = connect_to(sport);

	struct rlimit saved, low;
	getrlimit(RLIMIT_NOFILE, &saved);
	low = (struct rlimit){ .rlim_cur = 64, .rlim_max = saved.rlim_max };
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0, "a soft limit of 64");
	int held[64], n = exhaust(held, 64);
	CHECK(n < 64 && errno == EMFILE, "every descriptor taken");

	/* The event a listener with connections waiting raises: at the limit,
	   both are shed, and the listener leaves epoll for 100 ms. */
	shed.listen_io.fn(&shed.listen_io, EPOLLIN);
	CHECK_INT(ig_counter_get(&shed.shed), 2, "both waiting connections shed");
	CHECK_INT(served, 0, "none reached the engine");
	CHECK(closed_by_peer(c1) && closed_by_peer(c2), "each closed cleanly (EOF, no reset)");
	CHECK_INT(ig_counter_get(&shed.pauses), 1, "one pause");
	CHECK_INT(shed.backoff_ms, 100, "for 100 ms");
	CHECK(ig_timer_armed(&shed.backoff), "the backoff timer is set");
	CHECK(!watched(lfd), "the listener is out of epoll: no event can spin");
	CHECK_INT(shed.spares, 1, "the spare taken back");

	/* The backoff over: watched again; the limit still there, the next
	   connection is shed and the backoff doubles. */
	shed.backoff.fn(&shed.backoff);
	CHECK(watched(lfd), "back in epoll after the backoff");
	close(held[--n]);
	int c3 = connect_to(port); /* on the descriptor just freed */
	shed.listen_io.fn(&shed.listen_io, EPOLLIN);
	CHECK_INT(ig_counter_get(&shed.shed), 3, "the third shed");
	CHECK_INT(shed.backoff_ms, 200, "the backoff doubled");
	CHECK(closed_by_peer(c3), "closed cleanly");

	/* Spares that serve let the waiting connections in while they last,
	   then pause. */
	serve.listen_io.fn(&serve.listen_io, EPOLLIN);
	CHECK_INT(served, 2, "two let in on the two spares");
	CHECK_INT(ig_counter_get(&serve.shed), 0, "none shed");
	CHECK_INT(ig_counter_get(&serve.pauses), 1, "then a pause: no spare left for the third");

	while (n > 0)
		close(held[--n]);
	setrlimit(RLIMIT_NOFILE, &saved);
	/* Descriptors back: the serving reserve refills on its next event. */
	serve.backoff.fn(&serve.backoff);
	serve.listen_io.fn(&serve.listen_io, EPOLLIN);
	CHECK_INT(served, 3, "the third let in once descriptors are back");
	CHECK_INT(serve.spares, 2, "the spares refilled");
	ig_sock_core_stop_accepting(&shed);
	ig_sock_core_stop_accepting(&serve);
	CHECK(!ig_timer_armed(&shed.backoff) && shed.spares == 0, "stopping cancels the backoff, closes the spares");
	close(c1), close(c2), close(c3), close(s1), close(s2), close(s3);
}

/* ig_sock_port_free: a port another socket listens on (SO_REUSEPORT or
   not) is not free, and the message names the setting and the port; a
   port nothing listens on is, even with a connection's end bound there. */
static void port_probe(void)
{
	char err[160] = "", want[32];
	int port = 0;
	int shared = ig_sock_listen("127.0.0.1", &port, 4, err, sizeof err);
	CHECK(shared >= 0, "a SO_REUSEPORT listener");
	CHECK(ig_sock_port_free("127.0.0.1", port, "PORT", err, sizeof err) == -1, "its port is not free");
	snprintf(want, sizeof want, "PORT %d ", port);
	CHECK(strncmp(err, want, strlen(want)) == 0, "the message names the setting and the port first");
	CHECK(ig_sock_port_free("0.0.0.0", port, "PORT", err, sizeof err) == -1, "nor the wildcard's of that port");
	int again = ig_sock_listen("127.0.0.1", &port, 4, err, sizeof err);
	CHECK(again >= 0, "the probe left it joinable: a second SO_REUSEPORT listener joins");
	close(again);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(connect(c, (struct sockaddr *)&to, sizeof to) == 0, "a client connects");
	close(shared);
	CHECK(ig_sock_port_free("127.0.0.1", port, "PORT", err, sizeof err) == 0,
	      "once closed it is free, its accepted-but-unaccepted connection notwithstanding");
	close(c);
	int exclusive = ig_sock_listen_exclusive("127.0.0.1", &port, 4, err, sizeof err);
	CHECK(exclusive >= 0 && ig_sock_port_free("127.0.0.1", port, "INGOT_TLS_PORT", err, sizeof err) == -1 &&
		      strncmp(err, "INGOT_TLS_PORT ", 15) == 0,
	      "an exclusive listener's port is not free either");
	close(exclusive);
}

int main(void)
{
	char err[128];
	int port = 0;
	int lfd = ig_sock_listen("127.0.0.1", &port, 16, err, sizeof err);
	if (lfd < 0 || ig_loop_init(&loop, 0) != 0)
		abort();
	ig_sock_core_init(&core, &loop, lfd, 16, on_accept, NULL);
	CHECK(ig_sock_core_start(&core) == 0, "the listener starts");
	int a = connect_to(port), b = connect_to(port);
	ig_loop_run(&loop); /* until both are accepted */
	CHECK_INT(accepted, 2, "both connections accepted");
	CHECK_INT(core.streams.in_use, 2, "two streams in use");

	/* Both ready in one batch: the first to hear closes the other, whose
	   event is still to come in that batch. */
	close_other = true;
	(void)!write(a, "a", 1);
	(void)!write(b, "b", 1);
	ig_loop_run(&loop);
	int heard = engines[0].received_calls + engines[1].received_calls;
	CHECK_INT(heard, 1, "one stream heard its byte; the other was closed first");
	CHECK_INT(core.streams.in_use, 1, "the closed stream went back to the pool once");
	void *x = ig_pool_take(&core.streams), *y = ig_pool_take(&core.streams);
	CHECK(x && y && x != y, "the pool hands out distinct streams (no double give)");
	ig_pool_give(&core.streams, x);
	ig_pool_give(&core.streams, y);

	/* read_now: bytes in the socket before their event is dispatched. */
	struct engine *live = engines[0].t ? &engines[0] : &engines[1];
	int live_fd = live == &engines[0] ? a : b;
	size_t before = live->got;
	CHECK(!live->t->ops->read_now(live->t), "read_now with nothing waiting: false, engine untold");
	CHECK_INT(live->got, before, "nothing delivered");
	(void)!write(live_fd, "xyz", 3);
	CHECK(live->t->ops->read_now(live->t), "read_now with bytes waiting: true");
	CHECK_INT(live->got, before + 3, "the waiting bytes were delivered at once");

	live->t->ops->close(live->t, 0);
	ig_loop_run_deferred(&loop);
	CHECK_INT(core.streams.in_use, 0, "every stream back in the pool");
	close(a);
	close(b);
	ig_sock_core_stop_accepting(&core);
	descriptor_limit();
	port_probe();
	ig_loop_close(&loop);
	return check_done();
}
