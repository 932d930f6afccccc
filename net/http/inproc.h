/* In-process requests: one request given as method, target, fields and
 * body (no socket) runs through the same engine as one read from a
 * connection, and its response is captured (status, fields, body)
 * instead of being written to a socket. The Lambda runtime (net/lambda)
 * serves invocations this way; handler tests without sockets can too.
 *
 * How: the request is written out as HTTP/1.1 bytes and handed to the
 * connection engine (conn.c) over a memory transport, and the bytes the
 * engine writes back are read with the client's response parser
 * (response_head.h). So the one codec judges the request (its limits and
 * smuggling rules included), the router, decoders, validators, handlers,
 * encoders, the health paths, request ids and engine errors are the ones
 * an HTTP client meets, and a pending handler completes on the core's
 * loop as it does over a socket. The cost is formatting and parsing a
 * head, small beside a Lambda invocation's JSON. A request that needs no
 * router, codec or encoder, because the runtime made it and names its
 * handler (a Pub/Sub consumer's delivery), is a task instead (task.h).
 *
 * The request carries "Connection: close", so the engine closes the memory
 * connection after its one response: that close is the completion. */
#ifndef NET_HTTP_INPROC_H
#define NET_HTTP_INPROC_H

#include "internal.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/transport.h"

struct http_inproc_sink;

struct http_inproc_request {
	ig_str method, target; /* "GET", "/blog/1?x=2" (origin form, raw) */
	const ig_header *headers;
	size_t header_count;   /* Content-Length, Transfer-Encoding,
				  Connection and Expect are dropped (the
				  body is all here); Host is added when absent */
	ig_str body;
	ig_str peer;           /* the client's address, for the access log; may be empty */
	uint64_t deadline_ms;  /* ig_deadline_ms of its exchange; 0: none */
	const struct http_inproc_sink *sink; /* NULL: the response is captured whole */
};

#define HTTP_INPROC_MAX_HEADERS 128

struct http_inproc_response {
	int status;
	const ig_header *headers; /* as the engine wrote them: Date,
				     Content-Length and Connection included */
	size_t header_count;
	ig_str body;
};

enum http_inproc_result {
	HTTP_INPROC_OK,
	HTTP_INPROC_BAD_FIELD,   /* the method, target or a field cannot be
				    written as HTTP/1.1 (a CR or LF in a value) */
	HTTP_INPROC_NO_ROOM,     /* the request or its response is larger than the buffer */
	HTTP_INPROC_NO_SLOT,     /* the core has no connection slot (or drains) */
	HTTP_INPROC_NO_RESPONSE, /* the engine closed without a whole response */
};

/* Runs once: the result and, when OK, the response, whose slices point
 * into the run's buffer (valid until that buffer is reused). Called from
 * the core's loop after the batch in which the engine finished, never from
 * inside ig_http_inproc_run. */
typedef void http_inproc_done_fn(void *arg, enum http_inproc_result result, const struct http_inproc_response *res);

/* ---- a response passed on as it comes ----
 * With a sink in the request (Lambda's response streaming), the run lets
 * the engine stream (SSE, ig_body_out) and passes the response on while it
 * is written: the head as soon as it is whole, then the body with its
 * framing removed. The body waits in the run's buffer until the sink's
 * owner takes it (ig_http_inproc_body, ig_http_inproc_taken); while
 * HTTP_INPROC_SINK_HIGH bytes wait, the engine's writes block, so a slow
 * sink holds back the handler as a slow client does (the engine keeps at
 * most INGOT_MAX_OUTPUT more). done still runs once, when the engine has
 * closed: OK if the head was passed on (the body may still wait), else
 * the result as without a sink. The callbacks get done's arg. */
#define HTTP_INPROC_SINK_HIGH (256u << 10)

struct http_inproc_sink {
	/* The response's head (interim heads skipped): status and fields,
	   an empty body; slices valid until the run's buffer is reused. Once,
	   from inside the engine's write: the sink may take body bytes and
	   start I/O, but not run the loop. */
	void (*head)(void *arg, const struct http_inproc_response *head);
	/* More of the body waits (from inside the engine's write, as head). */
	void (*more)(void *arg);
};

/* One request in flight; the caller owns it and keeps it (and buf) until
 * done has run. Private fields. */
struct http_inproc {
	struct ig_transport t; /* the engine's handle */
	struct ig_deferred report;
	struct http_core *core;
	char *buf;
	size_t cap, req_len, req_sent, resp_len;
	size_t req_body_len; /* the request's body ends its bytes */
	ig_str peer;
	http_inproc_done_fn *done;
	void *arg;
	enum http_inproc_result result;
	bool open, feeding, refeed, overflow, head_request;
	/* With a sink: past the head, buf[body_at ..) holds dec_len body bytes
	   waiting; what the engine wrote after them is framed at once. */
	const struct http_inproc_sink *sink;
	struct ig_deferred wake; /* the engine's writable after a block */
	struct http_chunked_decoder chunked;
	size_t head_at, body_at, dec_len;
	uint64_t left; /* BODY_LENGTH: bytes still to come */
	int framing;   /* enum http_body_framing */
	bool head_passed, body_ended, sink_bad, blocked;
	/* The response's fields, written by its parse before anything reads
	   them: last, so that a run clears only what comes before (4 KiB less
	   a run, a Pub/Sub delivery's or a Lambda invocation's). */
	ig_header headers[HTTP_INPROC_MAX_HEADERS];
};

/* Starts req on core (on core's thread): its bytes are written into
 * buf[0..cap), the response is captured after them. Returns 0, or -1 with
 * nothing started when the request cannot be written (BAD_FIELD or
 * NO_ROOM in *result) or the core has no slot (NO_SLOT); done is then not
 * called. */
int ig_http_inproc_run(struct http_inproc *p, struct http_core *core, char *buf, size_t cap,
		    const struct http_inproc_request *req, http_inproc_done_fn *done, void *arg,
		    enum http_inproc_result *result);

/* The body of the request p ran, as written into its buffer, where it
 * stays (the response is written after it) until the buffer is run again:
 * a caller that keeps the request's body for later (a dead letter's copy)
 * needs no copy of its own. Only after ig_http_inproc_run returned 0. */
ig_str ig_http_inproc_request_body(const struct http_inproc *p);

/* With a sink, after its head: the body bytes waiting ({NULL, 0}: none
 * now). *end: none will follow them (the engine has closed; done has run
 * or is about to); *whole then says whether the body ended as its framing
 * said (false: cut short, or framed badly). */
ig_str ig_http_inproc_body(const struct http_inproc *p, bool *end, bool *whole);

/* n of the waiting bytes were passed on (n at most their count): their
 * room is the engine's again. Never calls the engine from inside: a
 * blocked engine hears writable after the batch. */
void ig_http_inproc_taken(struct http_inproc *p, size_t n);

/* With a sink: nobody takes the rest (its reader has gone). The engine
 * hears what a socket's reset would tell it (a streaming handler sees
 * its client gone), what waits is dropped, and done runs after the batch
 * with the result it would have had. Nothing once the engine has closed. */
void ig_http_inproc_cut(struct http_inproc *p);

/* A core for in-process requests on the calling thread: its loop, pools
 * and parser scratch, app's routes, no listener. cfg must outlive it.
 * 0, or -1 when the loop or memory cannot be had. */
int ig_http_inproc_core_init(struct http_core *core, const struct http_config *cfg, const struct ig_app *app);

/* ---- a part's own requests ----
 * A part of the runtime that makes in-process requests by itself from a
 * core's loop, for no client (Pub/Sub's consumers, the cron scheduler),
 * holds a worker for that core and a slot per request it may have in
 * flight. A slot's buffer is taken once, at the core's start, so that a
 * request it runs later allocates nothing. */

/* The core the part's requests run on, and the pool of blocks that its
 * slots' arenas (and any other arena of the part's) take from. */
struct http_inproc_worker {
	struct http_core *core; /* its owner reads draining and loop */
	struct ig_pool blocks;  /* IG_HTTP_INPROC_BLOCK bytes each */
};

#define IG_HTTP_INPROC_BLOCK 4096

/* Sets w up for the core whose loop loop is (a core_start hook's loop, on
 * its thread), with at most max_blocks blocks. Takes no memory until an
 * arena asks. */
void ig_http_inproc_worker_init(struct http_inproc_worker *w, struct ig_loop *loop, size_t max_blocks);

/* One request at a time of a worker's: its run, its buffer (request and
 * response, as ig_http_inproc_run's buf) and an arena for its owner's
 * scratch while the request runs or after (a statement's parameters),
 * which its owner resets. */
struct http_inproc_slot {
	struct http_inproc run;
	char *buf;
	size_t cap;
	ig_arena arena;
};

/* Gives s a buffer of cap bytes, malloc'd here and kept for the process's
 * life, and an arena of at most arena_limit bytes from w's blocks (0: an
 * arena that gives nothing). At the core's start, on its thread. 0, or -1
 * when the buffer cannot be had: s must then never be run. */
IG_MUST_USE int ig_http_inproc_slot_init(struct http_inproc_slot *s, struct http_inproc_worker *w, size_t cap,
					 size_t arena_limit);

/* ig_http_inproc_run of req on w's core into s's buffer, with the same
 * results and the same promise about done. s must not be running (its
 * done has run, or it never started). */
IG_MUST_USE int ig_http_inproc_slot_run(struct http_inproc_slot *s, struct http_inproc_worker *w,
					const struct http_inproc_request *req, http_inproc_done_fn *done, void *arg,
					enum http_inproc_result *result);

#endif
