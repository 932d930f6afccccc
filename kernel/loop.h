/* The per-core event loop: one epoll, one timer wheel, one clock, and an
 * eventfd so other threads (the signal supervisor) can wake it. Callbacks run
 * on the loop's own thread only; nothing in a loop is locked. */
#ifndef KERNEL_LOOP_H
#define KERNEL_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "clock.h"
#include "timer.h"

struct ig_io;
typedef void ig_io_fn(struct ig_io *io, uint32_t events);

/* Embed in whatever owns a file descriptor; the loop calls fn with the
 * epoll events. */
struct ig_io {
	ig_io_fn *fn;
};

struct ig_loop;
typedef void ig_loop_fn(struct ig_loop *loop, void *arg);

struct ig_loop {
	int epfd;
	int wakefd;
	struct ig_io wake_io;
	int core;       /* index of this loop, 0..cores-1 */
	bool running;
	struct ig_clock clock;
	struct ig_timers timers;
	ig_loop_fn *on_wake; /* run on the loop thread after ig_loop_wake */
	ig_loop_fn *after_batch; /* run after each batch of events */
	void *arg;
};

int ig_loop_init(struct ig_loop *loop, int core);
void ig_loop_close(struct ig_loop *loop);
int ig_loop_add(struct ig_loop *loop, int fd, uint32_t events, struct ig_io *io);
void ig_loop_del(struct ig_loop *loop, int fd);

/* Runs until running is cleared (by a callback on this thread). */
void ig_loop_run(struct ig_loop *loop);

/* Safe from any thread: makes the loop call on_wake soon. */
void ig_loop_wake(struct ig_loop *loop);

#endif
