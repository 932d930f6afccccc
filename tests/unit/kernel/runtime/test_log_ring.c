/* The log rings (kernel/runtime/log_ring.h) against a pipe this test reads
 * or leaves unread: a full ring drops info lines and counts them, keeps
 * errors, one line reports the count once output flows, one thread's lines
 * keep their order, and a flush waits for what was queued. fd 1 is the
 * pipe while lines are made; the checks print once it is restored, with
 * the writer idle. (A flush's deadline against a reader that never reads
 * is logs_blocked.test's SIGTERM case.) */
#include "kernel/runtime/log_ring.h"
#include "tests/unit/check.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define REPORT "\"level\":\"warn\",\"msg\":\"log lines dropped\""

static int pipe_r, tap_fd;
static char got[4 << 20];
static size_t got_len;

/* Reads the pipe until `want` has arrived (blocking: the writer brings it). */
static bool read_until(const char *want)
{
	while (!memmem(got, got_len, want, strlen(want))) {
		if (got_len == sizeof got)
			return false;
		ssize_t n = read(pipe_r, got + got_len, sizeof got - got_len);
		if (n <= 0)
			return false;
		got_len += (size_t)n;
	}
	return true;
}

static void log_seq(const char *msg, enum ig_log_level level, int64_t seq)
{
	struct ig_logline l;
	if (ig_log_begin(&l, level, msg)) {
		ig_log_int(&l, "seq", seq);
		ig_log_cstr(&l, "pad", "a field to make the line a hundred bytes or so");
		ig_log_end(&l);
	}
}

/* The "seq" values of msg's lines, in the order they arrived. */
static size_t seqs_of(const char *msg, int64_t *out, size_t max)
{
	char key[64];
	snprintf(key, sizeof key, "\"msg\":\"%s\",\"seq\":", msg);
	size_t n = 0;
	for (const char *p = got; (p = memmem(p, got_len - (size_t)(p - got), key, strlen(key))) && n < max;) {
		p += strlen(key);
		out[n++] = strtoll(p, NULL, 10);
	}
	return n;
}

static bool increasing(const int64_t *s, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (s[i] <= s[i - 1])
			return false;
	return true;
}

static void *other_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++)
		log_seq("other", IG_LOG_INFO, i);
	return NULL;
}

/* Keeps reading while two threads log, until the line that follows them. */
static void *reader_thread(void *arg)
{
	(void)arg;
	return read_until("\"msg\":\"both done\"") ? (void *)1 : NULL;
}

static int64_t seqs[100000];

int main(void)
{
	int p[2];
	if (pipe(p) != 0)
		return 1;
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	pipe_r = p[0];
	fflush(stdout);
	tap_fd = dup(1);
	dup2(p[1], 1);
	close(p[1]);

	ig_log_ring_enable(NULL, 0);
	/* Nobody reads: the pipe, the writer's batch and the ring fill. */
	int64_t sent = 0;
	while (ig_log_ring_dropped() == 0 && sent < 100000)
		log_seq("info", IG_LOG_INFO, sent++);
	uint64_t dropped_info = ig_log_ring_dropped();
	log_seq("kept", IG_LOG_ERROR, 1);
	uint64_t dropped_after_error = ig_log_ring_dropped();
	/* Output flows again. */
	bool error_arrived = read_until("\"msg\":\"kept\"");
	bool report_arrived = read_until("\"msg\":\"log lines dropped\"");
	size_t n_info = seqs_of("info", seqs, sizeof seqs / sizeof seqs[0]);
	bool info_in_order = increasing(seqs, n_info);

	/* Two threads at once, the reader keeping up: each keeps its order. */
	pthread_t t, reader;
	void *both_read = NULL;
	pthread_create(&reader, NULL, reader_thread, NULL);
	pthread_create(&t, NULL, other_thread, NULL);
	for (int i = 0; i < 200; i++)
		log_seq("main", IG_LOG_INFO, i);
	pthread_join(t, NULL);
	ig_log_msg(IG_LOG_ERROR, "both done");
	pthread_join(reader, &both_read);
	/* What was queued is written when the flush returns. */
	log_seq("last", IG_LOG_INFO, 0);
	ig_log_ring_flush(10000);
	fcntl(pipe_r, F_SETFL, O_NONBLOCK);
	bool last_arrived = read_until("\"msg\":\"last\"");
	fcntl(pipe_r, F_SETFL, 0);
	size_t n_main = seqs_of("main", seqs, 1000);
	bool main_in_order = n_main == 200 && increasing(seqs, n_main);
	size_t n_other = seqs_of("other", seqs, 1000);
	bool other_in_order = n_other == 200 && increasing(seqs, n_other);

	dup2(tap_fd, 1);
	CHECK(sent > 0 && dropped_info > 0, "info lines are dropped and counted when nobody reads");
	CHECK(n_info > 0 && n_info < (size_t)sent, "the dropped lines did not arrive, the others did");
	CHECK_INT(dropped_after_error, dropped_info, "an error line still fits in a ring that drops info lines");
	CHECK(error_arrived, "the error line arrives once output flows");
	CHECK(report_arrived, "one line reports the dropped count once output flows");
	CHECK(memmem(got, got_len, REPORT, strlen(REPORT)) != NULL, "the report is a warning");
	CHECK(info_in_order, "one thread's lines arrive in order, gaps aside");
	CHECK(both_read && main_in_order && other_in_order, "two threads logging at once: each one's lines whole and in order");
	CHECK(last_arrived, "a flush returns once what was queued is written");
	return check_done();
}
