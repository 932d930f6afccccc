/* Tasks: exchanges the runtime starts for itself, with no connection and
 * no HTTP bytes (Pub/Sub's deliveries from its consumers). The starter
 * gives a request as the parser would have (method, path, fields) and a
 * body, runs the exchange's handler itself (ig_wait_run), and is told the
 * answer: the exchange's status, its request id and trace are the ones
 * ig_finish logged. What an exchange does between is the engine's as for
 * any request (the access log, the 5xx line, the hooks); ig_cancelled says
 * false for it, as it has no client to lose.
 *
 * The drain counts a task as it counts a connection (core->count): a
 * draining core takes no new task and waits for those running; its grace
 * period's end cuts them ("request cut", as a connection's requests).
 *
 * Why not an in-process request (inproc.h): a task writes no head and
 * parses none, which was most of a delivery's work (a PostgreSQL
 * delivery: 13,100 instructions as an in-process request, 3,850 as a
 * task). The router, the codec's checks and the encoders are not on its
 * path, so a task is for the runtime's own requests, whose handler the
 * starter names; a request from outside (Lambda's, a push) goes through
 * inproc.h and the engine. */
#ifndef NET_HTTP_TASK_H
#define NET_HTTP_TASK_H

#include "internal.h"

struct http_task;

/* The task's answer: x->status (and its body, fields and ids) as ig_finish
 * left them; x is freed when this returns. Called on the core's loop after
 * the batch in which the exchange finished, never from inside the call
 * that started it. The task may be started again from here. */
typedef void http_task_done_fn(struct http_task *t, struct ig_ctx *x);

/* One task in flight; its starter owns it and keeps it until done has
 * run. Private fields. */
struct http_task {
	struct http_stream stream; /* first: the exchange's upcall for its answer */
	struct http_task *prev, *next; /* in core->tasks until answered */
	struct http_core *core;
	struct ig_ctx *ctx;
	http_task_done_fn *done;
	struct ig_deferred report;
};

/* Starts t on core (on its thread): an exchange whose request is r's
 * method, target, path, query and fields (r->headers, with the trace's
 * field indexes as the parser sets them) and body, all of which must stay
 * as they are until done has run. Returns the exchange, for the starter
 * to run its handler on (ig_wait_run) and answer (ig_finish); NULL,
 * nothing started and done never called, while the core drains or has no
 * exchange free. */
struct ig_ctx *ig_http_task_begin(struct http_task *t, struct http_core *core, const struct http_request *r,
				  ig_str body, http_task_done_fn *done);

#endif
