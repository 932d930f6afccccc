/* Signals through a signalfd, and child reaping. As PID 1 the kernel gives
 * the process no default signal actions, so TERM and INT work only because
 * they are handled here explicitly; orphans of the container or initramfs
 * are reparented to it, so every SIGCHLD reaps all that have exited. */
#include "process.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

int ig_signals_open(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGCHLD);
	sigaddset(&s, SIGHUP);
	sigaddset(&s, SIGQUIT);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
}

enum ig_signal_event ig_signals_read(int fd, const char **name, int *log_signal, bool *reload)
{
	*log_signal = 0;
	*reload = false;
	struct signalfd_siginfo si[8];
	enum ig_signal_event ev = IG_SIGNAL_NONE;
	ssize_t n;
	while ((n = read(fd, si, sizeof si)) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++) {
			switch (si[i].ssi_signo) {
			case SIGCHLD:
				while (waitpid(-1, NULL, WNOHANG) > 0)
					;
				if (ev == IG_SIGNAL_NONE)
					ev = IG_SIGNAL_OTHER;
				break;
			case SIGTERM:
			case SIGINT:
				*name = si[i].ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT";
				ev = IG_SIGNAL_STOP;
				break;
			case SIGUSR1:
			case SIGUSR2:
				*log_signal = (int)si[i].ssi_signo;
				if (ev == IG_SIGNAL_NONE)
					ev = IG_SIGNAL_OTHER;
				break;
			case SIGHUP:
				*reload = true;
				if (ev == IG_SIGNAL_NONE)
					ev = IG_SIGNAL_OTHER;
				break;
			default: /* QUIT: a server under a supervisor ignores it */
				if (ev == IG_SIGNAL_NONE)
					ev = IG_SIGNAL_OTHER;
				break;
			}
		}
	}
	return ev;
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
