/* Structured logs: one JSON object per line on stdout, written with a single
 * write(2) so lines from different cores never interleave. */
#ifndef KERNEL_LOG_H
#define KERNEL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ig_log_level { IG_LOG_ERROR, IG_LOG_WARN, IG_LOG_INFO, IG_LOG_DEBUG };

extern int ig_log_threshold;

struct ig_logline {
	char buf[2048];
	size_t len;
	bool truncated;
};

/* Starts a line if level passes the threshold; false means: skip it. */
bool ig_log_begin(struct ig_logline *l, enum ig_log_level level, const char *msg);
void ig_log_str(struct ig_logline *l, const char *key, const char *v, size_t n);
void ig_log_cstr(struct ig_logline *l, const char *key, const char *v);
void ig_log_int(struct ig_logline *l, const char *key, int64_t v);
void ig_log_end(struct ig_logline *l);

/* One-field convenience for simple messages. */
void ig_log_msg(enum ig_log_level level, const char *msg);

#endif
