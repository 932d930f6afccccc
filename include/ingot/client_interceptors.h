/* Interceptors: dispatchers that wrap another dispatcher (an Agent, a Pool,
 * the mock agent, or another interceptor) and change what a call does:
 * retry repeats a failed attempt, redirect follows 3xx responses. Each is a
 * dispatcher itself, so they compose by nesting, and the nesting is the
 * order:
 *
 *   ig_redirect_new(ig_retry_new(agent, &r), &f)
 *       every hop of a redirect chain is retried on its own: a 503 on the
 *       second hop repeats the second hop, not the chain. This is the
 *       order to use.
 *   ig_retry_new(ig_redirect_new(agent, &f), &r)
 *       a failure anywhere restarts the whole chain from the first URL.
 *
 * Whatever sits below (the mock agent in tests) is seen as the network.
 * Both keep their per-call state in a per-core pool (one per thread, never
 * returned, like every pool), so a call allocates nothing else; both report
 * what they did through struct ig_call (retries, redirects), which ig_fetch
 * copies into ig_response. An interceptor owns its inner dispatcher:
 * destroying the outermost destroys the chain.
 *
 * Neither buffers a body: both decide from the response head (on_headers)
 * and, when they act, read and drop that response's body, so the
 * connection stays reusable (up to 64 KiB: beyond it that attempt is
 * aborted, its connection closed, and they go on); once a head has
 * reached the caller, the call is the caller's and nothing is repeated.
 * A handler's on_complete and on_error may be NULL, as with the agent.
 * Everything here is made and used on the inner dispatcher's loop's
 * thread. */
#ifndef INGOT_CLIENT_INTERCEPTORS_H
#define INGOT_CLIENT_INTERCEPTORS_H

#include <time.h>

#include "ingot/client.h"

/* ---- retry ---- */

/* A bit per error in ig_retry_opts.errors. */
#define IG_RETRY_ON(error) (1u << (error))
/* errors: retry on no error at all (statuses only). */
#define IG_RETRY_ON_NOTHING IG_RETRY_ON(IG_CLIENT_OK)
/* The default set: failures where the request cannot have reached the
 * upstream's application, or a connection that died under it. A headers
 * timeout is not retried by default (the upstream may be slow, not gone,
 * and a retry would double its load); add IG_RETRY_ON(IG_CLIENT_HEADERS_
 * TIMEOUT) to opt in. A body timeout or a reset after the head has been
 * delivered is never retried: the caller already has part of the answer. */
#define IG_RETRY_ERRORS_DEFAULT                                                         \
	(IG_RETRY_ON(IG_CLIENT_RESET) | IG_RETRY_ON(IG_CLIENT_CONNECT) |                \
	 IG_RETRY_ON(IG_CLIENT_CONNECT_TIMEOUT) | IG_RETRY_ON(IG_CLIENT_DNS))

/* Every field's zero means its default. Copied by ig_retry_new (at most
 * 32 statuses), but for methods, which it keeps: static storage, usually. */
struct ig_retry_opts {
	uint32_t max_retries;        /* attempts after the first (default 2) */
	uint32_t min_delay_ms;       /* backoff base (default 100) */
	uint32_t max_delay_ms;       /* backoff cap (default 5000) */
	uint32_t max_retry_after_ms; /* cap on a Retry-After wait (default 30000) */
	const uint16_t *statuses;    /* retried statuses; NULL: 429 500 502 503 504 */
	size_t status_count;         /* with statuses non-NULL; 0 means none */
	uint32_t errors;             /* IG_RETRY_ON bits; 0: IG_RETRY_ERRORS_DEFAULT */
	const char *const *methods;  /* NULL-terminated; NULL: GET HEAD PUT DELETE
					OPTIONS TRACE. A call's ig_dispatch_opts
					.idempotent (0 or 1) overrides both. */
	uint64_t seed;               /* jitter PRNG seed; 0: from the clock */
};

/* Retries an attempt that failed with an error in opts->errors, or whose
 * status is in opts->statuses, if the call is idempotent and fewer than
 * max_retries retries were made; the failed response's body is read and
 * dropped. The wait before retry k (1, 2, ...) is a uniform random value in
 * [0, min(max_delay, min_delay * 2^(k-1))] ("full jitter"), or the
 * response's Retry-After (delta-seconds or an HTTP-date), capped by
 * max_retry_after_ms. When the last retry fails too, the caller gets that
 * last outcome: the final 503 response, or the final error. Waits are
 * timers on d->loop. opts may be NULL (every default). inner may be NULL
 * (a failed new), so that news nest: the result is then NULL too.
 * Returns: the interceptor, which owns inner from then on (destroying it
 * destroys inner); NULL with errno set (EINVAL: no inner, or more than 32
 * statuses; ENOMEM), and inner stays the caller's. */
IG_MUST_USE ig_dispatcher *ig_retry_new(ig_dispatcher *inner, const struct ig_retry_opts *opts);

/* A Retry-After value as a wait in milliseconds: delta-seconds, or an
 * HTTP-date (IMF-fixdate, RFC 850 or asctime form) compared with now (a
 * date in the past waits 0). Returns: true with *ms set; false, *ms
 * untouched, if the value is neither. Pure; any thread. */
IG_MUST_USE IG_NONNULL(3) bool ig_retry_after_ms(ig_str value, time_t now, uint64_t *ms);

/* ---- redirect ---- */

enum ig_redirect_cross_origin {
	/* Follow, without Authorization, Proxy-Authorization and Cookie (the
	   default, as browsers and undici do). */
	IG_REDIRECT_STRIP_CREDENTIALS = 0,
	/* Follow with every header. */
	IG_REDIRECT_FOLLOW,
	/* Do not follow: the caller gets the 3xx response itself. */
	IG_REDIRECT_SAME_ORIGIN,
};

/* Copied by ig_redirect_new; zero fields mean their defaults. */
struct ig_redirect_opts {
	uint32_t max_redirects; /* default 5 */
	enum ig_redirect_cross_origin cross_origin;
};

/* The longest origin + Location target that is followed. */
#define IG_REDIRECT_MAX_URL 2048
/* A redirect that must change the request's headers (dropping credentials
 * or a body's Content-* fields) handles up to this many; more fail the call
 * (IG_CLIENT_BAD_REQUEST). */
#define IG_REDIRECT_MAX_HEADERS 64

/* Follows 301, 302, 303, 307 and 308 responses that carry a Location
 * (absolute, scheme-relative, absolute-path or relative, resolved against
 * the current URL with dot segments removed; a fragment is dropped). 303,
 * and 301/302 answering a POST, continue as GET without a body and without
 * Content-* headers (a HEAD stays HEAD); 307 and 308 repeat the method,
 * body and headers. The response after max_redirects followed ones fails
 * the call with IG_CLIENT_REDIRECT_LIMIT. A 3xx reaches the caller
 * unchanged when it cannot be followed: no Location; one that is not
 * http(s), malformed (a space or control byte) or longer than
 * IG_REDIRECT_MAX_URL; one the cross-origin policy refuses; or an absolute
 * one on a call dispatched with an empty origin (to a Client or Pool,
 * which serve one origin: only paths are followed). Each dispatched hop's
 * opts point into the call state; the caller's opts, headers and body are
 * read again for every hop. opts may be NULL; inner may be NULL, as for
 * ig_retry_new. Returns: the interceptor, which owns inner from then on;
 * NULL with errno set (EINVAL: no inner or a bad cross_origin; ENOMEM),
 * and inner stays the caller's. */
IG_MUST_USE ig_dispatcher *ig_redirect_new(ig_dispatcher *inner, const struct ig_redirect_opts *opts);

/* ---- shared by the interceptors and the mock agent ---- */

/* The first header named name (case-insensitive). Returns: its value,
 * pointing into headers; NULL when there is none. Pure; any thread. */
IG_NONNULL(3) const ig_str *ig_header_find(const ig_header *headers, size_t count, const char *name);

/* The call passed to on_error by a dispatcher that fails before it has a
 * call state (its per-core pool is exhausted, it is being destroyed):
 * aborting or resuming it does nothing. */
extern ig_call ig_ended_call;

#endif
