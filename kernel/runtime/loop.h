/* The per-core event loop: one epoll, one timer wheel, one clock, and an
 * eventfd so other threads (the signal supervisor) can wake it. Callbacks run
 * on the loop's own thread only; nothing in a loop is locked. */
#ifndef KERNEL_LOOP_H
#define KERNEL_LOOP_H

#include <stdatomic.h>
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

/* Work that must wait until every callback on the stack has returned:
 * mostly the release of an object that a frame up the stack may still be
 * using (net/client). Embed one in the object and set fn; ig_loop_defer
 * queues it (once: again only after it has run). The loop runs the queue
 * in order after each batch of events and timers, and when ig_loop_run
 * starts; what runs may queue more, which runs in the same pass. */
struct ig_deferred;
typedef void ig_deferred_fn(struct ig_deferred *d);
struct ig_deferred {
	struct ig_deferred *next;
	ig_deferred_fn *fn;
	bool queued;
};

/* Per-core slots, after h2o's context storage: a part that keeps state
 * per core (the TLS client, the outbound client, the database) finds it in
 * the loop every call already has, with no list and no lock. Each part
 * declares one key, static and zeroed; its first use takes the next free
 * index, once for the whole process. */
#define IG_LOOP_SLOTS 8
struct ig_loop_slot {
	_Atomic int index; /* 0: not given yet; else the slot's index + 1 */
};

struct ig_loop {
	int epfd;
	int wakefd;
	struct ig_io wake_io;
	int core;       /* index of this loop, 0..cores-1 */
	bool running;
	struct ig_clock clock;
	struct ig_timers timers;
	ig_loop_fn *on_wake; /* run on the loop thread after ig_loop_wake */
	void *arg;
	/* run after each batch of events (ig_loop_defer): NULL, the one
	   test on a server's path, unless a stream was freed (net/sock: its
	   events may still be in the batch) or the client deferred something */
	struct ig_deferred *after_batch, **after_batch_tail;
	void *slots[IG_LOOP_SLOTS]; /* ig_loop_slot */
};

/* 0, or -1 with errno set and nothing left open (epfd and wakefd -1). */
int ig_loop_init(struct ig_loop *loop, int core);
void ig_loop_close(struct ig_loop *loop);
int ig_loop_add(struct ig_loop *loop, int fd, uint32_t events, struct ig_io *io);
void ig_loop_del(struct ig_loop *loop, int fd);

/* The address of loop's pointer for key's part: NULL (the pointer) until
 * the part stores its state there, which it does on the loop's own thread.
 * Returns NULL only when more than IG_LOOP_SLOTS keys exist, which is a
 * bug of the build (the caller fails as when memory is short). */
void **ig_loop_slot(struct ig_loop *loop, struct ig_loop_slot *key);
/* What key's part stored in loop's slot, or NULL (nothing yet, or no slot):
 * ig_loop_slot's read alone, inline, for a part on every request's path. */
static inline void *ig_loop_slot_get(const struct ig_loop *loop, struct ig_loop_slot *key)
{
	int index = atomic_load_explicit(&key->index, memory_order_acquire);
	return index > 0 && index <= IG_LOOP_SLOTS ? loop->slots[index - 1] : NULL;
}

/* Runs until running is cleared (by a callback on this thread). */
void ig_loop_run(struct ig_loop *loop);

/* Safe from any thread: makes the loop call on_wake soon. */
void ig_loop_wake(struct ig_loop *loop);

/* Queues d (its fn set) to run after the current batch; on the loop's own
 * thread only. Nothing if d is queued already. */
void ig_loop_defer(struct ig_loop *loop, struct ig_deferred *d);
/* Runs what is queued, until nothing is. ig_loop_run calls it; a test
 * that drives a loop's events or timers itself calls it after each. */
void ig_loop_run_deferred(struct ig_loop *loop);

#endif
