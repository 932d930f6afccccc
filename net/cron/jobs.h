/* The app's cron jobs as the generated code records them (schemac, from
 * the document's x-ingot-cron): each job's name, its schedule already
 * parsed (kernel/runtime/cron_expr.h: the runtime only computes next fire
 * times) and the operation it calls, which takes no required parameter
 * and no required body. Data, and the scheduler's entry points (ops):
 * the generated table names them, so net/cron/scheduler.c is linked
 * only into a binary whose document declares jobs. */
#ifndef NET_CRON_JOBS_H
#define NET_CRON_JOBS_H

#include "kernel/runtime/cron_expr.h"
#include "ingot/lifecycle.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct ig_operation;
struct ig_settings;
struct ig_loop;

/* Where a platform's scheduler (a Knative PingSource, EventBridge through
 * the Lambda loop) asks for a job by name: a POST whose CloudEvent data
 * is {"job": "<name>"}. */
#define IG_CRON_PATH "/_ingot/cron"

struct ig_cron_job {
	const char *name;     /* the document's, unique */
	const char *schedule; /* as written, for logs */
	struct ig_cron_expr expr;
	/* The operation it runs, as a request without parameters or body:
	   method and path (the template has no parameters, so it is the
	   path itself), and the descriptor. */
	const char *method, *path;
	const struct ig_operation *operation;
};

struct ig_cron_table;

/* The scheduler (net/cron/scheduler.h), as the start reaches it. */
struct ig_cron_ops {
	/* The runtime's own migration (`service --migrate` runs it before
	   the app's): the claims table. */
	const char *migration_sql;
	/* On the main thread, after the settings and the app's init, outside
	   Lambda: the jobs that lifecycle (NULL: none) leaves on are
	   scheduled here. Returns whether any is, and then core_start must
	   run on core 0. */
	bool (*prepare)(const struct ig_cron_table *table, const struct ig_lifecycle *lifecycle);
	/* On each core's loop as it starts (ig_http_core_start_hook); core
	   0's arms the timer. */
	void (*core_start)(struct ig_loop *loop, int core_count);
};

struct ig_cron_table {
	const struct ig_cron_job *jobs;
	size_t count;
	const struct ig_cron_ops *ops; /* &ig_cron_ops */
};

/* Whether lifecycle (may be NULL) leaves the job name on: inline, as the
 * start asks it without touching the scheduler's pages. */
static inline bool ig_cron_job_on(const char *name, const struct ig_lifecycle *lifecycle)
{
	for (size_t i = 0; lifecycle && i < lifecycle->cron_switch_count; i++)
		if (strcmp(lifecycle->cron_switches[i].job, name) == 0)
			return *lifecycle->cron_switches[i].on;
	return true;
}

/* Claims a tick somewhere other than PostgreSQL (net/pubsub's NATS
 * provider: a create-if-absent key in a KV bucket). On core 0's loop:
 * claim calls done(arg, result) once, later or inside, with 1 (claimed
 * here: run it), 0 (claimed by another replica) or -1 (no answer: run
 * nothing). */
typedef void ig_cron_claimed_fn(void *arg, int result);
struct ig_cron_claimer {
	const char *name; /* for logs: "nats" */
	void (*claim)(const char *job, int64_t tick, ig_cron_claimed_fn *done, void *arg);
};
/* Set before the scheduler's prepare by a provider that claims (NULL:
 * PostgreSQL's claims table when a database is configured). Defined by
 * scheduler.c; a provider refers to it weakly. */
extern const struct ig_cron_claimer *ig_cron_claimer;

/* net/cron/scheduler.c's: the generated table points here. */
extern const struct ig_cron_ops ig_cron_ops;

/* INGOT_CRON_SECRET (cron_settings.c). */
struct ig_cron_config {
	const char *secret; /* "" (or NULL, before the settings ran): the endpoint is off */
};
extern struct ig_cron_config ig_cron_config;
extern const struct ig_settings ig_cron_settings;

/* The generated router's last step before its 404, in a document with
 * jobs (net/cron/endpoint.c): POST IG_CRON_PATH with INGOT_CRON_SECRET as
 * a bearer token and a CloudEvent whose data is {"job": "<name>"}, in the
 * binary mode (the data is the body) or the structured one (Content-Type
 * application/cloudevents+json, the data its "data"), runs the job as the
 * scheduler does and answers 204 when its operation answered 2xx, else
 * 502 (problem+json: the platform retries). 401 without the token, 405
 * for another method, 400 for an event naming no job, 404 for a job not
 * in the table. Returns false, answering nothing, for another path or
 * while INGOT_CRON_SECRET is not set: the router answers 404. */
struct ig_ctx;
bool ig_cron_serve(struct ig_ctx *ctx);

/* Defined by the generated code only when the document declares jobs;
 * weak, so a runtime that reads it links nothing extra for an app with
 * none (&ig_api_cron is then NULL). */
extern const struct ig_cron_table ig_api_cron __attribute__((weak));

#endif
