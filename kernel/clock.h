/* Per-core cached time: a monotonic millisecond clock read once per loop
 * iteration, and the HTTP Date header line rebuilt at most once a second. */
#ifndef KERNEL_CLOCK_H
#define KERNEL_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define IG_DATE_LINE_LEN 37 /* "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" */

struct ig_clock {
	uint64_t now_ms; /* CLOCK_MONOTONIC */
	time_t date_second;
	char date_line[IG_DATE_LINE_LEN + 1];
};

void ig_clock_update(struct ig_clock *c);
/* "2026-11-30T04:05:15" (19 bytes, no NUL) for a UTC time; returns 19. */
size_t ig_format_utc(char *out, time_t t);
uint64_t ig_monotonic_us(void);

#endif
