/* net/pg's connection and pool (conn.c, pool.c, cancel.c and what they
 * stand on) against a simulated PostgreSQL in this process: a memory
 * stack (net/stack.h's ig_net_stack) hands each connect a transport whose
 * peer is the server below, which speaks startup, the extended and simple
 * query protocols and CancelRequest. The loop is driven by hand: its
 * deferred work, and its timers at a clock the test moves. */
#include "kernel/runtime/loop.h"
#include "net/pg/internal.h"
#include "net/dns/dns.h"
#include "net/pg/writer.h"
#include "net/stack.h"
#include "net/tls/tls.h"
#include "tests/unit/check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* ---- what net/pg links against above or beside it, unused here ----
 * The address is numeric (no resolver), sslmode is disable (no TLS) and
 * no request runs (no exchange): each stub fails the test if reached. */
static void unreachable(const char *what)
{
	check_that(false, "a stub is never reached", "%s was called", what);
	exit(1);
}
struct dns_query *ig_dns_resolve(struct dns_resolver *r, const char *host, uint16_t port, dns_done_fn *done, void *arg)
{
	(void)r, (void)host, (void)port, (void)done, (void)arg;
	unreachable("ig_dns_resolve");
	return NULL;
}
struct dns_resolver *ig_dns_resolver_new(struct ig_loop *l) { (void)l; unreachable("ig_dns_resolver_new"); return NULL; }
void ig_dns_cancel(struct dns_query *q) { (void)q; unreachable("ig_dns_cancel"); }
void ig_backend_set_up(int id, bool up) { (void)id, (void)up; unreachable("ig_backend_set_up"); }
struct ig_tls_core *ig_tls_client_core(struct ig_loop *l) { (void)l; unreachable("ig_tls_client_core"); return NULL; }
struct ig_transport *ig_tls_client(struct ig_tls_core *c, struct ig_transport *lower, const struct tls_trust *trust,
				   const char *host)
{
	(void)c, (void)lower, (void)trust, (void)host;
	unreachable("ig_tls_client");
	return NULL;
}
const struct tls_trust *ig_tls_default_trust(const char **err) { (void)err; unreachable("ig_tls_default_trust"); return NULL; }
const char *ig_tls_last_error(const struct ig_tls_core *c) { (void)c; unreachable("ig_tls_last_error"); return NULL; }
struct ig_loop *ig_ctx_loop(ig_ctx *ctx) { (void)ctx; unreachable("ig_ctx_loop"); return NULL; }
ig_arena *ig_ctx_arena(ig_ctx *ctx) { (void)ctx; unreachable("ig_ctx_arena"); return NULL; }
void ig_respond_problem(ig_ctx *ctx, int status, const char *detail)
{
	(void)ctx, (void)status, (void)detail;
	unreachable("ig_respond_problem");
}
void ig_http_log_exchange(const void *exchange, struct ig_logline *line)
{
	(void)exchange, (void)line;
	unreachable("ig_http_log_exchange");
}
bool ig_http_error_line_begin(struct ig_ctx *x, struct ig_logline *l, const char *msg, int status, const char *cause)
{
	(void)x, (void)l, (void)msg, (void)status, (void)cause;
	unreachable("ig_http_error_line_begin");
	return false;
}
void ig_http_error_mark_logged(struct ig_ctx *x)
{
	(void)x;
	unreachable("ig_http_error_mark_logged");
}

/* pg_settings.c's, which parses the environment: set by each case. */
struct ig_pg_settings_values ig_pg_settings_values;
bool ig_pg_configured_flag;
struct ig_pg_global *ig_pg_global;

/* ---- the simulated server ---- */

#define SRV_BUF 65536
#define MAX_STREAMS 64
#define SRV_PID 4242u

enum chunking { WHOLE, ONE_BYTE, RANDOM };
static enum chunking chunking;
static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

struct stream {
	struct ig_transport t;   /* the client's end */
	struct ig_deferred step; /* the connect's writable, then deliveries */
	bool connected, client_closed;
	char in[SRV_BUF];        /* what the client wrote */
	size_t in_len, in_pos;
	char out_buf[SRV_BUF];   /* the server's answers */
	struct pg_out out;
	size_t out_pos;          /* handed to the client so far */
	/* the session */
	bool started, skipping, stalled;
	bool hangup;             /* ends the stream once out is delivered */
	uint32_t key;
	char stmt_name[8][16], stmt_sql[8][64];
	int nstmts;
	char portal_sql[64], param[64];
};

/* Every stream of the run (kept: a closed one is still the server's),
 * the current case's from first on. */
static struct stream *streams[MAX_STREAMS];
static int nstreams, first;
#define CASE_STREAMS (nstreams - first)
#define STREAM(i) streams[first + (i)]
static struct ig_loop *loop;

/* What the server saw. */
static int cancels_seen, cancels_matched, executes, syncs, listens;

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static void deliver(struct ig_deferred *d);
static void srv_process(struct stream *s);

static void send_later(struct stream *s)
{
	ig_loop_defer(loop, &s->step);
}

static void srv_ready(struct stream *s)
{
	ig_pg_out_begin(&s->out, 'Z');
	ig_pg_out_u8(&s->out, 'I');
	ig_pg_out_end(&s->out);
}

static void srv_error(struct stream *s, const char *code, const char *message)
{
	ig_pg_out_begin(&s->out, 'E');
	ig_pg_out_u8(&s->out, 'S');
	ig_pg_out_cstr(&s->out, "ERROR");
	ig_pg_out_u8(&s->out, 'V');
	ig_pg_out_cstr(&s->out, "ERROR");
	ig_pg_out_u8(&s->out, 'C');
	ig_pg_out_cstr(&s->out, code);
	ig_pg_out_u8(&s->out, 'M');
	ig_pg_out_cstr(&s->out, message);
	ig_pg_out_u8(&s->out, 0);
	ig_pg_out_end(&s->out);
}

static void srv_empty(struct stream *s, char type)
{
	ig_pg_out_begin(&s->out, type);
	ig_pg_out_end(&s->out);
}

/* One text column named name. */
static void srv_row_description(struct stream *s, const char *name)
{
	ig_pg_out_begin(&s->out, 'T');
	ig_pg_out_u16(&s->out, 1);
	ig_pg_out_cstr(&s->out, name);
	ig_pg_out_u32(&s->out, 0);
	ig_pg_out_u16(&s->out, 0);
	ig_pg_out_u32(&s->out, IG_PG_TEXT);
	ig_pg_out_u16(&s->out, 0xffff);
	ig_pg_out_u32(&s->out, 0xffffffff);
	ig_pg_out_u16(&s->out, 0);
	ig_pg_out_end(&s->out);
}

static void srv_data_row(struct stream *s, const char *v)
{
	ig_pg_out_begin(&s->out, 'D');
	ig_pg_out_u16(&s->out, 1);
	ig_pg_out_u32(&s->out, (uint32_t)strlen(v));
	ig_pg_out_bytes(&s->out, v, strlen(v));
	ig_pg_out_end(&s->out);
}

static void srv_complete(struct stream *s, const char *tag)
{
	ig_pg_out_begin(&s->out, 'C');
	ig_pg_out_cstr(&s->out, tag);
	ig_pg_out_end(&s->out);
}

static const char *stmt_sql(struct stream *s, const char *name)
{
	for (int i = 0; i < s->nstmts; i++)
		if (!strcmp(s->stmt_name[i], name))
			return s->stmt_sql[i];
	return "";
}

/* The SQL the server knows: "echo" answers its text parameter as one
 * row, "fail" fails (22012), "slow" runs until a CancelRequest stops it,
 * "die" ends the connection (a crashed backend). */
static void srv_execute(struct stream *s)
{
	executes++;
	if (!strcmp(s->portal_sql, "echo")) {
		srv_data_row(s, s->param);
		srv_complete(s, "SELECT 1");
	} else if (!strcmp(s->portal_sql, "fail")) {
		srv_error(s, "22012", "division by zero");
		s->skipping = true;
	} else if (!strcmp(s->portal_sql, "slow")) {
		s->stalled = true;
	} else if (!strcmp(s->portal_sql, "die")) {
		s->stalled = s->hangup = true;
	} else {
		srv_error(s, "42601", "syntax error");
		s->skipping = true;
	}
}

static void srv_message(struct stream *s, char type, const char *body, uint32_t len)
{
	const char *end = body + len;
	switch (type) {
	case 'P': { /* name, sql, parameter types */
		if (s->skipping)
			return;
		if (s->nstmts < 8) {
			snprintf(s->stmt_name[s->nstmts], sizeof s->stmt_name[0], "%s", body);
			snprintf(s->stmt_sql[s->nstmts], sizeof s->stmt_sql[0], "%s", body + strlen(body) + 1);
			s->nstmts++;
		}
		srv_empty(s, '1');
		return;
	}
	case 'B': { /* portal, statement, formats, parameters, result formats */
		if (s->skipping)
			return;
		const char *p = body + strlen(body) + 1;
		snprintf(s->portal_sql, sizeof s->portal_sql, "%s", stmt_sql(s, p));
		p += strlen(p) + 1;
		uint16_t nformats = (uint16_t)((unsigned char)p[0] << 8 | (unsigned char)p[1]);
		p += 2 + 2 * nformats;
		uint16_t nparams = (uint16_t)((unsigned char)p[0] << 8 | (unsigned char)p[1]);
		p += 2;
		s->param[0] = 0;
		if (nparams && p + 4 <= end) {
			uint32_t n = be32(p);
			if (n != 0xffffffff && n < sizeof s->param && p + 4 + n <= end) {
				memcpy(s->param, p + 4, n);
				s->param[n] = 0;
			}
		}
		srv_empty(s, '2');
		return;
	}
	case 'D':
		if (!s->skipping)
			srv_row_description(s, "v");
		return;
	case 'E':
		if (!s->skipping)
			srv_execute(s);
		return;
	case 'S':
		syncs++;
		s->skipping = false;
		srv_ready(s);
		return;
	case 'Q':
		if (!strncmp(body, "LISTEN \"", 8)) {
			/* Answered, then at once a NOTIFY on that channel. */
			listens++;
			srv_complete(s, "LISTEN");
			srv_ready(s);
			ig_pg_out_begin(&s->out, 'A');
			ig_pg_out_u32(&s->out, SRV_PID);
			ig_pg_out_bytes(&s->out, body + 8, strlen(body + 8) - 1); /* unquoted */
			ig_pg_out_u8(&s->out, 0);
			ig_pg_out_cstr(&s->out, "hello");
			ig_pg_out_end(&s->out);
			return;
		}
		if (!strcmp(body, "SHOW max_connections")) {
			srv_row_description(s, "max_connections");
			srv_data_row(s, "100");
			srv_complete(s, "SHOW");
		} else {
			srv_complete(s, body);
		}
		srv_ready(s);
		return;
	default: /* Terminate, Flush, Close */
		return;
	}
}

static void srv_cancel(uint32_t pid, uint32_t key)
{
	cancels_seen++;
	for (int i = first; i < nstreams; i++) {
		struct stream *s = streams[i];
		if (pid == SRV_PID && s->key == key && s->stalled) {
			cancels_matched++;
			s->stalled = false;
			srv_error(s, "57014", "canceling statement due to user request");
			s->skipping = true;
			srv_process(s); /* its Sync, waiting behind the Execute */
		}
	}
}

/* Reads what the client wrote, whole messages only (they may come in
 * pieces), answering each into out. */
static void srv_process(struct stream *s)
{
	while (!s->stalled) {
		const char *p = s->in + s->in_pos;
		size_t avail = s->in_len - s->in_pos;
		if (!s->started) {
			if (avail < 8 || avail < be32(p))
				break;
			uint32_t len = be32(p), code = be32(p + 4);
			s->in_pos += len;
			s->started = true;
			if (code == 80877102u && len == 16) { /* CancelRequest */
				srv_cancel(be32(p + 8), be32(p + 12));
				s->hangup = true; /* PostgreSQL closes once it has signalled */
				send_later(s);
				continue;
			}
			s->key = 1000u + (uint32_t)nstreams;
			ig_pg_out_begin(&s->out, 'R');
			ig_pg_out_u32(&s->out, 0); /* AuthenticationOk */
			ig_pg_out_end(&s->out);
			ig_pg_out_begin(&s->out, 'K');
			ig_pg_out_u32(&s->out, SRV_PID);
			ig_pg_out_u32(&s->out, s->key);
			ig_pg_out_end(&s->out);
			ig_pg_out_begin(&s->out, 'S');
			ig_pg_out_cstr(&s->out, "server_version");
			ig_pg_out_cstr(&s->out, "17.0");
			ig_pg_out_end(&s->out);
			srv_ready(s);
			continue;
		}
		if (avail < 5 || avail < 1 + (size_t)be32(p + 1))
			break;
		uint32_t len = be32(p + 1);
		s->in_pos += 1 + len;
		srv_message(s, p[0], p + 5, len - 4);
	}
	send_later(s);
}

/* ---- the memory transport ---- */

static ssize_t mem_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	struct stream *s = (struct stream *)t;
	if (s->client_closed)
		return -1;
	ssize_t total = 0;
	for (int i = 0; i < iovcnt; i++) {
		if (s->in_len + iov[i].iov_len > sizeof s->in) {
			check_that(false, "the simulated server's input fits", "%zu bytes", s->in_len + iov[i].iov_len);
			exit(1);
		}
		memcpy(s->in + s->in_len, iov[i].iov_base, iov[i].iov_len);
		s->in_len += iov[i].iov_len;
		total += (ssize_t)iov[i].iov_len;
	}
	srv_process(s);
	return total;
}

static void mem_resume_read(struct ig_transport *t)
{
	send_later((struct stream *)t);
}

static void mem_close(struct ig_transport *t, int graceful)
{
	(void)graceful;
	((struct stream *)t)->client_closed = true;
}

static const struct ig_transport_ops mem_ops = {
	.writev = mem_writev,
	.resume_read = mem_resume_read,
	.close = mem_close,
};

/* The connect's writable first, then the server's bytes in pieces of the
 * case's chunking, each piece a separate received. */
static void deliver(struct ig_deferred *d)
{
	struct stream *s = (struct stream *)((char *)d - offsetof(struct stream, step));
	if (s->client_closed)
		return;
	if (!s->connected) {
		s->connected = true;
		s->t.engine_ops->writable(s->t.engine);
	}
	while (!s->client_closed && s->out_pos < s->out.len) {
		size_t left = s->out.len - s->out_pos;
		size_t piece = chunking == WHOLE ? left : chunking == ONE_BYTE ? 1 : 1 + rng() % 23;
		size_t cap = 0;
		char *to = s->t.engine_ops->lend(s->t.engine, &cap);
		if (!to || !cap)
			return; /* paused: resume_read comes */
		size_t n = piece < left ? piece : left;
		n = n < cap ? n : cap;
		memcpy(to, s->out_buf + s->out_pos, n);
		s->out_pos += n;
		s->t.engine_ops->received(s->t.engine, n);
	}
	if (s->hangup && !s->client_closed && s->out_pos == s->out.len) {
		s->hangup = false;
		s->t.engine_ops->received(s->t.engine, 0); /* EOF: the client closes */
	}
}

static struct ig_transport *mem_connect(struct sock_core *sc, struct ig_loop *l, const struct sockaddr *addr,
				       socklen_t len)
{
	(void)sc;
	(void)addr, (void)len;
	if (nstreams == MAX_STREAMS)
		return NULL;
	struct stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->t.ops = &mem_ops;
	s->t.loop = l;
	s->step.fn = deliver;
	pg_out_init(&s->out, s->out_buf, sizeof s->out_buf);
	streams[nstreams++] = s;
	send_later(s);
	return &s->t;
}

static int mem_stream_error(const struct ig_transport *t)
{
	(void)t;
	return 0;
}

static const struct ig_net_stack mem_stack = {
	.name = "memory",
	.connect = mem_connect,
	.stream_error = mem_stream_error,
};
const struct ig_net_stack *ig_net_stack = &mem_stack;

/* ---- the client's side ---- */

struct answer {
	int calls;
	bool ok;
	char value[64];
	enum ig_pg_error_kind kind;
	char sqlstate[6];
	char message[64];
};

static void on_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct answer *a = arg;
	a->calls++;
	a->ok = res != NULL;
	if (res && res->rows == 1 && res->cols == 1)
		snprintf(a->value, sizeof a->value, "%.*s", (int)ig_pg_at(res, 0, 0)->s.len, ig_pg_at(res, 0, 0)->s.ptr);
	if (err) {
		a->kind = err->kind;
		memcpy(a->sqlstate, err->sqlstate, sizeof a->sqlstate);
		snprintf(a->message, sizeof a->message, "%.*s", (int)err->message.len, err->message.ptr);
	}
}

static struct ig_pool arena_blocks;
static ig_arena arena;

/* A fresh loop (so a fresh core, pool and connections) and server. */
static struct ig_pg_pool *start_case(enum chunking how, uint32_t seed, uint32_t pool_size, uint32_t pipelining,
				     uint32_t query_timeout_ms)
{
	chunking = how;
	rng_state = seed;
	first = nstreams;
	cancels_seen = cancels_matched = executes = syncs = listens = 0;
	ig_pg_settings_values = (struct ig_pg_settings_values){
		.database_url = "",
		.pool_size = pool_size,
		.pipelining = pipelining,
		.max_queued = 64,
		.acquire_timeout_ms = 1000,
		.connect_timeout_ms = 5000,
		.query_timeout_ms = query_timeout_ms,
		.max_message_bytes = 1u << 20,
	};
	/* Each case's loop stays for the process (its core keeps it). */
	loop = calloc(1, sizeof *loop);
	if (!loop || ig_loop_init(loop, 0) != 0) {
		check_that(false, "a loop", NULL);
		exit(1);
	}
	ig_arena_reset(&arena);
	return ig_pg_core_pool(loop);
}

static void run(void)
{
	ig_loop_run_deferred(loop);
}

static void advance(uint32_t ms)
{
	loop->clock.now_ms += ms;
	ig_timers_run(&loop->timers, loop->clock.now_ms);
	run();
}

static const ig_pg_value *text(const char *s)
{
	static ig_pg_value v[4];
	static int i;
	v[i = (i + 1) % 4] = ig_pg_text((ig_str){ s, strlen(s) });
	return &v[i];
}

typedef void start_fn(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		      size_t nparams, ig_pg_done *done, void *arg);

/* Three queries in one batch: the second's answer is an ErrorResponse. */
static void pipeline_case(const char *name, start_fn *start, enum chunking how, uint32_t seed, bool fail_second)
{
	struct ig_pg_pool *pool = start_case(how, seed, 1, 256, 0);
	struct answer a[3] = { 0 };
	start(pool, &arena, "echo", text("first"), 1, on_done, &a[0]);
	start(pool, &arena, fail_second ? "fail" : "echo", text("second"), 1, on_done, &a[1]);
	start(pool, &arena, "echo", text("third"), 1, on_done, &a[2]);
	char what[160];
	snprintf(what, sizeof what, "%s: no done runs inside the call that started it", name);
	CHECK_INT(a[0].calls + a[1].calls + a[2].calls, 0, what);
	run();
	snprintf(what, sizeof what, "%s: the first answers once, with its row", name);
	check_that(a[0].calls == 1 && a[0].ok && !strcmp(a[0].value, "first"), what, "calls %d ok %d value \"%s\"",
		   a[0].calls, a[0].ok, a[0].value);
	if (fail_second) {
		snprintf(what, sizeof what, "%s: the second gets its ErrorResponse", name);
		check_that(a[1].calls == 1 && !a[1].ok && a[1].kind == IG_PG_SERVER && !strcmp(a[1].sqlstate, "22012") &&
				   !strcmp(a[1].message, "division by zero"),
			   what, "calls %d ok %d kind %d sqlstate %s message \"%s\"", a[1].calls, a[1].ok, a[1].kind,
			   a[1].sqlstate, a[1].message);
	} else {
		snprintf(what, sizeof what, "%s: the second answers once, with its row", name);
		check_that(a[1].calls == 1 && a[1].ok && !strcmp(a[1].value, "second"), what,
			   "calls %d ok %d value \"%s\"", a[1].calls, a[1].ok, a[1].value);
	}
	snprintf(what, sizeof what, "%s: the third answers once, with its row", name);
	check_that(a[2].calls == 1 && a[2].ok && !strcmp(a[2].value, "third"), what, "calls %d ok %d value \"%s\"",
		   a[2].calls, a[2].ok, a[2].value);
	snprintf(what, sizeof what, "%s: one connection carried them", name);
	CHECK_INT(CASE_STREAMS, 1, what);
}

/* Partial segments: the same pipeline, the server's answers (the
 * startup's included) handed over whole, one byte at a time, and in
 * pieces of random sizes. */
static void test_partial_segments(void)
{
	pipeline_case("whole", ig_pg_pool_query, WHOLE, 1, false);
	pipeline_case("one byte at a time", ig_pg_pool_query, ONE_BYTE, 1, false);
	for (uint32_t seed = 1; seed <= 8; seed++) {
		char name[64];
		snprintf(name, sizeof name, "random pieces (seed %u)", seed);
		pipeline_case(name, ig_pg_pool_query, RANDOM, seed * 2654435761u, false);
	}
}

/* An ErrorResponse for the 2nd of 3 pipelined queries: each has its own
 * Sync, so the others run; reads share one Sync, so the server skips the
 * third, which net/pg sends again alone. */
static void test_error_mid_pipeline(void)
{
	pipeline_case("error mid-pipeline", ig_pg_pool_query, WHOLE, 1, true);
	pipeline_case("error mid-pipeline, one byte at a time", ig_pg_pool_query, ONE_BYTE, 1, true);
	pipeline_case("error mid-pipeline of reads", ig_pg_pool_read, WHOLE, 1, true);
	/* One Sync for the three, then the third again with its own. */
	CHECK_INT(syncs, 2, "reads: the three shared one Sync, the skipped third went again alone");
	CHECK_INT(executes, 3, "reads: each ran once");
	pipeline_case("error mid-pipeline of reads, random pieces", ig_pg_pool_read, RANDOM, 77, true);
}

/* A query over INGOT_PG_QUERY_TIMEOUT_MS fails with IG_PG_TIMEOUT and a
 * CancelRequest, on a connection of its own, names the connection's
 * backend; the server's 57014 for it is dropped and the connection goes
 * on. */
static void test_cancel(void)
{
	struct ig_pg_pool *pool = start_case(WHOLE, 1, 1, 256, 100);
	struct answer slow = { 0 }, after = { 0 };
	ig_pg_pool_query(pool, &arena, "slow", NULL, 0, on_done, &slow);
	run();
	CHECK_INT(slow.calls, 0, "cancel: the slow query is still running");
	CHECK_INT(cancels_seen, 0, "cancel: no CancelRequest before the timeout");
	advance(50);
	CHECK_INT(slow.calls, 0, "cancel: not before its timeout");
	advance(60);
	check_that(slow.calls == 1 && !slow.ok && slow.kind == IG_PG_TIMEOUT, "cancel: the query fails with a timeout",
		   "calls %d ok %d kind %d", slow.calls, slow.ok, slow.kind);
	CHECK_INT(cancels_seen, 1, "cancel: the server sees one CancelRequest");
	CHECK_INT(cancels_matched, 1, "cancel: it names the running query's backend (pid and key)");
	CHECK_INT(CASE_STREAMS, 2, "cancel: on a connection of its own");
	run();
	CHECK(STREAM(1)->client_closed, "cancel: its connection ends once the server closes it");
	ig_pg_pool_query(pool, &arena, "echo", text("after"), 1, on_done, &after);
	run();
	check_that(after.calls == 1 && after.ok && !strcmp(after.value, "after"),
		   "cancel: the connection answers the next query", "calls %d ok %d value \"%s\"", after.calls,
		   after.ok, after.value);
	CHECK_INT(slow.calls, 1, "cancel: the cancelled query's own error is not delivered again");
	CHECK_INT(CASE_STREAMS, 2, "cancel: the same connection took it");
}

/* With one connection taking one query at a time, queries wait in the
 * pool's FIFO and run in the order they came. */
static int order[3], ordered;
static void on_ordered(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	(void)res, (void)err;
	order[ordered++] = (int)(intptr_t)arg;
}

static void test_pool_waits_in_order(void)
{
	struct ig_pg_pool *pool = start_case(RANDOM, 5, 1, 1, 0);
	for (intptr_t i = 0; i < 3; i++)
		ig_pg_pool_query(pool, &arena, "echo", text("x"), 1, on_ordered, (void *)i);
	run();
	CHECK_INT(ordered, 3, "pool: every waiting query ran");
	check_that(order[0] == 0 && order[1] == 1 && order[2] == 2, "pool: in the order they came",
		   "%d %d %d", order[0], order[1], order[2]);
}

/* The server ends the connection with two queries in flight: both fail
 * as lost; the pool reconnects after its backoff, and a query that came
 * meanwhile waits for it and then runs. */
static void test_connection_lost(void)
{
	struct ig_pg_pool *pool = start_case(WHOLE, 1, 1, 256, 0);
	struct answer die = { 0 }, behind = { 0 }, waited = { 0 };
	ig_pg_pool_query(pool, &arena, "die", NULL, 0, on_done, &die);
	ig_pg_pool_query(pool, &arena, "echo", text("behind"), 1, on_done, &behind);
	run();
	check_that(die.calls == 1 && !die.ok && die.kind == IG_PG_CONNECTION_LOST, "lost: the query in flight fails as lost",
		   "calls %d ok %d kind %d", die.calls, die.ok, die.kind);
	check_that(behind.calls == 1 && !behind.ok && behind.kind == IG_PG_CONNECTION_LOST,
		   "lost: so does the one pipelined behind it", "calls %d ok %d kind %d", behind.calls, behind.ok,
		   behind.kind);
	CHECK(STREAM(0)->client_closed, "lost: the client closed its end");
	ig_pg_pool_query(pool, &arena, "echo", text("waited"), 1, on_done, &waited);
	run();
	CHECK_INT(waited.calls, 0, "lost: a query waits while no connection is up");
	CHECK_INT(CASE_STREAMS, 1, "lost: no reconnect before the backoff");
	advance(49);
	CHECK_INT(CASE_STREAMS, 1, "lost: no reconnect before the backoff (50 ms)");
	advance(1 + IG_TICK_MS); /* the wheel fires within a tick after */
	CHECK_INT(CASE_STREAMS, 2, "lost: the pool reconnects after its backoff");
	check_that(waited.calls == 1 && waited.ok && !strcmp(waited.value, "waited"),
		   "lost: the waiting query runs on the new connection", "calls %d ok %d value \"%s\"", waited.calls,
		   waited.ok, waited.value);
}

/* LISTEN: the listener LISTENs when it comes up and hands each NOTIFY to
 * the channel's callback; lost, it is reconnected with the pool's backoff
 * and LISTENs again. */
static int notified;
static char notified_channel[16], notified_payload[16];
static void on_notify(ig_str channel, ig_str payload, void *arg)
{
	(void)arg;
	notified++;
	snprintf(notified_channel, sizeof notified_channel, "%.*s", (int)channel.len, channel.ptr);
	snprintf(notified_payload, sizeof notified_payload, "%.*s", (int)payload.len, payload.ptr);
}

static void test_listen(void)
{
	start_case(RANDOM, 9, 1, 256, 0);
	CHECK_INT(ig_pg_listen(loop, "events", on_notify, NULL), 0, "listen: accepted");
	run();
	CHECK_INT(listens, 1, "listen: the server sees LISTEN \"events\"");
	check_that(notified == 1 && !strcmp(notified_channel, "events") && !strcmp(notified_payload, "hello"),
		   "listen: the NOTIFY reaches the callback", "%d \"%s\" \"%s\"", notified, notified_channel,
		   notified_payload);
	struct stream *listener = STREAM(CASE_STREAMS - 1);
	listener->hangup = true;
	send_later(listener);
	run();
	CHECK(listener->client_closed, "listen: the lost listener is closed");
	advance(50 + IG_TICK_MS); /* the pool's backoff */
	CHECK_INT(listens, 2, "listen: reconnected, it LISTENs again");
	CHECK_INT(notified, 2, "listen: and hears the channel again");
}

int main(void)
{
	/* net/pg's log lines (a connection lost) go to stdout by write(2):
	   whole TAP lines keep them apart. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	static struct ig_pg_global global;
	global.ci = (struct pg_conninfo){ .host = "192.0.2.10", .port = 5432, .user = "u", .dbname = "d",
					  .sslmode = PG_SSL_DISABLE };
	struct sockaddr_in *sin = (struct sockaddr_in *)&global.addr;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(5432);
	inet_pton(AF_INET, "192.0.2.10", &sin->sin_addr);
	global.addr_len = sizeof *sin;
	global.cores = 1;
	ig_pg_global = &global;
	ig_pg_configured_flag = true;
	ig_pool_init(&arena_blocks, 65536, 1, 64);
	ig_arena_init(&arena, &arena_blocks, 65536);

	test_partial_segments();
	test_error_mid_pipeline();
	test_cancel();
	test_pool_waits_in_order();
	test_connection_lost();
	test_listen();
	return check_done();
}
