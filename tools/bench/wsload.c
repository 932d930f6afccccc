/* The streams bench's client (tools/bench/streams.js runs it), one thread
 * and one epoll loop, so that the server, not the client, is what a run
 * measures. Three modes against 127.0.0.1:PORT:
 *   echo PORT PATH CONNS INFLIGHT SECONDS MSG  WebSocket echo load: CONNS
 *       upgraded sockets, each keeping INFLIGHT masked text frames of MSG
 *       (JSON with "n":1) in flight; prints "ready", then after SECONDS one
 *       JSON line: messages echoed (each checked for "n":2) and per second;
 *   hold PORT TARGET CONNS ws|sse  CONNS idle WebSockets (101) or SSE
 *       streams (GET /events/idle: kept once its "lines" event came); prints
 *       "ready N" once all are open, then holds them until stdin closes;
 *   fanout PORT CONNS SECONDS NOTE  CONNS streams of GET /events/idle, then
 *       for SECONDS one GET /events/idle?note=NOTE after another (each is
 *       broadcast to every kept stream of the core); prints "ready" once
 *       the streams are open, then one JSON line: the "note" events the
 *       CONNS streams received, and per second;
 *   ticker PORT TARGET CONNS SECONDS  CONNS streams of GET TARGET (a
 *       /ticker), each sent by its own handler; prints "ready" once all
 *       have begun, then one JSON line: the tick events received in
 *       SECONDS, and per second.
 * A measurement tool, not a test: a failure is one line on stderr and exit 1. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum state { CONNECTING, UPGRADING, OPEN };

struct conn {
	int fd;
	enum state st;
	uint32_t have; /* bytes in buf: the head, then a partial frame */
	char buf[256]; /* the answer's head, then (echo) a frame's start */
	uint64_t skip; /* echo: payload bytes of the current frame still to come */
	bool text_ok; /* echo: the current frame's payload checked so far */
	char carry[16]; /* fanout: the tail of the last read, for a split "event: note" */
	uint32_t ncarry;
};

static struct sockaddr_in addr;
static int ep;
static struct conn *conns;
static int nconns, pending, opened, next_conn;
static const char *upgrade_req;
static size_t upgrade_len;
static bool want_sse;
static char scratch[1 << 16];
/* SSE: the event whose arrival makes a stream count as open */
static const char *ready_event = "event: lines";

static void die(const char *what)
{
	fprintf(stderr, "wsload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This process's CPU seconds: a run whose client used all of its core
 * measured the client as much as the server. */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static void start_one(void)
{
	struct conn *c = &conns[next_conn];
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		die("socket");
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS)
		die("connect");
	c->st = CONNECTING;
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)next_conn };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		die("epoll_ctl");
	next_conn++;
	pending++;
}

/* Keeps at most 256 handshakes under way, so that a server's accept
 * backlog never overflows into SYN retries (a second each). */
static void start_more(void)
{
	while (next_conn < nconns && pending < 256)
		start_one();
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) { /* loopback with room: rare; wait it out */
				struct timespec ts = { 0, 100000 };
				nanosleep(&ts, NULL);
				continue;
			}
			die("write");
		}
		p += w;
		n -= (size_t)w;
	}
}

/* One read of c into scratch: its length, 0 when there was nothing yet;
 * a close or an error ends the run. */
static size_t conn_read(struct conn *c)
{
	ssize_t r = read(c->fd, scratch, sizeof scratch);
	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r <= 0) {
		fprintf(stderr, "wsload: the server closed connection %d\n", (int)(c - conns));
		exit(1);
	}
	return (size_t)r;
}

/* Reads the answer's head; true once the connection counts as open: a 101,
 * or for SSE a 200 whose "lines" event has come (the stream is kept). */
static bool upgrade_read(struct conn *c)
{
	for (;;) {
		ssize_t r = read(c->fd, c->buf + c->have, sizeof c->buf - 1 - c->have);
		if (r < 0 && errno == EAGAIN)
			return false;
		if (r <= 0) {
			fprintf(stderr, "wsload: connection %d closed during the upgrade (%.*s)\n", (int)(c - conns),
				(int)c->have, c->buf);
			exit(1);
		}
		c->have += (uint32_t)r;
		c->buf[c->have] = 0;
		const char *want = want_sse ? "HTTP/1.1 200" : "HTTP/1.1 101";
		if (c->have >= 12 && memcmp(c->buf, want, 12) != 0) {
			fprintf(stderr, "wsload: not %s: %.*s\n", want, (int)c->have, c->buf);
			exit(1);
		}
		char *end = strstr(c->buf, "\r\n\r\n");
		bool done = want_sse ? strstr(c->buf, ready_event) != NULL : end != NULL;
		if (done) {
			/* echo: what follows the head is the first frames' start */
			size_t head = want_sse ? c->have : (size_t)(end + 4 - c->buf);
			memmove(c->buf, c->buf + head, c->have - head);
			c->have -= (uint32_t)head;
			return true;
		}
		if (c->have == sizeof c->buf - 1) {
			if (want_sse) { /* a long head: keep its last part for the match */
				memmove(c->buf, c->buf + c->have - 32, 32);
				c->have = 32;
			} else {
				fprintf(stderr, "wsload: the answer's head is too long\n");
				exit(1);
			}
		}
	}
}

/* Handshakes until every connection is open (the loop's first phase). */
static void open_all(void)
{
	struct epoll_event evs[256];
	start_more();
	while (opened < nconns) {
		int n = epoll_wait(ep, evs, 256, 10000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "wsload: %d of %d open after 10 s without progress\n", opened, nconns);
			exit(1);
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = &conns[evs[i].data.u32];
			if (c->st == CONNECTING && (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
				int err = 0;
				socklen_t len = sizeof err;
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
				if (err) {
					errno = err;
					die("connect");
				}
				c->st = UPGRADING;
				struct epoll_event ev = { .events = EPOLLIN, .data.u32 = evs[i].data.u32 };
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				write_all(c->fd, upgrade_req, upgrade_len);
			} else if (c->st == UPGRADING && upgrade_read(c)) {
				c->st = OPEN;
				pending--;
				opened++;
			} else if (c->st == OPEN) { /* streams that began: dropped, so no window fills */
				conn_read(c);
			}
		}
		start_more();
	}
}

static void setup(const char *port, int n, const char *req)
{
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)atoi(port));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	nconns = n;
	conns = calloc((size_t)n, sizeof *conns);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!conns || ep < 0)
		die("setup");
	upgrade_req = req;
	upgrade_len = strlen(req);
}

static char *ws_request(const char *path)
{
	char *r;
	if (asprintf(&r, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
			 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path) < 0)
		die("asprintf");
	return r;
}

static char *sse_request(const char *target)
{
	char *r;
	if (asprintf(&r, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", target) < 0)
		die("asprintf");
	return r;
}

/* ---- echo ---------------------------------------------------------------- */

static char *frames; /* 64 copies of the masked frame, for one write each */
static size_t frame_len;
static uint64_t echoed, bad;

static void build_frames(const char *msg)
{
	size_t n = strlen(msg);
	size_t hl = n < 126 ? 2 : 4;
	frame_len = hl + 4 + n;
	frames = malloc(frame_len * 64);
	if (!frames)
		die("malloc");
	unsigned char *f = (unsigned char *)frames;
	f[0] = 0x81; /* FIN, text */
	if (n < 126) {
		f[1] = (unsigned char)(0x80 | n);
	} else {
		f[1] = 0x80 | 126;
		f[2] = (unsigned char)(n >> 8);
		f[3] = (unsigned char)n;
	}
	const unsigned char key[4] = { 0x37, 0xfa, 0x21, 0x3d };
	memcpy(f + hl, key, 4);
	for (size_t i = 0; i < n; i++)
		f[hl + 4 + i] = (unsigned char)msg[i] ^ key[i & 3];
	for (int i = 1; i < 64; i++)
		memcpy(frames + (size_t)i * frame_len, frames, frame_len);
}

static void send_frames(int fd, uint64_t k)
{
	while (k) {
		uint64_t m = k < 64 ? k : 64;
		write_all(fd, frames, (size_t)m * frame_len);
		k -= m;
	}
}

/* Parses the server's frames (unmasked) in data; returns the text frames
 * completed, each checked for "n":2 where its payload came whole. */
static uint64_t echo_parse(struct conn *c, const char *data, size_t n)
{
	uint64_t done = 0;
	while (n) {
		if (c->skip) { /* the rest of a payload split across reads */
			size_t m = n < c->skip ? n : (size_t)c->skip;
			c->skip -= m;
			data += m;
			n -= m;
			if (!c->skip)
				done++;
			continue;
		}
		/* a frame's head, possibly split: gathered in c->buf */
		size_t take = n < 14 - c->have ? n : 14 - c->have;
		memcpy(c->buf + c->have, data, take);
		size_t have = c->have + take;
		const unsigned char *h = (const unsigned char *)c->buf;
		if (have < 2) {
			c->have = (uint32_t)have;
			return done;
		}
		size_t hl = 2;
		uint64_t len = h[1] & 0x7f;
		if (len == 126)
			hl = 4;
		else if (len == 127)
			hl = 10;
		if (have < hl) {
			c->have = (uint32_t)have;
			return done;
		}
		if (len == 126)
			len = (uint64_t)h[2] << 8 | h[3];
		else if (len == 127)
			for (int i = 0; i < 8; i++)
				len = len << 8 | h[2 + i];
		if ((h[0] & 0x0f) != 1) {
			fprintf(stderr, "wsload: a frame of opcode %d\n", h[0] & 0x0f);
			exit(1);
		}
		size_t used = hl - c->have; /* of data, by the head */
		c->have = 0;
		data += used;
		n -= used;
		if (n >= len) {
			if (!memmem(data, (size_t)len, "\"n\":2", 5))
				bad++;
			data += len;
			n -= (size_t)len;
			done++;
		} else {
			c->skip = len - n;
			n = 0;
		}
	}
	return done;
}

static int echo_main(char **argv)
{
	int n = atoi(argv[2]), inflight = atoi(argv[3]);
	double seconds = atof(argv[4]);
	setup(argv[0], n, ws_request(argv[1]));
	build_frames(argv[5]);
	open_all();
	/* the heads may have brought nothing more: the first frames are ours */
	for (int i = 0; i < n; i++)
		conns[i].have = 0;
	printf("ready\n");
	fflush(stdout);
	double t0 = now_s(), t1 = t0, c0 = cpu_s();
	for (int i = 0; i < n; i++)
		send_frames(conns[i].fd, (uint64_t)inflight);
	struct epoll_event evs[256];
	for (;;) {
		int k = epoll_wait(ep, evs, 256, 100);
		if (k < 0 && errno != EINTR)
			die("epoll_wait");
		t1 = now_s();
		if (t1 - t0 >= seconds)
			break;
		for (int i = 0; i < k; i++) {
			struct conn *c = &conns[evs[i].data.u32];
			size_t r = conn_read(c);
			if (!r)
				continue;
			uint64_t got = echo_parse(c, scratch, r);
			echoed += got;
			send_frames(c->fd, got);
		}
	}
	printf("{\"mode\":\"echo\",\"conns\":%d,\"inflight\":%d,\"seconds\":%.3f,\"messages\":%llu,"
	       "\"per_s\":%.1f,\"bad\":%llu,\"client_cpu_s\":%.3f}\n",
	       n, inflight, t1 - t0, (unsigned long long)echoed, (double)echoed / (t1 - t0), (unsigned long long)bad,
	       cpu_s() - c0);
	fflush(stdout);
	return 0;
}

/* ---- hold ---------------------------------------------------------------- */

static int hold_main(char **argv)
{
	int n = atoi(argv[2]);
	want_sse = strcmp(argv[3], "sse") == 0;
	setup(argv[0], n, want_sse ? sse_request(argv[1]) : ws_request(argv[1]));
	open_all();
	printf("ready %d\n", opened);
	fflush(stdout);
	/* Held until stdin closes; what the server sends meanwhile (heartbeats,
	   pings) is read and dropped, so no window fills. */
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = UINT32_MAX };
	epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
	struct epoll_event evs[256];
	for (;;) {
		int k = epoll_wait(ep, evs, 256, -1);
		if (k < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < k; i++) {
			if (evs[i].data.u32 == UINT32_MAX) {
				if (read(0, scratch, sizeof scratch) <= 0)
					return 0;
				continue;
			}
			struct conn *c = &conns[evs[i].data.u32];
			ssize_t r = read(c->fd, scratch, sizeof scratch);
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				fprintf(stderr, "wsload: the server closed connection %d while held\n", (int)evs[i].data.u32);
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
			}
		}
	}
}

/* ---- fanout -------------------------------------------------------------- */

/* The event counted: fanout's notes, ticker's ticks (at most 15 bytes). */
static const char *count_event = "event: note";

static uint64_t count_events(struct conn *c, const char *data, size_t n)
{
	/* the carried tail of the last read, then this read: a match split
	   between them counts once */
	uint64_t found = 0;
	size_t plen = strlen(count_event);
	static char joined[sizeof scratch + 16];
	memcpy(joined, c->carry, c->ncarry);
	memcpy(joined + c->ncarry, data, n);
	size_t len = c->ncarry + n;
	for (const char *p = joined, *e = joined + len; (p = memmem(p, (size_t)(e - p), count_event, plen)); p += plen)
		found++;
	size_t keep = len < plen - 1 ? len : plen - 1;
	memcpy(c->carry, joined + len - keep, keep);
	c->ncarry = (uint32_t)keep;
	return found;
}

static int fanout_main(char **argv)
{
	int n = atoi(argv[1]);
	double seconds = atof(argv[2]);
	want_sse = true;
	setup(argv[0], n, sse_request("/events/idle"));
	open_all();
	char *target;
	if (asprintf(&target, "/events/idle?note=%s", argv[3]) < 0)
		die("asprintf");
	char *req = sse_request(target);
	printf("ready\n");
	fflush(stdout);
	uint64_t notes = 0, broadcasts = 0, reached = 0;
	double t0 = now_s(), t1 = t0, c0 = cpu_s();
	struct epoll_event evs[256];
	int b = -1; /* the broadcasting request's socket */
	size_t bhave = 0;
	static char bbuf[4096];
	while ((t1 = now_s()) - t0 < seconds) {
		if (b < 0) {
			b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (b < 0 || connect(b, (struct sockaddr *)&addr, sizeof addr) < 0)
				die("connect (broadcaster)");
			fcntl(b, F_SETFL, O_NONBLOCK);
			struct epoll_event ev = { .events = EPOLLIN, .data.u32 = UINT32_MAX };
			epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev);
			write_all(b, req, strlen(req));
			bhave = 0;
		}
		int k = epoll_wait(ep, evs, 256, 100);
		if (k < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < k; i++) {
			if (evs[i].data.u32 == UINT32_MAX) {
				ssize_t r = read(b, bbuf + bhave, sizeof bbuf - 1 - bhave);
				if (r <= 0 && !(r < 0 && errno == EAGAIN)) {
					fprintf(stderr, "wsload: the broadcaster's stream closed: %.*s\n", (int)bhave, bbuf);
					exit(1);
				}
				if (r > 0)
					bhave += (size_t)r;
				bbuf[bhave] = 0;
				/* its answer's "sent" event: how many streams the note reached */
				char *s = strstr(bbuf, "event: sent");
				char *d = s ? strstr(s, "data: ") : NULL;
				if (d && strchr(d, '\n')) {
					reached += strtoull(d + 6, NULL, 10);
					broadcasts++;
					close(b); /* which takes it off the epoll set */
					b = -1;
				} else if (bhave == sizeof bbuf - 1) {
					fprintf(stderr, "wsload: no \"sent\" event in the broadcaster's answer\n");
					exit(1);
				}
				continue;
			}
			struct conn *c = &conns[evs[i].data.u32];
			notes += count_events(c, scratch, conn_read(c));
		}
	}
	printf("{\"mode\":\"fanout\",\"conns\":%d,\"seconds\":%.3f,\"broadcasts\":%llu,\"reached\":%llu,"
	       "\"events\":%llu,\"per_s\":%.1f,\"client_cpu_s\":%.3f}\n",
	       n, t1 - t0, (unsigned long long)broadcasts, (unsigned long long)reached, (unsigned long long)notes,
	       (double)notes / (t1 - t0), cpu_s() - c0);
	fflush(stdout);
	return 0;
}

/* ---- ticker ---------------------------------------------------------- */

static int ticker_main(char **argv)
{
	int n = atoi(argv[2]);
	double seconds = atof(argv[3]);
	want_sse = true;
	ready_event = count_event = "event: tick";
	setup(argv[0], n, sse_request(argv[1]));
	open_all();
	printf("ready\n");
	fflush(stdout);
	uint64_t ticks = 0;
	double t0 = now_s(), t1 = t0, c0 = cpu_s();
	struct epoll_event evs[256];
	while ((t1 = now_s()) - t0 < seconds) {
		int k = epoll_wait(ep, evs, 256, 100);
		if (k < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < k; i++) {
			struct conn *c = &conns[evs[i].data.u32];
			ticks += count_events(c, scratch, conn_read(c));
		}
	}
	printf("{\"mode\":\"ticker\",\"conns\":%d,\"seconds\":%.3f,\"events\":%llu,\"per_s\":%.1f,"
	       "\"client_cpu_s\":%.3f}\n",
	       n, t1 - t0, (unsigned long long)ticks, (double)ticks / (t1 - t0), cpu_s() - c0);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 8 && strcmp(argv[1], "echo") == 0)
		return echo_main(argv + 2);
	if (argc == 6 && strcmp(argv[1], "hold") == 0)
		return hold_main(argv + 2);
	if (argc == 6 && strcmp(argv[1], "fanout") == 0)
		return fanout_main(argv + 2);
	if (argc == 6 && strcmp(argv[1], "ticker") == 0)
		return ticker_main(argv + 2);
	fprintf(stderr, "usage: wsload echo PORT PATH CONNS INFLIGHT SECONDS MSG\n"
			"       wsload hold PORT TARGET CONNS ws|sse\n"
			"       wsload fanout PORT CONNS SECONDS NOTE\n"
			"       wsload ticker PORT TARGET CONNS SECONDS\n");
	return 2;
}
