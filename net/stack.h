/* The TCP/IP stack the process's streams go over: the kernel's sockets
 * (net/sock, the default) or ingot's own, lwIP (net/lwip), chosen by
 * INGOT_NET (net/stack_settings.c). The server's listener, the outbound
 * client and net/pg call through ig_net_stack when it is set (ig_net_connect
 * below) and through net/sock otherwise, so a binary without lwIP carries none of it: the
 * settings refer to lwIP's ops table weakly (only `make lwip` links it). */
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

/* A stack other than the kernel's. All of it runs on one loop. */
struct ig_net_listener;
struct ig_net_stack {
	const char *name;
	/* Judges the settings' values (INGOT_NET is not "kernel"): NULL, or
	   the message (in err or a constant). */
	const char *(*configure)(const char *net, const char *ip, const char *gw, char *err, size_t errlen);
	/* Brings the device and the addresses up on loop (the stack's timers
	   run on loop's wheel), its memory sized for max_streams accepted
	   streams; 0, or -1 with a message in err. */
	int (*start)(struct ig_loop *loop, uint32_t max_streams, char *err, size_t errlen);
	/* Listens on host:*port (0 picks one: *port is set); each accepted
	   stream goes to accept as net/sock's do, at most max_streams open. */
	struct ig_net_listener *(*listen)(const char *host, int *port, uint32_t max_streams,
					  sock_accept_fn *accept, void *arg, char *err, size_t errlen);
	/* Closes the listener: no connection is accepted after this. */
	void (*stop_accepting)(struct ig_net_listener *l);
	/* As ig_sock_connect (net/sock/sock.h), with the same notifications. */
	struct ig_transport *(*connect)(struct ig_loop *loop, const struct sockaddr *addr, socklen_t len);
	/* As ig_sock_stream_error. */
	int (*stream_error)(const struct ig_transport *t);
	/* Before the process exits: runs loop until what the streams wrote
	   has been acknowledged (the kernel would go on sending it after an
	   exit; a stack in the process cannot), at most max_ms. */
	void (*finish)(struct ig_loop *loop, uint32_t max_ms);
};

/* NULL: the kernel's sockets. Set by the settings' check. */
extern const struct ig_net_stack *ig_net_stack;

/* Whether a stream to an address of family goes over ig_net_stack: an IP
 * address does when one is set; a unix socket is always the kernel's (a
 * hosted lwIP process still has them; a machine without Linux refuses the
 * socket() call, an error the caller reports as any failed connect). */
static inline bool ig_net_via_stack(int family)
{
	return ig_net_stack && family != AF_UNIX;
}

/* A connect over the stack addr's family goes over (ig_sock_connect's
 * contract either way); sc is the caller's kernel-socket core. */
static inline struct ig_transport *ig_net_connect(struct sock_core *sc, struct ig_loop *loop,
						  const struct sockaddr *addr, socklen_t len)
{
	return ig_net_via_stack(addr->sa_family) ? ig_net_stack->connect(loop, addr, len)
						 : ig_sock_connect(sc, addr, len);
}

/* ig_sock_stream_error for a stream ig_net_connect made to family. */
static inline int ig_net_stream_error(const struct ig_transport *t, int family)
{
	return ig_net_via_stack(family) ? ig_net_stack->stream_error(t) : ig_sock_stream_error(t);
}

#endif
