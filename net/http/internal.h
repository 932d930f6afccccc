/* Shared inside net/http: the per-core server state, the connection and the
 * exchange. Not for generated code or apps (they use include/ingot/http.h). */
#ifndef NET_HTTP_INTERNAL_H
#define NET_HTTP_INTERNAL_H

#include "ingot/api_hooks.h"
#include "ingot/log.h"
#include "meter.h"
#include "parser.h"
#include "trace.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/membudget.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/transport.h"

#define HTTP_BLOCK_SIZE (16 * 1024)
/* A block's room in its pool: a cache line more, so that blocks side by
   side start one line apart. At a whole multiple of the page, every
   block's first lines (a request's context, its first allocations) would
   fall in the same few sets of the L1 cache, which holds 8 lines a set:
   16 pipelined requests' arenas, or 64 in flight, would evict each other
   there while the rest of the cache stood empty. */
#define HTTP_BLOCK_STRIDE (HTTP_BLOCK_SIZE + 64)
#define HTTP_MAX_QUEUED 128 /* pipelined requests awaiting their turn */
#define HTTP_MAX_ERRORS 20

struct http_config {
	int64_t port, threads, max_conns, max_request_line, max_header_bytes, max_headers;
	int64_t max_body, header_timeout_ms, body_timeout_ms, idle_timeout_ms;
	int64_t write_timeout_ms, max_output, grace_ms, drain_delay_ms;
	int64_t ws_max_message; /* INGOT_WS_MAX_MESSAGE: a WebSocket message's bytes at most (0: max_body) */
	int64_t ws_ping_ms; /* INGOT_WS_PING_MS: a ping after this much silence from the client; 0: none */
	int64_t sse_heartbeat_ms; /* INGOT_SSE_HEARTBEAT_MS: a comment after this much silence; 0: none */
	int64_t admin_port; /* -1: no admin listener */
	int64_t idle_exit_ms; /* 0: never exit when idle */
	int64_t stack_size;   /* INGOT_STACK_SIZE: a handler's coroutine stack (wait.c) */
	int64_t max_waiting;  /* INGOT_MAX_WAITING: coroutines alive per core; 0: derived */
	int64_t memory_wait_ms; /* a body over the budget waits this long for room, then 503 */
	int64_t test_stall_core; /* -1; else that core stops turning (net/server/watchdog.c) */
	bool strict_env; /* an unknown INGOT_ variable stops the start (net/start.c) */
	bool share_port; /* another process may serve PORT too (a handover); else the start stops */
	const char *host;
	const char *admin_host;  /* "": HOST */
	const char *admin_token; /* "": no token asked */
	int log_level;
	bool access_log;
	uint32_t access_log_sample; /* 2xx lines kept, in millionths (IG_FRACTION_ONE: all) */
	/* TLS: on when a certificate is given (file or PEM text) */
	const char *tls_cert, *tls_key, *tls_cert_pem, *tls_key_pem;
	const char *tls_client_ca; /* mutual TLS: PEM file of the client CAs; "": off */
	int64_t tls_port, tls_handshake_timeout_ms, tls_max_handshakes, tls_idle_timeout_ms;
	int64_t tls_session_cache;
	bool tls_only;
};

/* The storm bound of a core's 5xx lines (error_log.c): one failure that
 * was logged recently, its route, status and cause, when its second began
 * and how many identical ones were not logged since. */
#define HTTP_ERROR_LOG_SLOTS 8
#define HTTP_ERROR_CAUSE_MAX 64
struct http_error_slot {
	uint64_t key; /* 0: free */
	uint64_t since_ms;
	uint32_t suppressed;
	uint32_t route;
	int status;
	char cause[HTTP_ERROR_CAUSE_MAX];
};
/* A core's table, touched only by its own thread: no lock, no atomic.
 * Apart from the core's struct (its owner places it), so that its zeroed
 * pages stay untouched until a 5xx. */
struct http_error_log {
	struct http_error_slot slots[HTTP_ERROR_LOG_SLOTS];
	struct ig_timer tick;     /* armed while a slot has a count to write */
	struct http_core *core;   /* set when the tick is armed */
};

struct http_conn;
struct ig_net_listener;
struct ig_tls_core;
struct ig_app;

struct http_core {
	struct ig_loop loop;
	/* Its owner's (net/server's) listeners over the process's stack
	   (net/stack.h): plain HTTP (NULL when TLS only) and HTTPS (NULL
	   when TLS is off) */
	struct ig_net_listener *listener, *tls_listener;
	struct ig_tls_core *tls; /* NULL when TLS is off */
	struct ig_pool conns, ctxs, rbufs, blocks;
	struct ig_pool fail_ids; /* the ids of failed requests' answers (http_conn) */
	struct ig_mem_credit mem; /* this core's credit in the process's memory budget */
	const struct http_config *cfg;
	const struct ig_app *app;
	struct http_limits limits;
	ig_header *scratch_headers; /* parser output, reused */
	struct http_conn *live; /* every open connection, for drain */
	struct http_task *tasks; /* the runtime's own exchanges still running (task.h) */
	struct ig_deferred drain_sweep; /* ig_http_conn_drain again, after the batch */
	uint32_t index, count;
	_Atomic int drain_requested, force_requested;
	_Atomic int tls_reload_requested; /* ig_tls_core_post_credentials was called */
	/* Its loop exists (ig_server_core_setup): until then a request's flag
	   above is read as the loop starts, and nothing wakes it. */
	_Atomic bool loop_ready;
	uint32_t rbuf_size;
	unsigned health_paths; /* /livez, /readyz the engine answers (net/http/health.h) */
	/* Body bytes of the answers made during the batch of the connection
	   being processed (conn_process), not yet moved to its output: less
	   than HTTP_BLOCK_SIZE (conn.c). Here, in padding: the cores' table
	   stays the size it was (idle RSS). */
	uint32_t batch_ready;
	struct ig_rng rng; /* request, trace and span ids (trace.h) */
	bool draining;
	uint64_t requests, cut, dropped;
	/* The admin listener's share of count, ctxs.in_use and requests: its
	   scrapes are not the app's work, and an idle exit must not wait for
	   them (net/server/idle.c); the drain waits for every connection. */
	struct {
		uint32_t conns, ctxs;
		uint64_t requests;
	} admin;
	struct http_meter meter; /* the metrics of the app's connections */
	/* The storm bound of its 5xx lines (error_log.c); NULL: none, every
	   5xx is logged (a core without an owner that gives one). */
	struct http_error_log *error_log;
	/* INGOT_IDLE_EXIT_MS (net/server/idle.c): when this core's tick
	   last saw work (read by core 0's tick), and what it saw then. */
	_Atomic uint64_t idle_last_busy_ms;
	uint64_t idle_requests_seen;
	struct ig_timer idle_tick;
	/* systemd's watchdog (net/server/watchdog.c): this core's tick counts
	   the turns its loop makes; core 0 compares with what it saw last. */
	_Atomic uint64_t watchdog_turns;
	uint64_t watchdog_seen;
	struct ig_timer watchdog_tick;
	/* Set by the core's owner (the server, a test) before its loop runs:
	   called on the core's loop when a draining core has closed its last
	   connection (an upcall, so net/http's engine knows no server). */
	void (*drained)(struct http_core *core);
	/* Told when an exchange of connection c has become ready to write
	   (ig_finish): conn.c's ig_http_conn_ctx_ready, set with the pools, so
	   that the exchange calls back into no connection code. */
	void (*ctx_ready)(struct http_conn *c);
};

enum ctx_state { CTX_RUNNING, CTX_PENDING, CTX_READY };

struct ig_ctx {
	struct http_conn *conn; /* NULL once the client has gone */
	struct http_core *core;
	struct ig_ctx *next;    /* in the connection's queue */
	enum ctx_state state;
	bool keep_alive;
	bool detached; /* the request (field array, bytes) lives in the arena */
	size_t mem_charged; /* its body's bytes in the memory budget (kernel/runtime/membudget.h) */
	ig_arena arena;
	ig_request req;
	int status;
	const char *content_type;
	ig_wbuf body, headers;
	ig_encode_fn *encode;
	const void *out;
	ig_wbuf errors;
	uint32_t error_count;
	struct ig_timer timer;
	ig_ctx_fn *timer_fn;
	void *timer_arg;
	uint64_t start_us; /* every request: the loop's wake for its bytes (duration metric, access log) */
	uint32_t route; /* 1 + the index in app->routes; 0: no path matched */
	bool metered; /* its connection's metered */
	bool admin;   /* its connection is the admin listener's (core->admin) */
	uint8_t method_index; /* ig_http_method_index, taken when it finished: the
				 method's bytes may be gone when it is metered */
	struct http_trace trace; /* request id and trace context, made on first use
				    (ig_http_ctx_new clears only its head) */
	uint64_t deadline_ms; /* ig_deadline_ms: its connection's request_deadline_ms */
	/* A 5xx's cause for its error line (error_log.c): ig_respond_problem's
	   detail, read only by the ig_finish it calls; NULL: the handler's. */
	const char *cause;
	bool error_logged; /* its one error line is written (or counted in a storm) */
	/* wait.c: the handler's coroutine while it runs or waits, and its
	   waiting state, made by its first linear call (NULL: it never made one) */
	struct ig_coro *coro;
	struct ig_wait_work *work;
	struct ig_waiter *waiter;
	/* ig_finish has answered (a second call changes nothing); held: its
	   handler or the calls it started still use the exchange, so the
	   answer waits for wait.c to hand it on (ig_finish again) */
	bool finished, held;
	/* A task's (task.h): it has no connection to lose, so ig_cancelled
	   says false for it (the grace period's end stops the loop with the
	   task still running; ig_http_ctx_cancel would clear this). */
	bool task;
	/* The door's (net/api/security.c): who made the request, or NULL. */
	const struct ig_principal *principal;
	/* The stream its handler opened (sse.c), or NULL: once it has begun,
	   conn is NULL and the stream holds the connection. */
	struct http_stream *stream;
	/* Its operation's x-ingot-hooks (hooks.h), set when it has some:
	   their after-hooks replace the root's. */
	const struct ig_op_hooks *hooks;
	/* Its request body as its handler reads it (body.c): streamed
	   (CONN_BODY_IN), or the whole one from an offset; NULL: not read so. */
	struct http_body_in *body_in;
};

struct out_block {
	struct out_block *next;
	uint32_t len, off;
	char data[];
};

enum conn_state {
	CONN_HEAD,    /* reading heads (and bodies that fit the read buffer) */
	CONN_BODY,    /* reading a large Content-Length body into the arena */
	CONN_CHUNKED, /* decoding a chunked body into the arena */
	CONN_CLOSING, /* reading no more: flush, then close */
	CONN_STREAM,  /* a stream's response is under way (c->stream): nothing is parsed */
	CONN_BODY_IN, /* the body of the request at the queue's tail streams to its
			 handler as it arrives (c->body_in): nothing is parsed */
};

enum conn_timer { TIMER_IDLE, TIMER_HEAD, TIMER_BODY, TIMER_WRITE, TIMER_MEMORY, TIMER_NONE };

struct http_conn {
	/* Fields are grouped by size, so that padding wastes no byte: every
	   byte here counts once per connection, 9,000 times at 9,000. */
	struct ig_transport *t;
	struct http_core *core;
	const struct ig_app *app; /* routes its requests: core->app, or the admin listener's */
	enum conn_state state;
	bool metered; /* counted in the server's metrics: the app's connections, when a scrape
			 can read them (kept, not derived: the request path reads it) */
	uint8_t close_reason; /* enum http_close_reason, counted when it closes */
	uint8_t fail_id_len; /* the failed request's id (fail_id), when its head was parsed */
	bool processing;
	struct http_conn *next, *prev;
	struct http_head_resume head; /* the head at rpos, while it arrives */
	bool continue_sent;
	bool peer_eof; /* the client sent FIN: nothing more will arrive */
	bool had_request; /* one was dispatched: idle now means between requests */
	/* mem_wait: the body at rpos waits for room in the memory budget;
	   out_over: a block of its output found none (response.c). Either
	   way reading stops. tls: its transport is net/tls's (set by the
	   HTTPS listener's accept), for the after-hooks (hooks.h).
	   in_process: inproc.h's, whose reader takes one whole response
	   (no stream) unless in_process_streams: its reader passes the
	   response on as it comes (inproc.h's sink). */
	bool mem_wait : 1, out_over : 1, tls : 1, in_process : 1, in_process_streams : 1;
	/* A streamed body's handler reads on its coroutine (body_in_take):
	   what arrives is only buffered, no batch runs there. */
	bool taking : 1;
	char *rbuf;
	uint32_t rpos, rlen;
	struct ig_ctx *reading; /* the request whose body is being read */
	size_t body_len, body_need;
	/* In the reading request's arena, while its body is chunked: an idle
	   connection holds none (every byte here counts 9,000 times over). */
	union {
		struct http_chunked_decoder *chunked;
		/* CONN_STREAM: the stream that holds the connection */
		struct http_stream *stream;
		/* CONN_BODY_IN: the reader of the body that arrives */
		struct http_body_in *body_in;
	};
	struct ig_ctx *q_head, *q_tail;
	uint32_t queued;
	enum conn_timer timer_kind;
	struct out_block *out_head, *out_tail;
	size_t out_bytes;
	struct ig_timer timer;
	uint64_t deadline_ms, head_started_ms;
	uint64_t mem_wait_until; /* when a body waiting for memory is refused (0: not waiting) */
	uint32_t idle_timeout_ms; /* shorter over TLS: its engine keeps a buffer */
	uint16_t fail_status; /* an error answered once the queue ahead has left */
	/* Output blocks past the first that are charged to the memory budget
	   (response.c; given back as blocks are written, conn.c). */
	uint16_t out_charged;
	const char *fail_detail;
	/* From core->fail_ids, or NULL: HTTP_REQUEST_ID_MAX bytes of id, then
	   CORS's allowed Origin (a length byte, IG_CORS_ORIGIN_MAX bytes). */
	char *fail_id;
	uint64_t request_deadline_ms; /* its exchanges' deadline (0: none): an
					 in-process request's (inproc.h) */
};

/* A response that goes on after its exchange (sse.c): what the connection
 * tells it, an upcall, so that conn.c links no stream code. */
struct http_stream;
struct http_stream_ops {
	/* The output went down to INGOT_MAX_OUTPUT or below (a write). */
	void (*writable)(struct http_stream *s);
	/* The connection is going away (client gone, write timeout, the
	   grace period): c->stream and s->conn are cleared after. */
	void (*gone)(struct http_stream *s);
	/* The drain began: end the stream cleanly (ig_http_stream_end). */
	void (*drain)(struct http_stream *s);
	/* Its exchange finished (the handler returned): x is the stream's
	   to free. */
	void (*finished)(struct http_stream *s, struct ig_ctx *x);
	/* The client's bytes p[0..n) (a WebSocket's frames; NULL: a stream
	   that reads nothing, whose bytes wait unread): returns how many it
	   took; the rest are handed again with more. Called inside a batch:
	   its writes leave at the batch's end. */
	size_t (*received)(struct http_stream *s, char *p, size_t n);
};
struct http_stream {
	const struct http_stream_ops *ops;
	struct http_conn *conn; /* NULL before it began, and once it has ended */
};

/* core.c */
extern const struct http_config ig_http_config_defaults;
/* INGOT_MAX_CONNS at most, when it is not set: the server's default where
 * descriptors allow (net/server/conn_limit.c), an in-process core's. */
#define IG_HTTP_MAX_CONNS_CEILING 10000
/* Sizes core's pools, read buffer and parser limits from core->cfg, and
 * sets the engine's own upcalls (ctx_ready). */
void ig_http_core_init_pools(struct http_core *core);

/* conn.c */
void *ig_http_conn_accept(void *core, struct ig_transport *t);
/* The two halves of ig_http_conn_accept, for a transport made once a
 * connection slot is sure (TLS): take returns NULL while draining or when
 * the core is full (give the slot back with ig_pool_give on core->conns);
 * begin attaches the engine to t and returns the connection. */
struct http_conn *ig_http_conn_take(struct http_core *core);
struct http_conn *ig_http_conn_begin(struct http_core *core, struct http_conn *c, struct ig_transport *t,
				  uint32_t idle_timeout_ms);
/* As ig_http_conn_begin, for a connection whose requests app routes (the
 * admin listener's); only core->app's connections are metered. */
struct http_conn *ig_http_conn_begin_app(struct http_core *core, struct http_conn *c, struct ig_transport *t,
				      uint32_t idle_timeout_ms, const struct ig_app *app);
/* An in-process connection whose reader takes one whole response: a
 * stream's or a streamed body's response is gathered whole (an SSE
 * operation answers 503 there). */
static inline bool http_conn_gathers(const struct http_conn *c)
{
	return c->in_process && !c->in_process_streams;
}

/* The admin listener's (its app is not core->app): core->admin counts it,
 * and it is never metered. */
static inline bool http_conn_is_admin(const struct http_conn *c)
{
	return c->app != c->core->app;
}
void ig_http_conn_ctx_ready(struct http_conn *c);
/* One of what a draining core waits for (a connection, a task) has ended:
 * core->count, already lowered, is told to the drain. */
void ig_http_core_left(struct http_core *core);
void ig_http_conn_drain(struct http_core *core);
void ig_http_conn_force_close_all(struct http_core *core);
/* A core's state for one kind of stream (SSE's, WebSocket's;
 * stream_core.c): a pool of its handles, never more than the core's
 * connections, and a scratch arena (2 x INGOT_MAX_BODY + 1 MiB of the
 * core's blocks) with a wbuf over it, where the generated sends encode a
 * message before it is framed. */
struct http_stream_core {
	struct ig_pool handles;
	ig_arena scratch;
	ig_wbuf buf;
	struct http_stream_core *all_next; /* every kind's, every core's */
};
/* core's state of the kind whose static slot is slot, made at its first
 * use (handles of handle_size bytes) and kept for the process's life;
 * NULL when the memory or a slot cannot be had. */
struct http_stream_core *ig_http_stream_core(struct http_core *core, struct ig_loop_slot *slot, size_t handle_size);
/* The state of a core that has made it (a handle of the kind exists). */
static inline struct http_stream_core *http_stream_core_of(struct http_core *core, struct ig_loop_slot *slot)
{
	return ig_loop_slot_get(&core->loop, slot);
}
/* The scratch wbuf, emptied for a message's encoding. */
static inline ig_wbuf *http_stream_core_buf(struct http_stream_core *sc)
{
	sc->buf.len = 0;
	sc->buf.failed = false;
	return &sc->buf;
}
/* After a message was framed: the scratch memory goes back. */
static inline void http_stream_core_reset(struct http_stream_core *sc)
{
	sc->buf = (ig_wbuf){ .arena = &sc->scratch };
	ig_arena_reset(&sc->scratch);
}

/* Begins stream s on x's connection: the answers ahead of x leave first,
 * then head (n bytes); x leaves the queue (x->conn NULL, x->stream s) and
 * s holds the connection (CONN_STREAM) until ig_http_stream_end. Returns
 * false, changing nothing, when x cannot stream now (not at the queue's
 * head, a body being read, the client half-closed, over the budget). */
bool ig_http_stream_begin(struct ig_ctx *x, struct http_stream *s, const char *head, size_t n);
/* Appends n bytes of s's response, written at once unless a batch is
 * being processed (its end writes them). s->conn may be NULL afterwards
 * (the write failed). */
void ig_http_stream_write(struct http_stream *s, const void *p, size_t n);
/* Ends s: the connection goes on with its next request (or closes when it
 * was the last). s->conn is NULL afterwards. */
void ig_http_stream_end(struct http_stream *s, bool close);
/* Unsent bytes of s's response. */
size_t ig_http_stream_unsent(const struct http_stream *s);
/* Hands s the client's bytes still buffered and reads on, once its
 * output went down (received's reader paused behind INGOT_MAX_OUTPUT). */
void ig_http_stream_resume(struct http_stream *s);
/* A stream's head from the Date line on: Date, X-Request-Id, x's own
 * fields (CORS's, the handler's), Connection: close when close, and the
 * blank line. */
static inline void ig_http_stream_head_end(struct ig_ctx *x, ig_wbuf *h, bool close)
{
	ig_wbuf_put(h, x->core->loop.clock.date_line, IG_DATE_LINE_LEN);
	ig_str id = ig_request_id(x);
	ig_wbuf_put(h, "X-Request-Id: ", 14);
	ig_wbuf_put(h, id.ptr, id.len);
	ig_wbuf_put(h, "\r\n", 2);
	ig_wbuf_put(h, x->headers.ptr, x->headers.len);
	if (close)
		ig_wbuf_put(h, "Connection: close\r\n", 19);
	ig_wbuf_put(h, "\r\n", 2);
}
/* A chunk's head for n bytes: n in lowercase hex, no leading zeros, then
 * CRLF, at out (18 bytes at most). Returns its length. */
static inline size_t ig_http_chunk_head(char *out, size_t n)
{
	char tmp[16];
	size_t k = 0;
	do {
		tmp[k++] = "0123456789abcdef"[n & 15];
		n >>= 4;
	} while (n);
	for (size_t i = 0; i < k; i++)
		out[i] = tmp[k - 1 - i];
	out[k] = '\r';
	out[k + 1] = '\n';
	return k + 2;
}
/* For a stream's finished upcall: a handler that returned inside its
 * dispatch, which still reads x, has x finished after the batch (d's fn
 * then). Returns: whether it deferred. */
static inline bool ig_http_stream_finish_later(struct ig_ctx *x, struct ig_deferred *d, void (*fn)(struct ig_deferred *))
{
	if (x->state != CTX_RUNNING)
		return false;
	x->state = CTX_READY;
	d->fn = fn;
	ig_loop_defer(&x->core->loop, d);
	return true;
}

/* A request body its handler reads as it arrives (body.c's
 * ig_body_in_read), in its exchange's arena: an operation's
 * x-ingot-stream-body, its bytes taken from the read buffer, whose room
 * holds the client back. The engine's side is conn.c's. */
struct http_body_in {
	struct http_conn *conn; /* CONN_BODY_IN's; NULL once the body ended or the connection went */
	struct ig_ctx *ctx;
	struct http_chunked_decoder *chunked; /* NULL: a Content-Length body */
	int64_t length;   /* its Content-Length; -1: chunked */
	uint64_t left;    /* Content-Length: bytes still to come */
	uint64_t max;     /* its operation's maxBytes */
	uint64_t taken;   /* bytes handed to the handler (a whole body's: its offset) */
	uint32_t decoded; /* chunked: decoded bytes at the read buffer's rpos, not taken */
	bool last_chunk;  /* chunked: the last chunk and the trailers were decoded */
	bool whole;       /* the engine read the body whole (req.body): nothing streams */
	bool waiting;     /* its handler waits for bytes: wake completes its wait */
	uint8_t end;      /* enum ig_body_result, once conn is NULL: IG_BODY_OK, the body ended whole */
	struct ig_wait_call *wait;
	/* Bytes arrived, or the body ended (conn NULL): the handler reads on;
	   NULL until its first read (body.c's, which conn.c links not). */
	void (*wake)(struct http_body_in *b);
};

/* conn.c, for body.c: moves up to cap bytes of b's body into p, on its
 * handler's coroutine, and lets the client send more into the room made.
 * Returns the count; 0 when none has arrived, or when b ended (b->conn
 * NULL, b->end says how). */
size_t ig_http_body_in_take(struct http_body_in *b, char *p, size_t cap);

/* exchange.c */
/* Writes "name: value\r\n" (name_len + value.len + 4 bytes) at d, a CR,
 * LF or NUL of value as a space: ig_add_header's line, and the hooks'. */
static inline void ig_http_field_line(char *d, const char *name, size_t name_len, ig_str value)
{
	memcpy(d, name, name_len);
	d += name_len;
	*d++ = ':';
	*d++ = ' ';
	/* A field value must not smuggle a line break into the head. */
	for (size_t i = 0; i < value.len; i++) {
		char ch = value.ptr[i];
		d[i] = (ch == '\r' || ch == '\n' || ch == 0) ? ' ' : ch;
	}
	d += value.len;
	*d++ = '\r';
	*d = '\n';
}
struct ig_ctx *ig_http_ctx_new(struct http_core *core, struct http_conn *c);
void ig_http_ctx_free(struct ig_ctx *ctx);

/* Points ctx's request at r's slices (the read buffer) and at r's field
 * array (the core's scratch), without copying. */
void ig_http_ctx_set_request(struct ig_ctx *ctx, const struct http_request *r, const char *body, size_t body_len);
/* Copies the field array and every slice into the arena, for a request
 * that outlives the read buffer and the next parse; -1 when out of memory. */
int ig_http_ctx_detach(struct ig_ctx *ctx);
void ig_http_ctx_cancel(struct ig_ctx *ctx);
/* The access log's line for an error the engine answered without an
 * exchange (a head that does not parse, 413, 408, ...): its request id
 * if the head was parsed, no method, route or trace. */
void ig_http_access_log_engine_error(struct http_conn *c, int status, ig_str request_id, size_t bytes_out);
/* Adds an exchange's request id, method and route to a line: what names a
 * request the grace period cut, and (kernel/process/fatal.h's describe) the
 * one a thread was running when a fatal signal came. */
void ig_http_log_exchange(const void *exchange, struct ig_logline *line);

/* error_log.c */
/* Begins exchange x's one error line, for an answer of status because of
 * cause: a short text, the same for the same failure (it is the storm's key
 * with the route and status, and it is logged: no secret, no value from
 * the request). The line has msg, "request_id", "trace_id", "method",
 * "route", "status" and "cause"; the caller adds its fields and ends it.
 * Marks x as logged whatever it returns, so that ig_finish writes no line
 * of its own. Returns false when nothing is to be written: an identical
 * failure on this route was logged on this core less than a second ago
 * (this one is counted, and the count is logged once that second is
 * over). Call on x's core, before x is finished. */
IG_MUST_USE bool ig_http_error_line_begin(struct ig_ctx *x, struct ig_logline *l, const char *msg, int status,
					  const char *cause);
/* Marks x as logged without a line: its 5xx is no failure to report (a
 * probe's, a cancelled request's). */
void ig_http_error_mark_logged(struct ig_ctx *x);
/* ig_finish's line for a 5xx that nobody logged: "msg":"server error",
 * cause x->cause, else "handler". */
void ig_http_error_log_answer(struct ig_ctx *x);
/* Writes core's counts not written yet: once its loop has stopped, on any
 * thread that has joined core's. */
void ig_http_error_log_flush(struct http_core *core);

/* response.c */
/* request_id: echoed as X-Request-Id unless empty. */
void ig_http_out_head(struct http_conn *c, int status, const char *ctype, size_t body_len,
		   const ig_wbuf *extra, ig_str request_id, bool close, int minor, bool head_only);
/* Output past the connection's first block (a slow reader's) is charged to
 * the memory budget, a block at a time. A block that finds no room is
 * still taken (the response exists: dropping it would break the stream),
 * and c->out_over is set: conn.c then parses and emits nothing more for
 * c until its output is down to one block, so a connection holds at most
 * one response beyond the budget. */
void ig_http_out_append(struct http_conn *c, const void *p, size_t n);
/* Returns the body's length. extra: the answer's own fields, at most
 * HTTP_EXTRA_LINES_MAX bytes (more are left out): CORS's (512 at most),
 * then the after-hooks' (IG_HOOKS_LINES_MAX, net/http/hooks.h). */
#define HTTP_EXTRA_LINES_MAX (512 + 1024)
size_t ig_http_out_problem(struct http_conn *c, int status, const char *detail, ig_str request_id, bool close,
			   ig_str extra);
/* "application/json", the default body's type: a head writes it without
 * measuring it when given this very pointer. */
extern const char ig_http_json_type[];
/* A problem+json body: details are cut at 200 bytes; "error" is written
 * when error_kind is not NULL (a kind's name: [a-z_], at most 32 bytes);
 * "request_id" unless request_id is empty. cap: at least HTTP_PROBLEM_MAX. */
#define HTTP_PROBLEM_MAX (6 * 200 + 6 * HTTP_REQUEST_ID_MAX + 200)
size_t ig_http_problem_body(char *out, size_t cap, int status, const char *detail, const char *error_kind,
			    ig_str request_id);
/* That body as x's answer (content type, no encoder), not yet finished. */
void ig_http_problem_set(ig_ctx *x, int status, const char *detail, const char *error_kind);
const char *ig_http_reason(int status);

/* Counts a metered exchange's request in its core's meter, its duration
 * ending at now_us: when its response is written (conn_emit_ready), or
 * when it was dropped because the client had gone (ig_finish). Reads
 * nothing of the request's bytes, which a response written later may have
 * outlived. Inline: it only gathers the arguments. */
static inline void http_ctx_meter(const struct ig_ctx *x, uint64_t now_us)
{
	ig_http_meter_request(&x->core->meter, x->route, x->method_index, x->status,
			   now_us - x->start_us, x->req.body.len, x->req.head ? 0 : x->body.len);
}

/* The request id once ig_finish has chosen it (ig_request_id): every
 * response is written after its exchange finished. */
static inline ig_str http_ctx_chosen_id(const struct ig_ctx *x)
{
	return (ig_str){ x->trace.id, x->trace.id_len };
}

#endif
