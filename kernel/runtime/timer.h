/* A hashed timer wheel, one per core: O(1) set and cancel, so every
 * connection can own a timer. Resolution is one tick (IG_TICK_MS); timers
 * fire at or after their deadline, never before. */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#define IG_TICK_MS 4
#define IG_WHEEL_SLOTS 1024 /* one rotation: 4.096 s */

struct ig_timer;
typedef void ig_timer_fn(struct ig_timer *t);

struct ig_timer {
	struct ig_timer *next, **pprev; /* pprev == NULL: not armed */
	uint64_t deadline_ms;
	ig_timer_fn *fn;
};

struct ig_timers {
	struct ig_timer *slots[IG_WHEEL_SLOTS];
	uint64_t occupied[IG_WHEEL_SLOTS / 64];
	uint64_t tick; /* every tick before this has been run */
	uint32_t armed;
};

void ig_timers_init(struct ig_timers *w, uint64_t now_ms);
void ig_timer_set(struct ig_timers *w, struct ig_timer *t, uint64_t deadline_ms);
void ig_timer_cancel(struct ig_timers *w, struct ig_timer *t);
static inline bool ig_timer_armed(const struct ig_timer *t) { return t->pprev != 0; }

/* For a deadline that moves on every batch (a connection's): arms t for
 * deadline_ms unless it is armed to fire earlier already. A timer that
 * fires before the owner's current deadline is re-armed by its owner, so a
 * deadline pushed later costs no wheel operation. */
static inline void ig_timer_set_lazy(struct ig_timers *w, struct ig_timer *t, uint64_t deadline_ms)
{
	if (!ig_timer_armed(t) || t->deadline_ms > deadline_ms)
		ig_timer_set(w, t, deadline_ms);
}

/* Runs every timer whose deadline has passed. */
void ig_timers_run(struct ig_timers *w, uint64_t now_ms);

/* Milliseconds until the next occupied slot is due, or -1 if none. */
int ig_timers_wait_ms(const struct ig_timers *w, uint64_t now_ms);

#endif
