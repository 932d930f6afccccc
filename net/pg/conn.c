/* One PostgreSQL connection on the loop: its making, the dial (net/dial:
 * a name looked up, or an address, TCP or a unix socket), SSLRequest and TLS,
 * then the transport's events: bytes framed into messages, each handed to
 * the startup phase (startup.c) or, once ready, the pipeline
 * (pipeline.c); and its timer (the connect timeout, then the head query's).
 * Its owner (the pool, or the LISTEN side) hears of it through the ops it
 * set, never a call up. */
#include "internal.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/stack.h"
#include "net/tls/tls.h"

static const struct ig_stream_ops conn_stream_ops;

static const struct ig_pg_settings_values *cfg(void) { return &ig_pg_settings_values; }

static void on_conn_timer(struct ig_timer *t);

struct pg_conn *ig_pg_conn_new(struct pg_core *c, enum pg_conn_role role, const struct pg_conn_owner_ops *ops,
			    void *owner)
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
	k->owner_ops = ops;
	k->owner = owner;
	k->role = role;
	k->rcap = PG_RBUF_INITIAL;
	pg_out_init(&k->out, k->obuf, PG_OUT_INITIAL);
	k->flush.fn = ig_pg_conn_flush_deferred;
	k->timer.fn = on_conn_timer;
	return k;
}

static bool want_ssl(void)
{
	return !ig_pg_global->ci.unix_socket && ig_pg_global->ci.sslmode != PG_SSL_DISABLE;
}

/* The dial connected: SSLRequest or the startup goes out. */
static void on_dial_connected(struct ig_dial *d, struct ig_transport *t, struct ig_transport *sock, void *arg)
{
	(void)sock; /* t itself: TLS comes after the SSLRequest (start_tls) */
	struct pg_conn *k = arg;
	t->engine_ops = &conn_stream_ops;
	t->engine = k;
	k->t = k->sock = t;
	/* Its CancelRequests go where it went. */
	socklen_t len;
	const struct sockaddr *a = ig_dial_address(d, &len);
	memcpy(&k->addr, a, len);
	k->addr_len = len;
	/* The connect timeout goes on over TLS and the authentication. */
	ig_timer_set(&k->core->loop->timers, &k->timer, d->deadline_ms);
	k->state = want_ssl() ? PGC_SSL : PGC_AUTH;
	ig_pg_conn_flush(k);
}

/* The dial's why names the host (a lookup) or says what the connect met. */
static void on_dial_failed(struct ig_dial *d, enum ig_dial_error kind, const char *why, void *arg)
{
	(void)d;
	ig_pg_conn_close(arg, kind == IG_DIAL_TLS ? IG_PG_TLS : IG_PG_CONNECT,
		      kind == IG_DIAL_TIMEOUT ? "connect timeout" : why);
}

static const struct ig_dial_ops conn_dial_ops = {
	.connected = on_dial_connected,
	.failed = on_dial_failed,
};

void ig_pg_conn_start(struct pg_conn *k)
{
	struct pg_core *c = k->core;
	k->state = PGC_CONNECTING;
	ig_pg_conn_out_empty(k);
	k->rpos = k->rlen = 0;
	k->held = false;
	k->held_lost = false;
	if (want_ssl())
		ig_pg_put_ssl_request(&k->out);
	else
		ig_pg_startup_send(k);
	/* The connect timeout covers the name's lookup too. A host name is
	   looked up before every connect (the resolver's cache keeps an
	   answer for its TTL), so a failover that moves the name is seen. */
	struct ig_dial_params p = {
		.sock = &c->sock, .host = ig_pg_global->ci.host, .port = ig_pg_global->ci.port,
		.timeout_ms = ig_pg_global->ci.connect_timeout_ms ? ig_pg_global->ci.connect_timeout_ms
							       : cfg()->connect_timeout_ms,
	};
	if (ig_pg_global->addr_len) {
		p.addr = (const struct sockaddr *)&ig_pg_global->addr;
		p.addr_len = ig_pg_global->addr_len;
	}
	ig_dial_start(&k->dial, c->loop, &p, &conn_dial_ops, k);
}

static void start_tls(struct pg_conn *k)
{
	/* verify-full checks the chain (sslrootcert's anchors, else the
	   default ones) and the host name; require and prefer encrypt and
	   check nothing, as libpq does without a root certificate. */
	struct ig_dial_tls tls = { .verify = ig_pg_global->ci.sslmode == PG_SSL_VERIFY_FULL,
				   .trust = ig_pg_global->trust, .server_name = ig_pg_global->ci.host };
	const char *why;
	struct ig_transport *t = ig_dial_tls(k->core->loop, k->sock, &tls, &why);
	if (!t) {
		char msg[160];
		snprintf(msg, sizeof msg, "cannot start TLS: %s", why);
		ig_pg_conn_close(k, IG_PG_TLS, msg);
		return;
	}
	k->t = t;
	k->tls = true;
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
				ig_pg_conn_close(k, IG_PG_PROTOCOL, "unexpected answer to SSLRequest");
				return;
			}
			k->rpos = k->rlen = 0;
			if (p[0] == 'S') {
				start_tls(k);
				if (k->generation != gen)
					return;
			} else if (ig_pg_global->ci.sslmode >= PG_SSL_REQUIRE) {
				ig_pg_conn_close(k, IG_PG_TLS, "the server does not support SSL");
				return;
			}
			k->state = PGC_AUTH;
			ig_pg_startup_send(k);
			return;
		}
		struct pg_msg m;
		int r = ig_pg_parse_message(p, avail, max, &m);
		if (r == PG_PARSE_INCOMPLETE) {
			size_t need = avail >= 5 ? (size_t)be32(p + 1) + 1 : 5;
			if (need > max + 1)
				break; /* framed as malformed below on the next bytes */
			if (k->rpos + need > k->rcap && !rbuf_room(k, need)) {
				ig_pg_conn_close(k, IG_PG_TOO_LARGE, "out of memory for a message");
				return;
			}
			return;
		}
		if (r == PG_PARSE_MALFORMED) {
			bool too_large = avail >= 5 && be32(p + 1) >= 4;
			if (too_large && k->head && !k->head->zombie)
				ig_pg_query_set_error(k->head, IG_PG_TOO_LARGE, "a message from the database is over INGOT_PG_MAX_MESSAGE_BYTES");
			ig_pg_conn_close(k, too_large ? IG_PG_CONNECTION_LOST : IG_PG_PROTOCOL,
				      too_large ? "a message from the database was over the size limit"
						: "a malformed message from the database");
			return;
		}
		k->rpos += (uint32_t)r;
		if (k->state == PGC_AUTH)
			ig_pg_startup_message(k, &m);
		else
			ig_pg_pipeline_message(k, &m);
	}
	if (k->generation == gen && k->rpos == k->rlen)
		k->rpos = k->rlen = 0;
	if (k->generation == gen && k->state != PGC_IDLE && k->rpos < k->rlen) {
		/* An over-limit length: judged now that bytes are in. */
		const char *p = k->rbuf + k->rpos;
		if (k->rlen - k->rpos >= 5 && (size_t)be32(p + 1) + 1 > max + 1) {
			if (k->head && !k->head->zombie)
				ig_pg_query_set_error(k->head, IG_PG_TOO_LARGE, "a message from the database is over INGOT_PG_MAX_MESSAGE_BYTES");
			ig_pg_conn_close(k, IG_PG_CONNECTION_LOST, "a message from the database was over the size limit");
		}
	}
}

/* ---- timers ---- */

static void on_conn_timer(struct ig_timer *t)
{
	struct pg_conn *k = (struct pg_conn *)((char *)t - offsetof(struct pg_conn, timer));
	if (k->state != PGC_READY) {
		ig_pg_conn_close(k, IG_PG_CONNECT, "connect timeout");
		return;
	}
	ig_pg_pipeline_timeout(k);
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
		ig_pg_conn_close(k, IG_PG_CONNECTION_LOST, "the database closed the connection");
		return;
	}
	k->rlen += (uint32_t)n;
	conn_process(k);
}

static void conn_writable(void *engine)
{
	struct pg_conn *k = engine;
	if (k->out.len > k->opos)
		ig_pg_conn_flush(k);
}

static void conn_closed(void *engine)
{
	struct pg_conn *k = engine;
	bool tls = k->tls;
	int err = !tls && k->sock ? ig_net_stream_error(k->sock, k->addr.ss_family) : 0;
	k->t = k->sock = NULL; /* gone already */
	const char *tls_why = tls ? ig_tls_last_error(ig_tls_client_core(k->core->loop)) : NULL;
	if (tls && tls_why && k->state == PGC_AUTH) {
		char *msg = k->core->tls_error;
		snprintf(msg, sizeof k->core->tls_error, "TLS with the database failed: %s", tls_why);
		ig_pg_conn_close(k, IG_PG_TLS, msg);
	} else {
		ig_pg_conn_close(k, k->state == PGC_READY ? IG_PG_CONNECTION_LOST : IG_PG_CONNECT,
			      err ? strerror(err) : "the database closed the connection");
	}
}

static const struct ig_stream_ops conn_stream_ops = {
	.lend = conn_lend,
	.received = conn_received,
	.writable = conn_writable,
	.closed = conn_closed,
};
