/* Timer wheel. A timer sits in the slot of its deadline tick; a slot holds
 * timers of every rotation, and running a slot fires only those due now.
 * A bitmap of occupied slots makes "when is the next one" a few word scans. */
#include "timer.h"
#include "ingot.h"

#include <string.h>

void ig_timers_init(struct ig_timers *w, uint64_t now_ms)
{
	memset(w, 0, sizeof *w);
	w->tick = now_ms / IG_TICK_MS;
}

static void slot_mark(struct ig_timers *w, unsigned s, bool on)
{
	if (on)
		w->occupied[s / 64] |= 1ull << (s % 64);
	else
		w->occupied[s / 64] &= ~(1ull << (s % 64));
}

void ig_timer_set(struct ig_timers *w, struct ig_timer *t, uint64_t deadline_ms)
{
	if (t->pprev)
		ig_timer_cancel(w, t);
	t->deadline_ms = deadline_ms;
	uint64_t tick = (deadline_ms + IG_TICK_MS - 1) / IG_TICK_MS;
	if (tick < w->tick)
		tick = w->tick;
	unsigned s = (unsigned)(tick % IG_WHEEL_SLOTS);
	t->next = w->slots[s];
	if (t->next)
		t->next->pprev = &t->next;
	w->slots[s] = t;
	t->pprev = &w->slots[s];
	slot_mark(w, s, true);
	w->armed++;
}

IG_HOT void ig_timer_cancel(struct ig_timers *w, struct ig_timer *t)
{
	if (!t->pprev)
		return;
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->pprev = 0;
	t->next = 0;
	w->armed--;
}

static void run_slot(struct ig_timers *w, unsigned s, uint64_t now_ms)
{
	struct ig_timer *t = w->slots[s];
	while (t) {
		struct ig_timer *next = t->next;
		if (t->deadline_ms <= now_ms) {
			ig_timer_cancel(w, t);
			/* The callback may re-arm t or cancel next, so re-read the
			 * slot's head rather than trusting next. */
			t->fn(t);
			t = w->slots[s];
			continue;
		}
		t = next;
	}
	if (!w->slots[s])
		slot_mark(w, s, false);
}

void ig_timers_run(struct ig_timers *w, uint64_t now_ms)
{
	uint64_t now_tick = now_ms / IG_TICK_MS;
	if (w->armed == 0) {
		w->tick = now_tick + 1;
		return;
	}
	uint64_t last = now_tick;
	if (w->tick > last) /* this tick has been run already */
		return;
	if (last - w->tick >= IG_WHEEL_SLOTS) /* a full turn visits every slot */
		w->tick = last - (IG_WHEEL_SLOTS - 1);
	for (; w->tick <= last; w->tick++) {
		unsigned s = (unsigned)(w->tick % IG_WHEEL_SLOTS);
		if (w->slots[s])
			run_slot(w, s, now_ms);
	}
}

int ig_timers_wait_ms(const struct ig_timers *w, uint64_t now_ms)
{
	if (w->armed == 0)
		return -1;
	unsigned start = (unsigned)(w->tick % IG_WHEEL_SLOTS);
	for (unsigned i = 0; i <= IG_WHEEL_SLOTS / 64; i++) {
		unsigned base = (start / 64 + i) % (IG_WHEEL_SLOTS / 64);
		uint64_t bits = w->occupied[base];
		if (i == 0)
			bits &= ~0ull << (start % 64);
		if (i == IG_WHEEL_SLOTS / 64)
			bits &= (start % 64) ? ~(~0ull << (start % 64)) : 0;
		if (!bits)
			continue;
		unsigned s = base * 64 + (unsigned)__builtin_ctzll(bits);
		uint64_t dist = (s + IG_WHEEL_SLOTS - start) % IG_WHEEL_SLOTS;
		uint64_t due_ms = (w->tick + dist) * IG_TICK_MS;
		return due_ms <= now_ms ? 0 : (int)(due_ms - now_ms);
	}
	return -1;
}
