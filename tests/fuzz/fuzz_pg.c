/* libFuzzer target for net/pg's parsing of what a PostgreSQL server (or
 * anyone in its place) sends: a byte stream framed by ig_pg_parse_message,
 * each message read by its type's decoder as the client would, DataRow
 * columns decoded with the types and formats of the last RowDescription,
 * and SCRAM's server messages read by auth.c. Nothing may be read outside
 * the input (ASan), and each verdict must be sane: a frame within the
 * stream and the limit, columns inside their row, SCRAM never "verified"
 * by a message it did not sign.
 *
 * Input: 1 control byte, then the stream.
 *   c bits 0-1  max_len: 64, 512, 8192 or 1 MiB
 *     bit 2     also feed the stream to SCRAM as a server-first-message
 *               (and its tail as the server-final)
 *     bit 3     also parse the stream as a DATABASE_URL (up to its first
 *               NUL), with a password the error text must never show
 * Build: FUZZ_SRC_pg in the Makefile (make fuzz-build). */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/pg/auth.h"
#include "net/pg/conninfo.h"
#include "net/pg/types.h"
#include "net/pg/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FIELDS 16

static void die(const char *what)
{
	fprintf(stderr, "fuzz_pg: %s\n", what);
	abort();
}

static struct ig_pool blocks;
static bool blocks_ready;

static void decode_row(const struct pg_msg *m, const struct pg_field *fields, uint16_t nfields, ig_arena *arena)
{
	struct pg_col cols[MAX_FIELDS];
	uint16_t n = 0;
	if (!ig_pg_read_data_row(m, cols, MAX_FIELDS, &n))
		return;
	for (uint16_t i = 0; i < n; i++) {
		if (cols[i].len < -1 || (cols[i].len >= 0 && (cols[i].ptr < m->body ||
							       cols[i].ptr + cols[i].len > m->body + m->len)))
			die("a column outside its row");
		uint32_t oid = i < nfields ? fields[i].type_oid : IG_PG_TEXT;
		int16_t format = i < nfields ? fields[i].format : 0;
		ig_pg_value v;
		if (ig_pg_value_decode(oid, format, cols[i].ptr, cols[i].len, arena, &v)) {
			if (v.oid != oid)
				die("a decoded value with another oid");
			if (cols[i].len == -1 && !v.null)
				die("NULL decoded as a value");
		}
	}
}

static void read_stream(const char *buf, size_t len, size_t max_len, ig_arena *arena)
{
	struct pg_field fields[MAX_FIELDS];
	uint16_t nfields = 0;
	while (len > 0) {
		struct pg_msg m;
		int n = ig_pg_parse_message(buf, len, max_len, &m);
		if (n == PG_PARSE_INCOMPLETE || n == PG_PARSE_MALFORMED)
			return;
		if (n < 5 || (size_t)n > len || (size_t)n > max_len || m.body != buf + 5 || m.len != (uint32_t)n - 5)
			die("a frame outside the stream or over the limit");
		struct pg_auth auth;
		uint32_t a, b, oids[MAX_FIELDS];
		ig_str s1, s2;
		uint64_t rows;
		char tx;
		struct pg_error_fields e;
		uint16_t count;
		switch (m.type) {
		case PG_MSG_AUTH:
			if (ig_pg_read_auth(&m, &auth) && auth.data &&
			    (auth.data < m.body || auth.data + auth.data_len > m.body + m.len))
				die("auth data outside the message");
			break;
		case PG_MSG_BACKEND_KEY: ig_pg_read_backend_key(&m, &a, &b); break;
		case PG_MSG_PARAMETER_STATUS: ig_pg_read_parameter_status(&m, &s1, &s2); break;
		case PG_MSG_READY:
			if (ig_pg_read_ready(&m, &tx) && tx != 'I' && tx != 'T' && tx != 'E')
				die("an unknown transaction status accepted");
			break;
		case PG_MSG_ROW_DESCRIPTION:
			if (!ig_pg_read_row_description(&m, fields, MAX_FIELDS, &nfields))
				nfields = 0;
			break;
		case PG_MSG_DATA_ROW: decode_row(&m, fields, nfields, arena); break;
		case PG_MSG_COMMAND_COMPLETE: ig_pg_read_command_complete(&m, &s1, &rows); break;
		case PG_MSG_ERROR:
		case PG_MSG_NOTICE:
			if (ig_pg_read_error(&m, &e) && e.sqlstate[0] && strlen(e.sqlstate) != 5)
				die("a SQLSTATE that is not 5 characters");
			break;
		case PG_MSG_NOTIFICATION: ig_pg_read_notification(&m, &a, &s1, &s2); break;
		case PG_MSG_PARAMETER_DESCRIPTION: ig_pg_read_parameter_description(&m, oids, MAX_FIELDS, &count); break;
		default: ig_pg_read_empty(&m); break;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void scram(const char *buf, size_t len)
{
	struct pg_scram s;
	char first[PG_SCRAM_FIRST_MAX], final[PG_SCRAM_FINAL_MAX];
	ig_pg_scram_client_first_with(&s, "", "fuzznonce", first, sizeof first);
	size_t cut = len / 2, n = 0;
	enum pg_scram_status st = ig_pg_scram_client_final(&s, "pw", buf, cut, final, sizeof final, &n);
	if (st != PG_SCRAM_OK)
		return;
	if (n == 0 || n > sizeof final)
		die("a client-final of no length or over its buffer");
	/* The signature is HMAC-SHA-256 under a key only the password gives:
	 * fuzzed bytes never verify (short of finding a collision). */
	if (ig_pg_scram_verify_server_final(&s, buf + cut, len - cut) == PG_SCRAM_OK)
		die("a server-final that was not signed verified");
}

/* The stream as a URL, prefixed with a known password: whatever follows,
 * the error text and the redacted form never show it (unless the stream
 * itself holds those letters, say in a parameter's name, which an error
 * may quote). */
static void conninfo(const char *buf, size_t len)
{
	static const char prefix[] = "postgresql://u:Zq7pw@";
	char url[1024];
	size_t n = len < sizeof url - sizeof prefix ? len : sizeof url - sizeof prefix;
	memcpy(url, prefix, sizeof prefix - 1);
	memcpy(url + sizeof prefix - 1, buf, n);
	url[sizeof prefix - 1 + n] = 0;
	static const char *const env[] = { "PGPASSWORD=Zq7pw", "PGSSLMODE=require", NULL };
	static struct pg_conninfo ci;
	char err[128], red[2048];
	int st = ig_pg_conninfo_parse(&ci, url, env, err, sizeof err);
	if (st != PG_CONNINFO_OK) {
		if (!err[0])
			die("a refusal without a reason");
		if (strstr(err, "Zq7pw") && !memmem(buf, len, "Zq7pw", 5))
			die("the password in an error");
		return;
	}
	if (ci.unix_socket != (ci.host[0] == '/') || ci.port == 0)
		die("an accepted URL with no port or a socket flag that disagrees with the host");
	ig_pg_conninfo_redacted(&ci, red, sizeof red);
	if (strstr(red, "Zq7pw") && !memmem(buf, len, "Zq7pw", 5))
		die("the password in the redacted form");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t limits[4] = { 64, 512, 8192, 1 << 20 };
	if (size < 1)
		return 0;
	if (!blocks_ready) {
		ig_pool_init(&blocks, 16384, 16, 4096);
		blocks_ready = true;
	}
	uint8_t c = data[0];
	size_t n = size - 1;
	/* An exact-size copy: a read one past the end is an ASan report. */
	char *buf = malloc(n ? n : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, n);
	ig_arena arena;
	ig_arena_init(&arena, &blocks, 1 << 20);
	read_stream(buf, n, limits[c & 3], &arena);
	if (c & 4)
		scram(buf, n);
	if (c & 8)
		conninfo(buf, strnlen(buf, n));
	ig_arena_reset(&arena);
	free(buf);
	return 0;
}
