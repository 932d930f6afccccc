/* Supervisor. Signals are taken synchronously with sigtimedwait so no
 * handler runs in async context; SIGCHLD reaps zombies, which matters when
 * the binary is PID 1. Threads are joined with a deadline so the process
 * never outlives its grace period. */
#include "process.h"
#include "log.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

static sigset_t supervised_set(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGCHLD);
	sigaddset(&s, SIGHUP);
	sigaddset(&s, SIGQUIT);
	return s;
}

void ig_signals_block(void)
{
	sigset_t s = supervised_set();
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	signal(SIGPIPE, SIG_IGN);
}

long ig_raise_nofile(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) != 0)
		return -1;
	if (r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	return (long)r.rlim_cur;
}

static void reap_children(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void deadline_after(struct timespec *ts, uint32_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Joins threads [*joined, n) until the absolute deadline; NULL waits forever. */
static void join_until(pthread_t *threads, int n, int *joined, const struct timespec *deadline)
{
	while (*joined < n) {
		int rc = deadline ? pthread_timedjoin_np(threads[*joined], NULL, deadline)
				  : pthread_join(threads[*joined], NULL);
		if (rc != 0)
			return;
		(*joined)++;
	}
}

bool ig_supervise(pthread_t *threads, int n, uint32_t grace_ms, const struct ig_drain_hooks *hooks)
{
	sigset_t set = supervised_set();
	int joined = 0;
	for (;;) {
		/* Wake now and then to notice loops that stopped on their own
		 * (a fatal error on every core). */
		struct timespec tick = { .tv_sec = 1 };
		siginfo_t info;
		int sig = sigtimedwait(&set, &info, &tick);
		if (sig == SIGCHLD) {
			reap_children();
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			struct ig_logline l;
			if (ig_log_begin(&l, IG_LOG_INFO, "draining")) {
				ig_log_cstr(&l, "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
				ig_log_int(&l, "grace_ms", grace_ms);
				ig_log_end(&l);
			}
			break;
		}
		if (sig < 0 && errno == EAGAIN) {
			struct timespec now;
			deadline_after(&now, 0);
			join_until(threads, n, &joined, &now);
			if (joined == n)
				return true;
		}
		/* SIGHUP and SIGQUIT: ignored rather than fatal, as a server
		 * under a supervisor expects. */
	}
	hooks->drain(hooks->arg);
	struct timespec deadline;
	deadline_after(&deadline, grace_ms);
	join_until(threads, n, &joined, &deadline);
	reap_children();
	if (joined == n)
		return true;
	hooks->force(hooks->arg);
	join_until(threads, n, &joined, NULL);
	return false;
}
