/* lwIP's compile-time options for ingot (tools/deps builds liblwip.a against
 * this file, and every file of net/lwip includes it through lwIP's headers):
 * the raw API only (NO_SYS: one thread, the loop's), IPv4 with ARP, ICMP
 * echo, DHCP (with its nameservers) and UDP, and TCP sized for a server
 * rather than a sensor. */
#ifndef NET_LWIP_LWIPOPTS_H
#define NET_LWIP_LWIPOPTS_H

/* ---- the platform: one loop, no threads, no sequential APIs ---- */
#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define LWIP_TIMERS 1
#define LWIP_ERRNO_STDINCLUDE 1
/* net/lwip/port.c: seeded from getrandom (TCP's ISN, ports, DHCP's xid). */
#define LWIP_RAND() ig_lwip_rand()
unsigned int ig_lwip_rand(void);

/* ---- memory: the C heap under a byte budget ----
 * Pools and the heap are both malloc (MEMP_MEM_MALLOC, MEM_LIBC_MALLOC),
 * through net/lwip/port.c's counting wrappers: the budget is sized from the
 * settings (INGOT_MAX_CONNS) at start, and an allocation beyond it fails as
 * a static pool would (lwIP drops the segment; TCP retransmits; a SYN that
 * finds no PCB is retried by its sender). Nothing is reserved up front, so
 * an idle process pays for none of it. */
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 1
#define MEM_ALIGNMENT 8
#define mem_clib_malloc ig_lwip_malloc
#define mem_clib_calloc ig_lwip_calloc
#define mem_clib_free ig_lwip_free
#include <stddef.h>
void *ig_lwip_malloc(size_t size);
void *ig_lwip_calloc(size_t count, size_t size);
void ig_lwip_free(void *p);
/* Only the sanity checks of init.c read these with MEMP_MEM_MALLOC. */
#define MEMP_NUM_TCP_PCB 1024
#define MEMP_NUM_TCP_SEG TCP_SND_QUEUELEN
#define PBUF_POOL_SIZE 64

/* ---- protocols ---- */
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define ARP_TABLE_SIZE 64
#define ARP_QUEUEING 1
/* Packets held for an address ARP has not answered yet (lwIP's default
 * is 3, the oldest dropped): at start every core asks the same peers at
 * once (the resolver's two questions each, the pools' SYNs), and a
 * unikernel that boots to clients already waiting (scale from zero)
 * answers each one's SYN before the peer's ARP reply, which comes behind
 * them: qemu's user network knows our MAC from the gratuitous ARP and
 * sends them at once. Each held SYN-ACK dropped cost its client a
 * second (the SYN sent again); at 16, 24 of 40 waited that long. As
 * many as a queue of the device holds, then: what they take is counted
 * in lwIP's memory budget, and only while ARP waits. */
#define ARP_QUEUE_LEN 256
#define LWIP_ICMP 1 /* answers ping */
#define LWIP_BROADCAST_PING 0
#define LWIP_RAW 0
#define LWIP_UDP 1 /* DHCP's, and the resolver's queries */
#define LWIP_DHCP 1
#define DHCP_DOES_ARP_CHECK 0 /* a probe costs a second at boot */
/* LWIP_DNS only so that DHCP asks for nameservers (option 6) and hands
 * them to dns_setserver: lwIP's resolver (dns.c) is not built, net/dns is
 * the resolver, over net/lwip/dgram.c. Its three entry points are
 * net/lwip's (dgram.c), renamed here; its timer is a no-op that fires with
 * ARP's (both 1 s, armed together). */
#define LWIP_DNS 1
#define DNS_MAX_SERVERS 3 /* resolv.conf's MAXNS */
#define dns_init ig_lwip_dns_init
#define dns_tmr ig_lwip_dns_tmr
#define dns_setserver ig_lwip_dns_setserver
#define LWIP_IGMP 0
#define LWIP_AUTOIP 0
/* Linux's TAP and virtio-net carry 1500-byte frames; nothing fragments. */
#define IP_REASSEMBLY 0
#define IP_FRAG 0

/* ---- TCP, sized for a server ---- */
#define LWIP_TCP 1
#define TCP_MSS 1460
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE 2 /* windows up to 256 KiB */
#define TCP_WND (128 * 1024)
#define TCP_SND_BUF (128 * 1024)
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF + TCP_MSS - 1) / TCP_MSS)
/* Writable again once this much room is free (lwIP's u16 bound). */
#define TCP_SNDLOWAT (16 * TCP_MSS)
#define TCP_QUEUE_OOSEQ 1
/* No listen backlog: a burst of SYNs faster than the handshakes finish is
 * not dropped (lwIP's backlog counts half-open PCBs and is at most 255);
 * the memory budget bounds the half-open ones instead. */
#define TCP_LISTEN_BACKLOG 0
/* TIME_WAIT is 2 * TCP_MSL: 4 s instead of 2 min, and a TIME_WAIT PCB is
 * the first reclaimed when the budget is reached (tcp_alloc). */
#define TCP_MSL 2000UL
#define LWIP_TCP_KEEPALIVE 0
#define LWIP_TCP_TIMESTAMPS 0
#define TCP_TTL 64

/* ---- interfaces: the frame device and the loopback (127.0.0.1) ---- */
#define LWIP_SINGLE_NETIF 0
#define LWIP_HAVE_LOOPIF 1
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_LOOPBACK_MAX_PBUFS 0
#define LWIP_NETIF_STATUS_CALLBACK 1 /* DHCP's lease is logged */
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_NETIF_HOSTNAME 0

/* ---- no statistics, no debug output ---- */
#define LWIP_STATS 0
#define LWIP_STATS_DISPLAY 0
#define LWIP_DEBUG_TIMERNAMES 0

#endif
