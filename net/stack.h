/* The TCP/IP stack the process's streams go over, one ops table per stack:
 * the kernel's sockets (net/stack_kernel.c over net/sock, the default) or
 * ingot's own, lwIP (net/lwip/stack.c), chosen once by INGOT_NET
 * (net/stack_settings.c). The server's listeners, the outbound client and
 * net/pg call through ig_net_stack whichever it is; a binary without lwIP
 * carries none of it: the settings refer to lwIP's table weakly (only
 * `make lwip` and the unikernel link it). */
#ifndef NET_STACK_H
#define NET_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "kernel/runtime/config.h"
#include "net/sock/sock.h"
#include "net/transport.h"

/* The settings part (INGOT_NET, INGOT_NET_IP, INGOT_NET_GW); its check sets
 * ig_net_stack and has it judge the values, or fails when INGOT_NET names
 * a stack this binary lacks. */
extern const struct ig_settings ig_net_settings;

/* A listener, in listener_size bytes of its owner's memory (the stack's
 * own layout); it stays there until the process has finished. Owners lay
 * listeners side by side, so that the ones a start touches share pages. */
struct ig_net_listener;

/* What a listener serves, given to open; the stack keeps a copy. */
struct ig_net_listen_spec {
	const char *host; /* numeric; lives as long as the listener */
	int backlog;      /* connections the stack may complete before an accept */
	bool exclusive;   /* a port another socket holds fails, not shared */
	/* Not NULL: the setting that named the port ("PORT"); before binding,
	   a port another process listens on fails with a message naming it,
	   though this socket still joins SO_REUSEPORT's group: the first of a
	   process's listeners on a port. A stack of one process ignores it. */
	const char *probe;
	/* A listening socket given by a supervisor (LISTEN_FDS) that the
	   listener takes as its own, instead of binding one; -1: none. Given
	   only to a stack with takes_fds. */
	int fd;
	uint32_t max_streams; /* open accepted streams; more are refused */
	bool keep_peer;       /* keep each stream's peer address (transport's peer) */
	/* Where streams are descriptors: spares kept to let connections in
	   past the descriptor limit (ig_sock_core_reserve's serve); 0: one,
	   kept to shed them. */
	uint8_t reserve;
	sock_accept_fn *accept; /* each accepted stream goes to accept(arg, t) */
	void *arg;
};

/* Bytes of a datagram endpoint's state that only its stack reads. */
#define IG_NET_DGRAM_PRIV 48
/* The most of one datagram a receive delivers (the rest is cut). */
#define IG_NET_DGRAM_MAX 4096

/* A UDP endpoint (the resolver's queries), in its owner's memory. The
 * owner sets fn before dgram_open; it gets each datagram from the peer
 * (err 0), or an error the stack learnt of (data NULL, err an errno value:
 * ECONNREFUSED where the peer's port is known closed), on the loop given
 * to dgram_open. fn may close d, and open it again. */
struct ig_net_dgram;
typedef void ig_net_dgram_fn(struct ig_net_dgram *d, const uint8_t *data, size_t len, int err);
struct ig_net_dgram {
	ig_net_dgram_fn *fn;
	_Alignas(16) unsigned char priv[IG_NET_DGRAM_PRIV];
};

struct ig_net_stack {
	const char *name;
	/* It can serve listening sockets a supervisor passed (LISTEN_FDS). */
	bool takes_fds;
	/* Its streams are the process's descriptors, so RLIMIT_NOFILE bounds
	   them (the connection limit's default comes from it). */
	bool streams_are_fds;
	/* Bytes of one listener (open's l), a multiple of 64. */
	size_t listener_size;
	/* Bytes of the serving core's memory a listener may take its first
	   streams from (serve's seed), so that the first accepts make no
	   allocation call; a multiple of 16, 0: none wanted. */
	size_t seed_size;
	/* Judges the settings' values (net names the stack: "kernel",
	   "tap:NAME", "virtio"): NULL, or the message (in err or a constant). */
	const char *(*configure)(const char *net, const char *ip, const char *gw, char *err, size_t errlen);
	/* Brings the stack up on loop, once for each loop that will serve
	   (a loop per core, each with listeners of its own on the same port),
	   before its listeners serve; its
	   memory sized for max_streams accepted streams. 0, or -1 with err. */
	int (*start)(struct ig_loop *loop, uint32_t max_streams, char *err, size_t errlen);
	/* Before any loop runs, on the main thread: sets up l for spec on
	   host:*port, binding it when the stack can by now (*port 0: a port
	   is picked and *port set, so that the next core's listener joins
	   it). 0, or -1 with err; l is then not open. */
	int (*open)(struct ig_net_listener *l, const struct ig_net_listen_spec *spec, int *port, char *err,
		    size_t errlen);
	/* On the loop that accepts for l, once start has run there: accepts
	   from now on. seed: seed_size bytes (16-byte aligned, untouched, the
	   listener's for good) or NULL. 0, or -1 with err. */
	int (*serve)(struct ig_net_listener *l, struct ig_loop *loop, void *seed, char *err, size_t errlen);
	/* The port l listens on (known once it serves). */
	int (*port)(const struct ig_net_listener *l);
	/* Accepts what has already been completed, then stops listening: no
	   connection is accepted after this. Once only; on l's loop. */
	void (*stop_accepting)(struct ig_net_listener *l);
	/* Connections completed and closed at once (over max_streams, no
	   memory); readable from any thread. */
	uint64_t (*refused)(const struct ig_net_listener *l);
	/* Connections closed at once at the descriptor limit (net/sock's
	   shed); NULL where streams are not descriptors. Any thread. */
	uint64_t (*shed)(const struct ig_net_listener *l);
	/* Runs up(loop) once, on loop, when the stack has an address to send
	   from: at once when it has one (a static address), else once DHCP
	   has given one, so that the first outbound connect (the database's
	   pool) does not fail for a network still coming up. After start, on
	   loop. NULL: the stack is up once started (the kernel's sockets). */
	void (*when_up)(struct ig_loop *loop, void (*up)(struct ig_loop *loop));
	/* As ig_sock_connect (net/sock/sock.h), with the same notifications;
	   sc is the caller's kernel-socket core on loop. */
	struct ig_transport *(*connect)(struct sock_core *sc, struct ig_loop *loop, const struct sockaddr *addr,
					socklen_t len);
	/* As ig_sock_stream_error. */
	int (*stream_error)(const struct ig_transport *t);
	/* Opens d towards addr, from a port the stack picks, delivering only
	   addr's datagrams (a connected UDP socket's filter: the resolver's
	   queries take no answer from anyone else). 0, or an errno value. */
	int (*dgram_open)(struct ig_net_dgram *d, struct ig_loop *loop, const struct sockaddr *addr, socklen_t len);
	/* One datagram to d's peer: 0, or an errno value. */
	int (*dgram_send)(struct ig_net_dgram *d, const void *data, size_t len);
	/* d's fn is not called after this; once per successful open. */
	void (*dgram_close)(struct ig_net_dgram *d);
	/* The nameservers the network gave the stack (DHCP's), up to max
	   into out, their ports 0: how many. NULL: the stack learns none
	   (the kernel's: the resolver reads resolv.conf instead). */
	size_t (*nameservers)(struct sockaddr_storage *out, size_t max);
	/* Before the process exits: runs loop until what the streams wrote
	   has been acknowledged, at most max_ms (the kernel goes on sending
	   after an exit, a stack in the process cannot). */
	void (*finish)(struct ig_loop *loop, uint32_t max_ms);
	/* Where one loop can take every connection until the others serve
	   (lwIP: a core's listener joins its port's group when its loop
	   serves), the stack runs fn once, on the loop of the stream that
	   first delivers bytes: core 0's, unless the server started the other
	   cores before (at a bound) or gave them up (a stop), so fn must then
	   do nothing. The server starts them there, so that their start does
	   not slow the first answer (under TCG a vCPU starting beside it
	   delayed it by 3 ms). Set after start, before the loop runs. NULL:
	   the other cores start with core 0 (the kernel's sockets: SO_REUSEPORT
	   hashes connections to every core's socket from the first). */
	void (*after_first_delivery)(void (*fn)(void));
};

/* The kernel's sockets (net/stack_kernel.c). */
extern const struct ig_net_stack ig_kernel_stack;

/* The process's stack: ig_kernel_stack unless the settings' check chose
 * another. Never NULL. */
extern const struct ig_net_stack *ig_net_stack;

/* A connect over the process's stack; a unix socket is always the
 * kernel's (a hosted lwIP process still has them; a machine without
 * Linux refuses the socket() call, an error the caller reports as any
 * failed connect). ig_sock_connect's contract either way. */
static inline struct ig_transport *ig_net_connect(struct sock_core *sc, struct ig_loop *loop,
						  const struct sockaddr *addr, socklen_t len)
{
	return addr->sa_family == AF_UNIX ? ig_sock_connect(sc, addr, len)
					  : ig_net_stack->connect(sc, loop, addr, len);
}

/* ig_sock_stream_error for a stream ig_net_connect made to family. */
static inline int ig_net_stream_error(const struct ig_transport *t, int family)
{
	return family == AF_UNIX ? ig_sock_stream_error(t) : ig_net_stack->stream_error(t);
}

#endif
