/* coldstart: time from fork to the first 200 on GET /health (-u: another
 * path, for an app that has no /health), N times.
 * Forks and execs the server (pinned to its own CPU), spins on connect()
 * without sleeping so the probe adds no wake-up latency, reads the status
 * line, then kills the child by PID and reaps it. Prints one JSON line:
 *   coldstart [-n runs] [-w warmups] [-c cpu] [-u path] -p port -- prog args...   */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_NS (10LL * 1000000000LL) /* a server that never answers fails the probe */

/* The server of the run in progress, so a signal to the probe ends it too. */
static volatile pid_t current_child;

static void on_signal(int sig)
{
    (void)sig;
    if (current_child > 0)
        kill(current_child, SIGKILL);
    _exit(130);
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The child is born on the server's CPU: the probe moves there just for the
 * fork and straight back. Forked on the probe's own CPU, the child would wait
 * behind the spinning parent for a whole time slice (~3 ms) before it could
 * even migrate, and that wait would be timed as the server's start-up. */
static pid_t spawn(char **argv, const cpu_set_t *server_cpu, const cpu_set_t *probe_cpu, int devnull)
{
    if (server_cpu)
        sched_setaffinity(0, sizeof(*server_cpu), server_cpu);
    pid_t pid = fork();
    if (pid != 0) {
        if (server_cpu)
            sched_setaffinity(0, sizeof(*probe_cpu), probe_cpu);
        return pid;
    }
    /* Belt and braces: if the probe dies without its handler, so does the server. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The server's log lines would otherwise need a reader to drain them. */
    dup2(devnull, 1);
    dup2(devnull, 2);
    execvp(argv[0], argv);
    _exit(127);
}

/* Closing with an RST leaves no TIME_WAIT on the server's port, so the next
 * run's bind() to the same port never races the last run's connection. */
static void close_hard(int s)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(s);
}

/* The request the probe sends (-u sets its path). */
static char req[512] = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/* 1 when a 200 status line came back, 0 when the attempt should be retried. */
static int try_health(const struct sockaddr_in *addr)
{
    size_t req_len = strlen(req);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return 0;
    if (connect(s, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
        close(s);
        return 0;
    }
    if (write(s, req, req_len) != (ssize_t)req_len) {
        close_hard(s);
        return 0;
    }
    char buf[64];
    size_t got = 0;
    while (got < 12) { /* "HTTP/1.1 200" */
        ssize_t r = read(s, buf + got, sizeof(buf) - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    int ok = got >= 12 && memcmp(buf + 9, "200", 3) == 0;
    close_hard(s);
    return ok;
}

struct probe {
    char **argv;
    const cpu_set_t *server_cpu; /* NULL: leave placement to the scheduler */
    cpu_set_t probe_cpu;
    int devnull;
    struct sockaddr_in addr;
};

/* Nanoseconds from fork to the first 200, or -1 if the server died or hung. */
static long long one_run(const struct probe *p)
{
    const struct sockaddr_in *addr = &p->addr;
    long long t0 = now_ns();
    pid_t pid = spawn(p->argv, p->server_cpu, &p->probe_cpu, p->devnull);
    if (pid < 0)
        return -1;
    current_child = pid;
    long long dt = -1;
    for (unsigned long i = 0;; i++) {
        if (try_health(addr)) {
            dt = now_ns() - t0;
            break;
        }
        if ((i & 255) == 255) {
            if (waitpid(pid, NULL, WNOHANG) == pid) {
                current_child = 0;
                return -1;
            }
            if (now_ns() - t0 > TIMEOUT_NS)
                break;
        }
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    current_child = 0;
    return dt;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int runs = 50, warm = 2, cpu = -1, port = 0, opt;
    while ((opt = getopt(argc, argv, "n:w:c:p:u:")) != -1) {
        switch (opt) {
        case 'n': runs = atoi(optarg); break;
        case 'w': warm = atoi(optarg); break;
        case 'c': cpu = atoi(optarg); break;
        case 'p': port = atoi(optarg); break;
        case 'u':
            if (optarg[0] != '/' || strpbrk(optarg, " \r\n") ||
                (size_t)snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", optarg) >= sizeof req) {
                fprintf(stderr, "coldstart: -u needs a path (/..., no spaces, under 450 bytes)\n");
                return 2;
            }
            break;
        default: port = 0; optind = argc; break;
        }
    }
    if (port <= 0 || runs <= 0 || optind >= argc) {
        fprintf(stderr, "usage: coldstart [-n runs] [-w warmups] [-c cpu] [-u path] -p port -- prog args...\n");
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct probe p = {.argv = argv + optind, .devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)};
    p.addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    p.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cpu_set_t server_cpu;
    sched_getaffinity(0, sizeof(p.probe_cpu), &p.probe_cpu);
    if (cpu >= 0) {
        CPU_ZERO(&server_cpu);
        CPU_SET(cpu, &server_cpu);
        p.server_cpu = &server_cpu;
    }

    /* Warm-up runs fill the page cache; they are not what a restart costs. */
    for (int i = 0; i < warm; i++)
        one_run(&p);
    long long *us = calloc((size_t)runs, sizeof(*us));
    if (!us)
        return 1;
    for (int i = 0; i < runs; i++) {
        long long ns = one_run(&p);
        if (ns < 0) {
            printf("{\"error\":\"no 200 within 10 s or server exited\",\"run\":%d}\n", i);
            return 1;
        }
        us[i] = ns / 1000;
    }
    qsort(us, (size_t)runs, sizeof(*us), cmp_ll);
    int p90 = (runs * 9 + 9) / 10 - 1; /* nearest-rank */
    printf("{\"runs\":%d,\"median_us\":%lld,\"p90_us\":%lld,\"min_us\":%lld,\"max_us\":%lld}\n",
           runs, runs % 2 ? us[runs / 2] : (us[runs / 2 - 1] + us[runs / 2]) / 2,
           us[p90], us[0], us[runs - 1]);
    return 0;
}
