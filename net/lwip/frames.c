/* lwIP's network interface over a frame device (net/stack.h's INGOT_NET):
 * a file descriptor that carries one Ethernet frame per read and write,
 * non-blocking, readable through the loop. tap:NAME opens a Linux TAP
 * device without the packet-info header; virtio opens the bare-metal
 * platform's /dev/virtio-net. Received frames go straight into a pbuf; a
 * frame the device cannot take is dropped (TCP retransmits). */
#include "lwip.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ingot/log.h"
#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "lwip/ip4_addr.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

/* <linux/if_tun.h>'s, which musl's headers do not carry. */
#ifndef TUNSETIFF
#define TUNSETIFF _IOW('T', 202, int)
#define IFF_TAP 0x0002
#define IFF_NO_PI 0x1000
#endif

#define FRAME_MAX 1514 /* Ethernet header and a 1500-byte payload */
#define FRAMES_PER_EVENT 64 /* then the loop's other work; readiness stays */
#define IOV_MAX_PARTS 16

static int open_tap(const char *name, uint8_t mac[6], char *err, size_t errlen)
{
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) != 0) {
		snprintf(err, errlen, "INGOT_NET=tap:%s: cannot open the TAP device: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* Ours, not the host side's: random, locally administered, unicast. */
	if (getrandom(mac, 6, 0) != 6)
		memset(mac, 0x5a, 6);
	mac[0] = (uint8_t)((mac[0] & 0xfe) | 0x02);
	return fd;
}

static int open_virtio(uint8_t mac[6], char *err, size_t errlen)
{
	int fd = open("/dev/virtio-net", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	struct ifreq ifr = { 0 };
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
		snprintf(err, errlen, "INGOT_NET=virtio: no network device: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return fd;
}

static err_t link_output(struct netif *netif, struct pbuf *p)
{
	(void)netif;
	struct iovec iov[IOV_MAX_PARTS];
	int n = 0;
	for (struct pbuf *q = p; q && n < IOV_MAX_PARTS; q = q->next)
		iov[n++] = (struct iovec){ .iov_base = q->payload, .iov_len = q->len };
	ssize_t w = n == 1 ? write(ig_lwip_state.fd, iov[0].iov_base, iov[0].iov_len) : writev(ig_lwip_state.fd, iov, n);
	if (w < 0)
		ig_lwip_state.frames_dropped++;
	return ERR_OK;
}

/* Feeds lwIP up to max frames from the device; false once it is empty. */
static bool frames_read(int max)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	for (int i = 0; i < max; i++) {
		struct pbuf *p = pbuf_alloc(PBUF_RAW, FRAME_MAX, PBUF_RAM);
		char sink[FRAME_MAX];
		ssize_t n = p ? read(s->fd, p->payload, FRAME_MAX) : read(s->fd, sink, sizeof sink);
		if (n <= 0 || !p) { /* EAGAIN: none left; no memory: dropped */
			if (p)
				pbuf_free(p);
			if (n <= 0)
				return false;
			continue;
		}
		pbuf_realloc(p, (u16_t)n);
		if (s->netif.input(p, &s->netif) != ERR_OK)
			pbuf_free(p);
	}
	return true;
}

static void on_frames(struct ig_io *io, uint32_t events)
{
	(void)io;
	(void)events;
	ig_lwip_lock(ig_lwip_state.net_core);
	frames_read(FRAMES_PER_EVENT);
	ig_lwip_port_touch();
	ig_lwip_unlock();
}

/* Under the lock, on any core. */
void ig_lwip_frames_take(void)
{
	/* Bounded: a peer that floods cannot hold the drain here. */
	if (ig_lwip_state.fd >= 0)
		for (int i = 0; i < 64 && frames_read(FRAMES_PER_EVENT); i++)
			;
	ig_lwip_port_touch();
}

static err_t netif_setup(struct netif *n)
{
	n->name[0] = 'e';
	n->name[1] = 'n';
	n->mtu = 1500;
	n->hwaddr_len = ETH_HWADDR_LEN;
	n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
	n->output = etharp_output;
	n->linkoutput = link_output;
	return ERR_OK;
}

static void log_address(const char *msg, const struct netif *n, bool dhcp)
{
	struct ig_logline l;
	char ip[16], mask[16], gw[16], mac[18];
	if (!ig_log_begin(&l, IG_LOG_INFO, msg))
		return;
	/* By hand: printf's code would run nowhere else before the first
	   answer, and under TCG code that runs once costs its translation
	   (about 150 blocks, 1 ms of the unikernel's boot). */
	for (int i = 0; i < ETH_HWADDR_LEN; i++) {
		mac[3 * i] = "0123456789abcdef"[n->hwaddr[i] >> 4];
		mac[3 * i + 1] = "0123456789abcdef"[n->hwaddr[i] & 15];
		mac[3 * i + 2] = i + 1 < ETH_HWADDR_LEN ? ':' : '\0';
	}
	ig_log_cstr(&l, "ip", ip4addr_ntoa_r(netif_ip4_addr(n), ip, sizeof ip));
	ig_log_cstr(&l, "netmask", ip4addr_ntoa_r(netif_ip4_netmask(n), mask, sizeof mask));
	ig_log_cstr(&l, "gw", ip4addr_ntoa_r(netif_ip4_gw(n), gw, sizeof gw));
	ig_log_cstr(&l, "mac", mac);
	ig_log_cstr(&l, "dhcp", dhcp ? "yes" : "no");
	ig_log_end(&l);
}

/* With DHCP: the lease's address (or its loss). Who waits for it runs on
 * its core, outside lwIP's callback. */
static void on_status(struct netif *n)
{
	if (ip4_addr_isany_val(*netif_ip4_addr(n)))
		return;
	log_address("net: address", n, true);
	struct ig_lwip_state *s = &ig_lwip_state;
	for (unsigned i = 0; i < s->ncores; i++)
		if (s->cores[i]->on_up) {
			s->cores[i]->up_posted = true;
			ig_lwip_signal(s->cores[i]);
		}
}

void ig_lwip_when_up(struct ig_loop *loop, void (*up)(struct ig_loop *loop))
{
	struct ig_lwip_core *c = ig_lwip_core_of(loop);
	ig_lwip_lock(c);
	bool now = !ip4_addr_isany_val(*netif_ip4_addr(&ig_lwip_state.netif));
	if (!now)
		c->on_up = up; /* one waiter per core */
	ig_lwip_unlock();
	if (now)
		up(loop);
}

int ig_lwip_frames_up(const struct ig_lwip_net_config *cfg, char *err, size_t errlen)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	uint8_t mac[6];
	s->fd = cfg->device == LWIP_DEVICE_TAP ? open_tap(cfg->ifname, mac, err, errlen) : open_virtio(mac, err, errlen);
	if (s->fd < 0)
		return -1;
	ip4_addr_t ip = { cfg->ip }, mask = { cfg->netmask }, gw = { cfg->gw };
	if (!netif_add(&s->netif, &ip, &mask, &gw, NULL, netif_setup, ethernet_input)) {
		snprintf(err, errlen, "lwIP: cannot add the network interface");
		return -1;
	}
	memcpy(s->netif.hwaddr, mac, sizeof mac);
	netif_set_default(&s->netif);
	netif_set_up(&s->netif);
	s->io.fn = on_frames;
	if (ig_loop_add(s->loop, s->fd, EPOLLIN, &s->io) != 0) {
		snprintf(err, errlen, "lwIP: cannot watch the frame device: %s", strerror(errno));
		return -1;
	}
	if (cfg->dhcp) {
		netif_set_status_callback(&s->netif, on_status);
		if (dhcp_start(&s->netif) != ERR_OK) {
			snprintf(err, errlen, "lwIP: cannot start DHCP");
			return -1;
		}
		log_address("net: up, asking DHCP", &s->netif, true);
	} else {
		log_address("net: up", &s->netif, false);
	}
	ig_lwip_port_touch();
	return 0;
}
