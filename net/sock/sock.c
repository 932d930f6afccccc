/* Listeners and streams over epoll. Streams are registered edge-triggered
 * for reading and writing once, so readiness never costs an epoll_ctl; a
 * read shorter than the buffer means the socket is drained (TCP returns
 * all it has), which saves the EAGAIN read per request. Outbound streams
 * are the same streams, born in STREAM_CONNECTING. */
#include "sock.h"
#include "ingot/base.h"
#include "ingot/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define LINGER_DISCARD_MAX (1u << 20)

enum stream_state {
	STREAM_CONNECTING, /* outbound: the connect has not completed */
	STREAM_OPEN,
	STREAM_LINGERING, /* engine gone, write side shut, discarding input */
	STREAM_DEAD,      /* to be freed when the current callback unwinds */
	STREAM_FREED,     /* fd closed; back to the pool after the batch */
};

struct sock_stream {
	struct ig_transport t; /* first: the engine's handle */
	struct ig_io io;
	struct ig_timer linger_timer;
	struct ig_deferred release; /* the pool's give, after the event batch */
	struct sock_core *core;
	int fd;
	enum stream_state state;
	bool in_callback;
	bool read_paused; /* the engine lent no buffer: resume_read restarts */
	bool rdhup;
	uint32_t discarded;
	int error; /* the errno that failed the stream */
	/* The peer, when the core keeps it: family 0 means not kept. */
	uint16_t peer_family, peer_port;
	uint8_t peer_addr[16];
};

static const struct ig_transport_ops stream_ops;

/* host:port into ss; 0, or -1 with err. Numeric addresses only: no
   resolver (and none of its code to page in during a cold start). */
static int address_of(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len, char *err,
		      size_t errlen)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*len = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof *v6;
	} else {
		snprintf(err, errlen, "HOST \"%s\" is not a numeric IPv4 or IPv6 address", host);
		return -1;
	}
	return 0;
}

int ig_sock_port_free(const char *host, int port, const char *setting, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	if (address_of(host, port, &ss, &len, err, errlen) != 0)
		return -1;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd < 0)
		return 0; /* no probe: the bind that follows says what is wrong */
	int rc = 0;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
	    bind(fd, (struct sockaddr *)&ss, len) != 0 && errno == EADDRINUSE) {
		snprintf(err, errlen, "%s %d is served by another process already (INGOT_SHARE_PORT=true shares it, "
				      "for a handover)", setting, port);
		rc = -1;
	}
	close(fd);
	return rc;
}

static int listen_on(const char *host, int *port, int backlog, bool reuseport, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (address_of(host, *port, &ss, &len, err, errlen) != 0)
		return -1;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, backlog) != 0) {
		snprintf(err, errlen, "cannot listen on %s port %d: %s", host, *port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (*port == 0) {
		len = sizeof ss;
		getsockname(fd, (struct sockaddr *)&ss, &len);
		*port = ntohs(ss.ss_family == AF_INET6 ? v6->sin6_port : v4->sin_port);
	}
	return fd;
}

int ig_sock_listen(const char *host, int *port, int backlog, char *err, size_t errlen)
{
	return listen_on(host, port, backlog, true, err, errlen);
}

int ig_sock_listen_exclusive(const char *host, int *port, int backlog, char *err, size_t errlen)
{
	return listen_on(host, port, backlog, false, err, errlen);
}

IG_HOT static struct sock_stream *stream_of(struct ig_transport *t)
{
	return (struct sock_stream *)t;
}

static void stream_release(struct ig_deferred *d)
{
	struct sock_stream *s = (struct sock_stream *)((char *)d - offsetof(struct sock_stream, release));
	ig_pool_give(&s->core->streams, s);
}

/* The fd is closed at once (which takes it out of epoll), but events for
 * it may already sit in the batch the loop is dispatching: another
 * stream's callback (the drain, a client closing its upstream) can end
 * this one. So the memory goes back to the pool only after the batch,
 * and those stale events find STREAM_FREED, not a reused or re-freed slot. */
static void stream_free(struct sock_stream *s)
{
	ig_timer_cancel(&s->core->loop->timers, &s->linger_timer);
	close(s->fd);
	s->state = STREAM_FREED;
	s->release.fn = stream_release;
	ig_loop_defer(s->core->loop, &s->release);
}

/* Frees a stream marked dead once no callback of it is on the stack. */
static void stream_settle(struct sock_stream *s)
{
	if (s->state == STREAM_DEAD && !s->in_callback)
		stream_free(s);
}

static void stream_fail(struct sock_stream *s)
{
	if (s->state == STREAM_OPEN || s->state == STREAM_CONNECTING) {
		s->core->open_streams--;
		s->state = STREAM_DEAD;
		s->t.engine_ops->closed(s->t.engine);
	} else {
		s->state = STREAM_DEAD;
	}
}

static void linger_discard(struct sock_stream *s)
{
	char sink[4096];
	for (;;) {
		ssize_t n = read(s->fd, sink, sizeof sink);
		if (n > 0) {
			s->discarded += (uint32_t)n;
			if (s->discarded < LINGER_DISCARD_MAX)
				continue;
		} else if (n < 0 && errno == EAGAIN) {
			return;
		}
		s->state = STREAM_DEAD; /* EOF, error, or enough discarded */
		return;
	}
}

IG_HOT static void stream_read(struct sock_stream *s)
{
	while (s->state == STREAM_OPEN) {
		size_t cap = 0;
		char *buf = s->t.engine_ops->lend(s->t.engine, &cap);
		if (!buf || cap == 0) {
			s->read_paused = true;
			return;
		}
		/* recv, not read: a socket call skips the VFS layer's checks
		   and notifications, a few percent of each request's kernel time. */
		ssize_t n = recv(s->fd, buf, cap, 0);
		if (n > 0) {
			s->t.engine_ops->received(s->t.engine, (size_t)n);
			if ((size_t)n < cap && !s->rdhup)
				return;
		} else if (n == 0) {
			s->t.engine_ops->received(s->t.engine, 0);
			return;
		} else if (errno == EAGAIN) {
			return;
		} else if (errno != EINTR) {
			s->error = errno;
			stream_fail(s);
			return;
		}
	}
	if (s->state == STREAM_LINGERING)
		linger_discard(s);
}

/* The first event of an outbound stream: the connect's outcome. The
 * engine hears "connected" (writable) before any bytes that came with it.
 * Returns the events still to handle. */
static uint32_t stream_connect_done(struct sock_stream *s, uint32_t events)
{
	if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
		return 0;
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err == 0 && (events & EPOLLERR))
		err = ECONNRESET;
	if (err) {
		s->error = err;
		stream_fail(s);
		return 0;
	}
	s->state = STREAM_OPEN;
	s->t.engine_ops->writable(s->t.engine);
	return events & ~(uint32_t)EPOLLOUT;
}

IG_HOT static void on_stream_event(struct ig_io *io, uint32_t events)
{
	struct sock_stream *s = (struct sock_stream *)((char *)io - offsetof(struct sock_stream, io));
	if (s->state == STREAM_FREED)
		return; /* a stale event of this batch: see stream_free */
	s->in_callback = true;
	if (events & EPOLLRDHUP)
		s->rdhup = true;
	if (s->state == STREAM_CONNECTING)
		events = stream_connect_done(s, events);
	if (s->state == STREAM_DEAD) {
		/* failed or closed by the engine while connecting */
	} else if (s->state == STREAM_LINGERING) {
		linger_discard(s);
	} else {
		if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			stream_read(s);
		if ((events & EPOLLOUT) && s->state == STREAM_OPEN)
			s->t.engine_ops->writable(s->t.engine);
		if ((events & EPOLLERR) && s->state == STREAM_OPEN)
			stream_fail(s);
	}
	s->in_callback = false;
	stream_settle(s);
}

IG_HOT static ssize_t stream_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	struct sock_stream *s = stream_of(t);
	for (;;) {
		/* send and sendmsg rather than writev, as recv above; one buffer
		   (the common case: one batch of responses) skips the msghdr. */
		ssize_t n = iovcnt == 1 ? send(s->fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL)
					: sendmsg(s->fd, &(struct msghdr){ .msg_iov = (struct iovec *)iov,
									   .msg_iovlen = (size_t)iovcnt },
						  MSG_NOSIGNAL);
		if (n >= 0)
			return n;
		if (errno == EAGAIN)
			return IG_WOULD_BLOCK;
		if (errno != EINTR)
			return -1;
	}
}

IG_HOT static void stream_resume_read(struct ig_transport *t)
{
	struct sock_stream *s = stream_of(t);
	if (!s->read_paused || s->state != STREAM_OPEN)
		return;
	s->read_paused = false;
	/* Edge-triggered: bytes that arrived while paused raised no new event,
	   so read now. */
	bool outer = s->in_callback;
	s->in_callback = true;
	stream_read(s);
	s->in_callback = outer;
	stream_settle(s);
}

static bool stream_read_now(struct ig_transport *t)
{
	struct sock_stream *s = stream_of(t);
	char probe;
	/* A peek: bytes, EOF (0) or an error all mean stream_read will tell
	   the engine something; only EAGAIN means nothing is there. */
	if (s->state != STREAM_OPEN || (recv(s->fd, &probe, 1, MSG_PEEK) < 0 && errno == EAGAIN))
		return false;
	s->read_paused = true; /* so that resume_read reads, paused or not */
	stream_resume_read(t);
	return true;
}

static void on_linger_timeout(struct ig_timer *tm)
{
	struct sock_stream *s = (struct sock_stream *)((char *)tm - offsetof(struct sock_stream, linger_timer));
	s->state = STREAM_DEAD;
	stream_settle(s);
}

static void stream_close(struct ig_transport *t, int graceful)
{
	struct sock_stream *s = stream_of(t);
	if (s->state != STREAM_OPEN && s->state != STREAM_CONNECTING)
		return;
	s->core->open_streams--;
	if (graceful && s->state == STREAM_OPEN && shutdown(s->fd, SHUT_WR) == 0) {
		s->state = STREAM_LINGERING;
		s->linger_timer.fn = on_linger_timeout;
		ig_timer_set(&s->core->loop->timers, &s->linger_timer,
			     s->core->loop->clock.now_ms + s->core->linger_ms);
		if (!s->in_callback) {
			s->in_callback = true;
			linger_discard(s);
			s->in_callback = false;
		}
	} else {
		s->state = STREAM_DEAD;
	}
	stream_settle(s);
}

static size_t stream_peer(struct ig_transport *t, char *out, size_t cap)
{
	struct sock_stream *s = (struct sock_stream *)t;
	char a[INET6_ADDRSTRLEN];
	if (!s->peer_family || !inet_ntop(s->peer_family, s->peer_addr, a, sizeof a))
		return 0;
	int n = snprintf(out, cap, s->peer_family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, s->peer_port);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

static bool stream_peer_addr(struct ig_transport *t, uint8_t out[16])
{
	struct sock_stream *s = (struct sock_stream *)t;
	if (s->peer_family == AF_INET6) {
		memcpy(out, s->peer_addr, 16);
		return true;
	}
	if (s->peer_family != AF_INET)
		return false;
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };
	memcpy(out, v4_mapped, 12);
	memcpy(out + 12, s->peer_addr, 4);
	return true;
}

static const struct ig_transport_ops stream_ops = {
	.writev = stream_writev,
	.resume_read = stream_resume_read,
	.read_now = stream_read_now,
	.close = stream_close,
	.peer = stream_peer,
	.peer_addr = stream_peer_addr,
};

/* Only a compact copy: the text is made when a log line asks for it. */
static void keep_peer(struct sock_stream *s, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *v4 = (const struct sockaddr_in *)ss;
		memcpy(s->peer_addr, &v4->sin_addr, 4);
		s->peer_port = ntohs(v4->sin_port);
		s->peer_family = AF_INET;
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)ss;
		memcpy(s->peer_addr, &v6->sin6_addr, 16);
		s->peer_port = ntohs(v6->sin6_port);
		s->peer_family = AF_INET6;
	}
}

static void accept_one(struct sock_core *c, int fd, const struct sockaddr_storage *peer)
{
	if (c->open_streams >= c->max_streams) {
		ig_counter_add(&c->refused, 1);
		close(fd);
		return;
	}
	struct sock_stream *s = ig_pool_take(&c->streams);
	if (!s) {
		ig_counter_add(&c->refused, 1);
		close(fd);
		return;
	}
	*s = (struct sock_stream){ .core = c, .fd = fd, .state = STREAM_OPEN };
	if (peer)
		keep_peer(s, peer);
	s->t.ops = &stream_ops;
	s->t.loop = c->loop;
	s->io.fn = on_stream_event;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (!c->accept(c->accept_arg, &s->t)) {
		close(fd);
		ig_pool_give(&c->streams, s);
		return;
	}
	c->open_streams++;
	if (ig_loop_add(c->loop, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &s->io) != 0) {
		s->in_callback = true;
		stream_fail(s);
		s->in_callback = false;
		stream_settle(s);
	}
}

static int accept_next(struct sock_core *c, struct sockaddr_storage *peer)
{
	socklen_t len = sizeof *peer;
	return accept4(c->listen_fd, c->keep_peer ? (struct sockaddr *)peer : NULL, c->keep_peer ? &len : NULL,
		       SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* ---- the descriptor limit ----
 * A listener stays readable while accept fails for want of a descriptor,
 * so the loop would call it again at once, for ever: the pause. */

static void spares_refill(struct sock_core *c)
{
	while (c->spares < c->spares_want) {
		/* An eventfd: a descriptor that needs no file system. */
		int fd = eventfd(0, EFD_CLOEXEC);
		if (fd < 0)
			return;
		c->spare[c->spares++] = fd;
	}
}

/* A spare given up for the next connection: its fd or -1 (errno set). */
static int accept_on_spare(struct sock_core *c, struct sockaddr_storage *peer)
{
	if (c->spares == 0) {
		errno = EMFILE;
		return -1;
	}
	close(c->spare[--c->spares]);
	return accept_next(c, peer);
}

static void on_backoff_over(struct ig_timer *t)
{
	struct sock_core *c = (struct sock_core *)((char *)t - offsetof(struct sock_core, backoff));
	if (c->listen_fd < 0)
		return;
	/* Level-triggered: what waits in the backlog raises the event again. */
	if (ig_loop_add(c->loop, c->listen_fd, EPOLLIN | EPOLLEXCLUSIVE, &c->listen_io) != 0)
		ig_timer_set(&c->loop->timers, &c->backoff, c->loop->clock.now_ms + c->backoff_ms);
}

static void log_fd_limit(struct sock_core *c, int err)
{
	uint64_t now = c->loop->clock.now_ms;
	c->unlogged++;
	if (c->logged_ms && now - c->logged_ms < 1000)
		return;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "descriptor limit: accepting paused")) {
		ig_log_cstr(&l, "error", strerror(err));
		ig_log_int(&l, "backoff_ms", c->backoff_ms);
		ig_log_int(&l, "shed", (int64_t)ig_counter_get(&c->shed));
		ig_log_int(&l, "pauses", (int64_t)ig_counter_get(&c->pauses));
		ig_log_int(&l, "suppressed", c->unlogged - 1);
		ig_log_end(&l);
	}
	c->logged_ms = now ? now : 1;
	c->unlogged = 0;
}

/* accept failed with err (EMFILE or ENFILE), which it returns before it
 * looks at the queue: a connection may wait or not. A listener that
 * serves on its spares lets connections in while they last; the others
 * close what waits (up to a bound: the backlog may be long), each on the
 * spare given back at once, so that a client hears a close instead of a
 * silence. Then accepting pauses, the backoff doubling while the limit
 * persists (reset by an accept that succeeds). */
__attribute__((cold)) static void at_fd_limit(struct sock_core *c, int err)
{
	struct sockaddr_storage peer;
	for (int i = 0; i < 64 && c->spares > 0; i++) {
		int fd = accept_on_spare(c, &peer);
		if (fd < 0) {
			int again = errno;
			spares_refill(c);
			/* The backlog is empty: spares that let all in need no
			   pause; shedding does, the limit being still there. */
			if (c->spares_serve && again != EMFILE && again != ENFILE)
				return;
			break;
		}
		if (c->spares_serve) {
			accept_one(c, fd, c->keep_peer ? &peer : NULL);
			continue;
		}
		close(fd);
		ig_counter_add(&c->shed, 1);
		spares_refill(c);
	}
	c->backoff_ms = c->backoff_ms ? (c->backoff_ms >= 500 ? 1000 : c->backoff_ms * 2) : 100;
	ig_counter_add(&c->pauses, 1);
	ig_loop_del(c->loop, c->listen_fd);
	c->backoff.fn = on_backoff_over;
	ig_timer_set(&c->loop->timers, &c->backoff, c->loop->clock.now_ms + c->backoff_ms);
	log_fd_limit(c, err);
}

/* Accepts up to max connections; false once the backlog is empty, or
 * accept fails (EMFILE/ENFILE pause the listener: at_fd_limit). */
static bool accept_queued(struct sock_core *c, int max)
{
	for (int i = 0; i < max; i++) {
		struct sockaddr_storage peer;
		int fd = accept_next(c, &peer);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				at_fd_limit(c, errno);
			return false;
		}
		if (c->backoff_ms) /* a read, not a store, on each accept */
			c->backoff_ms = 0;
		accept_one(c, fd, c->keep_peer ? &peer : NULL);
	}
	return true;
}

static void on_listen_event(struct ig_io *io, uint32_t events)
{
	(void)events;
	struct sock_core *c = (struct sock_core *)((char *)io - offsetof(struct sock_core, listen_io));
	if (c->spares < c->spares_want) /* spares let connections in: taken back when descriptors free */
		spares_refill(c);
	accept_queued(c, 256); /* bounded so one busy listener cannot starve the streams */
}

void ig_sock_core_init(struct sock_core *c, struct ig_loop *loop, int listen_fd,
		    uint32_t max_streams, sock_accept_fn *accept, void *arg)
{
	*c = (struct sock_core){ .loop = loop, .listen_fd = listen_fd, .max_streams = max_streams,
				 .accept = accept, .accept_arg = arg, .linger_ms = 2000, .spares_want = 1 };
	/* Lingering streams are extra: allow the pool some headroom. */
	ig_pool_init(&c->streams, sizeof(struct sock_stream), 64, (size_t)max_streams + 1024);
	c->listen_io.fn = on_listen_event;
}

void ig_sock_core_reserve(struct sock_core *c, unsigned n, bool serve)
{
	c->spares_want = (uint8_t)(n < IG_SOCK_SPARES_MAX ? n : IG_SOCK_SPARES_MAX);
	c->spares_serve = serve;
}

int ig_sock_core_start(struct sock_core *c)
{
	spares_refill(c);
	/* Exclusive: a listener inherited by socket activation is one socket
	   that every core's epoll watches (SO_REUSEPORT cannot split a socket
	   bound by another process), and a connection should wake one core,
	   not all. With a socket per core (SO_REUSEPORT) it changes nothing. */
	return ig_loop_add(c->loop, c->listen_fd, EPOLLIN | EPOLLEXCLUSIVE, &c->listen_io);
}

static struct ig_transport *close_keeping_errno(int fd, int err)
{
	close(fd);
	errno = err;
	return NULL;
}

struct ig_transport *ig_sock_connect(struct sock_core *c, const struct sockaddr *addr, socklen_t len)
{
	if (c->open_streams >= c->max_streams) {
		errno = EMFILE;
		return NULL;
	}
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, addr, len) != 0 && errno != EINPROGRESS)
		return close_keeping_errno(fd, errno);
	struct sock_stream *s = ig_pool_take(&c->streams);
	if (!s)
		return close_keeping_errno(fd, ENOBUFS);
	*s = (struct sock_stream){ .core = c, .fd = fd, .state = STREAM_CONNECTING };
	s->t.ops = &stream_ops;
	s->t.loop = c->loop;
	s->io.fn = on_stream_event;
	/* Registered now: the connect's completion is an edge that the engine,
	   set right after this returns, will see. */
	if (ig_loop_add(c->loop, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &s->io) != 0) {
		ig_pool_give(&c->streams, s);
		return close_keeping_errno(fd, errno);
	}
	c->open_streams++;
	return &s->t;
}

int ig_sock_stream_error(const struct ig_transport *t)
{
	return ((const struct sock_stream *)t)->error;
}

void ig_sock_core_stop_accepting(struct sock_core *c)
{
	if (c->listen_fd < 0)
		return;
	/* The whole backlog (4096 in ig_server_listen): a connection left in it
	   is reset by the close. Bounded, as connections keep coming. */
	for (int i = 0; i < 16 && accept_queued(c, 256); i++)
		;
	ig_loop_del(c->loop, c->listen_fd); /* not there while paused: harmless */
	close(c->listen_fd);
	c->listen_fd = -1;
	ig_timer_cancel(&c->loop->timers, &c->backoff);
	while (c->spares > 0)
		close(c->spare[--c->spares]);
	c->spares_want = 0;
}
