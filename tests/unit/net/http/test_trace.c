/* Unit tests of net/http/trace: W3C traceparent judged case by case (the
 * spec's valid forms, each rule broken once, the forward-compatible rule
 * for later versions), which X-Request-Id values are taken, the parser
 * finding the trace fields during its scan, and the id hash. */
#include "net/http/parser.h"
#include "net/http/trace.h"
#include "tests/unit/check.h"

#define TID "0af7651916cd43dd8448eb211c80319c"
#define PID "b7ad6b7169203331"

struct tp_case {
	const char *name, *in;
	bool ok;
	unsigned flags;
};

static const struct tp_case tp_cases[] = {
	{ "traceparent: version 00, sampled", "00-" TID "-" PID "-01", true, 1 },
	{ "traceparent: version 00, flags 00", "00-" TID "-" PID "-00", true, 0 },
	{ "traceparent: unknown flag bits kept", "00-" TID "-" PID "-09", true, 9 },
	{ "traceparent: a later version, exactly 55", "cc-" TID "-" PID "-01", true, 1 },
	{ "traceparent: a later version with more after a '-'", "cc-" TID "-" PID "-01-what-the-future", true, 1 },
	{ "traceparent: a later version, more without a '-'", "cc-" TID "-" PID "-01x", false, 0 },
	{ "traceparent: version ff is invalid", "ff-" TID "-" PID "-01", false, 0 },
	{ "traceparent: version 00 longer than 55", "00-" TID "-" PID "-01-", false, 0 },
	{ "traceparent: too short", "00-" TID "-" PID "-1", false, 0 },
	{ "traceparent: uppercase trace id", "00-0AF7651916CD43DD8448EB211C80319C-" PID "-01", false, 0 },
	{ "traceparent: uppercase version", "0A-" TID "-" PID "-01", false, 0 },
	{ "traceparent: uppercase flags", "00-" TID "-" PID "-0A", false, 0 },
	{ "traceparent: all-zero trace id", "00-00000000000000000000000000000000-" PID "-01", false, 0 },
	{ "traceparent: all-zero parent id", "00-" TID "-0000000000000000-01", false, 0 },
	{ "traceparent: a wrong separator", "00_" TID "-" PID "-01", false, 0 },
	{ "traceparent: not hex", "00-" TID "-b7ad6b716920333g-01", false, 0 },
	{ "traceparent: empty", "", false, 0 },
};

static void test_traceparent(void)
{
	for (size_t i = 0; i < sizeof tp_cases / sizeof tp_cases[0]; i++) {
		const struct tp_case *c = &tp_cases[i];
		char tid[32] = { 0 };
		uint8_t flags = 0xee;
		bool ok = ig_http_traceparent_parse((ig_str){ c->in, strlen(c->in) }, tid, &flags);
		check_that(ok == c->ok && (!ok || (memcmp(tid, TID, 32) == 0 && flags == c->flags)), c->name,
			   "parsed %d, flags %u, trace id %.32s", ok, flags, tid);
	}
}

static void test_request_id(void)
{
	char long_id[130];
	memset(long_id, 'a', sizeof long_id);
	CHECK(ig_http_request_id_valid((ig_str){ "abc-123", 7 }), "request id: a plain one is taken");
	CHECK(ig_http_request_id_valid((ig_str){ "a\"b\\c", 5 }), "request id: quotes and backslashes are taken");
	CHECK(ig_http_request_id_valid((ig_str){ "!~", 2 }), "request id: 0x21 and 0x7e are visible");
	CHECK(ig_http_request_id_valid((ig_str){ long_id, 128 }), "request id: 128 characters are taken");
	CHECK(!ig_http_request_id_valid((ig_str){ long_id, 129 }), "request id: 129 are not");
	CHECK(!ig_http_request_id_valid((ig_str){ "", 0 }), "request id: empty is not");
	CHECK(!ig_http_request_id_valid((ig_str){ "a b", 3 }), "request id: a space is not");
	CHECK(!ig_http_request_id_valid((ig_str){ "a\tb", 3 }), "request id: a tab is not");
	CHECK(!ig_http_request_id_valid((ig_str){ "caf\xc3\xa9", 5 }), "request id: non-ASCII is not");
	CHECK(!ig_http_request_id_valid((ig_str){ "a\x7f", 2 }), "request id: DEL is not");
	CHECK(ig_http_request_id_hash((ig_str){ "abc", 3 }) == ig_http_request_id_hash((ig_str){ "abc", 3 }) &&
		      ig_http_request_id_hash((ig_str){ "abc", 3 }) != ig_http_request_id_hash((ig_str){ "abd", 3 }),
	      "request id: the hash is a function of the id");
}

static void test_parser_notes(void)
{
	static const char head[] = "GET / HTTP/1.1\r\nHost: a\r\nTraceState: x=1\r\nX-Request-ID: r1\r\n"
				   "traceparent: 00-" TID "-" PID "-01\r\ntracestate: y=2\r\nx-request-id: r2\r\n\r\n";
	ig_header fields[16];
	struct http_request r = { .headers = fields, .header_capacity = 16 };
	struct http_limits limits = { .max_request_line = 8192, .max_header_bytes = 16384, .max_headers = 16 };
	int n = ig_http_parse_request(head, sizeof head - 1, &r, &limits);
	CHECK_INT(n, (int)(sizeof head - 1), "parser: the head parses");
	CHECK(r.request_id_field == 3 && r.traceparent_field == 4 && r.tracestate_field == 2,
	      "parser: the first X-Request-Id, traceparent and tracestate fields are noted, any case");
	CHECK(r.traceparents == 1 && r.tracestates == 2, "parser: and how many traceparent and tracestate");
	struct ig_rng rng = { 1 };
	char id[HTTP_REQUEST_ID_MAX];
	size_t len = ig_http_request_id_of(&r, &rng, id);
	check_slice(id, len, "r1", "parser: a parsed request's own id is used for an engine error", "id");
	static const char bare[] = "GET / HTTP/1.1\r\nHost: a\r\nX-Request-Id: a b\r\n\r\n";
	n = ig_http_parse_request(bare, sizeof bare - 1, &r, &limits);
	len = ig_http_request_id_of(&r, &rng, id);
	bool hex = len == HTTP_MADE_ID_LEN;
	for (size_t i = 0; i < len; i++)
		hex = hex && ((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'));
	check_that(n > 0 && r.traceparents == 0 && hex, "parser: an invalid id is replaced by 32 hex digits",
		   "%.*s", (int)len, id);
}

static void test_hex(void)
{
	static const struct { uint64_t v; const char *want; } cases[] = {
		{ 0x0123456789abcdefu, "0123456789abcdef" }, { 0xfedcba9876543210u, "fedcba9876543210" },
		{ 0, "0000000000000000" }, { ~(uint64_t)0, "ffffffffffffffff" }, { 0xa09b1c2d3e4f5a6bu, "a09b1c2d3e4f5a6b" },
	};
	bool ok = true;
	char got[17] = { 0 };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0] && ok; i++) {
		ig_hex64(got, cases[i].v);
		ok = memcmp(got, cases[i].want, 16) == 0;
	}
	check_that(ok, "hex: 64 bits as 16 lowercase digits, most significant first", "got %s", got);
	/* 128 bits: the same digits as the two halves written one by one, for
	   every pair of cases (the SSE2 path and the scalar one agree). */
	char wide[33] = { 0 }, want[33] = { 0 };
	ok = true;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0] && ok; i++)
		for (size_t j = 0; j < sizeof cases / sizeof cases[0] && ok; j++) {
			ig_hex128(wide, cases[i].v, cases[j].v);
			memcpy(want, cases[i].want, 16);
			memcpy(want + 16, cases[j].want, 16);
			ok = memcmp(wide, want, 32) == 0;
		}
	check_that(ok, "hex: 128 bits as 32 lowercase digits, the high half first", "got %s want %s", wide, want);
}

int main(void)
{
	test_hex();
	test_traceparent();
	test_request_id();
	test_parser_notes();
	return check_done();
}
