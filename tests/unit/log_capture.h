/* A unit test's log, captured: set ig_log_queue (kernel/runtime/log_ring.h)
 * to capture, and every line the code under test writes lands in lines,
 * in order, instead of stdout, so a case checks exactly what the log would
 * get. Header-only and single-translation-unit, as check.h. */
#ifndef TESTS_UNIT_LOG_CAPTURE_H
#define TESTS_UNIT_LOG_CAPTURE_H

#include "ingot/log.h"

#include <string.h>

static char lines[16384]; /* every line since lines_clear, NUL-terminated */
static size_t lines_len;
static int line_count; /* counted even when lines is full */

static bool capture(const struct ig_logline *l)
{
	if (lines_len + l->len < sizeof lines) {
		memcpy(lines + lines_len, l->buf, l->len);
		lines_len += l->len;
		lines[lines_len] = 0;
	}
	line_count++;
	return true;
}

static void lines_clear(void)
{
	line_count = 0;
	lines_len = 0;
	lines[0] = 0;
}

#endif
