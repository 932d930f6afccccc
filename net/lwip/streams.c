/* The transport (net/transport.h) over lwIP's raw TCP API, for accepted
 * and for outbound streams. A stream lives on its home core (the loop of
 * its engine); lwIP's callbacks, on whichever core holds the lock, only
 * record what happened (bytes held, the peer's FIN, room to write, the
 * PCB's end, a new stream) and post the stream to its home, which calls
 * the engine after its batch, with the lock given up around each call.
 * Received pbufs are held until the engine lends a buffer, and the window
 * is opened (tcp_recved) only for bytes it took, so an engine that pauses
 * closes the window instead of queueing without bound. writev queues at
 * most tcp_sndbuf() and says IG_WOULD_BLOCK at 0; the sent callback makes
 * it writable again. lwIP frees a PCB before its error callback runs. A
 * stream the engine closes during one of its own calls is freed as the
 * call returns (in_callback, the unwind). */
#include "lwip.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#define LINGER_MS 2000
#define LINGER_DISCARD_MAX (1u << 20)

enum stream_state {
	LS_CONNECTING, /* outbound: no SYN-ACK yet */
	LS_OPEN,
	LS_LINGERING, /* engine gone, FIN sent, discarding the peer's bytes */
	LS_DEAD,      /* freed once no callback of it is on the stack */
};

/* What lwIP's callbacks left for the home core. */
enum stream_event {
	EV_ACCEPT = 1,   /* a new stream for its listener */
	EV_READ = 2,     /* bytes or the peer's FIN held */
	EV_WRITE = 4,    /* room to write, or connected */
	EV_GONE = 8,     /* lwIP freed the PCB (reset, timeout) */
	EV_FREE = 16,    /* a lingering stream is done */
};

struct lwip_stream {
	struct ig_transport t; /* first: the engine's handle; t.loop its home's */
	struct tcp_pcb *pcb;   /* NULL once lwIP has it back or freed it */
	struct ig_net_listener *listener; /* NULL: outbound */
	struct ig_lwip_core *home;
	struct lwip_stream *next_posted;
	struct pbuf *held, *held_tail;    /* received, not yet lent; linked by next */
	uint16_t held_off;
	uint8_t events; /* enum stream_event, posted */
	bool posted;
	struct ig_timer linger_timer;
	enum stream_state state;
	bool in_callback, read_paused, peer_fin, eof_pending, want_write;
	uint32_t discarded;
	int error;
};

/* The accepting PCB of a port, shared by each core's listener on it. */
#define GROUP_MEMBERS 64
struct ig_lwip_group {
	struct ig_lwip_group *next;
	struct tcp_pcb *pcb;
	uint32_t addr;
	int port;
	unsigned members, turn;
	struct ig_net_listener *member[GROUP_MEMBERS];
};
/* The groups' room: a group is free while it has no PCB. */
#define GROUPS 16
static struct ig_lwip_group group_room[GROUPS];

static const struct ig_transport_ops stream_ops;

void ig_lwip_streams_init(uint32_t max_streams)
{
	/* Lingering and outbound streams are extra: headroom as net/sock. */
	ig_pool_init(&ig_lwip_state.streams, sizeof(struct lwip_stream), 64, (size_t)max_streams + 65536 + 1024);
}

void ig_lwip_streams_grow(uint32_t max_streams)
{
	ig_lwip_state.streams.max_objs += max_streams;
}

/* Under the lock, from a callback: the home core will see to ev. */
static void post(struct lwip_stream *s, enum stream_event ev)
{
	s->events |= (uint8_t)ev;
	if (s->posted)
		return;
	s->posted = true;
	s->next_posted = NULL;
	struct ig_lwip_core *c = s->home;
	if (c->streams_tail)
		c->streams_tail->next_posted = s;
	else
		c->streams = s;
	c->streams_tail = s;
	ig_lwip_signal(c);
}

static void unpost(struct lwip_stream *s)
{
	struct ig_lwip_core *c = s->home;
	struct lwip_stream **p = &c->streams, *prev = NULL;
	while (*p && *p != s) {
		prev = *p;
		p = &(*p)->next_posted;
	}
	if (*p) {
		*p = s->next_posted;
		if (c->streams_tail == s)
			c->streams_tail = prev;
	}
	s->posted = false;
	s->events = 0;
}

/* ---- holding received bytes ---- */

static struct pbuf *held_pop(struct lwip_stream *s)
{
	struct pbuf *q = s->held;
	s->held = q->next;
	if (!s->held)
		s->held_tail = NULL;
	q->next = NULL;
	q->tot_len = q->len;
	s->held_off = 0;
	return q;
}

/* Appends p's pbufs one by one: a chain's u16 tot_len cannot count a
 * window of more than 64 KiB, so the queue tracks lengths per pbuf. */
static void held_push(struct lwip_stream *s, struct pbuf *p)
{
	if (s->held_tail)
		s->held_tail->next = p;
	else
		s->held = p;
	while (p->next)
		p = p->next;
	s->held_tail = p;
}

static void recved(struct tcp_pcb *pcb, size_t n)
{
	while (n) {
		u16_t part = n > 0xffff ? 0xffff : (u16_t)n;
		tcp_recved(pcb, part);
		n -= part;
	}
}

/* Drops what is held. read: as if the engine had read it (the window
 * opens; a close then ends with a FIN); otherwise it stays unread, and a
 * close answers it with a reset, as the kernel's close does. */
static void held_drop(struct lwip_stream *s, bool read)
{
	size_t n = 0;
	while (s->held) {
		struct pbuf *q = held_pop(s);
		n += q->len;
		pbuf_free(q);
	}
	if (s->pcb && read)
		recved(s->pcb, n);
}

/* ---- life ---- */

static void detach(struct lwip_stream *s)
{
	struct tcp_pcb *pcb = s->pcb;
	if (!pcb)
		return;
	tcp_arg(pcb, NULL);
	tcp_recv(pcb, NULL);
	tcp_sent(pcb, NULL);
	tcp_err(pcb, NULL);
	s->pcb = NULL;
}

static void stream_free(struct lwip_stream *s)
{
	ig_timer_cancel(&s->t.loop->timers, &s->linger_timer);
	if (s->posted)
		unpost(s);
	held_drop(s, false);
	detach(s);
	ig_pool_give(&ig_lwip_state.streams, s);
}

static void count_closed(struct lwip_stream *s)
{
	if (s->listener)
		s->listener->open--;
}

/* Hands the PCB back to lwIP, which sends the FIN (a reset when bytes
 * are left unread) and frees it in time. When lwIP cannot (no memory for
 * the FIN), the PCB stays, without callbacks, for the unwind to abort. */
static void close_pcb(struct lwip_stream *s, bool read_held)
{
	struct tcp_pcb *pcb = s->pcb;
	if (!pcb)
		return;
	held_drop(s, read_held);
	detach(s);
	if (tcp_close(pcb) != ERR_OK)
		s->pcb = pcb;
}

/* Resets the connection and frees the PCB. The reset carries the sequence
 * number the peer last acknowledged, not snd_nxt as tcp_abort's does: a
 * zero-window probe moves lwIP's snd_nxt one past what a peer with a
 * closed window accepted, and Linux drops a reset outside its window
 * (RFC 5961), so a client that had stopped reading would never hear it.
 * (Connecting, nothing was acknowledged yet: lwIP's own number.) */
static void reset_pcb(struct tcp_pcb *pcb)
{
	u32_t seq = pcb->state == SYN_SENT ? pcb->snd_nxt : pcb->lastack;
	if (pcb->state != CLOSED)
		tcp_rst(pcb, seq, pcb->rcv_nxt, &pcb->local_ip, &pcb->remote_ip, pcb->local_port, pcb->remote_port);
	tcp_abandon(pcb, 0);
}

/* The end of any entry into a stream on its home core (the lock held): an
 * abort the engine asked for meanwhile is done now; a dead stream is
 * freed. Never inside one of lwIP's callbacks of the PCB. */
static void stream_unwind(struct lwip_stream *s, bool outer)
{
	if (outer)
		return;
	if (s->state == LS_DEAD && s->pcb) {
		struct tcp_pcb *pcb = s->pcb;
		detach(s);
		reset_pcb(pcb);
	}
	if (s->state == LS_DEAD)
		stream_free(s);
	ig_lwip_port_touch();
}

static int errno_of(const struct lwip_stream *s, err_t err)
{
	if (s->state == LS_CONNECTING)
		return err == ERR_RST ? ECONNREFUSED : ETIMEDOUT;
	return err == ERR_RST ? ECONNRESET : err == ERR_CLSD ? ENOTCONN : ECONNABORTED;
}

/* lwIP has freed the PCB already. */
static void on_err(void *arg, err_t err)
{
	struct lwip_stream *s = arg;
	if (!s)
		return;
	s->pcb = NULL;
	if (s->state == LS_OPEN || s->state == LS_CONNECTING)
		s->error = errno_of(s, err);
	post(s, EV_GONE);
}

/* ---- reading ---- */

void ig_lwip_after_first_delivery(void (*fn)(void))
{
	atomic_store(&ig_lwip_state.first_delivery, fn);
}

/* The lock held (c's): the server's fn runs without it (it starts cores,
 * whose stacks take it). */
static void first_delivered(struct ig_lwip_core *c)
{
	void (*fn)(void) = atomic_exchange(&ig_lwip_state.first_delivery, NULL);
	if (!fn)
		return;
	ig_lwip_unlock();
	fn();
	ig_lwip_lock(c);
}

/* On the home core, the lock held, in_callback set: the engine's calls
 * are made with the lock given up. */
static void deliver(struct lwip_stream *s)
{
	while (s->state == LS_OPEN) {
		if (!s->held) {
			if (s->eof_pending) {
				s->eof_pending = false;
				ig_lwip_unlock();
				s->t.engine_ops->received(s->t.engine, 0);
				ig_lwip_lock(s->home);
			}
			return;
		}
		size_t cap = 0, n = 0;
		ig_lwip_unlock();
		char *buf = s->t.engine_ops->lend(s->t.engine, &cap);
		ig_lwip_lock(s->home);
		if (s->state != LS_OPEN)
			return;
		if (!buf || cap == 0) {
			s->read_paused = true;
			return;
		}
		while (n < cap && s->held) {
			struct pbuf *q = s->held;
			size_t take = q->len - s->held_off;
			if (take > cap - n)
				take = cap - n;
			memcpy(buf + n, (const char *)q->payload + s->held_off, take);
			n += take;
			s->held_off = (uint16_t)(s->held_off + take);
			if (s->held_off == q->len)
				pbuf_free(held_pop(s));
		}
		if (s->pcb)
			recved(s->pcb, n);
		if (n) {
			ig_lwip_unlock();
			s->t.engine_ops->received(s->t.engine, n);
			ig_lwip_lock(s->home);
		}
	}
}

/* A lingering stream's end: lwIP's PCB is handed back (FIN) or reset,
 * and the home core frees the stream. */
static err_t linger_done(struct lwip_stream *s, struct tcp_pcb *pcb, bool reset)
{
	s->state = LS_DEAD;
	post(s, EV_FREE);
	if (!reset) {
		close_pcb(s, true);
		if (!s->pcb)
			return ERR_OK;
	}
	detach(s);
	reset_pcb(pcb);
	return ERR_ABRT;
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct lwip_stream *s = arg;
	(void)err;
	if (!s || s->state == LS_DEAD) { /* not ours any more: what tcp_recv_null would do */
		if (p) {
			tcp_recved(pcb, p->tot_len);
			pbuf_free(p);
		}
		return ERR_OK;
	}
	if (s->state == LS_LINGERING) {
		if (!p)
			return linger_done(s, pcb, false); /* the peer is done too */
		s->discarded += p->tot_len;
		tcp_recved(pcb, p->tot_len);
		pbuf_free(p);
		return s->discarded >= LINGER_DISCARD_MAX ? linger_done(s, pcb, true) : ERR_OK;
	}
	if (p) {
		held_push(s, p);
	} else {
		s->peer_fin = true;
		s->eof_pending = true;
	}
	post(s, EV_READ);
	return ERR_OK;
}

/* Lock held. */
static void resume_locked(struct lwip_stream *s)
{
	if (!s->read_paused || s->state != LS_OPEN)
		return;
	s->read_paused = false;
	bool outer = s->in_callback;
	s->in_callback = true;
	deliver(s);
	s->in_callback = outer;
	stream_unwind(s, outer);
}

static void stream_resume_read(struct ig_transport *t)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	ig_lwip_lock(s->home);
	resume_locked(s);
	ig_lwip_unlock();
}

/* What lwIP handed us is held (on_recv never refuses data, so a PCB has
 * no refused_data of ours); the frames in the device are handed to lwIP
 * first; held bytes or a held FIN are delivered now. */
static bool stream_read_now(struct ig_transport *t)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	ig_lwip_lock(s->home);
	ig_lwip_frames_take();
	bool some = s->state == LS_OPEN && (s->held || s->eof_pending);
	if (some) {
		s->read_paused = true; /* so that resume delivers, paused or not */
		resume_locked(s);
	}
	ig_lwip_unlock();
	return some;
}

/* ---- writing ---- */

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	(void)pcb;
	(void)len;
	struct lwip_stream *s = arg;
	if (s && s->state == LS_OPEN && s->want_write)
		post(s, EV_WRITE);
	return ERR_OK;
}

static ssize_t writev_locked(struct lwip_stream *s, const struct iovec *iov, int iovcnt)
{
	if (s->state == LS_CONNECTING) {
		s->want_write = true;
		return IG_WOULD_BLOCK;
	}
	if (s->state != LS_OPEN || !s->pcb)
		return -1;
	size_t room = tcp_sndbuf(s->pcb), total = 0;
	bool full = false;
	for (int i = 0; i < iovcnt && !full; i++) {
		const char *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			size_t part = left < room ? left : room;
			if (part > 0xffff)
				part = 0xffff;
			if (part == 0) {
				full = true;
				break;
			}
			bool more = part < left || i + 1 < iovcnt;
			err_t e = tcp_write(s->pcb, p, (u16_t)part,
					    TCP_WRITE_FLAG_COPY | (more ? TCP_WRITE_FLAG_MORE : 0));
			if (e == ERR_MEM) {
				full = true;
				break;
			}
			if (e != ERR_OK)
				return total ? (ssize_t)total : -1;
			p += part;
			left -= part;
			room -= part;
			total += part;
		}
	}
	if (full)
		s->want_write = true;
	if (total)
		tcp_output(s->pcb);
	ig_lwip_port_touch();
	return total ? (ssize_t)total : IG_WOULD_BLOCK;
}

static ssize_t stream_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	ig_lwip_lock(s->home);
	ssize_t n = writev_locked(s, iov, iovcnt);
	ig_lwip_unlock();
	return n;
}

/* ---- closing ---- */

static void on_linger_timeout(struct ig_timer *tm)
{
	struct lwip_stream *s = (struct lwip_stream *)((char *)tm - offsetof(struct lwip_stream, linger_timer));
	ig_lwip_lock(s->home);
	if (s->state == LS_LINGERING) {
		close_pcb(s, true);
		s->state = LS_DEAD;
		stream_unwind(s, s->in_callback);
	}
	ig_lwip_unlock();
}

static void close_locked(struct lwip_stream *s, int graceful)
{
	if (s->state != LS_OPEN && s->state != LS_CONNECTING)
		return;
	count_closed(s);
	if (graceful && s->state == LS_OPEN && s->pcb) {
		held_drop(s, true);
		if (s->peer_fin) {
			close_pcb(s, true);
			s->state = LS_DEAD;
		} else if (tcp_shutdown(s->pcb, 0, 1) == ERR_OK) {
			s->state = LS_LINGERING;
			s->linger_timer.fn = on_linger_timeout;
			ig_timer_set(&s->t.loop->timers, &s->linger_timer, s->t.loop->clock.now_ms + LINGER_MS);
		} else {
			s->state = LS_DEAD; /* aborted by the unwind */
		}
	} else if (s->state == LS_OPEN) {
		/* As the kernel's close: a FIN, or a reset (by the unwind) when
		   bytes are left unread. */
		if (s->pcb && !s->held && s->pcb->rcv_wnd == TCP_WND_MAX(s->pcb))
			close_pcb(s, false);
		s->state = LS_DEAD;
	} else {
		s->state = LS_DEAD; /* connecting: aborted by the unwind */
	}
	stream_unwind(s, s->in_callback);
}

static void stream_close(struct ig_transport *t, int graceful)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	ig_lwip_lock(s->home);
	close_locked(s, graceful);
	ig_lwip_unlock();
}

/* lwIP keeps the peer in the pcb anyway: nothing to capture at accept. */
static size_t stream_peer(struct ig_transport *t, char *out, size_t cap)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	char a[IPADDR_STRLEN_MAX];
	ig_lwip_lock(s->home);
	bool known = s->pcb && ipaddr_ntoa_r(&s->pcb->remote_ip, a, sizeof a);
	unsigned port = known ? s->pcb->remote_port : 0;
	ig_lwip_unlock();
	if (!known)
		return 0;
	int n = snprintf(out, cap, "%s:%u", a, port);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

static const struct ig_transport_ops stream_ops = {
	.writev = stream_writev,
	.resume_read = stream_resume_read,
	.read_now = stream_read_now,
	.close = stream_close,
	.peer = stream_peer,
};

static struct lwip_stream *stream_new(struct tcp_pcb *pcb, struct ig_net_listener *l, struct ig_lwip_core *home,
				      enum stream_state state)
{
	struct lwip_stream *s = ig_pool_take(&ig_lwip_state.streams);
	if (!s)
		return NULL;
	*s = (struct lwip_stream){ .pcb = pcb, .listener = l, .home = home, .state = state };
	s->t.ops = &stream_ops;
	s->t.loop = home->loop;
	tcp_arg(pcb, s);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, on_err);
	tcp_nagle_disable(pcb); /* as TCP_NODELAY on the kernel's sockets */
	return s;
}

/* ---- a posted stream, on its home core ---- */

/* The handshake is done and the server closes the connection, as the
 * kernel's listener does at its limit (a FIN, not a reset at connect);
 * lwIP's default receiver discards what the peer still sends. */
static void refuse(struct lwip_stream *s)
{
	struct tcp_pcb *pcb = s->pcb;
	s->listener->refused++;
	held_drop(s, true);
	detach(s);
	s->state = LS_DEAD;
	if (pcb && tcp_close(pcb) != ERR_OK)
		tcp_abort(pcb);
	stream_free(s);
}

void ig_lwip_stream_run(struct lwip_stream *s)
{
	struct ig_lwip_core *c = s->home;
	c->streams = s->next_posted;
	if (!c->streams)
		c->streams_tail = NULL;
	s->posted = false;
	uint8_t ev = s->events;
	s->events = 0;
	if (ev & EV_ACCEPT) {
		struct ig_net_listener *l = s->listener;
		if (!s->pcb) { /* reset before its accept: no engine heard of it */
			s->state = LS_DEAD;
			stream_free(s);
			return;
		}
		if (l->open >= l->spec.max_streams) {
			refuse(s);
			return;
		}
		l->open++;
		s->in_callback = true;
		ig_lwip_unlock();
		bool taken = l->spec.accept(l->spec.arg, &s->t);
		ig_lwip_lock(c);
		s->in_callback = false;
		if (!taken) {
			l->open--;
			refuse(s);
			return;
		}
	}
	bool outer = s->in_callback;
	s->in_callback = true;
	if ((ev & EV_GONE) && (s->state == LS_OPEN || s->state == LS_CONNECTING)) {
		count_closed(s);
		s->state = LS_DEAD;
		ig_lwip_unlock();
		s->t.engine_ops->closed(s->t.engine);
		ig_lwip_lock(c);
	}
	if (ev & EV_GONE)
		s->state = LS_DEAD;
	if ((ev & EV_READ) && s->state == LS_OPEN && !s->read_paused) {
		deliver(s);
		/* A plain load on every delivery; the exchange once. */
		if (atomic_load_explicit(&ig_lwip_state.first_delivery, memory_order_relaxed))
			first_delivered(c);
	}
	if ((ev & EV_WRITE) && s->state == LS_OPEN && s->want_write) {
		s->want_write = false;
		ig_lwip_unlock();
		s->t.engine_ops->writable(s->t.engine);
		ig_lwip_lock(c);
	}
	s->in_callback = outer;
	stream_unwind(s, outer);
}

/* ---- accepting ---- */

/* The next member in turn with room; NULL: none. */
static struct ig_net_listener *next_member(struct ig_lwip_group *g)
{
	for (unsigned i = 0; i < g->members; i++) {
		struct ig_net_listener *l = g->member[g->turn++ % g->members];
		if (l->open < l->spec.max_streams)
			return l;
	}
	return NULL;
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct ig_lwip_group *g = arg;
	if (err != ERR_OK || !pcb || !g)
		return ERR_VAL;
	struct ig_net_listener *l = next_member(g);
	struct lwip_stream *s = l ? stream_new(pcb, l, l->core, LS_OPEN) : NULL;
	if (!s) {
		if (g->members)
			g->member[0]->refused++;
		tcp_arg(pcb, NULL);
		tcp_recv(pcb, NULL);
		tcp_sent(pcb, NULL);
		tcp_err(pcb, NULL);
		if (tcp_close(pcb) == ERR_OK)
			return ERR_OK;
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	post(s, EV_ACCEPT);
	return ERR_OK;
}

/* The stack starts on the loop, later: the listener binds when it serves.
 * Port 0 is given a port from the dynamic range here, so that the other
 * cores' listeners join the same one. */
int ig_lwip_open(struct ig_net_listener *l, const struct ig_net_listen_spec *spec, int *port, char *err,
		 size_t errlen)
{
	(void)err, (void)errlen;
	if (*port == 0) {
		uint32_t r;
		if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
			r = (uint32_t)(uintptr_t)l;
		*port = (int)(0xc000u | (r & 0x3fffu));
	}
	*l = (struct ig_net_listener){ .spec = *spec, .port = *port };
	return 0;
}

static struct ig_lwip_group *group_for(uint32_t addr, int port, char *err, size_t errlen)
{
	struct ig_lwip_state *st = &ig_lwip_state;
	for (struct ig_lwip_group *g = st->groups; g; g = g->next)
		if (g->addr == addr && g->port == port)
			return g;
	struct ig_lwip_group *g = group_room;
	while (g < group_room + GROUPS && g->pcb)
		g++;
	if (g == group_room + GROUPS) {
		snprintf(err, errlen, "lwIP: cannot listen on port %d: more than %d ports listen", port, GROUPS);
		return NULL;
	}
	ip_addr_t ip = IPADDR4_INIT(addr);
	struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
	struct tcp_pcb *lpcb = pcb && tcp_bind(pcb, &ip, (u16_t)port) == ERR_OK ? tcp_listen(pcb) : NULL;
	if (!lpcb) {
		snprintf(err, errlen, "lwIP: cannot listen on port %d", port);
		if (pcb)
			tcp_abort(pcb);
		return NULL;
	}
	*g = (struct ig_lwip_group){ .next = st->groups, .pcb = lpcb, .addr = addr, .port = port };
	st->groups = g;
	tcp_arg(lpcb, g);
	tcp_accept(lpcb, on_accept);
	return g;
}

int ig_lwip_serve(struct ig_net_listener *l, struct ig_loop *loop, void *seed, char *err, size_t errlen)
{
	(void)seed; /* the stack's own memory */
	const char *host = l->spec.host;
	uint32_t a;
	if (ig_lwip_parse_ipv4(host, &a) != 0) {
		snprintf(err, errlen, "HOST \"%s\" is not a numeric IPv4 address (lwIP serves IPv4 only)", host);
		return -1;
	}
	l->core = ig_lwip_core_of(loop);
	ig_lwip_lock(l->core);
	struct ig_lwip_group *g = group_for(a, l->port, err, errlen);
	if (g && g->members == GROUP_MEMBERS) {
		snprintf(err, errlen, "lwIP: more than %d listeners on port %d", GROUP_MEMBERS, l->port);
		g = NULL;
	}
	if (g) {
		g->member[g->members++] = l;
		l->group = g;
		l->port = g->pcb->local_port;
		ig_lwip_port_touch();
	}
	ig_lwip_unlock();
	return g ? 0 : -1;
}

int ig_lwip_port(const struct ig_net_listener *l)
{
	return l->port;
}

uint64_t ig_lwip_refused(const struct ig_net_listener *l)
{
	return l->refused;
}

/* Handshakes whose last ACK is still in the device complete first and are
 * accepted, as net/sock accepts its backlog: those posted to this core
 * are taken now, before the listener leaves its group. */
void ig_lwip_stop_accepting(struct ig_net_listener *l)
{
	struct ig_lwip_group *g = l->group;
	if (!g)
		return;
	ig_lwip_lock(l->core);
	ig_lwip_frames_take();
	ig_lwip_unlock();
	ig_lwip_core_run(l->core);
	ig_lwip_lock(l->core);
	for (unsigned i = 0; i < g->members; i++)
		if (g->member[i] == l) {
			g->member[i] = g->member[--g->members];
			break;
		}
	l->group = NULL;
	if (!g->members && g->pcb) {
		tcp_arg(g->pcb, NULL);
		tcp_accept(g->pcb, NULL);
		tcp_close(g->pcb); /* a listener's close cannot fail */
		g->pcb = NULL;
		struct ig_lwip_group **p = &ig_lwip_state.groups;
		while (*p != g)
			p = &(*p)->next;
		*p = g->next; /* free again: its pcb is NULL */
	}
	ig_lwip_port_touch();
	ig_lwip_unlock();
}

/* ---- connecting ---- */

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)pcb;
	(void)err; /* always ERR_OK: a failure goes to on_err */
	struct lwip_stream *s = arg;
	if (s && s->state == LS_CONNECTING) {
		s->state = LS_OPEN;
		s->want_write = true; /* the engine hears it is connected */
		post(s, EV_WRITE);
	}
	return ERR_OK;
}

struct ig_transport *ig_lwip_connect(struct sock_core *sc, struct ig_loop *loop, const struct sockaddr *addr,
				    socklen_t len)
{
	(void)sc; /* the stack's own memory */
	if (addr->sa_family != AF_INET || len < sizeof(struct sockaddr_in)) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
	ip_addr_t to = IPADDR4_INIT(in->sin_addr.s_addr);
	struct ig_lwip_core *home = ig_lwip_core_of(loop);
	ig_lwip_lock(home);
	struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
	struct lwip_stream *s = pcb ? stream_new(pcb, NULL, home, LS_CONNECTING) : NULL;
	err_t e = s ? tcp_connect(pcb, &to, ntohs(in->sin_port), on_connected) : ERR_MEM;
	if (e != ERR_OK) {
		if (s) {
			detach(s);
			ig_pool_give(&ig_lwip_state.streams, s);
		}
		if (pcb)
			tcp_abort(pcb);
		ig_lwip_unlock();
		errno = e == ERR_RTE ? ENETUNREACH : ENOBUFS;
		return NULL;
	}
	ig_lwip_port_touch();
	ig_lwip_unlock();
	return &s->t;
}

int ig_lwip_stream_error(const struct ig_transport *t)
{
	return ((const struct lwip_stream *)t)->error;
}

bool ig_lwip_streams_busy(void)
{
	ig_lwip_lock(ig_lwip_state.net_core);
	bool busy = false;
	for (struct tcp_pcb *p = tcp_active_pcbs; p && !busy; p = p->next)
		busy = p->unsent || p->unacked;
	ig_lwip_unlock();
	return busy;
}
