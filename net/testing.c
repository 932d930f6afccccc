/* Handler tests without sockets (testing.h): one core on the calling
 * thread, set up as the Lambda runtime sets up its own (inproc.h), and one
 * request at a time run on it until the in-process exchange reports. */
#include "ingot/testing.h"
#include "ingot/lifecycle.h"
#include "ingot/log.h"
#include "net/http/health.h"
#include "net/http/hooks.h"
#include "net/http/inproc.h"
#include "net/server/server.h"
#include "net/pg/settings.h"
#include "net/start.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

extern const struct ig_lifecycle ig_app_lifecycle __attribute__((weak));

static struct {
	enum ig_test_error state; /* IG_TEST_NOT_READY until set up */
	bool tried;
	struct http_core core;
	struct http_inproc inproc;
	char *buf;
	ig_mock_agent *mock;
	/* the request in flight */
	bool done;
	enum http_inproc_result result;
	struct http_inproc_response res;
	struct ig_timer guard;
} t = { .state = IG_TEST_NOT_READY };

const char *ig_test_error_name(enum ig_test_error e)
{
	static const char *const names[] = {
		[IG_TEST_OK] = "ok",
		[IG_TEST_SETTINGS] = "settings",
		[IG_TEST_NO_MEMORY] = "no_memory",
		[IG_TEST_NOT_READY] = "not_ready",
		[IG_TEST_BAD_REQUEST] = "bad_request",
		[IG_TEST_TOO_LARGE] = "too_large",
		[IG_TEST_NO_RESPONSE] = "no_response",
		[IG_TEST_HUNG] = "hung",
		[IG_TEST_INIT] = "init",
	};
	return (unsigned)e < IG_COUNTOF(names) && names[e] ? names[e] : "unknown";
}

static enum ig_test_error set_up(const struct ig_app *app)
{
	char *argv[] = { (char *)app->name, NULL };
	const struct ig_config_args args = { .argc = 1, .argv = argv, .name = app->name, .version = app->version };
	if (ig_settings_parse(&args) != IG_CONFIG_OK)
		return IG_TEST_SETTINGS;
	ig_hooks_start(app);
	ig_log_set_threshold((enum ig_log_level)ig_server_config.log_level);
	const struct ig_lifecycle *hooks = &ig_app_lifecycle;
	if (hooks && hooks->init) {
		char err[256] = "";
		const char *why = hooks->init(err, sizeof err);
		if (why) {
			fprintf(stderr, "ingot: the app's init failed: %s\n", why);
			return IG_TEST_INIT;
		}
	}
	ig_server_config.threads = 1;
	if (ig_http_inproc_core_init(&t.core, &ig_server_config, app) != 0)
		return IG_TEST_NO_MEMORY;
	void *m = mmap(NULL, IG_TEST_BUFFER, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return IG_TEST_NO_MEMORY;
	t.buf = m;
	if (ig_pg_start()) /* DATABASE_URL: the core's pool, as a server core's */
		ig_pg_core_start(&t.core.loop, 1);
	if (hooks && hooks->core_init)
		hooks->core_init(0, 1);
	ig_http_health_set_listening(); /* nothing to wait for but the backends */
	return IG_TEST_OK;
}

/* Runs once per process: cold, as a start. */
__attribute__((cold)) enum ig_test_error ig_test_init(const struct ig_app *app)
{
	if (!t.tried) {
		t.tried = true;
		t.state = set_up(app);
	}
	return t.state;
}

static void on_done(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	(void)arg;
	t.done = true;
	t.result = result;
	if (res)
		t.res = *res;
	t.core.loop.running = false;
}

static void on_guard(struct ig_timer *timer)
{
	(void)timer;
	t.core.loop.running = false;
}

static enum ig_test_error error_of(enum http_inproc_result r)
{
	switch (r) {
	case HTTP_INPROC_OK: return IG_TEST_OK;
	case HTTP_INPROC_BAD_FIELD: return IG_TEST_BAD_REQUEST;
	case HTTP_INPROC_NO_ROOM: return IG_TEST_TOO_LARGE;
	case HTTP_INPROC_NO_SLOT: return IG_TEST_NO_MEMORY;
	case HTTP_INPROC_NO_RESPONSE: break;
	}
	return IG_TEST_NO_RESPONSE;
}

enum ig_test_error ig_test_request(const char *method, const char *target, const ig_header *headers, size_t count,
				   ig_str body, struct ig_test_response *res)
{
	*res = (struct ig_test_response){ 0 };
	if (t.state != IG_TEST_OK)
		return t.state == IG_TEST_HUNG ? IG_TEST_HUNG : IG_TEST_NOT_READY;
	const struct http_inproc_request req = {
		.method = { method, strlen(method) },
		.target = { target, strlen(target) },
		.headers = headers,
		.header_count = count,
		.body = body,
		.peer = IG_STR("127.0.0.1"),
	};
	t.done = false;
	enum http_inproc_result r;
	if (ig_http_inproc_run(&t.inproc, &t.core, t.buf, IG_TEST_BUFFER, &req, on_done, NULL, &r) != 0)
		return error_of(r);
	if (!t.done) { /* done comes from the loop, after the engine's batch */
		t.guard = (struct ig_timer){ .fn = on_guard };
		ig_timer_set(&t.core.loop.timers, &t.guard, t.core.loop.clock.now_ms + IG_TEST_GUARD_MS);
		ig_loop_run(&t.core.loop);
		ig_timer_cancel(&t.core.loop.timers, &t.guard);
	}
	if (!t.done) { /* the engine still holds the exchange: no more requests */
		t.state = IG_TEST_HUNG;
		return IG_TEST_HUNG;
	}
	if (t.result != HTTP_INPROC_OK)
		return error_of(t.result);
	*res = (struct ig_test_response){ .status = t.res.status, .headers = t.res.headers,
					  .header_count = t.res.header_count, .body = t.res.body };
	return IG_TEST_OK;
}

ig_str ig_test_header(const struct ig_test_response *res, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < res->header_count; i++)
		if (res->headers[i].name.len == n && strncasecmp(res->headers[i].name.ptr, name, n) == 0)
			return res->headers[i].value;
	return (ig_str){ NULL, 0 };
}

bool ig_test_body_is(const struct ig_test_response *res, const char *s)
{
	size_t n = strlen(s);
	return res->body.len == n && (n == 0 || memcmp(res->body.ptr, s, n) == 0);
}

ig_mock_agent *ig_test_mock(void)
{
	if (t.state != IG_TEST_OK)
		return NULL;
	if (!t.mock) {
		t.mock = ig_mock_agent_new(&t.core.loop, NULL);
		if (!t.mock)
			return NULL;
		ig_mock_disable_net_connect(t.mock);
		ig_core_set_agent(&t.core.loop, ig_mock_dispatcher(t.mock));
	}
	return t.mock;
}

void ig_test_mock_reset(void)
{
	if (!t.mock)
		return;
	ig_core_set_agent(&t.core.loop, NULL);
	ig_mock_agent_free(t.mock);
	t.mock = NULL;
}

struct http_core *ig_test_core(void)
{
	return t.state == IG_TEST_OK || t.state == IG_TEST_HUNG ? &t.core : NULL;
}
