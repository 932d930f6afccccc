/* The coroutine switch's cost (kernel/runtime/coro.h), a part of `make
 * bench` (tools/bench/coro.js runs it): a resume and the yield back, in a
 * loop, and a whole run of a coroutine that never waits (new, resume,
 * return, the stack back in the pool: what a handler that never waits
 * pays). Prints one JSON object: the best and the median ns per round trip
 * of BENCH_CORO_REPS (7) runs of BENCH_CORO_N (5,000,000) each. A
 * measurement, not a test. */
#include "kernel/runtime/coro.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void forever(void *arg)
{
	volatile long *n = arg;
	for (;;) {
		++*n;
		ig_coro_yield();
	}
}

static void once(void *arg)
{
	++*(volatile long *)arg;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static long env_num(const char *name, long dflt)
{
	const char *s = getenv(name);
	long v = s ? atol(s) : 0;
	return v > 0 ? v : dflt;
}

#define MAX_REPS 64

int main(void)
{
	long n = env_num("BENCH_CORO_N", 5000000), reps = env_num("BENCH_CORO_REPS", 7);
	if (reps > MAX_REPS)
		reps = MAX_REPS;
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 64 * 1024, 16);
	volatile long count = 0;
	struct ig_coro *c = ig_coro_new(&pool, forever, (void *)&count);
	if (!c)
		return 1;
	double trip[MAX_REPS], run[MAX_REPS];
	for (long r = 0; r < reps; r++) {
		double t0 = now_ns();
		for (long i = 0; i < n; i++)
			ig_coro_resume(c);
		trip[r] = (now_ns() - t0) / (double)n;
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			ig_coro_resume(ig_coro_new(&pool, once, (void *)&count));
		run[r] = (now_ns() - t0) / (double)n;
	}
	qsort(trip, (size_t)reps, sizeof trip[0], by_value);
	qsort(run, (size_t)reps, sizeof run[0], by_value);
	printf("{\"n\":%ld,\"reps\":%ld,\"round_trip_ns\":{\"min\":%.2f,\"median\":%.2f},"
	       "\"run_no_wait_ns\":{\"min\":%.2f,\"median\":%.2f}}\n",
	       n, reps, trip[0], trip[reps / 2], run[0], run[reps / 2]);
	return 0;
}
