/* Unit tests of net/http/hooks.c, security_headers.c and hooks_settings.c:
 * the after-hooks' runs on an exchange (the operation's replace the
 * root's, the admin listener's answers have none) and on an answer
 * without one (its fixed room: a field that does not fit is left out
 * whole), a field value's line breaks sent as spaces, and
 * INGOT_SECURITY_HEADERS (nosniff always, HSTS over TLS only, its
 * max-age). Through the binary: tests/integration/hooks.test.mjs. */
#include "net/http/hooks.h"
#include "net/http/internal.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <stdio.h>

static struct ig_pool blocks;

/* Hooks that record what they saw and add a field. */
static int root_runs, op_runs, last_status;
static bool last_tls, last_exchange;
static void root_after(const struct ig_answer *a)
{
	root_runs++;
	last_status = a->status;
	last_tls = a->tls;
	last_exchange = a->ctx != NULL;
	ig_answer_add_header(a, "X-Root", IG_STR("1"));
}
static void op_after(const struct ig_answer *a)
{
	op_runs++;
	ig_answer_add_header(a, "X-Op", IG_STR("a\r\nInjected: 1"));
}
static void long_after(const struct ig_answer *a)
{
	static char big[2000];
	memset(big, 'v', sizeof big);
	ig_answer_add_header(a, "X-Long", (ig_str){ big, sizeof big });
	ig_answer_add_header(a, "X-After-Long", IG_STR("fits"));
}

static ig_after_hook_fn *const root_list[] = { root_after };
static const struct ig_op_hooks root = { .after = root_list, .nafter = 1 };
static ig_after_hook_fn *const op_list[] = { root_after, op_after };
static const struct ig_op_hooks op = { .after = op_list, .nafter = 2 };

static bool text_is(const char *p, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(p, want, n) == 0;
}

/* INGOT_SECURITY_HEADERS and INGOT_HSTS_MAX_AGE as the parse would set
 * them, then the part's check. */
static void security_settings(bool on, int64_t max_age)
{
	*(bool *)ig_hooks_settings.opts[0].target = on;
	*(int64_t *)ig_hooks_settings.opts[1].target = max_age;
	CHECK(ig_hooks_settings.check(NULL, 0) == NULL, "the hooks' settings pass their check");
}

static void test_exchange(void)
{
	static struct ig_ctx x;
	static struct http_conn conn;
	ig_arena_init(&x.arena, &blocks, 1 << 16);
	x.headers = (ig_wbuf){ .arena = &x.arena };
	x.status = 404;
	x.conn = &conn;
	conn.tls = true;
	ig_hooks_start(&(struct ig_app){ .hooks = &root });
	CHECK(ig_hooks_on, "an app with hooks turns them on");
	ig_http_hooks_after(&x);
	CHECK(root_runs == 1 && last_status == 404 && last_tls && last_exchange,
	      "an exchange's answer runs the root's after-hooks with its status, TLS and the exchange");
	CHECK(text_is(x.headers.ptr, x.headers.len, "X-Root: 1\r\n"), "the field joins the exchange's own");

	x.headers.len = 0;
	x.hooks = &op;
	ig_http_hooks_after(&x);
	CHECK(root_runs == 2 && op_runs == 1, "an operation's list (which begins with the root's) replaces the root's");
	CHECK(text_is(x.headers.ptr, x.headers.len, "X-Root: 1\r\nX-Op: a  Injected: 1\r\n"),
	      "a value's CR and LF are sent as spaces: no field is smuggled in");

	x.headers.len = 0;
	x.admin = true;
	ig_http_hooks_after(&x);
	CHECK(root_runs == 2 && x.headers.len == 0, "the admin listener's answers run no hook");
	ig_arena_reset(&x.arena);
}

static void test_no_exchange(void)
{
	char out[IG_HOOKS_LINES_MAX];
	size_t n = ig_http_hooks_after_lines(413, false, out, sizeof out);
	CHECK(root_runs == 3 && last_status == 413 && !last_tls && !last_exchange,
	      "the connection's own answer runs the root's after-hooks, with no exchange");
	CHECK(text_is(out, n, "X-Root: 1\r\n"), "its fields are written into the caller's room");
	CHECK_INT(ig_http_hooks_after_lines(400, false, out, 8), 0, "a field that does not fit is left out whole");

	static ig_after_hook_fn *const longs[] = { long_after };
	static const struct ig_op_hooks with_long = { .after = longs, .nafter = 1 };
	ig_hooks_start(&(struct ig_app){ .hooks = &with_long });
	n = ig_http_hooks_after_lines(400, false, out, sizeof out);
	CHECK(text_is(out, n, "X-After-Long: fits\r\n"), "past the room one field is left out, a later one that fits is kept");
}

static void test_security_headers(void)
{
	char out[IG_HOOKS_LINES_MAX];
	ig_hooks_start(&(struct ig_app){ .hooks = NULL });
	security_settings(false, 31536000);
	CHECK(!ig_hooks_on, "no hooks and no security headers: off (a request pays one test)");
	security_settings(true, 31536000);
	CHECK(ig_hooks_on, "INGOT_SECURITY_HEADERS alone turns the after-hooks on");
	size_t n = ig_http_hooks_after_lines(400, false, out, sizeof out);
	CHECK(text_is(out, n, "X-Content-Type-Options: nosniff\r\n"), "plain HTTP: nosniff, no HSTS");
	n = ig_http_hooks_after_lines(400, true, out, sizeof out);
	CHECK(text_is(out, n, "X-Content-Type-Options: nosniff\r\nStrict-Transport-Security: max-age=31536000\r\n"),
	      "TLS: nosniff and HSTS with the default max-age");
	security_settings(true, 0);
	n = ig_http_hooks_after_lines(200, true, out, sizeof out);
	CHECK(text_is(out, n, "X-Content-Type-Options: nosniff\r\nStrict-Transport-Security: max-age=0\r\n"),
	      "INGOT_HSTS_MAX_AGE=0 is sent: browsers forget the host's HSTS");
	ig_hooks_start(&(struct ig_app){ .hooks = &root });
	n = ig_http_hooks_after_lines(200, false, out, sizeof out);
	CHECK(text_is(out, n, "X-Content-Type-Options: nosniff\r\nX-Root: 1\r\n"),
	      "the security headers come before the document's after-hooks");
	security_settings(false, 31536000);
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 4, 64);
	test_exchange();
	test_no_exchange();
	test_security_headers();
	return check_done();
}
