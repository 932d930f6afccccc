/* One PostgreSQL connection on the loop: connect (TCP or a unix socket),
 * SSLRequest and TLS, startup and authentication (trust, cleartext, md5,
 * SCRAM-SHA-256), then queries in a FIFO: each written as its own
 * Parse?/Bind/Describe?/Execute/Sync (Describe until the statement is
 * known, see struct pg_stmt), all of a batch in one write, and
 * answered in order, one ReadyForQuery each. The pool (pool.c) owns it. */
#include "internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "kernel/runtime/log.h"
#include "net/dns/dns.h"
#include "net/stack.h"
#include "net/tls/tls.h"

static const struct ig_stream_ops conn_stream_ops;

static const struct pg_settings_values *cfg(void) { return &pg_settings_values; }

static void conn_flush_deferred(struct ig_deferred *d);
static void on_conn_timer(struct ig_timer *t);

struct pg_conn *pg_conn_new(struct pg_core *c, enum pg_conn_role role)
{
	/* Once per pool slot, for the process's lifetime: a reconnect reuses
	   it, so nothing a callback up the stack holds ever dangles. */
	struct pg_conn *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->rbuf = malloc(PG_RBUF_INITIAL);
	k->obuf = malloc(PG_OUT_INITIAL);
	k->stmt_text = malloc(PG_STMT_TEXT);
	if (!k->rbuf || !k->obuf || !k->stmt_text) {
		free(k->rbuf);
		free(k->obuf);
		free(k->stmt_text);
		free(k);
		return NULL;
	}
	k->core = c;
	k->role = role;
	k->rcap = PG_RBUF_INITIAL;
	pg_out_init(&k->out, k->obuf, PG_OUT_INITIAL);
	k->flush.fn = conn_flush_deferred;
	k->timer.fn = on_conn_timer;
	return k;
}

/* ---- the output buffer ---- */

static bool out_grow(struct pg_conn *k, size_t need)
{
	if (need > ((size_t)1 << 31))
		return false;
	size_t cap = k->out.cap * 2;
	while (cap - k->out.len < need)
		cap *= 2;
	char *b = realloc(k->obuf, cap);
	if (!b)
		return false;
	k->obuf = k->out.buf = b;
	k->out.cap = cap;
	return true;
}

static void schedule_flush(struct pg_conn *k)
{
	ig_loop_defer(k->core->loop, &k->flush);
}

/* ---- statements ---- */

/* SQL texts are hashed and compared on every query: eight bytes a step
 * (musl's memcmp goes byte by byte). */
static uint64_t load_tail(const char *s, size_t n)
{
	uint64_t w = 0;
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)(unsigned char)s[i] << (8 * i);
	return w;
}

static uint64_t sql_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 1099511628211ull;
		h ^= h >> 29;
	}
	h = (h ^ load_tail(s, n)) * 1099511628211ull;
	h ^= h >> 32;
	return h ? h : 1;
}

static bool same_text(const char *a, const char *b, size_t n)
{
	for (; n >= 8; a += 8, b += 8, n -= 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	return load_tail(a, n) == load_tail(b, n);
}

/* "s<number>" into name (12 bytes: "s", up to 10 digits and a NUL). */
static void stmt_name(char name[12], uint32_t number)
{
	name[0] = 's';
	name[1 + ig_fmt_u64(name + 1, number)] = 0;
}

static void stmts_clear(struct pg_conn *k)
{
	for (int i = 0; i < PG_STMT_SLOTS; i++) {
		k->stmts[i].hash = 0;
		k->stmts[i].gen++;
	}
	k->stmt_text_used = 0;
}

static void stmt_drop(struct pg_conn *k, int16_t slot, uint32_t gen)
{
	if (slot >= 0 && k->stmts[slot].gen == gen && k->stmts[slot].hash) {
		k->stmts[slot].hash = 0;
		k->stmts[slot].gen++;
	}
}

/* The cache slot of sql, *fresh when it must be prepared now; -1 when it
 * cannot be cached (too long: then it goes as the unnamed statement). */
static int16_t stmt_lookup(struct pg_conn *k, const char *sql, size_t len, bool *fresh)
{
	uint64_t h = sql_hash(sql, len);
	*fresh = true;
	if (len + 1 > PG_STMT_TEXT / 4)
		return -1;
	int16_t free_slot = -1;
	for (int i = 0; i < PG_STMT_SLOTS; i++) {
		int16_t s = (int16_t)((h + (uint64_t)i) % PG_STMT_SLOTS);
		struct pg_stmt *st = &k->stmts[s];
		if (!st->hash) {
			if (free_slot < 0)
				free_slot = s;
			continue;
		}
		if (st->hash == h && st->len == len && same_text(st->sql, sql, len)) {
			*fresh = false;
			return s;
		}
	}
	if (free_slot < 0 || k->stmt_text_used + len + 1 > PG_STMT_TEXT) {
		/* Full: forget them all (the server's copies stay until the
		   connection ends; new names never collide with them). */
		stmts_clear(k);
		free_slot = (int16_t)(h % PG_STMT_SLOTS);
	}
	struct pg_stmt *st = &k->stmts[free_slot];
	char *copy = k->stmt_text + k->stmt_text_used;
	memcpy(copy, sql, len);
	copy[len] = 0;
	k->stmt_text_used += (uint32_t)len + 1;
	st->hash = h;
	st->sql = copy;
	st->len = (uint32_t)len;
	st->number = k->next_stmt++;
	stmt_name(st->name, st->number);
	st->described = false;
	st->known = false;
	st->ncols = 0;
	return free_slot;
}

/* ---- writing a query ---- */

/* A known statement's columns as q's result columns, in one block of q's
 * arena (the connection's copy may be overwritten while q is in flight):
 * what its RowDescription would have set. */
static void take_columns(struct pg_query *q, const struct pg_stmt *st)
{
	uint16_t n = st->ncols;
	q->cols = n;
	q->rows = q->cap = 0;
	q->values = NULL;
	q->names = NULL;
	if (!n)
		return;
	size_t bytes = (size_t)n * (sizeof(ig_str) + sizeof(uint32_t) + sizeof(int16_t) + 1) + st->names_bytes;
	char *b = ig_arena_alloc(q->arena, bytes);
	if (!b) {
		pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
		return;
	}
	ig_str *names = (ig_str *)b;
	uint32_t *oids = (uint32_t *)(names + n);
	int16_t *formats = (int16_t *)(oids + n);
	char *text = (char *)(formats + n);
	memcpy(oids, st->oids, n * sizeof *oids);
	memcpy(formats, st->formats, n * sizeof *formats);
	const char *from = st->names;
	for (uint16_t i = 0; i < n; i++) {
		size_t len = st->name_lens[i];
		memcpy(text, from, len);
		text[len] = 0;
		names[i] = (ig_str){ len ? text : "", len };
		text += len + 1;
		from += len;
	}
	q->names = names;
	q->oids = oids;
	q->formats = formats;
}

static void encode_extended(struct pg_conn *k, struct pg_query *q)
{
	bool fresh;
	int16_t slot = stmt_lookup(k, q->sql, q->sql_len, &fresh);
	struct pg_stmt *st = slot >= 0 ? &k->stmts[slot] : NULL;
	const char *name = st ? st->name : "";
	q->stmt = slot;
	q->stmt_gen = st ? st->gen : 0;
	q->parsed_here = fresh;
	if (fresh) {
		uint32_t oids[PG_MAX_PARAMS] = { 0 };
		for (uint16_t i = 0; i < q->nparams; i++)
			oids[i] = q->params[i].oid;
		pg_put_parse(&k->out, name, q->sql, q->nparams, oids);
	}
	uint16_t nformats = 0;
	const int16_t *formats = NULL;
	if (st && st->described && st->ncols <= PG_STMT_FORMATS) {
		nformats = st->ncols;
		formats = st->formats;
	}
	pg_put_bind(&k->out, "", name, q->nparams, q->params, nformats, formats);
	if (st && st->known)
		take_columns(q, st);
	else
		pg_put_describe(&k->out, 'P', "");
	pg_put_execute(&k->out, "", 0);
	pg_put_sync(&k->out);
}

static void encode(struct pg_conn *k, struct pg_query *q)
{
	switch (q->kind) {
	case PGQ_EXTENDED: encode_extended(k, q); break;
	case PGQ_SIMPLE: pg_put_query(&k->out, q->sql); break;
	case PGQ_HOLD:
		if (q->begin)
			pg_put_query(&k->out, "BEGIN");
		else
			pg_put_sync(&k->out); /* answered by ReadyForQuery alone */
		break;
	}
}

static void arm_query_timer(struct pg_conn *k)
{
	if (!cfg()->query_timeout_ms || !k->head) {
		ig_timer_cancel(&k->core->loop->timers, &k->timer);
		return;
	}
	ig_timer_set(&k->core->loop->timers, &k->timer, k->head->deadline_ms);
}

/* A read after a read whose Sync is still unwritten at the end of out
 * takes that Sync off and ends with its own: the server flushes its
 * output at a Sync, so the reads of one batch cost one flush (one wakeup
 * here) instead of one each. Reads only: the statements between two Syncs
 * run in one implicit transaction, and one that fails makes the server
 * skip the rest, which is harmless for reads sent again alone. */
static bool share_tail_sync(struct pg_conn *k, const struct pg_query *q)
{
	if (!q->read_only || q->kind != PGQ_EXTENDED || k->held || !k->tail || !k->tail->read_only ||
	    k->tail->kind != PGQ_EXTENDED || !k->tail_sync_end || k->tail_sync_end != k->out.len ||
	    k->opos + PG_SYNC_BYTES > k->out.len)
		return false;
	k->out.len -= PG_SYNC_BYTES;
	k->tail->sync_shared = true;
	return true;
}

bool pg_conn_send(struct pg_conn *k, struct pg_query *q)
{
	bool shared = share_tail_sync(k, q);
	size_t mark = k->out.len;
	size_t estimate = q->sql_len + 64;
	for (uint16_t i = 0; i < q->nparams; i++)
		estimate += 16 + pg_param_size(&q->params[i]);
	for (int tries = 0; tries < 3; tries++) {
		if (k->out.cap - k->out.len < estimate * 2 && !out_grow(k, estimate * 2))
			return false;
		encode(k, q);
		if (!k->out.overflow)
			break;
		/* A statement slot taken for it stays: harmless, it will be
		   prepared by whichever query uses it next. */
		k->out.len = mark;
		k->out.overflow = false;
		if (q->stmt >= 0)
			stmt_drop(k, q->stmt, q->stmt_gen);
		estimate *= 4;
		if (tries == 2) {
			if (shared) { /* the tail's Sync back, in the bytes it had */
				pg_put_sync(&k->out);
				k->tail->sync_shared = false;
			}
			return false;
		}
	}
	k->tail_sync_end = q->kind == PGQ_EXTENDED ? k->out.len : 0;
	q->conn = k;
	q->next = NULL;
	q->deadline_ms = pg_now_ms(k->core) + cfg()->query_timeout_ms;
	if (k->tail)
		k->tail->next = q;
	else
		k->head = q;
	k->tail = q;
	k->inflight++;
	if (k->head == q)
		arm_query_timer(k);
	schedule_flush(k);
	return true;
}

/* ---- flushing ---- */

/* Nothing left to write: out empties, and with it the tail's Sync that a
 * read could have shared (share_tail_sync). */
static void out_empty(struct pg_conn *k)
{
	k->out.len = k->opos = 0;
	k->tail_sync_end = 0;
}

static void conn_flush(struct pg_conn *k)
{
	while (k->opos < k->out.len) {
		struct iovec iov = { k->obuf + k->opos, k->out.len - k->opos };
		ssize_t w = k->t->ops->writev(k->t, &iov, 1);
		if (w == IG_WOULD_BLOCK) {
			k->flushing = true;
			return;
		}
		if (w < 0) {
			pg_conn_close(k, IG_PG_CONNECTION_LOST, "writing to the database failed");
			return;
		}
		k->opos += (size_t)w;
	}
	out_empty(k);
	k->flushing = false;
	k->written = k->inflight;
}

/* After the loop batch. A pool connection whose written queries are still
 * unanswered keeps what came since in out: the answers' arrival sends it
 * (pop_head), in one write with whatever more came meanwhile, where a
 * write per loop batch would cost a send here and a wakeup and a flush at
 * the server each. The server runs a connection's queries one by one, so
 * the wait adds at most one round trip. */
static void conn_flush_deferred(struct ig_deferred *d)
{
	struct pg_conn *k = (struct pg_conn *)((char *)d - offsetof(struct pg_conn, flush));
	if (k->t && k->state != PGC_IDLE && k->state != PGC_CONNECTING && !k->flushing &&
	    !(k->state == PGC_READY && k->role == PGR_POOL && k->written > 0))
		conn_flush(k);
}

/* ---- closing ---- */

void pg_conn_close(struct pg_conn *k, enum ig_pg_error_kind kind, const char *message)
{
	if (k->state == PGC_IDLE)
		return;
	bool was_ready = k->state == PGC_READY;
	if (k->dns)
		dns_cancel(k->dns);
	k->dns = NULL;
	if (k->t)
		k->t->ops->close(k->t, 0);
	k->t = k->sock = NULL;
	k->tls = false;
	ig_timer_cancel(&k->core->loop->timers, &k->timer);
	k->state = PGC_IDLE;
	k->generation++;
	out_empty(k);
	k->out.overflow = false;
	k->flushing = false;
	k->rpos = k->rlen = 0;
	k->tx_status = 0;
	k->listened = false;
	stmts_clear(k);
	struct pg_query *list = k->head;
	k->head = k->tail = NULL;
	k->inflight = k->written = 0;
	if (was_ready) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "database connection lost")) {
			ig_log_cstr(&l, "reason", message);
			ig_log_end(&l);
		}
	}
	pg_pool_conn_lost(&k->core->pool, k, was_ready, kind, message);
	/* The queries it carried fail after the connection is out of the
	   pool's choice, so that a done starting another never lands here. */
	while (list) {
		struct pg_query *q = list;
		list = q->next;
		q->conn = NULL;
		pg_query_set_error(q, kind, message);
		pg_query_deliver(k->core, q);
	}
}

/* ---- connecting ---- */

static bool want_ssl(void)
{
	return !pg_global->ci.unix_socket && pg_global->ci.sslmode != PG_SSL_DISABLE;
}

static void put_startup(struct pg_conn *k)
{
	const struct pg_conninfo *ci = &pg_global->ci;
	pg_put_startup(&k->out, ci->user, ci->dbname, ci->application_name);
	schedule_flush(k);
}

/* PGC_CONNECTING, the address known: the socket's connect. */
static void connect_to_addr(struct pg_conn *k)
{
	struct ig_transport *t = ig_net_connect(&k->core->sock, k->core->loop, (const struct sockaddr *)&k->addr,
						k->addr_len);
	if (!t) {
		k->state = PGC_AUTH; /* so that close reports it */
		pg_conn_close(k, IG_PG_CONNECT, strerror(errno));
		return;
	}
	t->engine_ops = &conn_stream_ops;
	t->engine = k;
	k->t = k->sock = t;
}

static void on_resolved(void *arg, int error, const struct sockaddr_storage *addrs, size_t count,
			const char *message)
{
	struct pg_conn *k = arg;
	k->dns = NULL;
	if (error || count == 0) {
		/* The resolver's message names the host and says why; it lives
		   through this call, which is all that close needs. */
		k->state = PGC_AUTH; /* so that close reports it */
		pg_conn_close(k, IG_PG_CONNECT, message ? message : "the database host has no address");
		return;
	}
	/* The first address (IPv4 before IPv6): a pool's next connect after a
	   failure resolves again, so a failover that moves the name is seen. */
	memcpy(&k->addr, &addrs[0], sizeof addrs[0]);
	k->addr_len = addrs[0].ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	connect_to_addr(k);
}

void pg_conn_start(struct pg_conn *k)
{
	struct pg_core *c = k->core;
	k->state = PGC_CONNECTING;
	out_empty(k);
	k->rpos = k->rlen = 0;
	k->held = false;
	k->held_lost = false;
	/* The connect timeout covers the name's lookup too. */
	uint32_t ms = pg_global->ci.connect_timeout_ms ? pg_global->ci.connect_timeout_ms : cfg()->connect_timeout_ms;
	ig_timer_set(&c->loop->timers, &k->timer, pg_now_ms(c) + ms);
	if (want_ssl())
		pg_put_ssl_request(&k->out);
	else
		put_startup(k);
	if (pg_global->addr_len) {
		memcpy(&k->addr, &pg_global->addr, sizeof k->addr);
		k->addr_len = pg_global->addr_len;
		connect_to_addr(k);
		return;
	}
	/* A host name: looked up before every connect (the resolver's cache
	   keeps an answer for its TTL), on the loop, never blocking it. */
	if (!c->dns && !(c->dns = dns_resolver_new(c->loop))) {
		k->state = PGC_AUTH;
		pg_conn_close(k, IG_PG_CONNECT, "cannot make a resolver: out of memory");
		return;
	}
	/* NULL when on_resolved ran already (a cache hit, a hosts entry, an
	   invalid name): then k->dns is what that left. */
	struct dns_query *q = dns_resolve(c->dns, pg_global->ci.host, pg_global->ci.port, on_resolved, k);
	if (q)
		k->dns = q;
}

static void start_tls(struct pg_conn *k)
{
	/* verify-full checks the chain (sslrootcert's anchors, else the
	   default ones) and the host name; require and prefer encrypt and
	   check nothing, as libpq does without a root certificate. */
	bool verify = pg_global->ci.sslmode == PG_SSL_VERIFY_FULL;
	const char *why = "no trust anchors";
	const struct tls_trust *trust = !verify ? NULL : pg_global->trust ? pg_global->trust : ig_tls_default_trust(&why);
	struct ig_tls_core *tc = ig_tls_client_core(k->core->loop);
	if ((verify && !trust) || !tc) {
		pg_conn_close(k, IG_PG_TLS, tc ? why : "out of memory");
		return;
	}
	k->sock->engine_ops = NULL;
	k->sock->engine = NULL;
	struct ig_transport *t = ig_tls_client(tc, k->sock, trust, pg_global->ci.host);
	if (!t) {
		pg_conn_close(k, IG_PG_TLS, "cannot start TLS: too many handshakes");
		return;
	}
	k->t = t;
	k->tls = true;
	t->engine_ops = &conn_stream_ops;
	t->engine = k;
}

/* ---- reading: the startup phase ---- */

static void auth_fail(struct pg_conn *k, enum ig_pg_error_kind kind, const char *message)
{
	pg_conn_close(k, kind, message);
}

static void on_auth(struct pg_conn *k, const struct pg_msg *m)
{
	struct pg_auth a;
	if (!pg_read_auth(m, &a)) {
		auth_fail(k, IG_PG_PROTOCOL, "malformed authentication request");
		return;
	}
	const struct pg_conninfo *ci = &pg_global->ci;
	switch (a.code) {
	case PG_AUTH_OK:
		return;
	case PG_AUTH_CLEARTEXT:
		pg_put_password(&k->out, ci->password);
		break;
	case PG_AUTH_MD5: {
		char out[36];
		pg_md5_password(ci->user, ci->password, a.salt, out);
		pg_put_password(&k->out, out);
		memset(out, 0, sizeof out);
		break;
	}
	case PG_AUTH_SASL: {
		if (!a.scram_sha256) {
			auth_fail(k, IG_PG_AUTH, "the server offers no SASL mechanism this client supports");
			return;
		}
		uint8_t rnd[PG_SCRAM_NONCE_RANDOM];
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
			auth_fail(k, IG_PG_AUTH, "no random bytes for SCRAM's nonce");
			return;
		}
		char first[PG_SCRAM_FIRST_MAX];
		size_t n = pg_scram_client_first(&k->scram, rnd, first, sizeof first);
		if (!n) {
			auth_fail(k, IG_PG_AUTH, "SCRAM: cannot start");
			return;
		}
		pg_put_sasl_initial(&k->out, PG_SCRAM_MECHANISM, first, n);
		break;
	}
	case PG_AUTH_SASL_CONTINUE: {
		char final[PG_SCRAM_FINAL_MAX];
		size_t n = 0;
		enum pg_scram_status st = pg_scram_client_final(&k->scram, ci->password, a.data, a.data_len, final,
								sizeof final, &n);
		if (st != PG_SCRAM_OK) {
			auth_fail(k, IG_PG_AUTH, pg_scram_status_text(st));
			return;
		}
		pg_put_sasl_response(&k->out, final, n);
		memset(final, 0, sizeof final);
		break;
	}
	case PG_AUTH_SASL_FINAL: {
		enum pg_scram_status st = pg_scram_verify_server_final(&k->scram, a.data, a.data_len);
		if (st != PG_SCRAM_OK)
			auth_fail(k, IG_PG_AUTH, pg_scram_status_text(st));
		return;
	}
	default:
		auth_fail(k, IG_PG_AUTH, "the server asks for an authentication method this client does not support");
		return;
	}
	schedule_flush(k);
}

/* The server's words (pg_global->startup_error) for the pool's log and
 * its waiters never hold the password: the server never repeats it. */

static void on_startup_message(struct pg_conn *k, const struct pg_msg *m)
{
	switch (m->type) {
	case PG_MSG_AUTH:
		on_auth(k, m);
		return;
	case PG_MSG_BACKEND_KEY:
		if (!pg_read_backend_key(m, &k->pid, &k->key))
			pg_conn_close(k, IG_PG_PROTOCOL, "malformed BackendKeyData");
		return;
	case PG_MSG_PARAMETER_STATUS:
	case PG_MSG_NOTICE:
	case PG_MSG_NEGOTIATE_VERSION:
		return;
	case PG_MSG_ERROR: {
		struct pg_error_fields e;
		if (!pg_read_error(m, &e)) {
			pg_conn_close(k, IG_PG_PROTOCOL, "malformed ErrorResponse");
			return;
		}
		snprintf(pg_global->startup_error, sizeof pg_global->startup_error, "%.*s (SQLSTATE %s)", (int)e.message.len,
			 e.message.ptr ? e.message.ptr : "", e.sqlstate);
		bool auth = e.sqlstate[0] == '2' && e.sqlstate[1] == '8';
		pg_conn_close(k, auth ? IG_PG_AUTH : IG_PG_CONNECT, pg_global->startup_error);
		return;
	}
	case PG_MSG_READY:
		if (!pg_read_ready(m, &k->tx_status)) {
			pg_conn_close(k, IG_PG_PROTOCOL, "malformed ReadyForQuery");
			return;
		}
		if (k->scram.step != 0 && k->scram.step != 3) {
			/* SCRAM started but the server never proved itself. */
			pg_conn_close(k, IG_PG_AUTH, "SCRAM: the server did not complete the exchange");
			return;
		}
		k->state = PGC_READY;
		ig_timer_cancel(&k->core->loop->timers, &k->timer);
		memset(&k->scram, 0, sizeof k->scram);
		pg_pool_conn_ready(&k->core->pool, k);
		return;
	default:
		pg_conn_close(k, IG_PG_PROTOCOL, "unexpected message during startup");
	}
}

/* ---- reading: query results ---- */

static ig_str arena_copy(ig_arena *a, ig_str s)
{
	if (!s.len)
		return (ig_str){ "", 0 };
	char *p = ig_arena_alloc(a, s.len + 1);
	if (!p)
		return (ig_str){ "", 0 };
	memcpy(p, s.ptr, s.len);
	p[s.len] = 0;
	return (ig_str){ p, s.len };
}

/* A described statement's column oids and names into stmt_text, when they
 * fit (else it stays unknown and keeps its Describe): st->known. */
static void stmt_keep_columns(struct pg_conn *k, struct pg_stmt *st, const struct pg_field *f, uint16_t n)
{
	if (n > PG_STMT_FORMATS)
		return;
	size_t names = 0;
	for (uint16_t i = 0; i < n; i++)
		names += f[i].name.len;
	size_t at = ((size_t)k->stmt_text_used + 3) & ~(size_t)3;
	size_t need = (size_t)n * (sizeof(uint32_t) + sizeof(uint16_t)) + names;
	if (names > UINT16_MAX || at + need > PG_STMT_TEXT)
		return;
	uint32_t *oids = (uint32_t *)(void *)(k->stmt_text + at);
	uint16_t *lens = (uint16_t *)(oids + n);
	char *text = (char *)(lens + n);
	st->names = text;
	for (uint16_t i = 0; i < n; i++) {
		oids[i] = f[i].type_oid;
		lens[i] = (uint16_t)f[i].name.len;
		memcpy(text, f[i].name.ptr, f[i].name.len);
		text += f[i].name.len;
	}
	k->stmt_text_used = (uint32_t)(at + need);
	st->oids = oids;
	st->name_lens = lens;
	st->names_bytes = (uint32_t)names;
	st->known = true;
}

static bool live(const struct pg_query *q) { return !q->zombie && !q->internal && !q->failed; }

static void on_row_description(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m)
{
	uint16_t n = 0;
	struct pg_field *f = k->core->fields;
	if (!pg_read_row_description(m, f, PG_MAX_COLS, &n)) {
		pg_query_set_error(q, IG_PG_PROTOCOL, n > PG_MAX_COLS ? "too many result columns"
									: "malformed RowDescription");
		return;
	}
	/* The statement remembers its columns' types: later executions ask
	   for the binary form of those that have one, and, once known, send
	   no Describe. */
	if (q->stmt >= 0 && k->stmts[q->stmt].gen == q->stmt_gen && !k->stmts[q->stmt].described) {
		struct pg_stmt *st = &k->stmts[q->stmt];
		st->ncols = n;
		st->described = true;
		for (uint16_t i = 0; i < n && i < PG_STMT_FORMATS; i++)
			st->formats[i] = pg_result_format(f[i].type_oid);
		stmt_keep_columns(k, st, f, n);
	}
	if (!live(q))
		return;
	q->cols = n;
	q->rows = q->cap = 0; /* a simple query's next statement starts over */
	q->values = NULL;
	q->names = ig_arena_alloc(q->arena, sizeof(ig_str) * (n ? n : 1));
	q->oids = ig_arena_alloc(q->arena, sizeof(uint32_t) * (n ? n : 1));
	q->formats = ig_arena_alloc(q->arena, sizeof(int16_t) * (n ? n : 1));
	if (!q->names || !q->oids || !q->formats) {
		pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		q->names[i] = arena_copy(q->arena, f[i].name);
		q->oids[i] = f[i].type_oid;
		q->formats[i] = f[i].format;
	}
}

static void on_data_row(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m)
{
	if (!live(q))
		return;
	uint16_t n = 0;
	struct pg_col *cols = k->core->cols;
	if (!pg_read_data_row(m, cols, PG_MAX_COLS, &n) || n != q->cols || !q->names) {
		pg_query_set_error(q, IG_PG_PROTOCOL, "malformed DataRow");
		return;
	}
	if (q->rows == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 8;
		size_t old = (size_t)q->cap * q->cols * sizeof(ig_pg_value);
		size_t bytes = (size_t)cap * q->cols * sizeof(ig_pg_value);
		ig_pg_value *v = q->values ? ig_arena_grow(q->arena, q->values, old, bytes)
					   : ig_arena_alloc(q->arena, bytes ? bytes : 1);
		if (!v) {
			pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
			return;
		}
		q->values = v;
		q->cap = cap;
	}
	ig_pg_value *row = q->values + (size_t)q->rows * q->cols;
	for (uint16_t i = 0; i < n; i++) {
		if (!pg_value_decode(q->oids[i], q->formats[i], cols[i].ptr, cols[i].len, q->arena, &row[i])) {
			pg_query_set_error(q, IG_PG_PROTOCOL, "a column's value does not decode (or the arena is full)");
			return;
		}
	}
	q->rows++;
}

static void on_error_response(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m)
{
	struct pg_error_fields e;
	if (!pg_read_error(m, &e)) {
		pg_conn_close(k, IG_PG_PROTOCOL, "malformed ErrorResponse");
		return;
	}
	if (!q) {
		/* Not about a query: the server is going away (FATAL). */
		return;
	}
	bool stale = !strcmp(e.sqlstate, "26000") || !strcmp(e.sqlstate, "0A000");
	if (q->stmt >= 0 && (q->parsed_here || stale))
		stmt_drop(k, q->stmt, q->stmt_gen);
	if (stale && !q->parsed_here && !q->retried && q->kind == PGQ_EXTENDED) {
		q->retry = true; /* prepared again once, at its ReadyForQuery */
		return;
	}
	if (q->failed || q->zombie || q->internal)
		return;
	/* The server is going away (a shutdown, a crash, a terminated
	   backend): to the caller that is a lost connection. */
	bool going = (e.sqlstate[0] == '5' && e.sqlstate[1] == '7' && e.sqlstate[2] == 'P') ||
		     ig_str_eq(e.severity, "FATAL", 5) || ig_str_eq(e.severity, "PANIC", 5);
	q->failed = true;
	q->err = (ig_pg_error){ .kind = going ? IG_PG_CONNECTION_LOST : IG_PG_SERVER };
	memcpy(q->err.sqlstate, e.sqlstate, sizeof q->err.sqlstate);
	q->err.message = arena_copy(q->arena, e.message);
	q->err.detail = arena_copy(q->arena, e.detail);
	q->err.constraint = arena_copy(q->arena, e.constraint);
}

static struct pg_query *pop_head(struct pg_conn *k)
{
	struct pg_query *q = k->head;
	k->head = q->next;
	if (!k->head) {
		k->tail = NULL;
		k->tail_sync_end = 0;
	}
	k->inflight--;
	if (k->written > 0 && --k->written == 0 && k->out.len > k->opos)
		schedule_flush(k);
	return q;
}

/* q again, alone (its own Sync), from a clean result; false when it does
 * not fit (q then carries the error). */
static bool send_again(struct pg_conn *k, struct pg_query *q)
{
	q->answered = q->read_only = q->sync_shared = q->skipped = false;
	q->cols = q->rows = q->cap = 0;
	q->values = NULL;
	q->names = NULL;
	if (pg_conn_send(k, q))
		return true;
	pg_query_set_error(q, IG_PG_TOO_LARGE, "cannot write the query");
	return false;
}

/* A statement the server dropped is prepared again, once. */
static bool retried(struct pg_conn *k, struct pg_query *q)
{
	if (!q->retry || q->retried || q->zombie)
		return false;
	q->retried = true;
	q->retry = false;
	return send_again(k, q);
}

/* The head, which shared the next query's Sync, failed: the server skips
 * what follows up to that Sync, and its ReadyForQuery sends each skipped
 * read again alone (send_skipped): one failing read fails alone. */
static void shared_failed(struct pg_conn *k)
{
	struct pg_query *q = pop_head(k);
	for (struct pg_query *p = k->head; p; p = p->next) {
		p->skipped = true;
		if (p->parsed_here && p->stmt >= 0) /* its Parse was skipped too */
			stmt_drop(k, p->stmt, p->stmt_gen);
		if (!p->sync_shared)
			break;
	}
	arm_query_timer(k);
	if (!retried(k, q))
		pg_query_deliver(k->core, q);
}

/* The head shared the next query's Sync: its answer ends at its
 * CommandComplete, with no ReadyForQuery of its own. */
static void shared_done(struct pg_conn *k)
{
	struct pg_query *q = pop_head(k);
	arm_query_timer(k);
	pg_query_deliver(k->core, q);
}

static void send_skipped(struct pg_conn *k)
{
	bool last;
	do {
		struct pg_query *q = pop_head(k);
		last = !q->sync_shared;
		if (q->zombie || !send_again(k, q))
			pg_query_deliver(k->core, q);
	} while (!last && k->head);
	arm_query_timer(k);
}

static void on_ready(struct pg_conn *k, const struct pg_msg *m)
{
	struct pg_query *q = k->head;
	if (!pg_read_ready(m, &k->tx_status)) {
		pg_conn_close(k, IG_PG_PROTOCOL, "malformed ReadyForQuery");
		return;
	}
	if (q->skipped) {
		send_skipped(k);
		return;
	}
	pop_head(k);
	arm_query_timer(k);
	if (retried(k, q))
		return;
	if (q->commit && !q->failed && ig_str_eq(q->tag, "ROLLBACK", 8))
		pg_query_set_error(q, IG_PG_ABORTED, "the transaction had failed: COMMIT rolled it back");
	if (q->release_after || (q->kind == PGQ_HOLD && q->failed))
		k->held = false;
	pg_query_deliver(k->core, q);
	if (k->state == PGC_READY && !k->held)
		pg_pool_conn_idle_again(&k->core->pool);
}

static void on_query_message(struct pg_conn *k, const struct pg_msg *m)
{
	struct pg_query *q = k->head;
	switch (m->type) {
	case PG_MSG_NOTIFICATION: {
		uint32_t pid;
		ig_str ch, payload;
		if (pg_read_notification(m, &pid, &ch, &payload))
			pg_listen_notify(&k->core->pool, ch, payload);
		return;
	}
	case PG_MSG_NOTICE:
	case PG_MSG_PARAMETER_STATUS:
		return;
	case PG_MSG_ERROR:
		if (q)
			q->answered = true;
		on_error_response(k, q, m);
		if (q && k->head == q && q->sync_shared)
			shared_failed(k);
		return;
	default:
		break;
	}
	if (!q) {
		pg_conn_close(k, IG_PG_PROTOCOL, "a message from the database with no query in flight");
		return;
	}
	q->answered = true;
	switch (m->type) {
	case PG_MSG_NO_DATA:
		/* A statement without result columns (an UPDATE): known too. */
		if (q->stmt >= 0 && k->stmts[q->stmt].gen == q->stmt_gen && !k->stmts[q->stmt].described &&
		    pg_read_empty(m)) {
			k->stmts[q->stmt].described = true;
			k->stmts[q->stmt].ncols = 0;
			k->stmts[q->stmt].known = true;
		}
		/* fall through */
	case PG_MSG_PARSE_COMPLETE:
	case PG_MSG_BIND_COMPLETE:
	case PG_MSG_CLOSE_COMPLETE:
	case PG_MSG_PORTAL_SUSPENDED:
		if (!pg_read_empty(m))
			pg_conn_close(k, IG_PG_PROTOCOL, "malformed message");
		return;
	case PG_MSG_PARAMETER_DESCRIPTION:
		return;
	case PG_MSG_ROW_DESCRIPTION:
		on_row_description(k, q, m);
		return;
	case PG_MSG_DATA_ROW:
		on_data_row(k, q, m);
		return;
	case PG_MSG_COMMAND_COMPLETE: {
		ig_str tag;
		uint64_t rows;
		if (!pg_read_command_complete(m, &tag, &rows)) {
			pg_conn_close(k, IG_PG_PROTOCOL, "malformed CommandComplete");
			return;
		}
		if (!q->zombie && !q->internal) {
			q->tag = arena_copy(q->arena, tag);
			q->affected = rows;
		}
		if (q->sync_shared)
			shared_done(k);
		return;
	}
	case PG_MSG_EMPTY_QUERY:
		if (q->sync_shared)
			shared_done(k);
		return;
	case PG_MSG_READY:
		on_ready(k, m);
		return;
	default:
		pg_conn_close(k, IG_PG_PROTOCOL, "unexpected message from the database");
	}
}

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static bool rbuf_room(struct pg_conn *k, size_t need)
{
	if (k->rpos > 0) {
		memmove(k->rbuf, k->rbuf + k->rpos, k->rlen - k->rpos);
		k->rlen -= k->rpos;
		k->rpos = 0;
	}
	if (need <= k->rcap)
		return true;
	size_t cap = k->rcap;
	while (cap < need)
		cap *= 2;
	char *b = realloc(k->rbuf, cap);
	if (!b)
		return false;
	k->rbuf = b;
	k->rcap = (uint32_t)cap;
	return true;
}

static void conn_process(struct pg_conn *k)
{
	uint32_t gen = k->generation;
	size_t max = cfg()->max_message_bytes;
	while (k->generation == gen && k->state != PGC_IDLE && k->rpos < k->rlen) {
		size_t avail = k->rlen - k->rpos;
		const char *p = k->rbuf + k->rpos;
		if (k->state == PGC_SSL) {
			/* One byte; anything after it came before the handshake
			   and could be a man in the middle's: refused. */
			if (avail != 1 || (p[0] != 'S' && p[0] != 'N')) {
				pg_conn_close(k, IG_PG_PROTOCOL, "unexpected answer to SSLRequest");
				return;
			}
			k->rpos = k->rlen = 0;
			if (p[0] == 'S') {
				start_tls(k);
				if (k->generation != gen)
					return;
			} else if (pg_global->ci.sslmode >= PG_SSL_REQUIRE) {
				pg_conn_close(k, IG_PG_TLS, "the server does not support SSL");
				return;
			}
			k->state = PGC_AUTH;
			put_startup(k);
			return;
		}
		struct pg_msg m;
		int r = pg_parse_message(p, avail, max, &m);
		if (r == PG_PARSE_INCOMPLETE) {
			size_t need = avail >= 5 ? (size_t)be32(p + 1) + 1 : 5;
			if (need > max + 1)
				break; /* framed as malformed below on the next bytes */
			if (k->rpos + need > k->rcap && !rbuf_room(k, need)) {
				pg_conn_close(k, IG_PG_TOO_LARGE, "out of memory for a message");
				return;
			}
			return;
		}
		if (r == PG_PARSE_MALFORMED) {
			bool too_large = avail >= 5 && be32(p + 1) >= 4;
			if (too_large && k->head && !k->head->zombie)
				pg_query_set_error(k->head, IG_PG_TOO_LARGE, "a message from the database is over INGOT_PG_MAX_MESSAGE_BYTES");
			pg_conn_close(k, too_large ? IG_PG_CONNECTION_LOST : IG_PG_PROTOCOL,
				      too_large ? "a message from the database was over the size limit"
						: "a malformed message from the database");
			return;
		}
		k->rpos += (uint32_t)r;
		if (k->state == PGC_AUTH)
			on_startup_message(k, &m);
		else
			on_query_message(k, &m);
	}
	if (k->generation == gen && k->rpos == k->rlen)
		k->rpos = k->rlen = 0;
	if (k->generation == gen && k->state != PGC_IDLE && k->rpos < k->rlen) {
		/* An over-limit length: judged now that bytes are in. */
		const char *p = k->rbuf + k->rpos;
		if (k->rlen - k->rpos >= 5 && (size_t)be32(p + 1) + 1 > max + 1) {
			if (k->head && !k->head->zombie)
				pg_query_set_error(k->head, IG_PG_TOO_LARGE, "a message from the database is over INGOT_PG_MAX_MESSAGE_BYTES");
			pg_conn_close(k, IG_PG_CONNECTION_LOST, "a message from the database was over the size limit");
		}
	}
}

/* ---- timers ---- */

static void on_conn_timer(struct ig_timer *t)
{
	struct pg_conn *k = (struct pg_conn *)((char *)t - offsetof(struct pg_conn, timer));
	if (k->state != PGC_READY) {
		pg_conn_close(k, IG_PG_CONNECT, "connect timeout");
		return;
	}
	struct pg_query *q = k->head;
	if (!q)
		return;
	uint64_t now = pg_now_ms(k->core);
	if (now < q->deadline_ms) {
		arm_query_timer(k);
		return;
	}
	if (q->cancelled) {
		/* Still the head a timeout after its CancelRequest: the server
		   ignores one that comes while it waits for the query's messages
		   rather than runs it, so send another, but only while none of
		   its answer came: once some did, the server was running it, and
		   a CancelRequest landing after its end would cancel the query
		   pipelined behind it. After PG_CANCEL_TRIES timeouts, a query
		   that will not stop is not waited on: the connection goes
		   (which ends the backend's work too). */
		if (q->cancels >= PG_CANCEL_TRIES) {
			pg_conn_close(k, IG_PG_CONNECTION_LOST, "the database did not stop a cancelled query");
			return;
		}
		q->cancels++;
		if (!q->answered)
			pg_cancel_send(k->core, k);
		q->deadline_ms = now + cfg()->query_timeout_ms;
		arm_query_timer(k);
		return;
	}
	if (!q->zombie && q->kind != PGQ_HOLD) {
		/* The server is running q (every query before it has ended):
		   a CancelRequest stops it; its error then arrives and is
		   dropped, as is the rest of its answer. */
		q->cancelled = true;
		q->cancels = 1;
		pg_cancel_send(k->core, k);
		q->deadline_ms = now + cfg()->query_timeout_ms;
		arm_query_timer(k);
		bool internal = q->internal;
		q->zombie = true;
		if (!internal && q->done) {
			ig_pg_error e = { .kind = IG_PG_TIMEOUT, .message = IG_STR("the query timed out and was cancelled") };
			q->done(q->arg, NULL, &e);
		}
	}
}

/* ---- transport callbacks ---- */

static char *conn_lend(void *engine, size_t *cap)
{
	struct pg_conn *k = engine;
	if (k->rlen == k->rcap && !rbuf_room(k, (size_t)k->rcap * 2))
		return NULL;
	*cap = k->rcap - k->rlen;
	return k->rbuf + k->rlen;
}

static void conn_received(void *engine, size_t n)
{
	struct pg_conn *k = engine;
	if (n == 0) {
		pg_conn_close(k, IG_PG_CONNECTION_LOST, "the database closed the connection");
		return;
	}
	k->rlen += (uint32_t)n;
	conn_process(k);
}

static void conn_writable(void *engine)
{
	struct pg_conn *k = engine;
	if (k->state == PGC_CONNECTING) {
		k->state = want_ssl() ? PGC_SSL : PGC_AUTH;
		conn_flush(k);
		return;
	}
	if (k->out.len > k->opos)
		conn_flush(k);
}

static void conn_closed(void *engine)
{
	struct pg_conn *k = engine;
	bool tls = k->tls;
	int err = !tls && k->sock ? ig_net_stream_error(k->sock, k->addr.ss_family) : 0;
	k->t = k->sock = NULL; /* gone already */
	const char *tls_why = tls ? ig_tls_last_error(ig_tls_client_core(k->core->loop)) : NULL;
	if (k->state == PGC_CONNECTING) {
		pg_conn_close(k, IG_PG_CONNECT, err ? strerror(err) : "connection refused");
	} else if (tls && tls_why && k->state == PGC_AUTH) {
		char *msg = pg_global->tls_error;
		snprintf(msg, sizeof pg_global->tls_error, "TLS with the database failed: %s", tls_why);
		pg_conn_close(k, IG_PG_TLS, msg);
	} else {
		pg_conn_close(k, k->state == PGC_READY ? IG_PG_CONNECTION_LOST : IG_PG_CONNECT,
			      err ? strerror(err) : "the database closed the connection");
	}
}

static const struct ig_stream_ops conn_stream_ops = {
	.lend = conn_lend,
	.received = conn_received,
	.writable = conn_writable,
	.closed = conn_closed,
};
