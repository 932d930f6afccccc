/* The transport (net/transport.h) over lwIP's raw TCP API, for accepted
 * and for outbound streams. Received pbufs are held until the engine lends
 * a buffer, and the window is opened (tcp_recved) only for bytes it took,
 * so an engine that pauses closes the window instead of queueing without
 * bound. writev queues at most tcp_sndbuf() and says IG_WOULD_BLOCK at 0;
 * the sent callback makes it writable again. lwIP frees a PCB before its
 * error callback runs; an abort asked for inside one of the PCB's own
 * callbacks is done as the callback returns (with ERR_ABRT, as lwIP wants). */
#include "lwip.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

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

struct lwip_stream {
	struct ig_transport t; /* first: the engine's handle */
	struct tcp_pcb *pcb;   /* NULL once lwIP has it back or freed it */
	struct ig_net_listener *listener; /* NULL: outbound */
	struct pbuf *held, *held_tail;    /* received, not yet lent; linked by next */
	uint16_t held_off;
	struct ig_timer linger_timer;
	enum stream_state state;
	bool in_callback, read_paused, peer_fin, eof_pending, want_write;
	uint32_t discarded;
	int error;
};

static const struct ig_transport_ops stream_ops;

void ig_lwip_streams_init(uint32_t max_streams)
{
	/* Lingering and outbound streams are extra: headroom as net/sock. */
	ig_pool_init(&ig_lwip_state.streams, sizeof(struct lwip_stream), 64, (size_t)max_streams + 65536 + 1024);
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
	ig_timer_cancel(&ig_lwip_state.loop->timers, &s->linger_timer);
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

/* The end of any entry into a stream from lwIP or the engine: an abort the
 * engine asked for meanwhile is done now; a dead stream is freed. Returns
 * what an lwIP callback of this PCB must return. */
static err_t stream_unwind(struct lwip_stream *s, bool outer)
{
	if (outer)
		return ERR_OK;
	err_t rc = ERR_OK;
	if (s->state == LS_DEAD && s->pcb) {
		struct tcp_pcb *pcb = s->pcb;
		detach(s);
		reset_pcb(pcb);
		rc = ERR_ABRT;
	}
	if (s->state == LS_DEAD)
		stream_free(s);
	ig_lwip_port_touch();
	return rc;
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
	bool outer = s->in_callback;
	s->in_callback = true;
	if (s->state == LS_OPEN || s->state == LS_CONNECTING) {
		count_closed(s);
		s->error = errno_of(s, err);
		s->state = LS_DEAD;
		s->t.engine_ops->closed(s->t.engine);
	}
	s->state = LS_DEAD;
	s->in_callback = outer;
	stream_unwind(s, outer);
}

/* ---- reading ---- */

static void deliver(struct lwip_stream *s)
{
	while (s->state == LS_OPEN) {
		if (!s->held) {
			if (s->eof_pending) {
				s->eof_pending = false;
				s->t.engine_ops->received(s->t.engine, 0);
			}
			return;
		}
		size_t cap = 0, n = 0;
		char *buf = s->t.engine_ops->lend(s->t.engine, &cap);
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
		if (n)
			s->t.engine_ops->received(s->t.engine, n);
	}
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct lwip_stream *s = arg;
	(void)err;
	if (!s) { /* not ours any more: what tcp_recv_null would do */
		if (p) {
			tcp_recved(pcb, p->tot_len);
			pbuf_free(p);
		}
		return ERR_OK;
	}
	bool outer = s->in_callback;
	s->in_callback = true;
	if (s->state == LS_LINGERING) {
		if (!p) {
			close_pcb(s, true); /* the peer is done too */
			s->state = LS_DEAD;
		} else {
			s->discarded += p->tot_len;
			tcp_recved(pcb, p->tot_len);
			pbuf_free(p);
			if (s->discarded >= LINGER_DISCARD_MAX)
				s->state = LS_DEAD; /* aborted by the unwind */
		}
	} else if (s->state == LS_OPEN) {
		if (p) {
			held_push(s, p);
		} else {
			s->peer_fin = true;
			s->eof_pending = true;
		}
		if (!s->read_paused)
			deliver(s);
	} else if (p) {
		tcp_recved(pcb, p->tot_len);
		pbuf_free(p);
	}
	s->in_callback = outer;
	return stream_unwind(s, outer);
}

static void stream_resume_read(struct ig_transport *t)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	if (!s->read_paused || s->state != LS_OPEN)
		return;
	s->read_paused = false;
	bool outer = s->in_callback;
	s->in_callback = true;
	deliver(s);
	s->in_callback = outer;
	stream_unwind(s, outer);
}

/* What lwIP handed us is held (on_recv never refuses data, so a PCB has
 * no refused_data of ours); held bytes or a held FIN are delivered now. */
static bool stream_read_now(struct ig_transport *t)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	if (s->state != LS_OPEN || (!s->held && !s->eof_pending))
		return false;
	s->read_paused = true; /* so that resume_read delivers, paused or not */
	stream_resume_read(t);
	return true;
}

/* ---- writing ---- */

/* The engine may write again (or, connecting, it is connected). */
static err_t notify_writable(struct lwip_stream *s)
{
	s->want_write = false;
	bool outer = s->in_callback;
	s->in_callback = true;
	s->t.engine_ops->writable(s->t.engine);
	s->in_callback = outer;
	return stream_unwind(s, outer);
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	(void)pcb;
	(void)len;
	struct lwip_stream *s = arg;
	if (!s || s->state != LS_OPEN || !s->want_write)
		return ERR_OK;
	return notify_writable(s);
}

static ssize_t stream_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
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

/* ---- closing ---- */

static void on_linger_timeout(struct ig_timer *tm)
{
	struct lwip_stream *s = (struct lwip_stream *)((char *)tm - offsetof(struct lwip_stream, linger_timer));
	close_pcb(s, true);
	s->state = LS_DEAD;
	stream_unwind(s, s->in_callback);
}

static void stream_close(struct ig_transport *t, int graceful)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
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
			ig_timer_set(&ig_lwip_state.loop->timers, &s->linger_timer,
				     ig_lwip_state.loop->clock.now_ms + LINGER_MS);
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

/* lwIP keeps the peer in the pcb anyway: nothing to capture at accept. */
static size_t stream_peer(struct ig_transport *t, char *out, size_t cap)
{
	struct lwip_stream *s = (struct lwip_stream *)t;
	char a[IPADDR_STRLEN_MAX];
	if (!s->pcb || !ipaddr_ntoa_r(&s->pcb->remote_ip, a, sizeof a))
		return 0;
	int n = snprintf(out, cap, "%s:%u", a, (unsigned)s->pcb->remote_port);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

static const struct ig_transport_ops stream_ops = {
	.writev = stream_writev,
	.resume_read = stream_resume_read,
	.read_now = stream_read_now,
	.close = stream_close,
	.peer = stream_peer,
};

static struct lwip_stream *stream_new(struct tcp_pcb *pcb, struct ig_net_listener *l, enum stream_state state)
{
	struct lwip_stream *s = ig_pool_take(&ig_lwip_state.streams);
	if (!s)
		return NULL;
	*s = (struct lwip_stream){ .pcb = pcb, .listener = l, .state = state };
	s->t.ops = &stream_ops;
	s->t.loop = ig_lwip_state.loop;
	tcp_arg(pcb, s);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, on_err);
	tcp_nagle_disable(pcb); /* as TCP_NODELAY on the kernel's sockets */
	return s;
}

/* ---- accepting ---- */

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct ig_net_listener *l = arg;
	if (err != ERR_OK || !pcb)
		return ERR_VAL;
	struct lwip_stream *s = l->open < l->spec.max_streams ? stream_new(pcb, l, LS_OPEN) : NULL;
	if (!s || !l->spec.accept(l->spec.arg, &s->t)) {
		l->refused++;
		if (s) {
			detach(s);
			ig_pool_give(&ig_lwip_state.streams, s);
		}
		/* As the kernel's listener: the handshake is done, and the server
		   closes the connection (a FIN, not a reset at connect). lwIP's
		   default receiver discards what the peer still sends. */
		tcp_arg(pcb, NULL);
		tcp_recv(pcb, NULL);
		tcp_sent(pcb, NULL);
		tcp_err(pcb, NULL);
		if (tcp_close(pcb) == ERR_OK)
			return ERR_OK;
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	l->open++;
	return ERR_OK;
}

/* The stack starts on the loop, later: the listener binds when it serves. */
int ig_lwip_open(struct ig_net_listener *l, const struct ig_net_listen_spec *spec, int *port, char *err,
		 size_t errlen)
{
	(void)err, (void)errlen;
	*l = (struct ig_net_listener){ .spec = *spec, .port = *port };
	return 0;
}

int ig_lwip_serve(struct ig_net_listener *l, struct ig_loop *loop, void *seed, char *err, size_t errlen)
{
	(void)loop, (void)seed; /* the stack's own loop and memory */
	const char *host = l->spec.host;
	uint32_t a;
	if (ig_lwip_parse_ipv4(host, &a) != 0) {
		snprintf(err, errlen, "HOST \"%s\" is not a numeric IPv4 address (lwIP serves IPv4 only)", host);
		return -1;
	}
	ip_addr_t addr = IPADDR4_INIT(a);
	struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
	if (!pcb || tcp_bind(pcb, &addr, (u16_t)l->port) != ERR_OK) {
		snprintf(err, errlen, "lwIP: cannot listen on %s port %d", host, l->port);
		if (pcb)
			tcp_abort(pcb);
		return -1;
	}
	l->port = pcb->local_port;
	struct tcp_pcb *lpcb = tcp_listen(pcb);
	if (!lpcb) {
		snprintf(err, errlen, "lwIP: cannot listen on %s port %d", host, l->port);
		tcp_abort(pcb);
		return -1;
	}
	l->pcb = lpcb;
	tcp_arg(lpcb, l);
	tcp_accept(lpcb, on_accept);
	ig_lwip_port_touch();
	return 0;
}

int ig_lwip_port(const struct ig_net_listener *l)
{
	return l->port;
}

uint64_t ig_lwip_refused(const struct ig_net_listener *l)
{
	return l->refused;
}

void ig_lwip_stop_accepting(struct ig_net_listener *l)
{
	if (!l->pcb)
		return;
	/* Handshakes whose last ACK is still in the device complete first
	   and are accepted, as net/sock accepts its backlog. */
	ig_lwip_frames_take();
	tcp_arg(l->pcb, NULL);
	tcp_accept(l->pcb, NULL);
	tcp_close(l->pcb); /* a listener's close cannot fail */
	l->pcb = NULL;
	ig_lwip_port_touch();
}

/* ---- connecting ---- */

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)pcb;
	(void)err; /* always ERR_OK: a failure goes to on_err */
	struct lwip_stream *s = arg;
	if (!s || s->state != LS_CONNECTING)
		return ERR_OK;
	s->state = LS_OPEN;
	return notify_writable(s);
}

struct ig_transport *ig_lwip_connect(struct sock_core *sc, struct ig_loop *loop, const struct sockaddr *addr,
				    socklen_t len)
{
	(void)sc, (void)loop; /* the stack's own */
	if (addr->sa_family != AF_INET || len < sizeof(struct sockaddr_in)) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
	ip_addr_t to = IPADDR4_INIT(in->sin_addr.s_addr);
	struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
	struct lwip_stream *s = pcb ? stream_new(pcb, NULL, LS_CONNECTING) : NULL;
	if (!s) {
		if (pcb)
			tcp_abort(pcb);
		errno = ENOBUFS;
		return NULL;
	}
	err_t e = tcp_connect(pcb, &to, ntohs(in->sin_port), on_connected);
	if (e != ERR_OK) {
		detach(s);
		ig_pool_give(&ig_lwip_state.streams, s);
		tcp_abort(pcb);
		errno = e == ERR_RTE ? ENETUNREACH : ENOBUFS;
		return NULL;
	}
	ig_lwip_port_touch();
	return &s->t;
}

int ig_lwip_stream_error(const struct ig_transport *t)
{
	return ((const struct lwip_stream *)t)->error;
}

bool ig_lwip_streams_busy(void)
{
	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		if (p->unsent || p->unacked)
			return true;
	return false;
}
