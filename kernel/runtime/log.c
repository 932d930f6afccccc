/* JSON-lines logger. Each line carries ts (UTC, milliseconds), level and
 * msg, then the caller's fields. Fields that do not fit are dropped and the
 * line is marked "truncated":true rather than split. A finished line goes
 * to ig_log_queue when one is set (log_ring.c, once a server listens),
 * else straight to stdout. */
#include "ingot/log.h"
#include "log_ring.h"
#include "json.h"
#include "ingot/base.h"
#include "clock.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

int ig_log_threshold = IG_LOG_INFO;

_Atomic(ig_log_queue_fn *) ig_log_queue;

void ig_log_set_threshold(enum ig_log_level level)
{
	__atomic_store_n(&ig_log_threshold, (int)level, __ATOMIC_RELAXED);
}

static const char *const level_names[] = { "error", "warn", "info", "debug" };

const char *ig_log_level_name(enum ig_log_level level)
{
	return (unsigned)level <= IG_LOG_DEBUG ? level_names[level] : "info";
}

static void put(struct ig_logline *l, const char *s, size_t n)
{
	if (l->len + n + 2 > sizeof l->buf) { /* keep room for "}\n" */
		l->truncated = true;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void put_escaped(struct ig_logline *l, const char *s, size_t n)
{
	char tmp[6 * 64];
	while (n) {
		size_t k = n < 64 ? n : 64;
		put(l, tmp, ig_json_escape(tmp, s, k));
		s += k;
		n -= k;
	}
}

static void put_key(struct ig_logline *l, const char *key)
{
	put(l, ",\"", 2);
	put(l, key, strlen(key));
	put(l, "\":", 2);
}

bool ig_log_begin(struct ig_logline *l, enum ig_log_level level, const char *msg)
{
	if (!ig_log_enabled(level))
		return false;
	l->len = 0;
	l->truncated = false;
	l->level = (unsigned char)level;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	l->ts_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	char t[32];
	size_t n = ig_format_utc(t, ts.tv_sec);
	t[n++] = '.';
	t[n++] = (char)('0' + ts.tv_nsec / 100000000);
	t[n++] = (char)('0' + ts.tv_nsec / 10000000 % 10);
	t[n++] = (char)('0' + ts.tv_nsec / 1000000 % 10);
	t[n++] = 'Z';
	put(l, "{\"ts\":\"", 7);
	put(l, t, n);
	put(l, "\",\"level\":\"", 11);
	put(l, level_names[level], strlen(level_names[level]));
	put(l, "\",\"msg\":\"", 9);
	put_escaped(l, msg, strlen(msg));
	put(l, "\"", 1);
	return true;
}

void ig_log_str(struct ig_logline *l, const char *key, const char *v, size_t n)
{
	put_key(l, key);
	put(l, "\"", 1);
	put_escaped(l, v, n);
	put(l, "\"", 1);
}

void ig_log_cstr(struct ig_logline *l, const char *key, const char *v)
{
	ig_log_str(l, key, v, strlen(v));
}

void ig_log_int(struct ig_logline *l, const char *key, int64_t v)
{
	char d[24];
	put_key(l, key);
	put(l, d, ig_fmt_i64(d, v));
}

static void close_line(struct ig_logline *l)
{
	if (l->truncated)
		put(l, ",\"truncated\":true", 17);
	l->buf[l->len++] = '}';
	l->buf[l->len++] = '\n';
}

static void write_line(const struct ig_logline *l)
{
	/* stdout may be a pipe a supervisor reads; a short write is retried. */
	for (size_t off = 0; off < l->len;) {
		ssize_t w = write(1, l->buf + off, l->len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

void ig_log_end(struct ig_logline *l)
{
	close_line(l);
	ig_log_queue_fn *queue = atomic_load_explicit(&ig_log_queue, memory_order_acquire);
	if (!queue || !queue(l))
		write_line(l);
}

void ig_log_end_direct(struct ig_logline *l)
{
	close_line(l);
	write_line(l);
}

void ig_log_msg(enum ig_log_level level, const char *msg)
{
	struct ig_logline l;
	if (ig_log_begin(&l, level, msg))
		ig_log_end(&l);
}
