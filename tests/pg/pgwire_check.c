/* net/pg's wire, types and auth against a real PostgreSQL, without the
 * connection engine: a blocking TCP socket, startup and authentication
 * (trust, cleartext, md5, SCRAM-SHA-256 by auth.c), then every type sent
 * as a parameter in its format and read back three ways: as the server's
 * own text of it ($n::text), echoed in the binary result formats, and
 * echoed in text. Prints TAP; tests/integration/pg_wire.test.mjs runs it.
 *
 * usage: pgwire_check HOST PORT USER PASSWORD DBNAME auth|types
 * Prints "# authenticated via METHOD" once logged in.
 * exit: 0 all passed, 1 a check failed, 3 authentication refused (the
 * server's SQLSTATE and message on a "# auth failed" line), 2 usage or I/O. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/pg/auth.h"
#include "net/pg/types.h"
#include "net/pg/wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd;
static char in[1 << 20];
static size_t in_len, in_off;
static char obuf[1 << 16];
static struct pg_out out;
static unsigned checks, failed;
static struct ig_pool blocks;
static ig_arena arena; /* decoded strings */

static void check(bool ok, const char *fmt, const char *name)
{
	checks++;
	failed += !ok;
	printf("%s %u - ", ok ? "ok" : "not ok", checks);
	printf(fmt, name);
	printf("\n");
}

static void flush_out(void)
{
	if (out.overflow) {
		fprintf(stderr, "output buffer overflow\n");
		exit(2);
	}
	for (size_t off = 0; off < out.len;) {
		ssize_t n = write(fd, out.buf + off, out.len - off);
		if (n <= 0) {
			perror("write");
			exit(2);
		}
		off += (size_t)n;
	}
	out.len = 0;
}

static void next(struct pg_msg *m)
{
	for (;;) {
		int n = ig_pg_parse_message(in + in_off, in_len - in_off, sizeof in, m);
		if (n > 0) {
			in_off += (size_t)n;
			return;
		}
		if (n == PG_PARSE_MALFORMED) {
			fprintf(stderr, "malformed message from the server\n");
			exit(2);
		}
		if (in_off) {
			memmove(in, in + in_off, in_len - in_off);
			in_len -= in_off;
			in_off = 0;
		}
		ssize_t r = read(fd, in + in_len, sizeof in - in_len);
		if (r <= 0) {
			fprintf(stderr, "the server closed the connection\n");
			exit(2);
		}
		in_len += (size_t)r;
	}
}

static void auth_failed(const struct pg_msg *m)
{
	struct pg_error_fields e;
	if (m->type == PG_MSG_ERROR && ig_pg_read_error(m, &e))
		printf("# auth failed %s %.*s\n", e.sqlstate, (int)e.message.len, e.message.ptr);
	else
		printf("# auth failed: unexpected message '%c'\n", m->type);
	exit(3);
}

/* Startup and authentication; returns the method the server asked for. */
static const char *login(const char *user, const char *password, const char *db)
{
	const char *via = "trust";
	struct pg_scram scram;
	struct pg_msg m;
	struct pg_auth a;
	ig_pg_put_startup(&out, user, db, "pgwire_check");
	flush_out();
	for (;;) {
		next(&m);
		if (m.type != PG_MSG_AUTH || !ig_pg_read_auth(&m, &a))
			auth_failed(&m);
		if (a.code == PG_AUTH_OK)
			break;
		if (a.code == PG_AUTH_CLEARTEXT) {
			via = "cleartext";
			ig_pg_put_password(&out, password);
		} else if (a.code == PG_AUTH_MD5) {
			char md5[36];
			via = "md5";
			ig_pg_md5_password(user, password, a.salt, md5);
			ig_pg_put_password(&out, md5);
		} else if (a.code == PG_AUTH_SASL && a.scram_sha256) {
			uint8_t rnd[PG_SCRAM_NONCE_RANDOM];
			char first[PG_SCRAM_FIRST_MAX];
			via = "scram-sha-256";
			if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
				exit(2);
			size_t n = ig_pg_scram_client_first(&scram, rnd, first, sizeof first);
			ig_pg_put_sasl_initial(&out, PG_SCRAM_MECHANISM, first, n);
		} else if (a.code == PG_AUTH_SASL_CONTINUE) {
			char final[PG_SCRAM_FINAL_MAX];
			size_t n = 0;
			enum pg_scram_status st =
				ig_pg_scram_client_final(&scram, password, a.data, a.data_len, final, sizeof final, &n);
			if (st != PG_SCRAM_OK) {
				printf("# auth failed: %s\n", ig_pg_scram_status_text(st));
				exit(3);
			}
			ig_pg_put_sasl_response(&out, final, n);
		} else if (a.code == PG_AUTH_SASL_FINAL) {
			enum pg_scram_status st = ig_pg_scram_verify_server_final(&scram, a.data, a.data_len);
			if (st != PG_SCRAM_OK) {
				printf("# auth failed: %s\n", ig_pg_scram_status_text(st));
				exit(3);
			}
			continue;
		} else {
			printf("# auth failed: method %u not supported\n", a.code);
			exit(3);
		}
		flush_out();
	}
	do
		next(&m);
	while (m.type != PG_MSG_READY && m.type != PG_MSG_ERROR);
	if (m.type == PG_MSG_ERROR)
		auth_failed(&m);
	return via;
}

static const uint8_t a_uuid[16] = { 0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
				    0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11 };

struct typed {
	const char *name;
	ig_pg_value v;
	const char *server_text; /* $n::text as the server writes it; NULL for NULL */
	uint32_t echo_oid;       /* the type of $n echoed (an untyped one is text) */
};

static bool same_value(const ig_pg_value *got, const struct typed *t)
{
	const ig_pg_value *v = &t->v;
	if (got->null != v->null || got->oid != t->echo_oid)
		return false;
	if (v->null)
		return true;
	switch (v->oid) {
	case IG_PG_BOOL: return got->b == v->b;
	case IG_PG_INT2: case IG_PG_INT4: case IG_PG_INT8: return got->i == v->i;
	case IG_PG_FLOAT4: case IG_PG_FLOAT8: return got->f == v->f;
	case IG_PG_UUID: return memcmp(got->uuid, v->uuid, 16) == 0;
	case IG_PG_DATE: return got->date == v->date;
	case IG_PG_TIMESTAMP: case IG_PG_TIMESTAMPTZ: return got->ts == v->ts;
	case IG_PG_JSONB: return ig_str_eq(got->s, t->server_text, strlen(t->server_text)); /* normalised */
	default: return got->s.len == v->s.len && memcmp(got->s.ptr, v->s.ptr, v->s.len) == 0;
	}
}

/* Reads one query's answer up to ReadyForQuery: its row description and
 * its one row; false on an ErrorResponse (printed). */
static bool read_row(struct pg_field *fields, uint16_t *nf, struct pg_col *cols, uint16_t *nc)
{
	struct pg_msg m;
	bool ok = true, row = false;
	for (;;) {
		next(&m);
		if (m.type == PG_MSG_READY)
			return ok && row;
		if (m.type == PG_MSG_ROW_DESCRIPTION)
			ok &= ig_pg_read_row_description(&m, fields, 64, nf);
		if (m.type == PG_MSG_DATA_ROW) {
			ok &= ig_pg_read_data_row(&m, cols, 64, nc);
			row = true;
			/* the columns point into in[]: keep this message there */
			static char saved[1 << 16];
			if (m.len > sizeof saved)
				return false;
			memcpy(saved, m.body, m.len);
			for (uint16_t i = 0; i < *nc; i++)
				if (cols[i].ptr)
					cols[i].ptr = saved + (cols[i].ptr - m.body);
		}
		if (m.type == PG_MSG_ERROR) {
			struct pg_error_fields e;
			ig_pg_read_error(&m, &e);
			printf("# error %s %.*s\n", e.sqlstate, (int)e.message.len, e.message.ptr);
			ok = false;
		}
	}
}

static void types(void)
{
	struct typed t[] = {
		{ "bool", ig_pg_bool(true), "true", IG_PG_BOOL },
		{ "int2", ig_pg_int2(-32768), "-32768", IG_PG_INT2 },
		{ "int4", ig_pg_int4(2147483647), "2147483647", IG_PG_INT4 },
		{ "int8", ig_pg_int8(INT64_MIN), "-9223372036854775808", IG_PG_INT8 },
		{ "float4", ig_pg_float4(1.5f), "1.5", IG_PG_FLOAT4 },
		{ "float8", ig_pg_float8(-0.1), "-0.1", IG_PG_FLOAT8 },
		{ "numeric", ig_pg_numeric(IG_STR("-12345.6789")), "-12345.6789", IG_PG_NUMERIC },
		{ "text", ig_pg_text(IG_STR("h\xc3\xa9llo <&>")), "h\xc3\xa9llo <&>", IG_PG_TEXT },
		{ "varchar", ig_pg_varchar(IG_STR("vc")), "vc", IG_PG_VARCHAR },
		{ "bytea", ig_pg_bytea((ig_str){ "\0\xff" "A", 3 }), "\\x00ff41", IG_PG_BYTEA },
		{ "uuid", ig_pg_uuid(a_uuid), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", IG_PG_UUID },
		{ "date", ig_pg_date(-730485), "0001-01-01 BC", IG_PG_DATE },
		{ "date -infinity", ig_pg_date(IG_PG_DATE_NEG_INFINITY), "-infinity", IG_PG_DATE },
		{ "timestamp", ig_pg_timestamp(768294489123456), "2024-05-06 07:08:09.123456", IG_PG_TIMESTAMP },
		{ "timestamptz", ig_pg_timestamptz(768287289500000), "2024-05-06 05:08:09.5+00", IG_PG_TIMESTAMPTZ },
		{ "timestamptz infinity", ig_pg_timestamptz(IG_PG_TS_INFINITY), "infinity", IG_PG_TIMESTAMPTZ },
		{ "json", ig_pg_json(IG_STR("{\"a\": [1, 2]}")), "{\"a\": [1, 2]}", IG_PG_JSON },
		{ "jsonb", ig_pg_jsonb(IG_STR("{\"b\":1,\"a\":2}")), "{\"a\": 2, \"b\": 1}", IG_PG_JSONB },
		{ "NULL int4", ig_pg_null(IG_PG_INT4), NULL, IG_PG_INT4 },
		{ "untyped", ig_pg_untyped(IG_STR("42")), "42", IG_PG_TEXT },
	};
	enum { N = sizeof t / sizeof t[0] };
	ig_pg_value params[N];
	uint32_t oids[N];
	char as_text[2048], echo[2048];
	size_t a = (size_t)snprintf(as_text, sizeof as_text, "SELECT"), e = (size_t)snprintf(echo, sizeof echo, "SELECT");
	for (int i = 0; i < N; i++) {
		params[i] = t[i].v;
		oids[i] = t[i].v.oid;
		a += (size_t)snprintf(as_text + a, sizeof as_text - a, "%s $%d::text", i ? "," : "", i + 1);
		e += (size_t)snprintf(echo + e, sizeof echo - e, "%s $%d", i ? "," : "", i + 1);
	}
	struct pg_field f[64];
	struct pg_col c[64];
	uint16_t nf = 0, nc = 0;

	/* 1. The server's text of each parameter: it read what was sent. */
	ig_pg_put_parse(&out, "", as_text, N, oids);
	ig_pg_put_bind(&out, "", "", N, params, 0, NULL);
	ig_pg_put_describe(&out, 'P', "");
	ig_pg_put_execute(&out, "", 0);
	ig_pg_put_sync(&out);
	flush_out();
	bool got = read_row(f, &nf, c, &nc) && nc == N;
	check(got, "%s", "SELECT $n::text of every parameter answers one row");
	for (int i = 0; got && i < N; i++) {
		const char *want = t[i].server_text;
		bool ok = want ? c[i].len == (int32_t)strlen(want) && memcmp(c[i].ptr, want, strlen(want)) == 0
			       : c[i].len == -1;
		if (!ok)
			printf("# %s: the server read \"%.*s\", want \"%s\"\n", t[i].name, c[i].len < 0 ? 4 : c[i].len,
			       c[i].len < 0 ? "NULL" : c[i].ptr, want ? want : "NULL");
		check(ok, "parameter %s: the server reads the value sent", t[i].name);
	}

	/* 2. and 3. Echoed, in the formats ig_pg_result_format picks, then all
	 * in text: each decodes to the value sent. */
	ig_pg_put_parse(&out, "echo", echo, N, oids);
	ig_pg_put_describe(&out, 'S', "echo");
	ig_pg_put_sync(&out);
	flush_out();
	struct pg_msg m;
	do {
		next(&m);
		if (m.type == PG_MSG_ROW_DESCRIPTION)
			ig_pg_read_row_description(&m, f, 64, &nf);
	} while (m.type != PG_MSG_READY);
	int16_t formats[N];
	for (int i = 0; i < N && i < nf; i++)
		formats[i] = ig_pg_result_format(f[i].type_oid);
	for (int pass = 0; pass < 2; pass++) {
		ig_pg_put_bind(&out, "", "echo", N, params, pass == 0 ? N : 0, formats);
		ig_pg_put_describe(&out, 'P', "");
		ig_pg_put_execute(&out, "", 0);
		ig_pg_put_sync(&out);
		flush_out();
		got = read_row(f, &nf, c, &nc) && nc == N && nf == N;
		check(got, pass == 0 ? "%s the result formats ig_pg_result_format picks" : "%s all results in text",
		      "the echo answers one row in");
		for (int i = 0; got && i < N; i++) {
			ig_pg_value v;
			bool ok = ig_pg_value_decode(f[i].type_oid, f[i].format, c[i].ptr, c[i].len, &arena, &v) &&
				  same_value(&v, &t[i]) && (pass == 1 || f[i].format == ig_pg_result_format(t[i].echo_oid));
			char name[96];
			snprintf(name, sizeof name, "%s (%s)", t[i].name, f[i].format ? "binary" : "text");
			check(ok, "%s: echoed and decoded to the value sent", name);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: pgwire_check HOST PORT USER PASSWORD DBNAME auth|types\n");
		return 2;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		perror("connect");
		return 2;
	}
	pg_out_init(&out, obuf, sizeof obuf);
	ig_pool_init(&blocks, 16384, 16, 64);
	ig_arena_init(&arena, &blocks, 1 << 20);
	printf("# authenticated via %s\n", login(argv[3], argv[4], argv[5]));
	if (strcmp(argv[6], "types") == 0)
		types();
	ig_pg_put_terminate(&out);
	flush_out();
	close(fd);
	printf("1..%u\n", checks);
	return failed ? 1 : 0;
}
