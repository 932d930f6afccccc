/* Handler tests without sockets, for apps: a request sent through the
 * app's own router, decoders, validators, handlers and encoders on a core
 * of the calling thread, and its response read back (status, fields,
 * body). It runs on the in-process path (net/http/inproc.h), the engine
 * the Lambda runtime serves with, so a test meets what an HTTP client
 * meets: the codec's limits, 400 problem+json from the validators, the
 * health paths, request ids. A handler that goes pending (an outbound
 * call) completes on the core's loop, which ig_test_request runs until
 * the exchange has finished.
 *
 * Outbound calls go to the core's real Agent (the network) until
 * ig_test_mock is called; from then on to the client's mock agent
 * (include/ingot/client_mock.h) with the network forbidden, so a call that no
 * interception answers fails with IG_CLIENT_NET_FORBIDDEN.
 *
 * Use from one thread, one request at a time:
 *
 *	#include "ingot/testing.h"
 *	extern const struct ig_app ig_api_app; // the generated code's
 *	ig_test_init(&ig_api_app);
 *	struct ig_test_response r;
 *	ig_test_request("GET", "/hello?name=x", NULL, 0, IG_STR(""), &r);
 *	// r.status, ig_test_header(&r, "content-type"), r.body
 *
 * Build: the runtime's sources but net/api/main.c (the test has its own
 * main), the app's generated code and handlers; the Makefile's
 * TEST_API_SRC lists the runtime's part. No allocation per request: the
 * request and its response share one buffer mapped by ig_test_init. */
#ifndef INGOT_TESTING_H
#define INGOT_TESTING_H

#include "ingot/client_mock.h"
#include "ingot/http.h"

/* What ig_test_init and ig_test_request report: IG_TEST_OK, or why there
 * is no response to look at. */
enum ig_test_error {
	IG_TEST_OK,
	IG_TEST_SETTINGS,    /* the environment's settings are refused (the
				message is on stderr, as the server prints it) */
	IG_TEST_NO_MEMORY,   /* the core, its loop or the buffer cannot be had,
				or the core has no connection slot left */
	IG_TEST_NOT_READY,   /* no ig_test_init, or it failed */
	IG_TEST_BAD_REQUEST, /* the method, target or a field cannot be
				written as HTTP/1.1 (a CR or LF in it) */
	IG_TEST_TOO_LARGE,   /* the request or its response exceeds
				IG_TEST_BUFFER */
	IG_TEST_NO_RESPONSE, /* the engine closed without a whole response */
	IG_TEST_HUNG,        /* no response within IG_TEST_GUARD_MS of the loop's
				clock: a handler that never completes; the
				exchange stays the engine's, so every later
				request returns IG_TEST_HUNG too */
	IG_TEST_INIT,        /* the app's init hook returned a message (on
				stderr, as the server prints it) */
};

#define IG_TEST_BUFFER (4u << 20)  /* request and response together */
#define IG_TEST_GUARD_MS 30000

/* Names a kind ("too_large"). Returns: static storage, never NULL. */
const char *ig_test_error_name(enum ig_test_error e);

/* Sets up the test core for app once: the settings from the environment
 * (INGOT_* variables and the app's, as the server reads them) or their
 * defaults, the app's init and core_init hooks (include/ingot/lifecycle.h;
 * core 0 of 1: drain and stopped never run), one loop on this thread, no
 * listener, ready (/readyz 200); with
 * DATABASE_URL set, the core's database pool (net/pg), so handlers that
 * query run against that database. app (the generated ig_api_app) is kept
 * for the life of the process. On the thread that will send the requests;
 * a second call returns the first's result. Returns: IG_TEST_OK, or why
 * the test core cannot run (then every request answers
 * IG_TEST_NOT_READY). */
IG_MUST_USE IG_NONNULL(1) enum ig_test_error ig_test_init(const struct ig_app *app);

/* A response as the test core wrote it: every slice points into the test
 * core's buffer, valid until the next ig_test_request. */
struct ig_test_response {
	int status;
	const ig_header *headers; /* as the engine wrote them: Date,
				     Content-Length and Connection included */
	size_t header_count;
	ig_str body;              /* empty for HEAD */
};

/* Sends one request (headers may be NULL when count is 0; Host is added
 * when absent, Content-Length is the body's; everything is copied) and
 * runs the core's loop until its response is complete. On ig_test_init's
 * thread, after it. Returns: IG_TEST_OK with *res holding the response
 * (its slices valid until the next request); else the error, and *res
 * zeroed (status 0), so a test that checks the status alone still fails. */
IG_NONNULL(1, 2, 6) enum ig_test_error ig_test_request(const char *method, const char *target, const ig_header *headers, size_t count,
				   ig_str body, struct ig_test_response *res);

/* The value of the first field named name (any case), a slice of res's;
 * an empty slice with a NULL pointer when there is none. */
IG_NONNULL(1, 2) ig_str ig_test_header(const struct ig_test_response *res, const char *name);

/* Whether the body is exactly s (a NUL-terminated string). */
IG_NONNULL(1, 2) bool ig_test_body_is(const struct ig_test_response *res, const char *s);

/* The test core's mock agent, made on the first call, with the network
 * disabled: register interceptions on it before the request whose handler
 * calls out (ig_mock_intercept). Returns: the mock, the test core's (never
 * free it: ig_test_mock_reset does), valid until ig_test_mock_reset; NULL
 * before ig_test_init or when memory is short. */
ig_mock_agent *ig_test_mock(void);

/* Frees the mock agent, its interceptions and its history, and gives the
 * core its real Agent back until the next ig_test_mock makes a new mock.
 * Between requests, for cases that must not see each other's mocks; a
 * pointer ig_test_mock returned is invalid after. Does nothing without a
 * mock. */
void ig_test_mock_reset(void);

/* The test core itself, for the runtime's own tests (tests/unit) that
 * look at its pools or reach below the API; apps do not need it.
 * Returns: the core (the test's, for the process's life), or NULL before
 * a successful ig_test_init. */
struct http_core *ig_test_core(void);

#endif
