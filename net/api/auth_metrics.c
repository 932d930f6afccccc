/* The door's failure counters and their exposition (auth_metrics.h). */
#include "auth_metrics.h"

#include <string.h>

#define TYPES 4
static ig_counter failures[TYPES][IG_AUTH_REASON_COUNT];

static const char *const type_names[TYPES] = { "bearer", "apiKey", "basic", "mutualTLS" };
static const char *const door_reasons[] = { "missing", "malformed", "refused", "insufficient_scope", "rate_limited", "claims",
					      "invalid_request" };
_Static_assert(sizeof door_reasons / sizeof door_reasons[0] == IG_AUTH_REASON_COUNT - IG_JWT_ERROR_COUNT,
	       "a name per reason");

void ig_auth_count_failure(unsigned type, unsigned reason)
{
	if (type < TYPES && reason < IG_AUTH_REASON_COUNT)
		ig_counter_add_shared(&failures[type][reason], 1); /* every core's */
}

static const char *reason_name(unsigned r)
{
	return r < IG_JWT_ERROR_COUNT ? ig_jwt_error_name((enum ig_jwt_error)r) : door_reasons[r - IG_JWT_ERROR_COUNT];
}

static void write_auth(struct ig_expo *e, void *arg)
{
	(void)arg;
	ig_expo_family(e, "ingot_auth_failures_total", "counter",
		       "Requests the door refused, by the scheme's type and why.");
	for (unsigned t = 0; t < TYPES; t++)
		for (unsigned r = 1; r < IG_AUTH_REASON_COUNT; r++) {
			uint64_t v = ig_counter_get(&failures[t][r]);
			/* Zero series would be 4 x 20 lines of noise: only those seen. */
			if (!v)
				continue;
			const char *rn = reason_name(r);
			struct ig_label l[2] = { { "scheme", type_names[t], strlen(type_names[t]) },
						 { "reason", rn, strlen(rn) } };
			ig_expo_sample(e, "ingot_auth_failures_total", l, 2, (double)v);
		}
}

struct ig_metrics_source ig_auth_metrics_source = { .write = write_auth };
