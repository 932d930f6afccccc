/* Event loop: wait, read the clock once, dispatch events, run due timers,
 * then the work deferred until all of them had returned. */
#include "loop.h"
#include "ingot.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define IG_EVENTS_PER_WAIT 256

static void on_wakefd(struct ig_io *io, uint32_t events)
{
	(void)events;
	struct ig_loop *loop = (struct ig_loop *)((char *)io - offsetof(struct ig_loop, wake_io));
	uint64_t v;
	while (read(loop->wakefd, &v, sizeof v) > 0)
		;
	if (loop->on_wake)
		loop->on_wake(loop, loop->arg);
}

int ig_loop_init(struct ig_loop *loop, int core)
{
	*loop = (struct ig_loop){ .epfd = -1, .wakefd = -1, .core = core };
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	loop->wake_io.fn = on_wakefd;
	if (loop->epfd < 0 || loop->wakefd < 0 || ig_loop_add(loop, loop->wakefd, EPOLLIN, &loop->wake_io) != 0) {
		/* What was opened goes: the caller's report of the failure may
		   need a descriptor (net/lambda posts it on a socket). */
		int e = errno;
		ig_loop_close(loop);
		loop->epfd = loop->wakefd = -1;
		errno = e;
		return -1;
	}
	ig_clock_update(&loop->clock);
	ig_timers_init(&loop->timers, loop->clock.now_ms);
	return 0;
}

void **ig_loop_slot(struct ig_loop *loop, struct ig_loop_slot *key)
{
	static _Atomic int slots_given;
	int index = atomic_load_explicit(&key->index, memory_order_acquire);
	if (!index) {
		/* Two threads may race for the key's first index: the loser's
		   index stays unused, one of a few, once for the process. */
		int mine = atomic_fetch_add(&slots_given, 1) + 1;
		if (atomic_compare_exchange_strong(&key->index, &index, mine))
			index = mine;
	}
	return index <= IG_LOOP_SLOTS ? &loop->slots[index - 1] : NULL;
}

void ig_loop_close(struct ig_loop *loop)
{
	if (loop->wakefd >= 0)
		close(loop->wakefd);
	if (loop->epfd >= 0)
		close(loop->epfd);
}

int ig_loop_add(struct ig_loop *loop, int fd, uint32_t events, struct ig_io *io)
{
	struct epoll_event ev = { .events = events, .data.ptr = io };
	return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void ig_loop_del(struct ig_loop *loop, int fd)
{
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, 0);
}

void ig_loop_wake(struct ig_loop *loop)
{
	uint64_t one = 1;
	(void)!write(loop->wakefd, &one, sizeof one);
}

IG_HOT void ig_loop_defer(struct ig_loop *loop, struct ig_deferred *d)
{
	if (d->queued)
		return;
	d->queued = true;
	d->next = NULL;
	if (loop->after_batch)
		*loop->after_batch_tail = d;
	else
		loop->after_batch = d;
	loop->after_batch_tail = &d->next;
}

IG_HOT void ig_loop_run_deferred(struct ig_loop *loop)
{
	struct ig_deferred *d;
	while ((d = loop->after_batch)) {
		loop->after_batch = d->next;
		d->queued = false;
		d->fn(d); /* may free d, or queue it again */
	}
}

void ig_loop_run(struct ig_loop *loop)
{
	struct epoll_event events[IG_EVENTS_PER_WAIT];
	loop->running = true;
	/* Work deferred before the loop ran (a call ended at dispatch). */
	if (loop->after_batch)
		ig_loop_run_deferred(loop);
	while (loop->running) {
		int timeout = ig_timers_wait_ms(&loop->timers, loop->clock.now_ms);
		int n = epoll_wait(loop->epfd, events, IG_EVENTS_PER_WAIT, timeout);
		if (n < 0 && errno != EINTR)
			break;
		ig_clock_update(&loop->clock);
		for (int i = 0; i < n; i++) {
			struct ig_io *io = events[i].data.ptr;
			io->fn(io, events[i].events);
		}
		ig_timers_run(&loop->timers, loop->clock.now_ms);
		if (loop->after_batch)
			ig_loop_run_deferred(loop);
	}
}
