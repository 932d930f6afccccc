/* libFuzzer target for the whole request path: a memory transport feeds the
 * real connection engine, parser, generated router, decoders, validators,
 * reference handlers and encoders. Every response must be well framed, its
 * JSON well formed, and pools, timers and exchanges all back at the end.
 * A core set up by tests/harness.h stands in for server.c (sockets,
 * threads, signals); its outbound calls (GET /proxy/json, /fanout) go to
 * a mock agent with the network disabled, so no input makes a connection. */

/* Input: 4 control bytes, then the client's byte stream.
 *   c[0] bits 0-1  writes: 0 all accepted, 1 every other one blocks,
 *                  2 partial, 3 partial and blocking
 *        bit 2     the client reads nothing until it has sent everything
 *        bits 3-4  end: 0 FIN, 1 silence (timeouts), 2 reset, 3 force close
 *        bit 5     a drain (SIGTERM) starts after chunk c[3] & 15
 *        bit 6     the clock moves (c[3] >> 4) * 8 ms between chunks
 *        bit 7     resume_read takes effect on the next event, not inside
 *   c[1], c[2]     sizes of alternate chunks (0: all that is left)
 *   c[3]           drain point and clock step
 * Build: see FUZZ_SRC_http and FUZZ_FLAGS_http in the Makefile. Linked with
 * -Wl,--wrap=ig_pool_take,--wrap=ig_pool_give, every pool object is its own
 * malloc, so that ASan sees overflows and reuse and LSan sees leaks. With
 * -DIG_CHECK_RESPONSES the generated code also re-validates each response. */
#include "tests/harness.h"
#include "ingot/json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void *__wrap_ig_pool_take(struct ig_pool *p);
void __wrap_ig_pool_give(struct ig_pool *p, void *obj);

#define OUT_CAP (1u << 20)   /* the client's receive window, in all */
#define MAX_RECORDS 4096     /* routed requests remembered per input */
#define MAX_STEPS 100000     /* events per input before calling it a hang */
#define BASE_MS 1000000000u  /* the fake clock at the start of each input */

/* ---- pools as malloc (active only with the --wrap link flags) ---- */

void *__wrap_ig_pool_take(struct ig_pool *p)
{
	if (p->in_use >= p->max_objs)
		return NULL;
	void *o = aligned_alloc(16, p->obj_size);
	if (o)
		p->in_use++;
	return o;
}

void __wrap_ig_pool_give(struct ig_pool *p, void *obj)
{
	p->in_use--;
	free(obj);
}

/* ---- the core: server.c's defaults, with smaller limits ---- */

static struct http_config config;
static struct http_core core;
static ig_mock_agent *no_network; /* the core's agent: every outbound call fails */
static struct ig_app fuzz_app;
static bool print_output; /* FUZZ_HTTP_PRINT=1: show what each input got */

/* Requests in the order the router saw them: the responses come back in
 * this order, which is how the checks know which answers a HEAD (no body)
 * and which route a body came from. */
enum route_kind { R_OTHER, R_HEALTH, R_DELAY };

struct record {
	enum route_kind kind;
	bool head;
	int64_t delay_ms; /* R_DELAY with a plain decimal segment, else -1 */
};

static struct record records[MAX_RECORDS];
static size_t nrecords;
static bool records_overflow;

static int64_t plain_decimal(ig_str s)
{
	if (s.len == 0 || s.len > 9 || (s.len > 1 && s.ptr[0] == '0'))
		return -1;
	int64_t v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.ptr[i] < '0' || s.ptr[i] > '9')
			return -1;
		v = v * 10 + (s.ptr[i] - '0');
	}
	return v;
}

static void fuzz_route(ig_ctx *ctx)
{
	const ig_request *q = ig_req(ctx);
	struct record r = { .kind = R_OTHER, .head = q->head, .delay_ms = -1 };
	bool get = ig_str_eq(q->method, "GET", 3);
	if (get && ig_str_eq(q->path, "/health", 7)) {
		r.kind = R_HEALTH;
	} else if (get && q->path.len > 7 && memcmp(q->path.ptr, "/delay/", 7) == 0 &&
		   !memchr(q->path.ptr + 7, '/', q->path.len - 7)) {
		r.kind = R_DELAY;
		r.delay_ms = plain_decimal((ig_str){ q->path.ptr + 7, q->path.len - 7 });
	}
	if (nrecords < MAX_RECORDS)
		records[nrecords++] = r;
	else
		records_overflow = true;
	harness_app->route(ctx);
}

/* ---- the memory transport ---- */

struct mem_transport {
	struct ig_transport t; /* first: the engine's handle */
	bool open;             /* false once closed in either direction */
	bool read_paused;      /* lend gave no buffer: wait for resume_read */
	bool owed_writable;    /* a write blocked: writable will follow */
	bool cut;              /* the output may end inside a response */
	bool final;            /* the end: writes no longer block */
	unsigned writes;
};

static struct mem_transport tr;
static char *out;
static size_t out_len;

/* The input and where the client is in it. */
static const uint8_t *in;
static size_t in_len, in_pos, chunk_left;
static unsigned chunks_sent;
static uint8_t ctl[4];
static bool send_fin; /* the client has sent everything and closes its side */

static unsigned write_mode(void) { return tr.final ? ctl[0] & 2 : ctl[0] & 3; }
static bool hold_reads(void) { return (ctl[0] & 4) && !tr.final; }
static unsigned end_mode(void) { return (ctl[0] >> 3) & 3; }
static bool deferred_resume(void) { return ctl[0] & 0x80; }

static ssize_t mem_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	(void)t;
	if (!tr.open)
		abort(); /* the engine wrote after closing */
	tr.writes++;
	size_t offered = 0;
	for (int i = 0; i < iovcnt; i++)
		offered += iov[i].iov_len;
	if (offered == 0)
		abort(); /* a write of nothing: the flush loop should not ask */
	if (out_len == OUT_CAP) {
		/* The client's window is full and it reads no more: as with an
		   edge-triggered EPOLLOUT, no writable follows. */
		tr.cut = true;
		return IG_WOULD_BLOCK;
	}
	if ((write_mode() & 1) && (tr.writes & 1)) {
		tr.owed_writable = true;
		tr.cut = true;
		return IG_WOULD_BLOCK;
	}
	size_t take = offered;
	if (write_mode() & 2)
		take = 1 + (offered - 1) * (1 + tr.writes % 7) / 8;
	if (take > OUT_CAP - out_len)
		take = OUT_CAP - out_len;
	size_t left = take;
	for (int i = 0; i < iovcnt && left; i++) {
		size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;
		memcpy(out + out_len, iov[i].iov_base, k);
		out_len += k;
		left -= k;
	}
	/* Everything offered went out: unless the engine had more blocks than
	   one writev carries, nothing of it is held back. */
	tr.cut = take < offered || iovcnt >= 64;
	return (ssize_t)take;
}

static void client_read_event(void);

static void mem_resume_read(struct ig_transport *t)
{
	(void)t;
	/* As net/sock: only a paused stream resumes, and it reads at once
	   (inside the engine's call), unless this input defers it. */
	if (!tr.read_paused || !tr.open)
		return;
	tr.read_paused = false;
	if (!deferred_resume())
		client_read_event();
}

static void mem_close(struct ig_transport *t, int graceful)
{
	(void)t;
	(void)graceful;
	if (!tr.open)
		abort(); /* closed twice */
	/* As net/sock: after the engine's own close, no closed callback. */
	tr.open = false;
}

static const struct ig_transport_ops mem_ops = {
	.writev = mem_writev,
	.resume_read = mem_resume_read,
	.close = mem_close,
};

/* ---- the client ---- */

static size_t next_chunk(void)
{
	size_t n = ctl[1 + chunks_sent % 2];
	return n ? n : in_len - in_pos;
}

/* One readiness event: as net/sock's stream_read, read what the chunk
 * holds while the engine lends buffers; then the FIN, if sent. */
static void client_read_event(void)
{
	if (in_pos < in_len && chunk_left == 0) {
		chunk_left = next_chunk();
		if (chunk_left > in_len - in_pos)
			chunk_left = in_len - in_pos;
		chunks_sent++;
	}
	while (tr.open) {
		if (chunk_left == 0 && !(send_fin && in_pos == in_len))
			return; /* EAGAIN */
		size_t cap = 0;
		char *buf = tr.t.engine_ops->lend(tr.t.engine, &cap);
		if (!buf || cap == 0) {
			tr.read_paused = true;
			return;
		}
		if (chunk_left == 0) {
			tr.t.engine_ops->received(tr.t.engine, 0);
			return;
		}
		size_t n = cap < chunk_left ? cap : chunk_left;
		memcpy(buf, in + in_pos, n);
		in_pos += n;
		chunk_left -= n;
		tr.t.engine_ops->received(tr.t.engine, n);
		if (n < cap)
			return;
	}
}

static void advance_clock(uint64_t ms)
{
	core.loop.clock.now_ms += ms;
	ig_timers_run(&core.loop.timers, core.loop.clock.now_ms);
	ig_loop_run_deferred(&core.loop); /* what ig_loop_run does after timers */
}

/* Moves time to the next timer that is due. False if none is armed. */
static bool advance_to_next_timer(void)
{
	int wait = ig_timers_wait_ms(&core.loop.timers, core.loop.clock.now_ms);
	if (wait < 0)
		return false;
	advance_clock(wait > 0 ? (uint64_t)wait : IG_TICK_MS);
	return true;
}

/* Something other than new bytes that lets the connection move on: the
 * client reads (writable), or time passes. */
static bool make_progress(void)
{
	if (tr.open && tr.owed_writable && !hold_reads()) {
		tr.owed_writable = false;
		tr.t.engine_ops->writable(tr.t.engine);
		return true;
	}
	return advance_to_next_timer();
}

static void between_events(void)
{
	if ((ctl[0] & 0x20) && chunks_sent >= (ctl[3] & 15u) + 1 && !core.draining) {
		/* What on_core_wake does on SIGTERM. */
		core.draining = true;
		ig_http_conn_drain(&core);
	}
	if ((ctl[0] & 0x40) && (ctl[3] >> 4))
		advance_clock((uint64_t)(ctl[3] >> 4) * 8);
	if (tr.open && tr.owed_writable && !hold_reads()) {
		tr.owed_writable = false;
		tr.t.engine_ops->writable(tr.t.engine);
	}
}

static void drive(void)
{
	size_t steps = 0, max_steps = MAX_STEPS + in_len;
	while (tr.open && (in_pos < in_len || chunk_left)) {
		if (++steps > max_steps)
			abort(); /* the connection neither reads nor ends */
		if (!tr.read_paused)
			client_read_event();
		else if (!make_progress())
			break; /* nothing will ever resume reading: the rest is unread */
		ig_loop_run_deferred(&core.loop); /* after each event, as ig_loop_run */
		if (tr.open)
			between_events();
	}

	tr.final = true;
	switch (end_mode()) {
	case 0:
		send_fin = true;
		if (tr.open && !tr.read_paused)
			client_read_event();
		break;
	case 1:
		break; /* the client stays silent: idle, head or body timeouts */
	case 2:
		if (tr.open) {
			tr.open = false;
			tr.t.engine_ops->closed(tr.t.engine); /* a reset */
		}
		break;
	case 3:
		ig_http_conn_force_close_all(&core); /* the grace period is over */
		break;
	}
	ig_loop_run_deferred(&core.loop);
	while (tr.open) {
		if (++steps > max_steps)
			abort();
		if (!tr.read_paused && (in_pos < in_len || chunk_left || send_fin))
			client_read_event();
		ig_loop_run_deferred(&core.loop);
		if (tr.open && !make_progress()) {
			fprintf(stderr, "the connection has no timer and does not close\n");
			abort();
		}
	}
	/* Pending work whose client left still finishes (and frees itself). */
	while (advance_to_next_timer())
		if (++steps > max_steps)
			abort();
}

/* ---- checking the output ---- */

static struct ig_pool json_blocks;

static void fail(const char *what, size_t at)
{
	fprintf(stderr, "fuzz_http: %s at output byte %zu\n--- output (%zu bytes) ---\n%.*s\n---\n", what, at,
		out_len, (int)(out_len < 4096 ? out_len : 4096), out);
	abort();
}

static bool is_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool name_is(const char *p, size_t n, const char *name)
{
	return n == strlen(name) && strncasecmp(p, name, n) == 0;
}

static const char *find_crlf(const char *p, const char *end)
{
	for (; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n')
			return p;
	return NULL;
}

static void check_json(const char *body, size_t len, size_t at)
{
	ig_arena arena;
	ig_arena_init(&arena, &json_blocks, 64u << 20);
	ig_json_reader r;
	ig_jr_init(&r, body, len, &arena, 512);
	bool ok = ig_jr_value(&r) && ig_jr_finish(&r);
	if (!ok) {
		fprintf(stderr, "fuzz_http: JSON error \"%s\" at body byte %zu\n", r.error ? r.error : "?",
			r.error_offset);
		fail("a JSON body does not parse", at);
	}
	ig_arena_reset(&arena);
}

static bool starts(const char *p, size_t n, const char *lit)
{
	return n >= strlen(lit) && memcmp(p, lit, strlen(lit)) == 0;
}

/* What a body must be, given the request it answers. */
static void check_semantics(const struct record *r, int status, const char *body, size_t len, size_t at)
{
	if (r && r->head)
		return;
	bool delayed = status == 200 && starts(body, len, "{\"delayed_ms\":");
	if (delayed && (!r || r->kind != R_DELAY))
		fail("a /delay answer in another request's place", at);
	if (!r)
		return;
	if (r->kind == R_HEALTH && status == 200 && !(len == 15 && memcmp(body, "{\"status\":\"ok\"}", 15) == 0))
		fail("GET /health answered something else", at);
	if (r->kind == R_DELAY && status == 200) {
		if (!delayed)
			fail("GET /delay answered another body", at);
		if (r->delay_ms >= 0) {
			char want[40];
			int n = snprintf(want, sizeof want, "{\"delayed_ms\":%lld}", (long long)r->delay_ms);
			if ((size_t)n != len || memcmp(body, want, len) != 0)
				fail("GET /delay answered another delay", at);
		}
	}
	if (status == 500 && memmem(body, len, "does not match its schema", 25))
		fail("a response broke its schema (IG_CHECK_RESPONSES)", at);
}

/* Splits the output into responses: each "HTTP/1.1 NNN Reason", header
 * fields, a blank line and exactly Content-Length bytes of body; nothing
 * after one that says Connection: close. Only a cut stream may end inside
 * a response. */
static void check_output(bool complete)
{
	const char *p = out, *end = out + out_len;
	size_t answered = 0, finals = 0;
	bool closed = false;
	while (p < end) {
		size_t at = (size_t)(p - out);
		if (closed)
			fail("bytes after a Connection: close response", at);
		const char *head_end = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (!head_end) {
			if (!tr.cut && !starts(p, (size_t)(end - p), "HTTP/1.1 "))
				fail("not a response", at);
			if (!tr.cut)
				fail("an unfinished response head", at);
			return;
		}
		head_end += 2; /* the CRLF of the last line */
		const char *eol = find_crlf(p, head_end + 2);
		if (!starts(p, (size_t)(eol - p), "HTTP/1.1 ") || eol - p < 14 || p[12] != ' ')
			fail("a bad status line", at);
		int status = 0;
		for (int i = 9; i < 12; i++) {
			if (p[i] < '0' || p[i] > '9')
				fail("a bad status code", at);
			status = status * 10 + (p[i] - '0');
		}
		if (status < 100 || status > 599)
			fail("a status out of range", at);
		for (const char *q = p + 13; q < eol; q++)
			if (*q < ' ' || *q > '~')
				fail("a bad reason phrase", at);
		int lengths = 0;
		uint64_t length = 0;
		bool json = false;
		for (const char *line = eol + 2; line < head_end; line = eol + 2) {
			eol = find_crlf(line, head_end + 2);
			const char *colon = memchr(line, ':', (size_t)(eol - line));
			if (!colon || colon == line)
				fail("a header line without a name", (size_t)(line - out));
			for (const char *q = line; q < colon; q++)
				if (!is_tchar(*q))
					fail("a bad header name", (size_t)(line - out));
			for (const char *q = colon + 1; q < eol; q++)
				if (((unsigned char)*q < ' ' && *q != '\t') || *q == 0x7f)
					fail("a control byte in a header value", (size_t)(q - out));
			const char *v = colon + 1;
			while (v < eol && *v == ' ')
				v++;
			size_t vlen = (size_t)(eol - v), nlen = (size_t)(colon - line);
			if (name_is(line, nlen, "content-length")) {
				lengths++;
				length = 0;
				if (vlen == 0 || vlen > 15)
					fail("a bad Content-Length", (size_t)(line - out));
				for (size_t i = 0; i < vlen; i++) {
					if (v[i] < '0' || v[i] > '9')
						fail("a bad Content-Length", (size_t)(line - out));
					length = length * 10 + (uint64_t)(v[i] - '0');
				}
			} else if (name_is(line, nlen, "content-type")) {
				json = (vlen >= 16 && strncasecmp(v, "application/json", 16) == 0) ||
				       (vlen >= 24 && strncasecmp(v, "application/problem+json", 24) == 0);
			} else if (name_is(line, nlen, "connection") && vlen == 5 && strncasecmp(v, "close", 5) == 0) {
				closed = true;
			} else if (name_is(line, nlen, "transfer-encoding")) {
				fail("a Transfer-Encoding in a response", (size_t)(line - out));
			}
		}
		p = head_end + 2;
		bool bodiless = status < 200 || status == 204 || status == 304;
		if (bodiless ? lengths != 0 : lengths != 1)
			fail(bodiless ? "a Content-Length on a bodiless status" : "not exactly one Content-Length", at);
		if (status >= 100 && status < 200) {
			if (status != 100 || closed)
				fail("an odd interim response", at);
			continue;
		}
		finals++;
		const struct record *r = answered < nrecords ? &records[answered] : NULL;
		answered++;
		size_t body_len = (r && r->head) || bodiless ? 0 : (size_t)length;
		if ((size_t)(end - p) < body_len) {
			if (!tr.cut)
				fail("a body shorter than its Content-Length", at);
			return;
		}
		if (json && body_len)
			check_json(p, body_len, at);
		if (!records_overflow)
			check_semantics(r, status, p, body_len, at);
		p += body_len;
	}
	/* Each routed request is answered once, and at most one error for the
	   connection follows. */
	if (!records_overflow && finals > nrecords + 1)
		fail("more responses than requests", (size_t)(p - out));
	if (complete && !records_overflow && finals < nrecords)
		fail("a request without a response", (size_t)(p - out));
}

/* ---- the target ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ig_log_threshold = getenv("FUZZ_HTTP_LOG") ? IG_LOG_DEBUG : -1;
	print_output = getenv("FUZZ_HTTP_PRINT") != NULL;
	fuzz_app = *harness_app;
	fuzz_app.route = fuzz_route;

	harness_config_defaults(&config);
	config.port = 0;
	config.max_conns = 4;
	config.max_request_line = 1024;
	config.max_header_bytes = 4096;
	config.max_headers = 32;
	config.max_body = 64 * 1024;
	config.max_output = 64 * 1024;
	harness_core_init(&core, &config, &fuzz_app);
	no_network = harness_mock_network(&core); /* for the process's life */
	out = malloc(OUT_CAP);
	if (!out)
		abort();
	ig_pool_init(&json_blocks, 16384, 16, 1u << 16);
	return 0;
}

static void check_nothing_left(void)
{
	const struct { const char *name; size_t n; } held[] = {
		{ "connections", core.conns.in_use }, { "exchanges", core.ctxs.in_use },
		{ "read buffers", core.rbufs.in_use }, { "blocks", core.blocks.in_use },
		{ "timers", core.loop.timers.armed }, { "live connections", core.count },
		{ "deferred releases", core.loop.after_batch != NULL },
	};
	for (size_t i = 0; i < IG_COUNTOF(held); i++) {
		if (held[i].n) {
			fprintf(stderr, "fuzz_http: %zu %s still held after the connection closed\n", held[i].n,
				held[i].name);
			abort();
		}
	}
	if (core.live)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < sizeof ctl)
		return -1; /* not an input: keep it out of the corpus */
	memcpy(ctl, data, sizeof ctl);
	in = data + sizeof ctl;
	in_len = size - sizeof ctl;
	in_pos = chunk_left = 0;
	chunks_sent = 0;
	send_fin = false;
	out_len = 0;
	nrecords = 0;
	records_overflow = false;
	harness_drained = false;
	uint64_t dropped = core.dropped;

	/* The same start for every input, so that a crash reproduces. */
	core.loop.clock.now_ms = BASE_MS;
	ig_timers_init(&core.loop.timers, BASE_MS);
	core.draining = false;

	tr = (struct mem_transport){ .t = { .ops = &mem_ops, .loop = &core.loop }, .open = true };
	if (!ig_http_conn_accept(&core, &tr.t))
		abort();
	drive();
	check_nothing_left();
	if ((ctl[0] & 0x20) && core.draining && !harness_drained)
		abort(); /* a drain that never finished */

	if (print_output)
		fprintf(stderr, "--- %zu requests routed, %zu bytes out ---\n%.*s\n", nrecords, out_len, (int)out_len, out);
	/* A stream that was neither reset nor cut and dropped nothing carries
	   an answer to every request routed. */
	bool complete = end_mode() != 2 && end_mode() != 3 && !tr.cut && core.dropped == dropped;
	check_output(complete);
	return 0;
}
