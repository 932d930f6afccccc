/* The transport seam: how a protocol engine (net/http) sees a byte stream
 * without touching a file descriptor. net/sock implements it over sockets
 * and the kernel's epoll loop, net/lwip over lwIP's raw API (INGOT_NET=tap:
 * or virtio, the unikernel's); net/tls wraps any transport.
 *
 * The engine lends buffers for incoming bytes and hands over slices to
 * write; the transport calls back when bytes landed, when it can write
 * again, and when the stream is gone. */
#ifndef NET_TRANSPORT_H
#define NET_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define IG_WOULD_BLOCK (-2)
#define IG_PEER_TEXT_MAX 56 /* "[" IPv6 "]:" port, and its NUL */

struct ig_transport;
struct ig_loop;

/* Implemented by the engine that sits on a transport. */
struct ig_stream_ops {
	/* Where to put incoming bytes: at most *cap at the returned address.
	   NULL (or *cap == 0) pauses reading until resume_read is called. */
	char *(*lend)(void *engine, size_t *cap);
	/* n bytes landed in the lent buffer; n == 0: the peer finished
	   sending (EOF). */
	void (*received)(void *engine, size_t n);
	/* Output that would have blocked can now be written. */
	void (*writable)(void *engine);
	/* The transport failed by itself (error, reset): release the engine.
	   No call on the transport is allowed after this. */
	void (*closed)(void *engine);
};

/* Implemented by a transport. */
struct ig_transport_ops {
	/* Writes from iov; returns bytes written (maybe fewer than offered),
	   IG_WOULD_BLOCK (writable will follow), or -1 (the engine then closes). */
	ssize_t (*writev)(struct ig_transport *t, const struct iovec *iov, int iovcnt);
	/* The engine wants bytes again after a pause. */
	void (*resume_read)(struct ig_transport *t);
	/* Optional (the drain; NULL: nothing is ever waiting). Hands the
	   engine, now, what has already arrived but was not delivered yet
	   (bytes in the socket whose event has not been dispatched, records
	   buffered below): with an edge-triggered loop the engine cannot know.
	   Returns false if there was nothing (the engine was not called);
	   true if something had arrived: the engine heard bytes, EOF or
	   closed (and may be gone), or will once the rest of what came (a
	   TLS record) is in. */
	bool (*read_now)(struct ig_transport *t);
	/* Ends the stream. Graceful: stop sending, keep reading and discarding
	   the peer's bytes for a short while so that a response already written
	   is not destroyed by a reset. The engine releases itself; closed is
	   NOT called after the engine's own close. */
	void (*close)(struct ig_transport *t, int graceful);
	/* The peer's address as text ("192.0.2.7:51234", "[::1]:8080") into
	   out (cap >= IG_PEER_TEXT_MAX), NUL-terminated; returns its length,
	   0 when not known (net/sock keeps it only when its core asked for
	   it at accept). NULL: never known. */
	size_t (*peer)(struct ig_transport *t, char *out, size_t cap);
	/* Optional (NULL, or false: the engine parses peer's text). The
	   peer's address in binary, IPv4 as IPv4-mapped IPv6
	   (::ffff:192.0.2.7), as ig_addr_parse gives it; false when not
	   known. The rate limits and the door's failure count read it on
	   every request they see: text made only to be parsed again cost
	   more than the rest of a limit's check. */
	bool (*peer_addr)(struct ig_transport *t, uint8_t out[16]);
	/* Optional (NULL: never one). The subject (CN) of the client
	   certificate verified in a TLS handshake, NUL-terminated ("": it has
	   no CN), valid while t is; NULL when none was verified. */
	const char *(*peer_subject)(struct ig_transport *t);
};

struct ig_transport {
	const struct ig_transport_ops *ops;
	const struct ig_stream_ops *engine_ops;
	void *engine;
	struct ig_loop *loop;
};

#endif
