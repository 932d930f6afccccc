/* /livez and /readyz: liveness is the loop answering at all; readiness
 * is every listener up, every registered backend up and no drain begun.
 * The state is a handful of atomics written rarely (start, signal, a
 * backend's connect or loss) and read only by a probe: nothing here is on
 * the path of an ordinary request. */
#include "health.h"
#include "internal.h"

#include <stdatomic.h>

static _Atomic bool listening; /* not ready until the server says */
static _Atomic bool draining;
static _Atomic int backend_count;
static _Atomic bool backend_up[IG_MAX_BACKENDS];
static const char *backend_name[IG_MAX_BACKENDS]; /* written before the count that publishes it */

int ig_backend_register(const char *name)
{
	int id = atomic_load_explicit(&backend_count, memory_order_relaxed);
	if (id >= IG_MAX_BACKENDS)
		return -1;
	backend_name[id] = name;
	atomic_store_explicit(&backend_up[id], false, memory_order_relaxed);
	atomic_store_explicit(&backend_count, id + 1, memory_order_release);
	return id;
}

void ig_backend_set_up(int id, bool up)
{
	if (id >= 0 && id < IG_MAX_BACKENDS)
		atomic_store_explicit(&backend_up[id], up, memory_order_relaxed);
}

/* The start's: cold, as the rest of it (net/server/server.c). */
__attribute__((cold)) void ig_http_health_set_listening(void)
{
	atomic_store(&listening, true);
}

void ig_http_health_set_draining(void)
{
	atomic_store(&draining, true);
}

enum readiness { READY, DRAINING, STARTING, BACKEND_DOWN };

/* down: the first backend down, for BACKEND_DOWN. */
static enum readiness readiness(int *down)
{
	if (atomic_load_explicit(&draining, memory_order_relaxed))
		return DRAINING;
	if (!atomic_load_explicit(&listening, memory_order_relaxed))
		return STARTING;
	int n = atomic_load_explicit(&backend_count, memory_order_acquire);
	for (int i = 0; i < n; i++)
		if (!atomic_load_explicit(&backend_up[i], memory_order_relaxed)) {
			*down = i;
			return BACKEND_DOWN;
		}
	return READY;
}

bool ig_http_health_ready(void)
{
	int down;
	return readiness(&down) == READY;
}

static unsigned path_kind(ig_str path)
{
	if (ig_str_eq(path, "/livez", 6))
		return HTTP_HEALTH_LIVEZ;
	if (ig_str_eq(path, "/readyz", 7))
		return HTTP_HEALTH_READYZ;
	return 0;
}

__attribute__((cold)) unsigned ig_http_health_free_paths(const struct ig_app *app)
{
	unsigned mask = HTTP_HEALTH_LIVEZ | HTTP_HEALTH_READYZ;
	for (uint32_t i = 0; i < app->route_count; i++) {
		const char *r = app->routes[i];
		mask &= ~path_kind((ig_str){ r, strlen(r) });
	}
	return mask;
}

/* A probe's answer is JSON and never cached (a proxy must not answer a
 * later probe with it). Its 503 reports readiness: no request failed, so
 * it writes no error line (error_log.c). */
static ig_wbuf *probe_body(struct ig_ctx *x)
{
	x->error_logged = true;
	ig_set_content_type(x, "application/json");
	ig_add_header(x, "Cache-Control", IG_STR("no-store"));
	return ig_body(x);
}

static void answer(struct ig_ctx *x, int status, const char *body)
{
	ig_wbuf_put(probe_body(x), body, strlen(body));
	ig_finish(x, status);
}

/* {"status":"backend down","backend":NAME}: which one, for the operator. */
static void answer_backend_down(struct ig_ctx *x, const char *name)
{
	ig_wbuf *b = probe_body(x);
	ig_wbuf_lit(b, "{\"status\":\"backend down\",\"backend\":");
	ig_json_string(b, name, strlen(name));
	ig_wbuf_lit(b, "}");
	ig_finish(x, 503);
}

bool ig_http_health_answer_paths(struct ig_ctx *x, unsigned mask)
{
	unsigned kind = path_kind(x->req.path) & mask;
	/* HEAD is routed as GET (the engine drops the body). */
	if (!kind || !ig_str_eq(x->req.method, "GET", 3))
		return false;
	if (kind == HTTP_HEALTH_LIVEZ) {
		answer(x, 200, "{\"status\":\"ok\"}");
		return true;
	}
	static const char *const body[] = {
		[READY] = "{\"status\":\"ready\"}",
		[DRAINING] = "{\"status\":\"draining\"}",
		[STARTING] = "{\"status\":\"starting\"}",
	};
	int down = 0;
	enum readiness r = readiness(&down);
	if (r == BACKEND_DOWN)
		answer_backend_down(x, backend_name[down] ? backend_name[down] : "");
	else
		answer(x, r == READY ? 200 : 503, body[r]);
	return true;
}

bool ig_http_health_answer(struct ig_ctx *x)
{
	return ig_http_health_answer_paths(x, HTTP_HEALTH_LIVEZ | HTTP_HEALTH_READYZ);
}
