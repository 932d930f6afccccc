/* net/sock's streams on a real loop over loopback: a stream that another
 * stream's callback closes while its own event waits later in the same
 * epoll batch (the drain closing idle connections, a client dropping its
 * upstream) must not be freed twice nor handed out again before the batch
 * is over; and read_now hands over bytes whose event has not come yet. */
#include "net/sock/sock.h"
#include "tests/unit/check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
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
	ig_loop_close(&loop);
	return check_done();
}
