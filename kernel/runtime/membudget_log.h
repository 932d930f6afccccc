/* The memory budget's refusal lines (membudget.h): one helper for every
 * cause, so that a body's 503, a paused connection and a refused TLS
 * handshake are counted and logged alike. Apart from membudget.c, whose
 * accounts need no log (and whose unit test links no log). */
#ifndef KERNEL_MEMBUDGET_LOG_H
#define KERNEL_MEMBUDGET_LOG_H

#include "membudget.h"

/* Counts a refusal of cause (ig_membudget_count_refusal) and logs msg at
 * warn level, at most once a second per cause (ig_membudget_log_due, now_ms
 * a monotonic clock): the budget, its use, the cause's total as total_key,
 * extra as extra_key where extra_key is not NULL, and how many lines of the
 * cause were suppressed since its last. */
void ig_membudget_refused(enum ig_mem_cause cause, uint64_t now_ms, const char *msg, const char *total_key,
			  const char *extra_key, int64_t extra);

#endif
