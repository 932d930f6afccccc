/* The mock agent: a dispatcher for tests, in the manner of undici's
 * MockAgent. A test registers interceptions (which requests: origin,
 * method, path, header values; what they get: a canned reply or an error,
 * how many times) and puts the mock where the code under test finds its
 * dispatcher (ig_core_set_agent, or below the interceptors: they see the
 * mock as the network). Replies arrive asynchronously, from a timer on the
 * loop and never inside dispatch, as a real network's would; a reply may
 * be delayed and its body split into pieces, and back-pressure (on_headers
 * or on_data returning false, ig_call_resume) works as with a connection.
 *
 * Requests that match nothing go to `real` when the network is allowed
 * (the default) and `real` is not NULL; else they fail: with
 * IG_CLIENT_NET_FORBIDDEN after ig_mock_disable_net_connect, with
 * IG_CLIENT_MOCK_UNMATCHED when there is no `real`. Every dispatched
 * request is recorded (ig_mock_history), with the loop's clock, so tests
 * can check what was sent and when.
 *
 * Setup (new, intercept, net connect) allocates with malloc: it is test
 * set-up, not the request path. A call's state comes from a per-core
 * pool. Every call below is made on the mock's loop's thread. */
#ifndef INGOT_CLIENT_MOCK_H
#define INGOT_CLIENT_MOCK_H

#include "ingot/client.h"

/* The mock: the test's, from ig_mock_agent_new to ig_mock_agent_free. */
typedef struct ig_mock_agent ig_mock_agent;

/* Which requests an interception answers. NULL fields match anything.
 * Read during ig_mock_intercept only (copied). */
struct ig_mock_match {
	const char *origin;  /* "http://api.test" (normalised: the port may be
				left out); compared with the call's origin */
	const char *method;  /* exact, e.g. "POST" (a call's NULL is GET) */
	const char *path;    /* the origin-form target, query included */
	bool path_prefix;    /* path matches as a prefix, not exactly */
	const ig_header *headers; /* each must be present: name without case,
				     value exactly */
	size_t header_count;
};

/* What it gets. Either a response (status, headers, body), or an error
 * (error != IG_CLIENT_OK) with a message. Read during ig_mock_intercept
 * only (copied). */
struct ig_mock_reply {
	int status;
	const ig_header *headers;
	size_t header_count;
	ig_str body;
	size_t chunk_size;    /* body in on_data pieces of this size; 0: one */
	uint32_t delay_ms;    /* before on_connect and the head */
	enum ig_client_error error;
	const char *error_message;
	bool error_after_body; /* with error: the head and body first, then
				  the error (a connection cut after the head) */
};

/* times for an interception that answers any number of requests. */
#define IG_MOCK_PERSIST 0

/* Makes a mock on loop, forwarding unmatched requests to real (may be
 * NULL; the mock does not own it, and it must outlive the mock).
 * Returns: the mock, the caller's until ig_mock_agent_free; NULL (errno)
 * if memory is short. */
IG_MUST_USE IG_NONNULL(1) ig_mock_agent *ig_mock_agent_new(struct ig_loop *loop, ig_dispatcher *real);
/* The mock as a dispatcher, to dispatch to or to put below interceptors.
 * Returns: never NULL; valid while m is (destroying it frees m). */
IG_NONNULL(1) ig_dispatcher *ig_mock_dispatcher(ig_mock_agent *m);
/* The same as destroying ig_mock_dispatcher(m): calls still waiting for
 * their reply fail with IG_CLIENT_ABORTED; the memory goes when the last
 * call has ended. m must not be used after. */
IG_NONNULL(1) void ig_mock_agent_free(ig_mock_agent *m);

/* Registers an interception for `times` requests (or IG_MOCK_PERSIST).
 * match may be NULL: every request. Everything is copied. The first registered interception that matches
 * and has uses left answers. Returns: its index (0, 1, ... in order); or
 * -1, bad origin, bad reply, or memory short, and nothing is registered. */
IG_MUST_USE IG_NONNULL(1, 3) int ig_mock_intercept(ig_mock_agent *m, const struct ig_mock_match *match, const struct ig_mock_reply *reply,
		      uint32_t times);

/* Unmatched requests: forbidden altogether, or allowed (to every origin
 * when origin is NULL, else to that one more origin, copied): disabling
 * forgets every origin allowed before, enabling adds to them.
 * ig_mock_enable_net_connect returns: 0; or -1, a bad origin or memory
 * short, and nothing changed. */
IG_NONNULL(1) void ig_mock_disable_net_connect(ig_mock_agent *m);
IG_MUST_USE IG_NONNULL(1) int ig_mock_enable_net_connect(ig_mock_agent *m, const char *origin);

/* How many interceptions are still pending (unused times left; a
 * persistent one until used once), each described on a line of out
 * (NUL-terminated, cut at cap; out may be NULL when cap is 0). */
IG_NONNULL(1) size_t ig_mock_pending(const ig_mock_agent *m, char *out, size_t cap);
/* Returns: true when none is pending; else false, and msg (cap bytes,
 * NUL-terminated; NULL when cap is 0) says which. */
IG_MUST_USE IG_NONNULL(1) bool ig_mock_assert_all_used(const ig_mock_agent *m, char *msg, size_t cap);

/* How many requests an interception (an index ig_mock_intercept
 * returned) has answered so far; 0 for an index it did not return. */
IG_NONNULL(1) uint32_t ig_mock_times_used(const ig_mock_agent *m, int interception);

/* One dispatched request, as the mock saw it. Strings are cut to fit. */
struct ig_mock_record {
	uint64_t at_ms;   /* the loop's clock at dispatch */
	int interception; /* index, or -1: unmatched (forwarded or failed) */
	char method[16];
	char origin[128];
	char path[512];
	char headers[512]; /* "name: value\n" each */
	size_t body_len;
};
#define IG_MOCK_HISTORY 256
/* The first IG_MOCK_HISTORY requests, oldest first; *count says how many
 * were recorded. Returns: an array owned by m, valid while m is (later
 * requests append to it). */
IG_NONNULL(1, 2) const struct ig_mock_record *ig_mock_history(const ig_mock_agent *m, size_t *count);

#endif
