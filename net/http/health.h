/* Liveness and readiness: the process-wide readiness state (listeners up,
 * required backends up, not draining) and the engine's answers to GET and
 * HEAD /livez and /readyz, on the main port and on the admin listener. */
#ifndef NET_HTTP_HEALTH_H
#define NET_HTTP_HEALTH_H

#include <stdbool.h>

#include "ingot/api_hooks.h"

#define HTTP_HEALTH_LIVEZ 1u
#define HTTP_HEALTH_READYZ 2u

/* Answers GET or HEAD /livez and /readyz on x (200 / 503, a small JSON
 * body, Cache-Control: no-store) and returns true; false (x untouched) for
 * any other path or method. Served by the engine on the main port unless
 * the document defines the path (conn_dispatch), and by the admin
 * listener. */
bool ig_http_health_answer(struct ig_ctx *x);
/* As ig_http_health_answer, for the paths in mask (HTTP_HEALTH_*) only. */
bool ig_http_health_answer_paths(struct ig_ctx *x, unsigned mask);
/* False for a path that cannot be /livez or /readyz: inline, so that an
 * ordinary request on the main port pays a length test, not a call. */
static inline bool http_health_path_possible(ig_str path)
{
	return path.len == 6 || path.len == 7;
}
/* The built-in paths that app's document leaves free: the main port's
 * mask (0: the document defines both). */
unsigned ig_http_health_free_paths(const struct ig_app *app);

/* The server's side of the state, written by the starting thread and core
 * 0, read by every core (relaxed atomics). */
/* The listeners are up (the start, before "listening"). */
void ig_http_health_set_listening(void);
/* SIGTERM/SIGINT: not ready from now on (before the drain delay). */
void ig_http_health_set_draining(void);
bool ig_http_health_ready(void);

#endif
