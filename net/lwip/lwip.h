/* Shared inside net/lwip: the one stack's state (lwIP is single-threaded,
 * NO_SYS: everything runs on the loop it was started on) and the calls
 * between its files. port.c is lwIP's platform (time, memory, randomness)
 * and drives its timers; frames.c is the network interface over a frame
 * device; streams.c the transport over TCP PCBs; dgram.c datagrams over
 * UDP PCBs and DHCP's nameservers; stack.c the ops table. */
#ifndef NET_LWIP_LWIP_H
#define NET_LWIP_LWIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/lwip/net_config.h"
#include "net/stack.h"

#include "lwip/netif.h"

struct lwip_stream;

/* DHCP's nameservers kept (lwipopts.h's DNS_MAX_SERVERS). */
#define IG_LWIP_NAMESERVERS DNS_MAX_SERVERS

struct ig_lwip_state {
	struct ig_loop *loop;
	/* port.c: lwIP's timeouts on the loop's wheel, and the work after a
	   batch that touched lwIP (the loopback's queue, re-arming the timer) */
	struct ig_timer timer;
	struct ig_deferred settle;
	size_t mem_budget, mem_used;
	uint64_t mem_refused; /* allocations beyond the budget */
	/* frames.c: the interface over the frame device */
	struct netif netif;
	int fd;
	struct ig_io io;
	uint64_t frames_dropped; /* the device was full */
	/* ig_lwip_when_up's: run after the batch that gave the address */
	void (*on_up)(struct ig_loop *loop);
	struct ig_timer up_timer;
	/* dgram.c: DHCP's nameservers (network order; 0: none) */
	uint32_t nameserver[IG_LWIP_NAMESERVERS];
	/* streams.c */
	struct ig_pool streams;
	struct lwip_stream *live; /* every stream with a PCB, for the finish */
	uint32_t outbound_open;
};
extern struct ig_lwip_state ig_lwip_state;

/* frames.c: net/stack.h's when_up. */
void ig_lwip_when_up(struct ig_loop *loop, void (*up)(struct ig_loop *loop));

/* port.c: sets the memory budget and hooks lwIP's timers to loop. */
void ig_lwip_port_init(struct ig_loop *loop, size_t mem_budget);
/* Called after anything that may have made lwIP queue work (output on
 * the loopback, a new timeout): settles it once the batch is over. */
void ig_lwip_port_touch(void);

/* frames.c: opens the device INGOT_NET names, adds the interface with the
 * static address or starts DHCP; 0, or -1 with a message in err. */
int ig_lwip_frames_up(const struct ig_lwip_net_config *cfg, char *err, size_t errlen);
/* Hands lwIP the frames waiting in the device now, not at their event:
 * the drain's view of what has arrived (handshakes, requests) is then the
 * wire's, as the kernel's socket buffers are for net/sock. */
void ig_lwip_frames_take(void);

/* dgram.c: net/stack.h's datagram ops and nameservers. */
int ig_lwip_dgram_open(struct ig_net_dgram *d, struct ig_loop *loop, const struct sockaddr *addr, socklen_t len);
int ig_lwip_dgram_send(struct ig_net_dgram *d, const void *data, size_t len);
void ig_lwip_dgram_close(struct ig_net_dgram *d);
size_t ig_lwip_nameservers(struct sockaddr_storage *out, size_t max);

/* streams.c */
void ig_lwip_streams_init(uint32_t max_streams);
/* net/stack.h's listener, in the server's memory, which outlives the
 * streams (a stream counts itself out of its listener even after the
 * listener closed), and the ops on it and the connect. */
struct ig_net_listener {
	_Alignas(64) struct tcp_pcb *pcb; /* NULL until it serves, and once closed */
	struct ig_net_listen_spec spec;
	int port;
	uint32_t open;
	uint64_t refused;
};
int ig_lwip_open(struct ig_net_listener *l, const struct ig_net_listen_spec *spec, int *port, char *err,
		 size_t errlen);
int ig_lwip_serve(struct ig_net_listener *l, struct ig_loop *loop, void *seed, char *err, size_t errlen);
int ig_lwip_port(const struct ig_net_listener *l);
void ig_lwip_stop_accepting(struct ig_net_listener *l);
uint64_t ig_lwip_refused(const struct ig_net_listener *l);
struct ig_transport *ig_lwip_connect(struct sock_core *sc, struct ig_loop *loop, const struct sockaddr *addr,
				    socklen_t len);
int ig_lwip_stream_error(const struct ig_transport *t);
/* True while a stream still has bytes lwIP has not seen acknowledged, or
 * lingers: what the process must wait for before it exits. */
bool ig_lwip_streams_busy(void);

#endif
