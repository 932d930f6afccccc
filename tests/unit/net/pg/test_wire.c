/* Unit tests of net/pg/wire: the frontend messages byte for byte against
 * the protocol's layouts, overflow of the builder's buffer; the backend
 * framing and each decoder on valid bodies, on every truncation of them
 * and with a byte left over, every input flush against an unreadable page;
 * and a run of random bodies through every decoder. */
#define _DEFAULT_SOURCE
#include "net/pg/types.h"
#include "net/pg/wire.h"
#include "tests/unit/check.h"
#include "tests/unit/guard.h"

#include <stdint.h>
#include <stdlib.h>

#define BYTES(s) s, sizeof(s) - 1

static struct guard g;

static bool out_is(const struct pg_out *o, const char *want, size_t n)
{
	return !o->overflow && o->len == n && memcmp(o->buf, want, n) == 0;
}

static void test_builder(void)
{
	char buf[512];
	struct pg_out o;

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_sync(&o);
	CHECK(out_is(&o, BYTES("S\0\0\0\4")), "Sync is 'S' and a length of 4");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_query(&o, "SELECT 1");
	CHECK(out_is(&o, BYTES("Q\0\0\0\15SELECT 1\0")), "Query: the SQL and its NUL, length counted");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_ssl_request(&o);
	CHECK(out_is(&o, BYTES("\0\0\0\10\x04\xd2\x16\x2f")), "SSLRequest: 8 bytes, code 80877103");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_cancel(&o, 0x01020304, 0xa0b0c0d0);
	CHECK(out_is(&o, BYTES("\0\0\0\20\x04\xd2\x16\x2e\1\2\3\4\xa0\xb0\xc0\xd0")),
	      "CancelRequest: code 80877102, pid, key");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_startup(&o, "bob", "shop", "app");
	static const char startup[] = "\0\0\0\0\0\3\0\0user\0bob\0database\0shop\0application_name\0app\0"
				      "client_encoding\0UTF8\0DateStyle\0ISO\0TimeZone\0UTC\0\0";
	size_t sl = sizeof startup - 1;
	CHECK(!o.overflow && o.len == sl && memcmp(buf + 4, startup + 4, sl - 4) == 0 &&
		      (size_t)((unsigned char)buf[2] << 8 | (unsigned char)buf[3]) == sl && buf[0] == 0 && buf[1] == 0,
	      "StartupMessage: protocol 3.0, the parameters, a final NUL, the whole length");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_startup(&o, "bob", "", NULL);
	CHECK(!o.overflow && !memmem(buf, o.len, "database", 8) && !memmem(buf, o.len, "application_name", 16),
	      "StartupMessage leaves out an empty database and a missing application_name");

	pg_out_init(&o, buf, sizeof buf);
	uint32_t oids[2] = { 23, 25 };
	ig_pg_put_parse(&o, "s1", "SELECT $1, $2", 2, oids);
	CHECK(out_is(&o, BYTES("P\0\0\0\37s1\0SELECT $1, $2\0\0\2\0\0\0\27\0\0\0\31")),
	      "Parse: name, SQL, parameter count and oids");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_value params[3] = { ig_pg_int4(-2), ig_pg_text(IG_STR("hi")), ig_pg_null(IG_PG_INT8) };
	int16_t fmt[1] = { 1 };
	ig_pg_put_bind(&o, "", "s1", 3, params, 1, fmt);
	CHECK(out_is(&o, BYTES("B\0\0\0\50\0s1\0\0\3\0\1\0\0\0\1\0\3"
			       "\0\0\0\4\xff\xff\xff\xfe"
			       "\0\0\0\2hi"
			       "\xff\xff\xff\xff"
			       "\0\1\0\1")),
	      "Bind: per-parameter formats (int4 binary, text, int8 null binary), values, -1 for NULL, result formats");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_describe(&o, 'P', "");
	ig_pg_put_execute(&o, "", 0);
	ig_pg_put_close(&o, 'S', "s1");
	ig_pg_put_flush(&o);
	ig_pg_put_terminate(&o);
	CHECK(out_is(&o, BYTES("D\0\0\0\6P\0" "E\0\0\0\11\0\0\0\0\0" "C\0\0\0\10Ss1\0" "H\0\0\0\4" "X\0\0\0\4")),
	      "Describe, Execute, Close, Flush, Terminate back to back");

	pg_out_init(&o, buf, sizeof buf);
	ig_pg_put_password(&o, "md5abc");
	ig_pg_put_sasl_initial(&o, "SCRAM-SHA-256", "n,,x", 4);
	ig_pg_put_sasl_response(&o, "c=1", 3);
	CHECK(out_is(&o, BYTES("p\0\0\0\13md5abc\0" "p\0\0\0\32SCRAM-SHA-256\0\0\0\0\4n,,x" "p\0\0\0\7c=1")),
	      "PasswordMessage, SASLInitialResponse (mechanism, length, data), SASLResponse");

	/* Overflow: nothing is written past cap, the flag sticks, and what
	 * was written before stays as it was. */
	char small[12];
	pg_out_init(&o, small, sizeof small);
	ig_pg_put_sync(&o);
	ig_pg_put_query(&o, "SELECT 1");
	CHECK(o.overflow && o.len == 5 && memcmp(small, "S\0\0\0\4", 5) == 0,
	      "a message that does not fit sets overflow and leaves the earlier one whole");
	ig_pg_put_sync(&o);
	CHECK(o.overflow && o.len == 5, "after overflow, even a message that would fit writes nothing");

	/* A parameter that cannot be sent sets overflow, and ig_pg_param_valid
	 * tells it apart from a full buffer. */
	pg_out_init(&o, buf, sizeof buf);
	ig_pg_value bad = { .oid = IG_PG_INT2, .i = 40000 };
	ig_pg_put_bind(&o, "", "", 1, &bad, 0, NULL);
	CHECK(o.overflow && !ig_pg_param_valid(&bad), "an int2 out of range cannot be bound");
	ig_pg_value nul = ig_pg_text((ig_str){ "a\0b", 3 });
	CHECK(!ig_pg_param_valid(&nul), "text holding a NUL is not a valid parameter");
}

/* A message of that type and body in one buffer, flush against the guard. */
static const char *framed(char type, const char *body, size_t n, size_t *len)
{
	static char tmp[4096];
	tmp[0] = type;
	uint32_t l = (uint32_t)n + 4;
	tmp[1] = (char)(l >> 24);
	tmp[2] = (char)(l >> 16);
	tmp[3] = (char)(l >> 8);
	tmp[4] = (char)l;
	memcpy(tmp + 5, body, n);
	*len = n + 5;
	return guard_put(&g, tmp, n + 5);
}

static void test_framing(void)
{
	size_t len;
	const char *p = framed('Z', "I", 1, &len);
	struct pg_msg m;
	CHECK_INT(ig_pg_parse_message(p, len, 1024, &m), 6, "a whole ReadyForQuery takes 6 bytes");
	CHECK(m.type == 'Z' && m.len == 1 && m.body == p + 5 && m.body[0] == 'I', "type, body and length");
	bool prefixes_ok = true;
	for (size_t n = 0; n < len; n++) {
		const char *q = guard_put(&g, "Z\0\0\0\5I", n);
		prefixes_ok &= ig_pg_parse_message(q, n, 1024, &m) == PG_PARSE_INCOMPLETE;
	}
	CHECK(prefixes_ok, "every proper prefix is incomplete (and reads nothing past it)");
	p = guard_put(&g, "Z\0\0\0\3", 5);
	CHECK_INT(ig_pg_parse_message(p, 5, 1024, &m), PG_PARSE_MALFORMED, "a length below 4 is malformed");
	p = guard_put(&g, "D\0\0\4\0", 5);
	CHECK_INT(ig_pg_parse_message(p, 5, 1024, &m), PG_PARSE_MALFORMED,
		  "a message over max_len is malformed before it has all arrived");
	CHECK_INT(ig_pg_parse_message(p, 5, 1025, &m), PG_PARSE_INCOMPLETE, "the same within max_len is incomplete");
	p = guard_put(&g, "D\xff\xff\xff\xff", 5);
	CHECK_INT(ig_pg_parse_message(p, 5, SIZE_MAX, &m), PG_PARSE_MALFORMED, "a length of 2^32-1 is malformed");
	p = guard_put(&g, "1\0\0\0\4" "2\0\0\0\4", 10);
	int a = ig_pg_parse_message(p, 10, 1024, &m);
	int b = a > 0 ? ig_pg_parse_message(p + a, 10 - (size_t)a, 1024, &m) : 0;
	CHECK(a == 5 && b == 5 && m.type == '2', "two messages back to back frame one after the other");
}

/* Runs a decoder on the body, on every truncation of it and with a byte
 * added; returns whether the whole body decoded and no damaged one did. */
typedef bool decoder(const struct pg_msg *m);

static bool decodes_exactly(char type, const char *body, size_t n, decoder *dec)
{
	char tmp[4096];
	struct pg_msg m = { type, guard_put(&g, body, n), (uint32_t)n };
	if (!dec(&m))
		return false;
	for (size_t k = 0; k < n; k++) {
		m.body = guard_put(&g, body, k);
		m.len = (uint32_t)k;
		if (dec(&m))
			return false;
	}
	memcpy(tmp, body, n);
	tmp[n] = 'x';
	m.body = guard_put(&g, tmp, n + 1);
	m.len = (uint32_t)n + 1;
	return !dec(&m);
}

static struct pg_auth got_auth;
static bool dec_auth(const struct pg_msg *m) { return ig_pg_read_auth(m, &got_auth); }
static uint32_t got_pid, got_key;
static bool dec_key(const struct pg_msg *m) { return ig_pg_read_backend_key(m, &got_pid, &got_key); }
static ig_str got_a, got_b;
static bool dec_status(const struct pg_msg *m) { return ig_pg_read_parameter_status(m, &got_a, &got_b); }
static char got_tx;
static bool dec_ready(const struct pg_msg *m) { return ig_pg_read_ready(m, &got_tx); }
static struct pg_field got_fields[4];
static uint16_t got_n;
static bool dec_rowdesc(const struct pg_msg *m) { return ig_pg_read_row_description(m, got_fields, 4, &got_n); }
static struct pg_col got_cols[4];
static bool dec_row(const struct pg_msg *m) { return ig_pg_read_data_row(m, got_cols, 4, &got_n); }
static uint64_t got_rows;
static bool dec_complete(const struct pg_msg *m) { return ig_pg_read_command_complete(m, &got_a, &got_rows); }
static struct pg_error_fields got_err;
static bool dec_error(const struct pg_msg *m) { return ig_pg_read_error(m, &got_err); }
static bool dec_notify(const struct pg_msg *m) { return ig_pg_read_notification(m, &got_pid, &got_a, &got_b); }
static uint32_t got_oids[4];
static bool dec_params(const struct pg_msg *m) { return ig_pg_read_parameter_description(m, got_oids, 4, &got_n); }

static void test_decoders(void)
{
	CHECK(decodes_exactly('R', BYTES("\0\0\0\0"), dec_auth) && got_auth.code == PG_AUTH_OK,
	      "AuthenticationOk");
	CHECK(decodes_exactly('R', BYTES("\0\0\0\5\x11\x22\x33\x44"), dec_auth) && got_auth.code == PG_AUTH_MD5 &&
		      memcmp(got_auth.salt, "\x11\x22\x33\x44", 4) == 0,
	      "AuthenticationMD5Password and its salt");
	CHECK(decodes_exactly('R', BYTES("\0\0\0\12SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0"), dec_auth) &&
		      got_auth.code == PG_AUTH_SASL && got_auth.scram_sha256,
	      "AuthenticationSASL lists SCRAM-SHA-256 after -PLUS");
	CHECK(decodes_exactly('R', BYTES("\0\0\0\12SCRAM-SHA-256-PLUS\0\0"), dec_auth) && !got_auth.scram_sha256,
	      "AuthenticationSASL with only -PLUS does not claim SCRAM-SHA-256");
	struct pg_msg m = { 'R', guard_put(&g, "\0\0\0\13r=abc", 9), 9 };
	CHECK(ig_pg_read_auth(&m, &got_auth) && got_auth.code == PG_AUTH_SASL_CONTINUE && got_auth.data_len == 5 &&
		      memcmp(got_auth.data, "r=abc", 5) == 0,
	      "AuthenticationSASLContinue hands out its data");
	m = (struct pg_msg){ 'R', guard_put(&g, "\0\0\0\2", 4), 4 };
	CHECK(ig_pg_read_auth(&m, &got_auth) && got_auth.code == 2, "an unsupported method (Kerberos) reads as its code");

	CHECK(decodes_exactly('K', BYTES("\0\0\1\0\xde\xad\xbe\xef"), dec_key) && got_pid == 256 &&
		      got_key == 0xdeadbeef,
	      "BackendKeyData: pid and key");
	CHECK(decodes_exactly('S', BYTES("server_version\0" "15.5\0"), dec_status) &&
		      ig_str_eq(got_a, "server_version", 14) && ig_str_eq(got_b, "15.5", 4),
	      "ParameterStatus: name and value");
	CHECK(decodes_exactly('Z', BYTES("T"), dec_ready) && got_tx == 'T', "ReadyForQuery in a transaction");
	m = (struct pg_msg){ 'Z', guard_put(&g, "Q", 1), 1 };
	CHECK(!ig_pg_read_ready(&m, &got_tx), "ReadyForQuery with an unknown status is malformed");

	static const char rowdesc[] = "\0\2"
				      "id\0\0\0\x40\1\0\1\0\0\0\x17\0\4\xff\xff\xff\xff\0\1"
				      "msg\0\0\0\0\0\0\0\0\0\0\x19\xff\xff\xff\xff\xff\xff\0\0";
	CHECK(decodes_exactly('T', rowdesc, sizeof rowdesc - 1, dec_rowdesc) && got_n == 2 &&
		      ig_str_eq(got_fields[0].name, "id", 2) && got_fields[0].type_oid == 23 &&
		      got_fields[0].format == 1 && got_fields[0].table_oid == 0x4001 && got_fields[0].column == 1 &&
		      got_fields[0].type_len == 4 && got_fields[0].type_mod == -1 &&
		      ig_str_eq(got_fields[1].name, "msg", 3) && got_fields[1].type_oid == 25 &&
		      got_fields[1].format == 0,
	      "RowDescription: names, oids, sizes, formats");
	struct pg_field one[1];
	m = (struct pg_msg){ 'T', guard_put(&g, rowdesc, sizeof rowdesc - 1), sizeof rowdesc - 1 };
	CHECK(!ig_pg_read_row_description(&m, one, 1, &got_n) && got_n == 2,
	      "RowDescription with more fields than room fails and says how many");
	static const char badfmt[] = "\0\1" "a\0\0\0\0\0\0\0\0\0\0\x17\0\4\0\0\0\0\0\2";
	m = (struct pg_msg){ 'T', guard_put(&g, badfmt, sizeof badfmt - 1), sizeof badfmt - 1 };
	CHECK(!ig_pg_read_row_description(&m, got_fields, 4, &got_n), "a format code other than 0 or 1 is malformed");

	static const char row[] = "\0\3" "\0\0\0\2hi" "\xff\xff\xff\xff" "\0\0\0\0";
	CHECK(decodes_exactly('D', row, sizeof row - 1, dec_row) && got_n == 3 && got_cols[0].len == 2 &&
		      memcmp(got_cols[0].ptr, "hi", 2) == 0 && got_cols[1].ptr == NULL && got_cols[1].len == -1 &&
		      got_cols[2].len == 0 && got_cols[2].ptr != NULL,
	      "DataRow: a value, a NULL, an empty value");
	m = (struct pg_msg){ 'D', guard_put(&g, "\0\1\xff\xff\xff\xfe", 6), 6 };
	CHECK(!ig_pg_read_data_row(&m, got_cols, 4, &got_n), "a column length below -1 is malformed");
	m = (struct pg_msg){ 'D', guard_put(&g, "\0\1\x7f\xff\xff\xff" "ab", 8), 8 };
	CHECK(!ig_pg_read_data_row(&m, got_cols, 4, &got_n), "a column length past the body is malformed");
	m = (struct pg_msg){ 'D', guard_put(&g, "\0\5", 2), 2 };
	CHECK(!ig_pg_read_data_row(&m, got_cols, 4, &got_n) && got_n == 5,
	      "a row with more columns than room fails and says how many");

	static const struct {
		const char *tag;
		uint64_t rows;
	} tags[] = { { "SELECT 3", 3 }, { "INSERT 0 12", 12 }, { "UPDATE 20", 20 }, { "DELETE 0", 0 },
		     { "BEGIN", 0 }, { "CREATE TABLE", 0 }, { "MERGE 7", 7 }, { "COPY 18446744073709551615", UINT64_MAX },
		     { "FETCH 2", 2 }, { "MOVE 4", 4 }, { "SELECTS 5", 0 }, { "UPDAT 5", 0 } };
	bool tags_ok = true;
	for (size_t i = 0; i < IG_COUNTOF(tags); i++) {
		char body[64];
		size_t n = strlen(tags[i].tag) + 1;
		memcpy(body, tags[i].tag, n);
		tags_ok &= decodes_exactly('C', body, n, dec_complete) && got_rows == tags[i].rows &&
			   ig_str_eq(got_a, tags[i].tag, n - 1);
		if (!tags_ok)
			printf("# tag %s: rows %" PRIu64 "\n", tags[i].tag, got_rows);
	}
	CHECK(tags_ok, "CommandComplete: the tag and the rows of INSERT/UPDATE/DELETE/SELECT/MERGE/COPY, 0 for others");

	static const char err[] = "SERROR\0VERROR\0C23505\0Mduplicate key value violates unique constraint "
				  "\"posts_title_key\"\0DKey (title)=(a) already exists.\0spublic\0tposts\0"
				  "nposts_title_key\0Fnbtinsert.c\0L664\0Rbt_check\0\0";
	CHECK(decodes_exactly('E', err, sizeof err - 1, dec_error) && strcmp(got_err.sqlstate, "23505") == 0 &&
		      ig_str_eq(got_err.severity, "ERROR", 5) &&
		      ig_str_eq(got_err.constraint, "posts_title_key", 15) && ig_str_eq(got_err.table, "posts", 5) &&
		      ig_str_eq(got_err.schema, "public", 6) &&
		      ig_str_eq(got_err.detail, "Key (title)=(a) already exists.", 31) && got_err.message.len > 10 &&
		      got_err.hint.ptr == NULL,
	      "ErrorResponse: SQLSTATE, message, detail, constraint, table; unknown fields skipped");
	static const char loc[] = "SFEHLER\0C42P01\0Mx\0\0";
	m = (struct pg_msg){ 'E', guard_put(&g, loc, sizeof loc - 1), sizeof loc - 1 };
	CHECK(ig_pg_read_error(&m, &got_err) && ig_str_eq(got_err.severity, "FEHLER", 6),
	      "without 'V' the localised severity is used");
	static const char shortcode[] = "C235\0Mx\0\0";
	m = (struct pg_msg){ 'E', guard_put(&g, shortcode, sizeof shortcode - 1), sizeof shortcode - 1 };
	CHECK(ig_pg_read_error(&m, &got_err) && got_err.sqlstate[0] == 0, "a SQLSTATE that is not 5 characters is empty");

	CHECK(decodes_exactly('A', BYTES("\0\0\0\7chan\0hello\0"), dec_notify) && got_pid == 7 &&
		      ig_str_eq(got_a, "chan", 4) && ig_str_eq(got_b, "hello", 5),
	      "NotificationResponse: pid, channel, payload");
	CHECK(decodes_exactly('t', BYTES("\0\2\0\0\0\x17\0\0\0\x19"), dec_params) && got_n == 2 &&
		      got_oids[0] == 23 && got_oids[1] == 25,
	      "ParameterDescription: the oids");
	m = (struct pg_msg){ '1', guard_put(&g, "", 0), 0 };
	bool empty = ig_pg_read_empty(&m);
	m = (struct pg_msg){ '1', guard_put(&g, "x", 1), 1 };
	CHECK(empty && !ig_pg_read_empty(&m), "ParseComplete is empty, and a body makes it malformed");
}

/* Random bodies through every decoder, flush against the guard page: none
 * may fault, and each verdict must be sane. */
static void test_random(void)
{
	decoder *all[] = { dec_auth, dec_key, dec_status, dec_ready, dec_rowdesc,
			   dec_row, dec_complete, dec_error, dec_notify, dec_params };
	uint64_t x = 88172645463325252u;
	char body[64];
	unsigned accepted = 0;
	bool sane = true;
	for (int round = 0; round < 20000; round++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t n = x % sizeof body;
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* small values, NULs and 0xff often, so lengths and counts hit edges */
			body[i] = (char)(x % 5 == 0 ? 0 : x % 7 == 0 ? 0xff : (x >> 8) % 4);
		}
		struct pg_msg m = { 'x', guard_put(&g, body, n), (uint32_t)n };
		for (size_t d = 0; d < IG_COUNTOF(all); d++) {
			if (!all[d](&m))
				continue;
			accepted++;
			if (all[d] == dec_row)
				for (uint16_t c = 0; c < got_n; c++)
					sane &= got_cols[c].len == -1 ||
						(got_cols[c].ptr >= m.body &&
						 got_cols[c].ptr + got_cols[c].len <= m.body + m.len);
		}
	}
	CHECK(sane, "random bodies: every column a decoded row hands out lies inside the body");
	CHECK(accepted > 0, "random bodies: some decode (the run reaches past the first checks)");
}

int main(void)
{
	if (!guard_init(&g, 64 * 1024)) {
		printf("Bail out! cannot map the guard page\n");
		return 1;
	}
	CHECK(guard_faults(&g), "reading the guard page faults");
	test_builder();
	test_framing();
	test_decoders();
	test_random();
	guard_free(&g);
	return check_done();
}
