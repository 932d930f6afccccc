/* Unit tests of net/nats/proto.c: every frame a server sends (INFO, MSG
 * with and without a reply, HMSG with statuses 503/408/409/100, PING,
 * PONG, +OK, -ERR), framed the same whole, byte at a time and in odd
 * pieces; what is refused (an unknown op, a payload over the limit or
 * without its CRLF, a line too long, bad sizes); and the header block's
 * status and fields. */
#include "net/nats/proto.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <string.h>

static const char stream[] =
	"INFO {\"server_id\":\"X\",\"max_payload\":1048576,\"headers\":true}\r\n"
	"PING\r\n"
	"pong\r\n"
	"+OK\r\n"
	"MSG foo.bar 9 11\r\nhello world\r\n"
	"MSG foo 1 _INBOX.abc.7 0\r\n\r\n"
	"HMSG _INBOX.abc.8 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
	"HMSG in.x 2 reply.y 33 38\r\nNATS/1.0\r\nTrace-Id: abc\r\nA: 1\r\n\r\nhello\r\n"
	"HMSG _INBOX.abc.9 1 32 32\r\nNATS/1.0 408 Request Timeout\r\n\r\n\r\n"
	"HMSG _INBOX.abc.9 1 36 36\r\nNATS/1.0 409 Exceeded MaxWaiting\r\n\r\n\r\n"
	"HMSG _INBOX.abc.9 1 31 31\r\nNATS/1.0 100 Idle Heartbeat\r\n\r\n\r\n"
	"MSG\tbin 3 4\r\n\r\n\0x\r\n"
	"-ERR 'Authorization Violation'\r\n";

/* One frame as text, to compare runs. */
static void describe(const struct ig_nats_frame *f, char *out, size_t cap)
{
	static const char *const ops[] = { "", "INFO", "MSG", "PING", "PONG", "OK", "ERR" };
	int status = 0;
	ig_str desc = { 0 };
	if (f->op == IG_NATS_OP_MSG && f->headers.len)
		(void)ig_nats_headers_status(f->headers, &status, &desc);
	snprintf(out, cap, "%s|%.*s|%llu|%.*s|h%zu|%d %.*s|%zu:%.*s", ops[f->op], (int)f->subject.len,
		 f->subject.ptr ? f->subject.ptr : "", (unsigned long long)f->sid, (int)f->reply.len,
		 f->reply.ptr ? f->reply.ptr : "", f->headers.len, status, (int)desc.len, desc.ptr ? desc.ptr : "",
		 f->payload.len, (int)f->payload.len, f->payload.ptr ? f->payload.ptr : "");
}

static const char *const want[] = {
	"INFO||0||h0|0 |54:{\"server_id\":\"X\",\"max_payload\":1048576,\"headers\":true}",
	"PING||0||h0|0 |0:",
	"PONG||0||h0|0 |0:",
	"OK||0||h0|0 |0:",
	"MSG|foo.bar|9||h0|0 |11:hello world",
	"MSG|foo|1|_INBOX.abc.7|h0|0 |0:",
	"MSG|_INBOX.abc.8|1||h16|503 |0:",
	"MSG|in.x|2|reply.y|h33|0 |5:hello",
	"MSG|_INBOX.abc.9|1||h32|408 Request Timeout|0:",
	"MSG|_INBOX.abc.9|1||h36|409 Exceeded MaxWaiting|0:",
	"MSG|_INBOX.abc.9|1||h31|100 Idle Heartbeat|0:",
	"MSG|bin|3||h0|0 |4:\r\n", /* printed up to its NUL */
	"ERR||0||h0|0 |23:Authorization Violation",
};
#define NWANT (sizeof want / sizeof want[0])

/* Feeds stream to a parser step bytes more at a time (0: all at once),
 * as a connection's reads would, and checks each frame. */
static void run(size_t step, const char *name)
{
	struct ig_nats_parser p;
	ig_nats_parser_init(&p, 1 << 20);
	size_t total = sizeof stream - 1, pos = 0, have = step ? 0 : total, n = 0;
	bool ok = true;
	char got[256];
	while (pos < total && ok) {
		struct ig_nats_frame f;
		int r = ig_nats_parse(&p, stream + pos, have - pos, &f);
		if (r == IG_NATS_PARSE_MORE) {
			if (have == total) {
				ok = check_that(false, name, "wanted more at the end (frame %zu)", n);
				break;
			}
			have = have + step > total ? total : have + step;
			continue;
		}
		if (r < 0) {
			ok = check_that(false, name, "error %s at frame %zu", p.error, n);
			break;
		}
		describe(&f, got, sizeof got);
		if (n >= NWANT || strcmp(got, want[n]) != 0) {
			ok = check_that(false, name, "frame %zu: %s, want %s", n, got, n < NWANT ? want[n] : "none");
			break;
		}
		n++;
		pos += (size_t)r;
	}
	if (ok)
		check_that(n == NWANT, name, "%zu frames, want %zu", n, NWANT);
}

static void test_framing(void)
{
	run(0, "every kind of frame, in one read");
	run(1, "the same fed a byte at a time");
	run(7, "the same in reads of 7 bytes");
	run(64, "the same in reads of 64 bytes");
}

/* The parser's state across reads: a payload cut short keeps its line's
 * parse, and the next read completes it without a rescan. */
static void test_resume(void)
{
	struct ig_nats_parser p;
	ig_nats_parser_init(&p, 100);
	struct ig_nats_frame f;
	const char *m = "MSG a 1 5\r\nabcde\r\n";
	CHECK_INT(ig_nats_parse(&p, m, 13, &f), IG_NATS_PARSE_MORE, "a payload cut short wants more");
	CHECK(p.line_end == 11, "its line is parsed once, kept");
	CHECK_INT(ig_nats_parse(&p, m, strlen(m), &f), (int)strlen(m), "the rest completes it");
	check_slice(f.payload.ptr, f.payload.len, "abcde", "its payload", "payload");
	CHECK(p.line_end == 0, "and the parser is ready for the next frame");
	CHECK_INT(ig_nats_parse(&p, "PI", 2, &f), IG_NATS_PARSE_MORE, "a line cut short wants more");
	CHECK(p.scanned == 2, "the bytes scanned are not scanned again");
}

static int parse_error(const char *in, size_t max_payload, const char **why)
{
	struct ig_nats_parser p;
	ig_nats_parser_init(&p, max_payload);
	struct ig_nats_frame f;
	int r = ig_nats_parse(&p, in, strlen(in), &f);
	*why = p.error;
	return r;
}

static void test_errors(void)
{
	const char *why;
	CHECK_INT(parse_error("HELLO\r\n", 100, &why), IG_NATS_PARSE_ERROR, "an unknown op is an error");
	CHECK_INT(parse_error("MSG a 1 101\r\n", 100, &why), IG_NATS_PARSE_ERROR, "a message over the limit");
	check_slice(why, strlen(why), "a message is larger than the payload limit", "says so", "why");
	CHECK_INT(parse_error("MSG a 1 3\r\nabcde\r\n", 100, &why), IG_NATS_PARSE_ERROR,
		  "a payload not followed by CRLF");
	CHECK_INT(parse_error("MSG a 1\r\n", 100, &why), IG_NATS_PARSE_ERROR, "a MSG without its size");
	CHECK_INT(parse_error("MSG a x 3\r\n", 100, &why), IG_NATS_PARSE_ERROR, "a sid that is not a number");
	CHECK_INT(parse_error("HMSG a 1 9 3\r\n", 100, &why), IG_NATS_PARSE_ERROR, "headers larger than the message");
	CHECK_INT(parse_error("MSG a 1 b c 3\r\n", 100, &why), IG_NATS_PARSE_ERROR, "a MSG with too many fields");
	static char longline[70000];
	memset(longline, 'x', sizeof longline - 1);
	longline[sizeof longline - 1] = 0;
	CHECK_INT(parse_error(longline, 100, &why), IG_NATS_PARSE_ERROR, "a control line over 64 KiB, unfinished");
}

static void test_headers(void)
{
	ig_str h = IG_STR("NATS/1.0 404 No Messages\r\nNats-Msg-Id: m1\r\ntrace-id:  t-9 \r\n\r\n");
	int status;
	ig_str desc, v;
	CHECK(ig_nats_headers_status(h, &status, &desc), "a status line is read");
	CHECK_INT(status, 404, "its code");
	check_slice(desc.ptr, desc.len, "No Messages", "its description", "description");
	CHECK(ig_nats_header_get(h, "nats-msg-id", &v), "a field by its name in any case");
	check_slice(v.ptr, v.len, "m1", "its value", "value");
	CHECK(ig_nats_header_get(h, "Trace-Id", &v) && v.len == 3 && !memcmp(v.ptr, "t-9", 3),
	      "a value without its blanks");
	CHECK(!ig_nats_header_get(h, "Missing", &v), "a field absent");
	CHECK(!ig_nats_headers_status(IG_STR("HTTP/1.1 200\r\n\r\n"), &status, &desc), "not a NATS block");
	CHECK(ig_nats_headers_status(IG_STR("NATS/1.0\r\nA: b\r\n\r\n"), &status, &desc) && status == 0,
	      "a block without a status has none");
}

int main(void)
{
	test_framing();
	test_resume();
	test_errors();
	test_headers();
	return check_done();
}
