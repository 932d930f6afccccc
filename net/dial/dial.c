/* The dialer (dial.h): a literal or given address is connected at once, a
 * name is looked up first with the core's resolver; each address in turn
 * until one connects; one timer for the deadline; TLS once connected when
 * asked. While connecting, the dial is the socket's engine; it hands the
 * socket over at its first writable (net/sock: the connect's outcome). */
#include "net/dial/dial.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "kernel/runtime/loop.h"
#include "net/dns/dns.h"
#include "net/stack.h"
#include "net/tls/tls.h"

static const struct ig_stream_ops dial_stream_ops;

/* ---- the core's resolver ---- */

static struct ig_loop_slot resolver_slot;

/* Every core's resolver holder, for the process's lifetime: reachable
 * after its thread has gone, so a leak checker at exit sees memory in
 * use, not lost. Pushed once per core. */
struct dial_core {
	struct dial_core *all_next;
	struct dns_resolver *dns;
};
static _Atomic(struct dial_core *) all_dial_cores;

struct dns_resolver *ig_dial_resolver(struct ig_loop *loop)
{
	void **slot = ig_loop_slot(loop, &resolver_slot);
	if (!slot)
		return NULL;
	struct dial_core *c = *slot;
	if (c)
		return c->dns;
	c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->dns = ig_dns_resolver_new(loop);
	if (!c->dns) {
		free(c);
		return NULL;
	}
	c->all_next = atomic_load(&all_dial_cores);
	while (!atomic_compare_exchange_weak(&all_dial_cores, &c->all_next, c))
		;
	*slot = c;
	return c->dns;
}

/* ---- addresses ---- */

static socklen_t addr_len(const union ig_dial_addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof a->v6 : sizeof a->v4;
}

const struct sockaddr *ig_dial_address(const struct ig_dial *d, socklen_t *len)
{
	if (d->p.addr) {
		*len = d->p.addr_len;
		return d->p.addr;
	}
	if (d->next == 0)
		return NULL;
	const union ig_dial_addr *a = &d->addrs[d->next - 1];
	*len = addr_len(a);
	return &a->sa;
}

void ig_dial_address_text(const struct ig_dial *d, char *out, size_t cap)
{
	socklen_t len = 0;
	const struct sockaddr *a = ig_dial_address(d, &len);
	const union ig_dial_addr *ip = (const union ig_dial_addr *)a;
	char text[INET6_ADDRSTRLEN] = "?";
	const char *form = "%s";
	unsigned port = 0;
	if (a && a->sa_family == AF_UNIX) {
		snprintf(out, cap, "%s", ((const struct sockaddr_un *)a)->sun_path);
		return;
	}
	if (a && a->sa_family == AF_INET) {
		inet_ntop(AF_INET, &ip->v4.sin_addr, text, sizeof text);
		port = ntohs(ip->v4.sin_port);
		form = "%s:%u";
	} else if (a && a->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &ip->v6.sin6_addr, text, sizeof text);
		port = ntohs(ip->v6.sin6_port);
		form = "[%s]:%u";
	}
	snprintf(out, cap, form, text, port);
}

/* A literal host needs no resolver (nor its memory). */
static bool literal_address(const char *host, uint16_t port, union ig_dial_addr *a)
{
	*a = (union ig_dial_addr){ 0 };
	if (inet_pton(AF_INET, host, &a->v4.sin_addr) == 1) {
		a->v4.sin_family = AF_INET;
		a->v4.sin_port = htons(port);
		return true;
	}
	if (inet_pton(AF_INET6, host, &a->v6.sin6_addr) == 1) {
		a->v6.sin6_family = AF_INET6;
		a->v6.sin6_port = htons(port);
		return true;
	}
	return false;
}

/* ---- ending ---- */

/* Gives back what the dial holds (its socket closed unless handed over),
 * before its one callback; nothing when it holds nothing. */
static void dial_release(struct ig_dial *d)
{
	if (d->loop)
		ig_timer_cancel(&d->loop->timers, &d->timer);
	if (d->query)
		ig_dns_cancel(d->query);
	d->query = NULL;
	if (d->sock)
		d->sock->ops->close(d->sock, 0);
	d->sock = NULL;
}

static void dial_fail(struct ig_dial *d, enum ig_dial_error kind, const char *why)
{
	dial_release(d);
	d->state = IG_DIAL_IDLE;
	d->ops->failed(d, kind, why, d->arg);
}

void ig_dial_cancel(struct ig_dial *d)
{
	dial_release(d);
	d->state = IG_DIAL_IDLE;
}

/* ---- TLS ---- */

struct ig_transport *ig_dial_tls(struct ig_loop *loop, struct ig_transport *sock, const struct ig_dial_tls *tls,
				 const char **why)
{
	*why = "no trust anchors";
	const struct tls_trust *trust = !tls->verify ? NULL : tls->trust ? tls->trust : ig_tls_default_trust(why);
	if (tls->verify && !trust)
		return NULL;
	struct ig_tls_core *tc = ig_tls_client_core(loop);
	if (!tc) {
		*why = "out of memory";
		return NULL;
	}
	/* The socket stops being the engine's: TLS becomes its engine, and
	   the engine sits on TLS. */
	const struct ig_stream_ops *ops = sock->engine_ops;
	void *engine = sock->engine;
	sock->engine_ops = NULL;
	sock->engine = NULL;
	struct ig_transport *t = ig_tls_client(tc, sock, trust, tls->server_name);
	if (!t) {
		sock->engine_ops = ops;
		sock->engine = engine;
		*why = "too many handshakes";
		return NULL;
	}
	t->engine_ops = ops;
	t->engine = engine;
	return t;
}

/* ---- connecting ---- */

static void dial_connected(struct ig_dial *d)
{
	struct ig_transport *sock = d->sock, *t = sock;
	sock->engine_ops = NULL;
	sock->engine = NULL;
	if (d->p.tls) {
		const char *why;
		t = ig_dial_tls(d->loop, sock, &d->tls, &why);
		if (!t) {
			dial_fail(d, IG_DIAL_TLS, why);
			return;
		}
	}
	d->sock = NULL; /* the owner's now */
	dial_release(d);
	d->state = IG_DIAL_IDLE;
	d->ops->connected(d, t, sock, d->arg);
}

/* Connects to the next address; after the last one fails, the dial
 * fails with its error. */
static void dial_next(struct ig_dial *d, int err)
{
	for (;;) {
		const struct sockaddr *a;
		socklen_t len;
		if (d->p.addr && d->next == 0) {
			a = d->p.addr;
			len = d->p.addr_len;
		} else if (!d->p.addr && d->next < d->count) {
			a = &d->addrs[d->next].sa;
			len = addr_len(&d->addrs[d->next]);
		} else {
			break;
		}
		d->next++;
		struct ig_transport *t = ig_net_connect(d->p.sock, d->loop, a, len);
		if (t) {
			t->engine_ops = &dial_stream_ops;
			t->engine = d;
			d->sock = t;
			d->state = IG_DIAL_CONNECTING;
			return;
		}
		err = errno;
	}
	dial_fail(d, IG_DIAL_CONNECT, strerror(err));
}

static void on_resolved(void *arg, int error, const struct sockaddr_storage *addrs, size_t count,
			const char *message)
{
	struct ig_dial *d = arg;
	d->query = NULL;
	if (error || count == 0) {
		dial_fail(d, IG_DIAL_RESOLVE, message ? message : "no address");
		return;
	}
	d->count = (uint8_t)(count < IG_DIAL_MAX_ADDRS ? count : IG_DIAL_MAX_ADDRS);
	for (uint8_t i = 0; i < d->count; i++)
		memcpy(&d->addrs[i], &addrs[i], sizeof d->addrs[i]); /* either family fits */
	d->next = 0;
	dial_next(d, ECONNREFUSED);
}

static void on_dial_timer(struct ig_timer *t)
{
	struct ig_dial *d = (struct ig_dial *)((char *)t - offsetof(struct ig_dial, timer));
	/* The state stays for the callback: it says which phase ran out. */
	dial_release(d);
	d->ops->failed(d, IG_DIAL_TIMEOUT,
		       d->state == IG_DIAL_RESOLVING ? "the lookup timed out" : "the connect timed out", d->arg);
}

void ig_dial_start(struct ig_dial *d, struct ig_loop *loop, const struct ig_dial_params *p,
		   const struct ig_dial_ops *ops, void *arg)
{
	*d = (struct ig_dial){ .ops = ops, .arg = arg, .loop = loop, .p = *p };
	if (p->tls) {
		d->tls = *p->tls;
		d->p.tls = &d->tls;
	}
	d->timer.fn = on_dial_timer;
	if (p->timeout_ms) {
		d->deadline_ms = loop->clock.now_ms + p->timeout_ms;
		ig_timer_set(&loop->timers, &d->timer, d->deadline_ms);
	}
	if (p->addr || literal_address(p->host, p->port, &d->addrs[0])) {
		d->count = 1;
		dial_next(d, ECONNREFUSED);
		return;
	}
	d->state = IG_DIAL_RESOLVING;
	struct dns_resolver *r = ig_dial_resolver(loop);
	if (!r) {
		dial_fail(d, IG_DIAL_RESOLVE, "cannot make a resolver: out of memory");
		return;
	}
	/* NULL when on_resolved ran already (a cache hit, a hosts entry, an
	   invalid name): then d->query is what that left. */
	struct dns_query *q = ig_dns_resolve(r, p->host, p->port, on_resolved, d);
	if (q)
		d->query = q;
}

/* ---- the socket's events while connecting ---- */

static char *dial_lend(void *engine, size_t *cap)
{
	(void)engine;
	*cap = 0; /* the connect's writable comes before any byte */
	return NULL;
}

static void dial_received(void *engine, size_t n)
{
	(void)engine, (void)n;
}

static void dial_writable(void *engine)
{
	dial_connected(engine);
}

static void dial_closed(void *engine)
{
	struct ig_dial *d = engine;
	socklen_t len;
	const struct sockaddr *a = ig_dial_address(d, &len);
	int err = ig_net_stream_error(d->sock, a ? a->sa_family : AF_INET);
	d->sock = NULL; /* gone already */
	dial_next(d, err ? err : ECONNREFUSED);
}

static const struct ig_stream_ops dial_stream_ops = {
	.lend = dial_lend,
	.received = dial_received,
	.writable = dial_writable,
	.closed = dial_closed,
};
