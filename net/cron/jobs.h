/* The app's cron jobs as the generated code records them (schemac, from
 * the document's x-ingot-cron): each job's name, its schedule already
 * parsed (kernel/runtime/cron_expr.h: the runtime only computes next fire
 * times) and the operation it calls, which takes no required parameter
 * and no required body. Data only: the scheduler that claims each tick
 * across replicas, and the endpoint a platform's trigger calls
 * (IG_CRON_PATH), read this table. */
#ifndef NET_CRON_JOBS_H
#define NET_CRON_JOBS_H

#include "kernel/runtime/cron_expr.h"

#include <stddef.h>

struct ig_operation;

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

struct ig_cron_table {
	const struct ig_cron_job *jobs;
	size_t count;
};

/* Defined by the generated code only when the document declares jobs;
 * weak, so a runtime that reads it links nothing extra for an app with
 * none (&ig_api_cron is then NULL). */
extern const struct ig_cron_table ig_api_cron __attribute__((weak));

#endif
