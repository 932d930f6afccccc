/* Structured logs: one JSON object per line on stdout, whole lines only,
 * so lines from different cores never interleave. A line is built on the
 * caller's stack (struct ig_logline) and needs no allocation; any thread
 * may log. Once a server runs, a line goes through its thread's buffer to
 * a writer thread, so a slow reader of stdout never blocks a loop: lines
 * that do not fit are dropped and counted (errors and warnings are kept
 * before the rest). One thread's lines keep their order; across threads,
 * "ts" orders them. */
#ifndef INGOT_LOG_H
#define INGOT_LOG_H

#include "ingot/base.h"

/* A line's level, most severe first: a line is written when its level is
 * at most ig_log_threshold. */
enum ig_log_level { IG_LOG_ERROR, IG_LOG_WARN, IG_LOG_INFO, IG_LOG_DEBUG };

/* The most verbose level written: INGOT_LOG_LEVEL from the start, changed
 * while running by the admin listener's /loglevel or SIGUSR1 (debug) and
 * SIGUSR2 (back to INGOT_LOG_LEVEL). Read it with ig_log_enabled; change it
 * with ig_log_set_threshold, from any thread. */
extern int ig_log_threshold;

/* Whether a line at level would be written now: for a caller that would
 * otherwise format fields for nothing (a debug line on a hot path costs
 * this one load and compare at info level). */
static inline bool ig_log_enabled(enum ig_log_level level)
{
	return (int)level <= __atomic_load_n(&ig_log_threshold, __ATOMIC_RELAXED);
}

/* Sets the threshold; lines begun after it (on any thread) follow it. */
void ig_log_set_threshold(enum ig_log_level level);

/* A level's name as lines carry it ("error", "warn", "info", "debug"), a
 * static string; "info" for a value that is no level. */
const char *ig_log_level_name(enum ig_log_level level);

/* One line being built: the caller's (on its stack, usually), used by one
 * thread from ig_log_begin to ig_log_end. A line past buf's size is cut
 * at a field and marked "truncated":true. */
struct ig_logline {
	char buf[2048];
	size_t len;
	bool truncated;
	unsigned char level; /* enum ig_log_level */
	uint64_t ts_ns;      /* when begun (realtime): the writer's order */
};

/* Starts a line at level with "ts", "level" and "msg" (msg copied,
 * escaped). Returns: true when level passes ig_log_threshold, and then
 * the caller adds fields and must end it with ig_log_end; false means
 * skip it: l is untouched, and no other ig_log_ call may use it. */
IG_MUST_USE IG_NONNULL(1, 3) bool ig_log_begin(struct ig_logline *l, enum ig_log_level level, const char *msg);
/* Add one field each, "key":value, to a line ig_log_begin started; key
 * and the values are copied (strings escaped as JSON; v may be NULL when
 * n is 0). */
IG_NONNULL(1, 2) void ig_log_str(struct ig_logline *l, const char *key, const char *v, size_t n);
IG_NONNULL(1, 2, 3) void ig_log_cstr(struct ig_logline *l, const char *key, const char *v);
IG_NONNULL(1, 2) void ig_log_int(struct ig_logline *l, const char *key, int64_t v);
/* Closes the line and sends it to stdout; l may then be begun again.
 * A write that fails, or a full buffer, drops the line. */
IG_NONNULL(1) void ig_log_end(struct ig_logline *l);

/* A line with only msg at level, if level passes the threshold. */
IG_NONNULL(2) void ig_log_msg(enum ig_log_level level, const char *msg);

#endif
