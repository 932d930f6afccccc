/* Shared inside net/lwip: the one stack's state and the calls between its
 * files. lwIP is single-threaded (NO_SYS), and every core's loop uses it:
 * cores.c's lock makes one core at a time run lwIP's code. The network
 * core (the first loop, core 0) reads the frames and runs lwIP's timers;
 * lwIP's callbacks never call an engine (net/http, net/pg) but post the
 * stream to its home core, whose loop makes the engine's calls after its
 * batch, without the lock. port.c is lwIP's platform (time, memory,
 * randomness) and drives its timers; frames.c is the network interface
 * over a frame device; streams.c the transport over TCP PCBs; dgram.c
 * datagrams over UDP PCBs and DHCP's nameservers; stack.c the ops table. */
#ifndef NET_LWIP_LWIP_H
#define NET_LWIP_LWIP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/process/cores.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/lwip/net_config.h"
#include "net/stack.h"

#include "lwip/netif.h"

struct lwip_stream;

/* A core's part (one per loop the stack serves, in the loop's slot): what
 * lwIP's callbacks left for it, under the lock. */
struct ig_lwip_core {
	struct ig_loop *loop;
	int fd;                  /* eventfd: work posted by another core */
	struct ig_io io;
	struct ig_deferred run;  /* work posted by this core: after the batch */
	_Atomic bool signaled;   /* fd written and not yet read */
	struct lwip_stream *streams, *streams_tail; /* posted streams */
	struct ig_net_dgram *dgrams;                /* posted datagram endpoints */
	void (*on_up)(struct ig_loop *loop);        /* ig_lwip_when_up's waiter */
	bool up_posted, settle_posted;
};

/* DHCP's nameservers kept (lwipopts.h's DNS_MAX_SERVERS). */
#define IG_LWIP_NAMESERVERS DNS_MAX_SERVERS

struct ig_lwip_state {
	struct ig_loop *loop; /* the network core's */
	struct ig_lwip_core *net_core;
	_Atomic bool started; /* lwIP is up on the network core */
	/* cores.c: the lock, and the core whose thread holds it */
	_Atomic bool locked;
	struct ig_lwip_core *holder;
	/* port.c: lwIP's timeouts on the loop's wheel, and the work after a
	   batch that touched lwIP (the loopback's queue, re-arming the timer) */
	struct ig_timer timer;
	struct ig_deferred settle;
	uint64_t armed_ms; /* when the timer fires (UINT64_MAX: not armed) */
	size_t mem_budget, mem_used;
	uint64_t mem_refused; /* allocations beyond the budget */
	/* frames.c: the interface over the frame device */
	struct netif netif;
	int fd;
	struct ig_io io;
	uint64_t frames_dropped; /* the device was full */
	/* dgram.c: DHCP's nameservers (network order; 0: none), set under
	   the lock, read without it by any core's resolver */
	_Atomic uint32_t nameserver[IG_LWIP_NAMESERVERS];
	/* streams.c */
	struct ig_pool streams;
	/* The server's fn for the first delivery (ig_lwip_after_first_delivery),
	   taken by the core that runs it */
	void (*_Atomic first_delivery)(void);
	/* streams.c: the listeners' groups, a PCB each, shared by the cores */
	struct ig_lwip_group *groups;
	/* cores.c: every core's part */
	struct ig_lwip_core *cores[IG_MAX_CORES];
	unsigned ncores;
};
extern struct ig_lwip_state ig_lwip_state;

/* cores.c */
/* The part of the core whose loop this is; made by ig_lwip_core_start. */
struct ig_lwip_core *ig_lwip_core_of(struct ig_loop *loop);
/* On loop's thread, before it uses the stack: its part, its eventfd
 * watched. 0, or -1 with err. */
int ig_lwip_core_start(struct ig_loop *loop, char *err, size_t errlen);
/* Takes the lock on c's thread (c: the caller's own core); not recursive. */
void ig_lwip_lock(struct ig_lwip_core *c);
void ig_lwip_unlock(void);
/* Under the lock: makes c run its posted work soon (after the batch, on
 * its own thread). */
void ig_lwip_signal(struct ig_lwip_core *c);
/* Runs c's posted work now, on c's thread, without the lock held. */
void ig_lwip_core_run(struct ig_lwip_core *c);

/* frames.c: net/stack.h's when_up. */
void ig_lwip_when_up(struct ig_loop *loop, void (*up)(struct ig_loop *loop));

/* port.c: sets the memory budget and hooks lwIP's timers to loop (the
 * network core's). */
void ig_lwip_port_init(struct ig_loop *loop, size_t mem_budget);
/* Under the lock, after anything that may have made lwIP queue work
 * (output on the loopback, a new timeout): the network core settles it
 * once its batch is over. */
void ig_lwip_port_touch(void);
/* Under the lock: another core's share of the budget, bytes more. */
void ig_lwip_port_grow(size_t bytes);
/* The network core's settling itself (cores.c's run, under the lock). */
void ig_lwip_port_settle(void);

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

/* dgram.c: a posted endpoint's datagrams, on its core (the lock held:
 * given up around its fn). */
void ig_lwip_dgram_run(struct ig_net_dgram *d);

/* streams.c */
void ig_lwip_streams_init(uint32_t max_streams);
/* Another core's share: max_streams more. */
void ig_lwip_streams_grow(uint32_t max_streams);
/* A posted stream's events, on its home core (the lock held: given up
 * around the engine's calls). */
void ig_lwip_stream_run(struct lwip_stream *s);
struct ig_lwip_group;
/* net/stack.h's listener, in the server's memory, which outlives the
 * streams (a stream counts itself out of its listener even after the
 * listener closed), and the ops on it and the connect. Each core's
 * listener on a port joins the port's group, whose one PCB accepts and
 * gives each stream to the next member in turn. */
struct ig_net_listener {
	_Alignas(64) struct ig_lwip_group *group; /* NULL until it serves, and once stopped */
	struct ig_lwip_core *core;
	struct ig_net_listen_spec spec;
	int port;
	uint32_t open; /* under the lock */
	_Atomic uint64_t refused;
};
int ig_lwip_open(struct ig_net_listener *l, const struct ig_net_listen_spec *spec, int *port, char *err,
		 size_t errlen);
int ig_lwip_serve(struct ig_net_listener *l, struct ig_loop *loop, void *seed, char *err, size_t errlen);
int ig_lwip_port(const struct ig_net_listener *l);
void ig_lwip_stop_accepting(struct ig_net_listener *l);
uint64_t ig_lwip_refused(const struct ig_net_listener *l);
void ig_lwip_after_first_delivery(void (*fn)(void));
struct ig_transport *ig_lwip_connect(struct sock_core *sc, struct ig_loop *loop, const struct sockaddr *addr,
				    socklen_t len);
int ig_lwip_stream_error(const struct ig_transport *t);
/* True while a stream still has bytes lwIP has not seen acknowledged, or
 * lingers: what the process must wait for before it exits. */
bool ig_lwip_streams_busy(void);

#endif
