/* floor: the smallest HTTP/1.1 responder the kernel allows, the bench's floor.
 * One epoll loop; every "\r\n\r\n" seen on a connection earns one fixed
 * /health response, all responses owed after a read leave in one write.
 * It parses nothing else on purpose: its CPU per request is the kernel's own
 * cost on this machine, the line ingot is measured against. recv and send,
 * not read and write: the socket calls skip the VFS layer and are the
 * cheapest way in and out, as in ingot (net/sock). Not a server. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 65536
#define COPIES 512 /* responses pre-laid end to end: a pipelined batch is one write */

static const char RESP[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 15\r\n"
    "\r\n"
    "{\"status\":\"ok\"}";
#define RESP_LEN (sizeof(RESP) - 1)

/* Per connection: how far into "\r\n\r\n" the last read ended (a terminator
 * may straddle two reads), and bytes still owed when the socket was full. */
struct conn {
    uint8_t matched;
    uint32_t phase; /* offset of the next owed byte within one response */
    uint64_t owed;
};

static struct conn conns[MAX_FDS];
static char pattern[COPIES * RESP_LEN];
static char rbuf[16384];

static size_t count_terminators(struct conn *c, const char *p, size_t n)
{
    static const char term[4] = {'\r', '\n', '\r', '\n'};
    size_t found = 0;
    uint8_t m = c->matched;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == term[m]) {
            if (++m == 4) {
                found++;
                m = 0;
            }
        } else {
            m = (p[i] == '\r') ? 1 : 0;
        }
    }
    c->matched = m;
    return found;
}

/* Returns 0 when everything owed is written or the socket is full, -1 on error. */
static int flush(int fd, struct conn *c)
{
    while (c->owed > 0) {
        size_t avail = sizeof(pattern) - c->phase;
        size_t n = c->owed < avail ? (size_t)c->owed : avail;
        ssize_t w = send(fd, pattern + c->phase, n, MSG_NOSIGNAL);
        if (w < 0)
            return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        c->owed -= (uint64_t)w;
        c->phase = (uint32_t)((c->phase + (size_t)w) % RESP_LEN);
    }
    return 0;
}

static void drop(int ep, int fd)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

static void on_readable(int ep, int fd)
{
    struct conn *c = &conns[fd];
    ssize_t n = recv(fd, rbuf, sizeof(rbuf), 0);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        drop(ep, fd);
        return;
    }
    uint64_t had = c->owed;
    c->owed += (uint64_t)count_terminators(c, rbuf, (size_t)n) * RESP_LEN;
    if (had > 0 || c->owed == 0)
        return; /* already waiting for EPOLLOUT, or nothing complete yet */
    if (flush(fd, c) < 0) {
        drop(ep, fd);
        return;
    }
    if (c->owed > 0) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = fd};
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    }
}

static void on_writable(int ep, int fd)
{
    struct conn *c = &conns[fd];
    if (flush(fd, c) < 0) {
        drop(ep, fd);
        return;
    }
    if (c->owed == 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    }
}

static int listen_on(const char *host, int port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
        bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4096) < 0) {
        close(s);
        return -1;
    }
    return s;
}

static int bound_port(int s)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    if (getsockname(s, (struct sockaddr *)&a, &len) < 0)
        return -1;
    return ntohs(a.sin_port);
}

static void accept_all(int ep, int ls)
{
    for (;;) {
        int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or a transient error: the listener stays readable */
        if (fd >= MAX_FDS) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conns[fd] = (struct conn){0};
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
            close(fd);
    }
}

int main(void)
{
    const char *host = getenv("HOST") ? getenv("HOST") : "127.0.0.1";
    int port = getenv("PORT") ? atoi(getenv("PORT")) : 8080;
    for (size_t i = 0; i < COPIES; i++)
        memcpy(pattern + i * RESP_LEN, RESP, RESP_LEN);

    int ls = listen_on(host, port);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ls < 0 || ep < 0) {
        fprintf(stderr, "{\"msg\":\"listen failed\",\"error\":\"%s\"}\n", strerror(errno));
        return 1;
    }
    struct epoll_event lev = {.events = EPOLLIN, .data.fd = ls};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &lev);
    /* Same readiness line as ingot, so the runner treats both alike. */
    printf("{\"msg\":\"listening\",\"port\":%d}\n", bound_port(ls));
    fflush(stdout);

    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == ls) {
                accept_all(ep, ls);
                continue;
            }
            if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
                drop(ep, fd);
                continue;
            }
            if (evs[i].events & EPOLLOUT)
                on_writable(ep, fd);
            else if (evs[i].events & EPOLLIN)
                on_readable(ep, fd);
        }
    }
}
