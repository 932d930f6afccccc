/* The build's blocking PostgreSQL client (see pg_host.h): read and write
 * whole messages on a blocking socket; every server message goes through
 * net/pg/wire.c's parser, as the runtime's do. */
#include "pg_host.h"
#include "alloc.h"
#include "net/pg/auth.h"
#include "net/pg/wire.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PH_MAX_MESSAGE (64u << 20)

static void fail(struct ph_error *e, const char *fmt, const char *arg)
{
	*e = (struct ph_error){ 0 };
	snprintf(e->message, sizeof e->message, fmt, arg);
}

static bool send_all(struct ph_conn *c, const struct pg_out *o, struct ph_error *e)
{
	if (o->overflow) {
		fail(e, "a message too large to send%s", "");
		return false;
	}
	for (size_t at = 0; at < o->len;) {
		ssize_t n = write(c->fd, o->buf + at, o->len - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fail(e, "write to the server: %s", strerror(errno));
			return false;
		}
		at += (size_t)n;
	}
	return true;
}

/* Takes the next message into m (its body stays valid until the next
 * call). */
static bool next(struct ph_conn *c, struct pg_msg *m, struct ph_error *e)
{
	if (c->taken) {
		memmove(c->buf, c->buf + c->taken, c->len - c->taken);
		c->len -= c->taken;
		c->taken = 0;
	}
	for (;;) {
		int n = ig_pg_parse_message(c->buf, c->len, PH_MAX_MESSAGE, m);
		if (n > 0) {
			c->taken = (size_t)n;
			return true;
		}
		if (n == PG_PARSE_MALFORMED) {
			fail(e, "a malformed message from the server%s", "");
			return false;
		}
		if (c->cap - c->len < 65536) {
			c->cap = c->cap * 2 + 65536;
			c->buf = sc_xrealloc(c->buf, c->cap);
		}
		ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fail(e, "the server closed the connection%s", "");
			return false;
		}
		c->len += (size_t)r;
	}
}

static void server_error(const struct pg_msg *m, struct ph_error *e)
{
	struct pg_error_fields f;
	*e = (struct ph_error){ 0 };
	if (!ig_pg_read_error(m, &f)) {
		fail(e, "a malformed error from the server%s", "");
		return;
	}
	snprintf(e->message, sizeof e->message, "%.*s", (int)f.message.len, f.message.ptr);
	if (f.detail.len) {
		size_t l = strlen(e->message);
		snprintf(e->message + l, sizeof e->message - l, " (%.*s)", (int)f.detail.len, f.detail.ptr);
	}
	memcpy(e->sqlstate, f.sqlstate, sizeof e->sqlstate);
	e->position = f.position.len ? atoi(f.position.ptr) : 0;
}

/* What until_ready does with each message other than ErrorResponse and
 * ReadyForQuery; false: the answer cannot be read on (e says why). */
typedef bool ph_visit_fn(struct ph_conn *c, const struct pg_msg *m, void *arg, struct ph_error *e);

/* Reads c's messages up to ReadyForQuery, each one to visit. The first
 * ErrorResponse goes into e: in a startup it ends the reading (the server
 * closes after it), else the rest of the answer is read and dropped.
 * Returns true at a ReadyForQuery that came with no error. */
static bool until_ready(struct ph_conn *c, struct ph_error *e, ph_visit_fn *visit, void *arg, bool startup)
{
	bool failed = false;
	struct pg_msg m;
	for (;;) {
		if (!next(c, &m, e))
			return false;
		if (m.type == PG_MSG_READY)
			return !failed;
		if (m.type == PG_MSG_ERROR) {
			if (!failed)
				server_error(&m, e);
			failed = true;
			if (startup)
				return false;
		} else if (!failed && !visit(c, &m, arg, e)) {
			return false;
		}
	}
}

static int dial(const char *host, const char *port, struct ph_error *e)
{
	if (host[0] == '/') {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		if ((size_t)snprintf(a.sun_path, sizeof a.sun_path, "%s/.s.PGSQL.%s", host, port) >= sizeof a.sun_path) {
			fail(e, "socket path too long: %s", host);
			return -1;
		}
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		fail(e, "cannot connect to %s", a.sun_path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	if (getaddrinfo(host, port, &hints, &ai) != 0) {
		fail(e, "cannot resolve %s", host);
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		fail(e, "cannot connect to %s", host);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

struct startup {
	const char *user, *password;
	struct pg_scram scram;
};

/* One message of the startup: authentication is answered, the rest
 * (parameters, the backend's key) passes. */
static bool startup_step(struct ph_conn *c, const struct pg_msg *m, void *arg, struct ph_error *e)
{
	struct startup *st = arg;
	if (m->type != PG_MSG_AUTH)
		return true;
	struct pg_auth a;
	if (!ig_pg_read_auth(m, &a)) {
		fail(e, "a malformed authentication request%s", "");
		return false;
	}
	char buf[1024];
	struct pg_out o;
	pg_out_init(&o, buf, sizeof buf);
	if (a.code == PG_AUTH_OK) {
		return true;
	} else if (a.code == PG_AUTH_CLEARTEXT) {
		ig_pg_put_password(&o, st->password);
	} else if (a.code == PG_AUTH_MD5) {
		char md5[36];
		ig_pg_md5_password(st->user, st->password, a.salt, md5);
		ig_pg_put_password(&o, md5);
	} else if (a.code == PG_AUTH_SASL && a.scram_sha256) {
		uint8_t rnd[PG_SCRAM_NONCE_RANDOM];
		char first[PG_SCRAM_FIRST_MAX];
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
			fail(e, "no random bytes for SCRAM%s", "");
			return false;
		}
		size_t n = ig_pg_scram_client_first(&st->scram, rnd, first, sizeof first);
		ig_pg_put_sasl_initial(&o, PG_SCRAM_MECHANISM, first, n);
	} else if (a.code == PG_AUTH_SASL_CONTINUE) {
		char fin[PG_SCRAM_FINAL_MAX];
		size_t n = 0;
		enum pg_scram_status ss =
			ig_pg_scram_client_final(&st->scram, st->password, a.data, a.data_len, fin, sizeof fin, &n);
		if (ss != PG_SCRAM_OK) {
			fail(e, "SCRAM: %s", ig_pg_scram_status_text(ss));
			return false;
		}
		ig_pg_put_sasl_response(&o, fin, n);
	} else if (a.code == PG_AUTH_SASL_FINAL) {
		enum pg_scram_status ss = ig_pg_scram_verify_server_final(&st->scram, a.data, a.data_len);
		if (ss != PG_SCRAM_OK) {
			fail(e, "SCRAM: %s", ig_pg_scram_status_text(ss));
			return false;
		}
		return true;
	} else {
		fail(e, "an authentication method this client does not support%s", "");
		return false;
	}
	return send_all(c, &o, e);
}

bool ph_connect(struct ph_conn *c, const char *host, const char *port, const char *user, const char *password,
		const char *db, struct ph_error *e)
{
	*c = (struct ph_conn){ .fd = dial(host, port, e) };
	if (c->fd < 0)
		return false;
	char buf[1024];
	struct pg_out o;
	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_startup(&o, user, db, "schemac");
	if (!send_all(c, &o, e))
		return false;
	struct startup st = { .user = user, .password = password };
	return until_ready(c, e, startup_step, &st, true);
}

void ph_close(struct ph_conn *c)
{
	if (c->fd >= 0) {
		char buf[16];
		struct pg_out o;
		pg_out_init(&o, buf, sizeof buf);
		ig_pg_put_terminate(&o);
		struct ph_error e;
		send_all(c, &o, &e);
		close(c->fd);
	}
	free(c->buf);
	*c = (struct ph_conn){ .fd = -1 };
}

static struct pg_out big_out(size_t need)
{
	struct pg_out o;
	pg_out_init(&o, sc_xmalloc(need + 256), need + 256);
	return o;
}

/* The first column of a result's rows, into rows (the last result's, when
 * a script has several). */
struct first_column {
	char ***rows;
	size_t *nrows;
};

static bool collect_row(struct ph_conn *c, const struct pg_msg *m, void *arg, struct ph_error *e)
{
	(void)c, (void)e;
	struct first_column *fc = arg;
	if (!fc->rows)
		return true;
	if (m->type == PG_MSG_ROW_DESCRIPTION) {
		for (size_t i = 0; i < *fc->nrows; i++)
			free((*fc->rows)[i]);
		*fc->nrows = 0;
	} else if (m->type == PG_MSG_DATA_ROW) {
		struct pg_col col[64];
		uint16_t n = 0;
		if (!ig_pg_read_data_row(m, col, 64, &n) || n == 0)
			return true;
		char *v = NULL;
		if (col[0].len >= 0) {
			v = sc_xmalloc((size_t)col[0].len + 1);
			memcpy(v, col[0].ptr, (size_t)col[0].len);
		}
		SC_APPEND(*fc->rows, *fc->nrows, v);
	}
	return true;
}

bool ph_simple(struct ph_conn *c, const char *sql, char ***rows, size_t *nrows, struct ph_error *e)
{
	struct pg_out o = big_out(strlen(sql));
	ig_pg_put_query(&o, sql);
	bool ok = send_all(c, &o, e);
	free(o.buf);
	if (rows) {
		*rows = NULL;
		*nrows = 0;
	}
	struct first_column fc = { rows, nrows };
	return ok && until_ready(c, e, collect_row, &fc, false);
}

/* A statement's ParameterDescription and RowDescription into d. */
static bool describe_step(struct ph_conn *c, const struct pg_msg *m, void *arg, struct ph_error *e)
{
	(void)c;
	struct ph_describe *d = arg;
	if (m->type == PG_MSG_PARAMETER_DESCRIPTION) {
		uint32_t oids[1024];
		uint16_t n = 0;
		if (!ig_pg_read_parameter_description(m, oids, 1024, &n)) {
			fail(e, "a malformed ParameterDescription (or over 1024 parameters)%s", "");
			return false;
		}
		d->params = sc_xmalloc(sizeof *d->params * (n + 1u));
		memcpy(d->params, oids, sizeof *oids * n);
		d->nparams = n;
	} else if (m->type == PG_MSG_ROW_DESCRIPTION) {
		static struct pg_field f[1664];
		uint16_t n = 0;
		if (!ig_pg_read_row_description(m, f, 1664, &n)) {
			fail(e, "a malformed RowDescription%s", "");
			return false;
		}
		d->has_rows = true;
		d->cols = sc_xmalloc(sizeof *d->cols * (n + 1u));
		for (uint16_t i = 0; i < n; i++) {
			char *name = sc_xmalloc(f[i].name.len + 1);
			memcpy(name, f[i].name.ptr, f[i].name.len);
			d->cols[i] = (struct ph_column){ name, f[i].table_oid, f[i].column, f[i].type_oid };
		}
		d->ncols = n;
	}
	return true;
}

bool ph_describe(struct ph_conn *c, const char *sql, struct ph_describe *d, struct ph_error *e)
{
	*d = (struct ph_describe){ 0 };
	struct pg_out o = big_out(strlen(sql));
	ig_pg_put_parse(&o, "", sql, 0, NULL);
	ig_pg_put_describe(&o, 'S', "");
	ig_pg_put_sync(&o);
	bool ok = send_all(c, &o, e);
	free(o.buf);
	if (!ok)
		return false;
	return until_ready(c, e, describe_step, d, false);
}
