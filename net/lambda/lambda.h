/* The AWS Lambda custom runtime: when AWS_LAMBDA_RUNTIME_API is set, the
 * process serves invocations from the Runtime API (2018-06-01) instead of
 * listening. The contract with the process's start (net/start.c):
 *  - ig_lambda_requested says whether to; the start asks it before
 *    anything listens.
 *  - ig_lambda_serve runs one loop on the calling thread and binds no
 *    socket at all (no listener, no admin listener, whatever PORT and
 *    INGOT_ADMIN_PORT say). It pulls an invocation (GET .../next, no
 *    timeout), answers it through the same engine as an HTTP request
 *    (net/http/inproc.h), posts the answer (.../{id}/response) or the
 *    failure (.../{id}/error), and pulls the next: one at a time, never
 *    interleaved. A Runtime API call that fails (refused, reset, a 5xx) is
 *    retried, backing off from 10 ms to at most 500 ms, each retry logged.
 *    It returns only when the loop cannot be set up (reported to
 *    /runtime/init/error as Runtime.OutOfMemory; the exit code is 2).
 *  - ig_lambda_init_error reports a start that failed (a bad setting) to
 *    /runtime/init/error as {"errorMessage", "errorType"} and returns 2,
 *    the exit code.
 * An invocation's Lambda-Runtime-Aws-Request-Id becomes its request id
 * (X-Request-Id), Lambda-Runtime-Deadline-Ms its deadline (ig_deadline_ms:
 * outbound calls end by it), Lambda-Runtime-Trace-Id _X_AMZN_TRACE_ID in
 * the environment during the invocation, and a traceparent (the X-Ray
 * root and parent) when the event has none. */
#ifndef NET_LAMBDA_LAMBDA_H
#define NET_LAMBDA_LAMBDA_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/runtime/config.h"
#include "ingot/api_hooks.h"

/* The runtime's rows of the settings table (AWS_LAMBDA_RUNTIME_API). */
extern const struct ig_settings ig_lambda_settings;

/* AWS_LAMBDA_RUNTIME_API is set and not empty (read from the environment,
 * so that it holds before the settings are parsed, for the init error). */
bool ig_lambda_requested(void);

/* Serves invocations until the process is stopped; t0_us: when the start
 * began (the "lambda runtime" line's startup_us). Returns an exit code. */
int ig_lambda_serve(const struct ig_app *app, uint64_t t0_us);

/* Posts message (errorType "Runtime.InvalidSetting") to the Runtime API's
 * init/error; returns 2. */
int ig_lambda_init_error(const char *message);

#endif
