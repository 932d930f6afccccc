/* Per-core cached time: a monotonic millisecond clock read once per loop
 * iteration, and the HTTP Date header line rebuilt at most once a second. */
#ifndef KERNEL_CLOCK_H
#define KERNEL_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define IG_DATE_LINE_LEN 37 /* "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" */

struct ig_clock {
	uint64_t now_ms; /* CLOCK_MONOTONIC */
	uint64_t now_us; /* the same reading in microseconds: when the loop woke */
	time_t date_second;
	char date_line[IG_DATE_LINE_LEN + 1];
};

void ig_clock_update(struct ig_clock *c);
/* "2026-11-30T04:05:15" (19 bytes, no NUL) for a UTC time; returns 19. */
size_t ig_format_utc(char *out, time_t t);
uint64_t ig_monotonic_us(void);
/* True where the monotonic clock's 0 is the machine's start (the unikernel:
 * the PVH entry; kernel/metal sets it before main), so that the
 * `listening` line's startup_us counts the whole boot. False in a process,
 * whose startup_us counts from the start of ig_main. */
extern bool ig_clock_counts_from_boot;

#endif
