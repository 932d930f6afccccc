/* lambda_init: Lambda's init time, from fork to the runtime's first
 * GET .../invocation/next, N times. Listens on 127.0.0.1 as the Runtime API
 * would, starts the program with AWS_LAMBDA_RUNTIME_API pointing there,
 * takes the connection and reads until the request line has arrived,
 * then kills the child by PID and reaps it. The floor (lambda_floor.c)
 * connects and writes the same line at once, so its time is what exec and
 * a connect cost on this machine. Prints one JSON line:
 *   lambda_init [-n runs] [-w warmups] -- prog args...   */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 10000

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* Nanoseconds from fork to the request line of the first GET, or -1. */
static long long one_run(int lfd, char **argv, int devnull)
{
	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	long long dt = -1;
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	if (poll(&p, 1, TIMEOUT_MS) == 1) {
		int s = accept(lfd, NULL, NULL);
		char buf[256];
		size_t got = 0;
		while (s >= 0 && got < sizeof buf) {
			struct pollfd q = { .fd = s, .events = POLLIN };
			if (poll(&q, 1, TIMEOUT_MS) != 1)
				break;
			ssize_t r = read(s, buf + got, sizeof buf - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			if (memmem(buf, got, "\r\n", 2)) {
				dt = now_ns() - t0;
				break;
			}
		}
		if (dt >= 0 && (got < 4 || memcmp(buf, "GET ", 4) != 0))
			dt = -1;
		if (s >= 0)
			close(s);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return dt;
}

int main(int argc, char **argv)
{
	int runs = 50, warmups = 3, i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-w") && i + 1 < argc)
			warmups = atoi(argv[++i]);
	}
	if (i + 1 >= argc || runs < 1) {
		fprintf(stderr, "usage: lambda_init [-n runs] [-w warmups] -- prog args...\n");
		return 2;
	}
	char **prog = argv + i + 1;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 16) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("lambda_init: listen");
		return 1;
	}
	char api[32];
	snprintf(api, sizeof api, "127.0.0.1:%d", ntohs(a.sin_port));
	setenv("AWS_LAMBDA_RUNTIME_API", api, 1);
	int devnull = open("/dev/null", 1);
	long long *ns = calloc((size_t)runs, sizeof *ns);
	int ok = 0, failed = 0;
	for (int r = 0; r < warmups + runs; r++) {
		long long dt = one_run(lfd, prog, devnull);
		if (r < warmups)
			continue;
		if (dt < 0)
			failed++;
		else
			ns[ok++] = dt;
	}
	qsort(ns, (size_t)ok, sizeof *ns, cmp_ll);
	double med = ok ? (ok % 2 ? ns[ok / 2] : (ns[ok / 2 - 1] + ns[ok / 2]) / 2.0) / 1000.0 : -1;
	printf("{\"runs\":%d,\"failed\":%d,\"median_us\":%.1f,\"min_us\":%.1f,\"max_us\":%.1f}\n", ok, failed, med,
	       ok ? ns[0] / 1000.0 : -1, ok ? ns[ok - 1] / 1000.0 : -1);
	return ok ? 0 : 1;
}
