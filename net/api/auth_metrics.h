/* ingot_auth_failures_total{scheme,reason}: the door's refusals, counted
 * by the scheme's type and a bounded reason (a JWT's ig_jwt_error name, or
 * one of the door's own below). Process-wide counters that every core adds
 * to (ig_counter_add_shared): failures are rare enough that cores sharing
 * a line costs nothing that matters. */
#ifndef NET_API_AUTH_METRICS_H
#define NET_API_AUTH_METRICS_H

#include "net/auth/jwt.h"
#include "net/metrics/metrics.h"

/* The door's reasons, after the JWT's (IG_JWT_OK's slot is unused). */
enum ig_auth_reason {
	IG_AUTH_MISSING = IG_JWT_ERROR_COUNT, /* no credentials for any alternative */
	IG_AUTH_MALFORMED,          /* a basic header that is not base64 of user:password */
	IG_AUTH_REFUSED_BY_APP,     /* the auth handler refused */
	IG_AUTH_INSUFFICIENT_SCOPE, /* valid, lacking scopes (403) */
	IG_AUTH_RATE_LIMITED,       /* the address failed too often: 429 before any check */
	IG_AUTH_BAD_CLAIMS,         /* a verified JWT whose claims break x-ingot-principal's schema */
	IG_AUTH_INVALID_REQUEST,    /* a token both in Authorization and the query, or twice there (400) */
	IG_AUTH_REASON_COUNT
};

/* type: enum ig_sec_type (security.h); reason: an ig_jwt_error or the above. */
void ig_auth_count_failure(unsigned type, unsigned reason);

/* net/start.c registers it (weakly: linked only with a secured door). */
extern struct ig_metrics_source ig_auth_metrics_source;

#endif
