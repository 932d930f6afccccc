/* A NATS client on one core's loop, for the Pub/Sub provider (net/pubsub)
 * and anyone else who speaks to a NATS server: the connection (net/dial,
 * TLS when the server asks or the URL says tls://, token or user and
 * password), publish with or without headers, subscriptions, request and
 * reply over one inbox subscription per connection, the keepalive PING,
 * and reconnects with backoff that restore the subscriptions. JetStream's
 * API is built on it (js.h). Everything runs on the loop's thread; nothing
 * blocks; every callback is context first.
 *
 * Nothing is queued while there is no connection: a publish or request
 * then fails at once (IG_NATS_NOT_CONNECTED), so a message is never lost
 * silently; a request in flight when the connection goes fails with
 * IG_NATS_DISCONNECTED (it may or may not have reached the server). */
#ifndef NET_NATS_NATS_H
#define NET_NATS_NATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingot/base.h"

struct ig_loop;
struct tls_trust;

#define IG_NATS_MAX_SERVERS 8 /* servers in one client's URL list */
struct ig_nats;

/* Why a call failed; errors are values, never matched by their text. */
enum ig_nats_error {
	IG_NATS_OK = 0,
	IG_NATS_NOT_CONNECTED, /* no connection now: nothing was sent */
	IG_NATS_DISCONNECTED,  /* the connection ended before the answer */
	IG_NATS_TIMEOUT,       /* no answer within the request's time */
	IG_NATS_NO_RESPONDERS, /* nobody subscribes to the subject (503) */
	IG_NATS_NO_MEMORY,
	IG_NATS_TOO_LARGE,     /* over the server's max_payload */
	IG_NATS_BAD_ARGUMENT,  /* a subject with blanks, an empty one */
	IG_NATS_SERVER,        /* the server said no (-ERR, a JetStream error) */
	IG_NATS_PROTOCOL,      /* the server's bytes made no sense */
	IG_NATS_CONNECT,       /* the dial failed (see the why) */
	IG_NATS_AUTH,          /* the server refused the credentials */
	IG_NATS_TLS,           /* TLS could not start */
	IG_NATS_CLOSED,        /* ig_nats_close was called */
};

/* A message as it arrived; every slice valid during the callback only. */
struct ig_nats_msg {
	ig_str subject, reply;
	ig_str headers;     /* the raw block (HMSG), empty for MSG */
	ig_str payload;
	int status;         /* the header block's status (503, 408, 409,
			       100...), 0 when none */
	ig_str description; /* its text ("No Responders") */
};

/* The connection's life, told to its owner. */
struct ig_nats_conn_ops {
	/* Connected (the server answered the CONNECT's PING), the
	   subscriptions restored: publishes and requests go through now. */
	void (*up)(void *arg, struct ig_nats *nc);
	/* Lost (or the dial failed): a reconnect is scheduled unless kind is
	   IG_NATS_CLOSED. why is valid during the call. */
	void (*down)(void *arg, struct ig_nats *nc, enum ig_nats_error kind, const char *why);
};

struct ig_nats_options {
	/* nats://[token@|user:password@]host[:port] (4222; userinfo
	   percent-decoded), or tls://... to require TLS (with nats:// TLS
	   starts when the server's INFO requires it: either way after the
	   INFO, as nats-server 2.9 expects); or a comma-separated list of
	   them (a cluster's), dialed in turn, the next one after each loss;
	   read by ig_nats_new, not kept */
	const char *url;
	const char *name;            /* CONNECT's name; NULL: "ingot" */
	uint32_t connect_timeout_ms; /* dial, TLS and the first PONG; 0: 5000 */
	uint32_t ping_interval_ms;   /* our keepalive; 0: 60000 */
	uint32_t max_pings_out;      /* unanswered pings before it is lost; 0: 2 */
	uint32_t reconnect_min_ms;   /* the first retry's delay; 0: 100 */
	uint32_t reconnect_max_ms;   /* the delay doubles up to this; 0: 5000 */
	size_t max_message;          /* a larger incoming message ends the
					connection; 0: 8 MiB */
	int backend;                 /* readiness (/readyz): ig_backend_register's
					id + 1 (include/ingot/http.h), set up while
					connected and down when lost; 0: none */
	bool tls_verify;             /* check the server's chain and name */
	const struct tls_trust *trust; /* NULL: the default anchors */
};

/* Makes a client on loop and starts connecting. Returns NULL with *why
 * (static text) when the URL is malformed or memory is short. The client
 * lives until the process ends (ig_nats_close stops it for good; its
 * memory stays, as net/pg's connections do). */
IG_MUST_USE struct ig_nats *ig_nats_new(struct ig_loop *loop, const struct ig_nats_options *o,
					const struct ig_nats_conn_ops *ops, void *arg, const char **why);
/* Closes the connection, fails what waits (IG_NATS_CLOSED) and stops
 * reconnecting. The subscriptions end without a callback. */
void ig_nats_close(struct ig_nats *nc);
bool ig_nats_connected(const struct ig_nats *nc);
/* Times the connection has come up (1 after the first); for tests and logs. */
uint64_t ig_nats_connects(const struct ig_nats *nc);
/* The server's max_payload from its INFO (0 before the first). */
size_t ig_nats_max_payload(const struct ig_nats *nc);
struct ig_loop *ig_nats_loop(const struct ig_nats *nc);

/* Publishes payload to subject, with reply (NULL or empty: none) and
 * headers (a block "NATS/1.0\r\nK: v\r\n\r\n"; empty: a plain PUB). The
 * bytes leave after the loop's batch. IG_NATS_OK once written to the
 * connection's buffer: core NATS stores nothing (JetStream's
 * ig_js_publish waits for the stream's ack). */
IG_MUST_USE enum ig_nats_error ig_nats_publish(struct ig_nats *nc, ig_str subject, ig_str reply, ig_str headers,
					       ig_str payload);

/* A subscription's message callback: m is valid during the call. */
typedef void ig_nats_msg_fn(void *arg, const struct ig_nats_msg *m);
struct ig_nats_sub;

/* Subscribes to subject (wildcards allowed), in queue group queue (NULL
 * or empty: none); on_msg hears each message. Restored after reconnects.
 * NULL with *err when it cannot be made (a bad subject, memory). Works
 * while disconnected too: it is sent when the connection comes up. */
IG_MUST_USE struct ig_nats_sub *ig_nats_subscribe(struct ig_nats *nc, ig_str subject, ig_str queue,
						  ig_nats_msg_fn *on_msg, void *arg, enum ig_nats_error *err);
/* Ends sub (UNSUB): no call follows, even for a message already read in
 * the same batch. sub is freed. */
void ig_nats_unsubscribe(struct ig_nats_sub *sub);

/* Request and reply. A request's replies arrive on _INBOX.<random>.<n>,
 * under the connection's one wildcard subscription. on_reply hears each
 * reply (m) or the end (m NULL, with err: the timeout, the connection
 * lost, IG_NATS_NO_RESPONDERS); it returns true to wait for more replies
 * (a JetStream pull's batch), false when done. After an end (m NULL), or
 * a false, nothing more is heard of the request. */
typedef bool ig_nats_reply_fn(void *arg, const struct ig_nats_msg *m, enum ig_nats_error err);
struct ig_nats_request;

/* Sends payload (and headers, maybe empty) to subject with a fresh inbox
 * as its reply subject; timeout_ms (0: none) bounds the wait for the
 * end. On error (not connected, a bad subject, memory) nothing is sent
 * and on_reply is never called; else a handle for ig_nats_request_cancel,
 * valid until on_reply ends it. */
IG_MUST_USE enum ig_nats_error ig_nats_request(struct ig_nats *nc, ig_str subject, ig_str headers, ig_str payload,
					       uint32_t timeout_ms, ig_nats_reply_fn *on_reply, void *arg,
					       struct ig_nats_request **handle);
/* The same with a subscription of the request's own on its reply
 * subject, for answers that arrive under another subject than the reply
 * subject (a JetStream pull's messages keep their own): replies are
 * matched by the subscription, which the end removes (UNSUB). */
IG_MUST_USE enum ig_nats_error ig_nats_request_many(struct ig_nats *nc, ig_str subject, ig_str headers, ig_str payload,
						    uint32_t timeout_ms, ig_nats_reply_fn *on_reply, void *arg,
						    struct ig_nats_request **handle);
/* Ends a request still waiting: on_reply is not called again. Not from
 * its own on_reply (which ends it by returning false). */
void ig_nats_request_cancel(struct ig_nats_request *r);

/* Room for a request's caller's context (js.c's), from the client's pool
 * rather than malloc: IG_NATS_CTX_MAX bytes, 16-aligned; NULL when the
 * pool is exhausted. Given back with ig_nats_ctx_give, on the loop's
 * thread. */
#define IG_NATS_CTX_MAX 64
void *ig_nats_ctx_take(struct ig_nats *nc);
void ig_nats_ctx_give(struct ig_nats *nc, void *ctx);

/* A scratch arena for reading the server's JSON answers (js.c) on the
 * loop's thread: its user resets it before and after. */
ig_arena *ig_nats_scratch(struct ig_nats *nc);

/* The text name of an error, for logs. */
const char *ig_nats_error_name(enum ig_nats_error e);

#endif
