/* net/stack.h's datagram endpoints over lwIP's raw UDP API (the resolver's
 * queries), and the nameservers DHCP gave: lwIP's DHCP hands them to
 * dns_setserver, which lwipopts.h renames to ig_lwip_dns_setserver here
 * (lwIP's own resolver, dns.c, is not built). An endpoint is a UDP PCB on
 * a random ephemeral port, connected to its peer so that lwIP drops anyone
 * else's datagrams; lwIP tells UDP of no ICMP unreachable. A datagram comes
 * in on the network core and is posted to the endpoint's core (cores.c). */
#include "lwip.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "lwip/dns.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"

/* Ports 49152..65535 (IANA's dynamic range), and random ones tried before
 * taking lwIP's next free one. */
#define EPHEMERAL_FIRST 0xc000u
#define EPHEMERAL_MASK 0x3fffu
#define BIND_TRIES 4

/* Datagrams held for the endpoint's core (under the lock), at most this
 * many: beyond, they are dropped, as a full socket buffer drops them. */
#define HELD_MAX 8

struct lwip_dgram {
	struct udp_pcb *pcb; /* NULL once closed */
	struct ig_lwip_core *home;
	struct pbuf *held;   /* one pbuf each, linked by next */
	struct ig_net_dgram *next_posted;
	uint8_t held_count;
	bool posted;
};
_Static_assert(sizeof(struct lwip_dgram) <= IG_NET_DGRAM_PRIV, "IG_NET_DGRAM_PRIV too small");

static struct lwip_dgram *lwip_dgram(struct ig_net_dgram *d)
{
	return (struct lwip_dgram *)d->priv;
}

/* Under the lock, on any core: the datagram is held (in one pbuf) and the
 * endpoint posted to its core. */
static void on_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
	(void)pcb, (void)addr, (void)port; /* the connected PCB's filter checked them */
	struct ig_net_dgram *d = arg;
	struct lwip_dgram *g = lwip_dgram(d);
	u16_t n = p->tot_len > IG_NET_DGRAM_MAX ? IG_NET_DGRAM_MAX : p->tot_len;
	struct pbuf *q = g->held_count < HELD_MAX ? pbuf_alloc(PBUF_RAW, n, PBUF_RAM) : NULL;
	if (q) {
		pbuf_copy_partial(p, q->payload, n, 0);
		struct pbuf **tail = &g->held;
		while (*tail)
			tail = &(*tail)->next;
		*tail = q;
		g->held_count++;
	}
	pbuf_free(p);
	if (q && !g->posted) {
		g->posted = true;
		g->next_posted = g->home->dgrams;
		g->home->dgrams = d;
		ig_lwip_signal(g->home);
	}
}

static void unpost(struct ig_net_dgram *d)
{
	struct lwip_dgram *g = lwip_dgram(d);
	if (!g->posted)
		return;
	struct ig_net_dgram **p = &g->home->dgrams;
	while (*p && *p != d)
		p = &lwip_dgram(*p)->next_posted;
	if (*p)
		*p = g->next_posted;
	g->posted = false;
}

static void drop_held(struct lwip_dgram *g)
{
	while (g->held) {
		struct pbuf *q = g->held;
		g->held = q->next;
		q->next = NULL;
		pbuf_free(q);
	}
	g->held_count = 0;
}

void ig_lwip_dgram_run(struct ig_net_dgram *d)
{
	struct lwip_dgram *g = lwip_dgram(d);
	unpost(d);
	while (g->held) {
		struct pbuf *q = g->held;
		g->held = q->next;
		g->held_count--;
		q->next = NULL;
		uint8_t buf[IG_NET_DGRAM_MAX];
		size_t n = pbuf_copy_partial(q, buf, sizeof buf, 0);
		pbuf_free(q);
		struct ig_lwip_core *home = g->home;
		ig_lwip_unlock();
		d->fn(d, buf, n, 0); /* may close d, and open it again */
		ig_lwip_lock(home);
		if (!g->pcb)
			return;
	}
}

static int err_to_errno(err_t e)
{
	switch (e) {
	case ERR_OK:
		return 0;
	case ERR_MEM:
	case ERR_BUF:
		return ENOMEM;
	case ERR_RTE:
		return EHOSTUNREACH;
	case ERR_USE:
		return EADDRINUSE;
	default:
		return EIO;
	}
}

static int open_locked(struct ig_net_dgram *d, const struct sockaddr *addr, socklen_t len)
{
	struct lwip_dgram *g = lwip_dgram(d);
	if (addr->sa_family != AF_INET || len < sizeof(struct sockaddr_in))
		return EAFNOSUPPORT; /* lwIP is built IPv4 only */
	const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
	ip_addr_t to = IPADDR4_INIT(in->sin_addr.s_addr);
	struct udp_pcb *pcb = udp_new();
	if (!pcb)
		return ENOMEM;
	/* A random port, not lwIP's next one: a spoofer of the resolver's
	 * replies must guess it as well as the query's ID. */
	err_t e = ERR_USE;
	for (int i = 0; i < BIND_TRIES && e == ERR_USE; i++)
		e = udp_bind(pcb, IP4_ADDR_ANY, (u16_t)(EPHEMERAL_FIRST | (ig_lwip_rand() & EPHEMERAL_MASK)));
	if (e == ERR_USE)
		e = udp_bind(pcb, IP4_ADDR_ANY, 0); /* lwIP's next free one */
	if (e == ERR_OK)
		e = udp_connect(pcb, &to, ntohs(in->sin_port));
	if (e != ERR_OK) {
		udp_remove(pcb);
		return err_to_errno(e);
	}
	udp_recv(pcb, on_recv, d);
	g->pcb = pcb;
	return 0;
}

int ig_lwip_dgram_open(struct ig_net_dgram *d, struct ig_loop *loop, const struct sockaddr *addr, socklen_t len)
{
	struct lwip_dgram *g = lwip_dgram(d);
	*g = (struct lwip_dgram){ .home = ig_lwip_core_of(loop) };
	ig_lwip_lock(g->home);
	int e = open_locked(d, addr, len);
	ig_lwip_unlock();
	return e;
}

int ig_lwip_dgram_send(struct ig_net_dgram *d, const void *data, size_t len)
{
	struct lwip_dgram *g = lwip_dgram(d);
	if (len > IG_NET_DGRAM_MAX)
		return EMSGSIZE;
	ig_lwip_lock(g->home);
	struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
	err_t e = ERR_MEM;
	if (p) {
		memcpy(p->payload, data, len);
		e = udp_send(g->pcb, p);
		pbuf_free(p);
		ig_lwip_port_touch(); /* an ARP query or the loopback's queue */
	}
	ig_lwip_unlock();
	return err_to_errno(e);
}

void ig_lwip_dgram_close(struct ig_net_dgram *d)
{
	struct lwip_dgram *g = lwip_dgram(d);
	if (!g->home)
		return;
	ig_lwip_lock(g->home);
	unpost(d);
	drop_held(g);
	if (g->pcb) {
		udp_remove(g->pcb);
		g->pcb = NULL;
	}
	ig_lwip_unlock();
}

/* ---- DHCP's nameservers ---- */

void ig_lwip_dns_setserver(u8_t n, const ip_addr_t *server)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	if (n >= IG_LWIP_NAMESERVERS)
		return;
	atomic_store_explicit(&s->nameserver[n], server ? ip4_addr_get_u32(ip_2_ip4(server)) : 0, memory_order_relaxed);
}

void ig_lwip_dns_init(void)
{
	for (size_t i = 0; i < IG_LWIP_NAMESERVERS; i++)
		atomic_store_explicit(&ig_lwip_state.nameserver[i], 0, memory_order_relaxed);
}

/* lwIP's resolver timer (its cyclic table names it): there is nothing of
 * lwIP's resolver to run. */
void ig_lwip_dns_tmr(void)
{
}

size_t ig_lwip_nameservers(struct sockaddr_storage *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < IG_LWIP_NAMESERVERS && n < max; i++) {
		uint32_t addr = atomic_load_explicit(&ig_lwip_state.nameserver[i], memory_order_relaxed);
		if (!addr)
			continue;
		struct sockaddr_in *s = (struct sockaddr_in *)&out[n++];
		*s = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = addr };
	}
	return n;
}
