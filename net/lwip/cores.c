/* The stack on every core: the lock around lwIP (a spin lock: what it
 * covers is short, a segment's input or output, never an engine's call),
 * and each core's posted work, run on its own loop. A core posts to
 * itself through the loop's deferred queue; to another through that
 * core's eventfd, written once until it is read. */
#include "lwip.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SPINS_BEFORE_YIELD 1024

static struct ig_loop_slot core_key;

struct ig_lwip_core *ig_lwip_core_of(struct ig_loop *loop)
{
	return ig_loop_slot_get(loop, &core_key);
}

void ig_lwip_lock(struct ig_lwip_core *c)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	for (unsigned spins = 0; atomic_exchange_explicit(&s->locked, true, memory_order_acquire); spins++) {
		if (spins >= SPINS_BEFORE_YIELD) {
			sched_yield();
			spins = 0;
		} else {
			__asm__ volatile("pause");
		}
	}
	s->holder = c;
}

void ig_lwip_unlock(void)
{
	ig_lwip_state.holder = NULL;
	atomic_store_explicit(&ig_lwip_state.locked, false, memory_order_release);
}

void ig_lwip_signal(struct ig_lwip_core *c)
{
	if (ig_lwip_state.holder == c) {
		ig_loop_defer(c->loop, &c->run);
		return;
	}
	if (!atomic_exchange(&c->signaled, true)) {
		uint64_t one = 1;
		(void)!write(c->fd, &one, sizeof one);
	}
}

void ig_lwip_core_run(struct ig_lwip_core *c)
{
	atomic_store(&c->signaled, false);
	ig_lwip_lock(c);
	for (;;) {
		if (c->settle_posted) {
			c->settle_posted = false;
			ig_lwip_port_settle();
		} else if (c->up_posted) {
			c->up_posted = false;
			void (*up)(struct ig_loop *) = c->on_up;
			c->on_up = NULL;
			if (up) {
				ig_lwip_unlock();
				up(c->loop);
				ig_lwip_lock(c);
			}
		} else if (c->streams) {
			struct lwip_stream *s = c->streams;
			ig_lwip_stream_run(s); /* takes it off the list */
		} else if (c->dgrams) {
			ig_lwip_dgram_run(c->dgrams); /* takes it off the list */
		} else {
			break;
		}
	}
	ig_lwip_unlock();
}

static void on_run(struct ig_deferred *d)
{
	ig_lwip_core_run((struct ig_lwip_core *)((char *)d - offsetof(struct ig_lwip_core, run)));
}

static void on_signal(struct ig_io *io, uint32_t events)
{
	(void)events;
	struct ig_lwip_core *c = (struct ig_lwip_core *)((char *)io - offsetof(struct ig_lwip_core, io));
	uint64_t v;
	(void)!read(c->fd, &v, sizeof v);
	ig_lwip_core_run(c);
}

/* Every core's part, claimed in turn as the cores start (once each): no
 * malloc, whose first call would be the start's only one. */
static struct ig_lwip_core parts[IG_MAX_CORES];
static atomic_uint parts_claimed;

int ig_lwip_core_start(struct ig_loop *loop, char *err, size_t errlen)
{
	void **slot = ig_loop_slot(loop, &core_key);
	unsigned i = atomic_fetch_add_explicit(&parts_claimed, 1, memory_order_relaxed);
	if (!slot || i >= IG_MAX_CORES) {
		snprintf(err, errlen, "lwIP: no room for core %d", loop->core);
		return -1;
	}
	struct ig_lwip_core *c = &parts[i];
	c->loop = loop;
	c->run.fn = on_run;
	c->io.fn = on_signal;
	c->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->fd < 0 || ig_loop_add(loop, c->fd, EPOLLIN, &c->io) != 0) {
		snprintf(err, errlen, "lwIP: cannot watch core %d's eventfd: %s", loop->core, strerror(errno));
		if (c->fd >= 0)
			close(c->fd);
		return -1;
	}
	*slot = c;
	ig_lwip_lock(c);
	ig_lwip_state.cores[ig_lwip_state.ncores++] = c; /* as many as parts claimed, at most */
	ig_lwip_unlock();
	return 0;
}
