/* Rate limits (the document's x-ingot-rate-limit, read by schemac into
 * one struct ig_rate_limit each, which an operation's descriptor points
 * to): checked by ig_run_operation before decoding, keyed by the client's
 * address (net/http/client_addr.h) or a request header, counted in the
 * shared buckets of rate_table.h, and refused with 429. */
#ifndef NET_API_RATE_LIMIT_H
#define NET_API_RATE_LIMIT_H

#include "ingot/http.h"

#include <stdint.h>

enum ig_rate_key {
	IG_RATE_KEY_ADDRESS, /* the client's address */
	IG_RATE_KEY_HEADER,  /* a request header's value (absent: "") */
};

/* Generated data: static storage, one per limit the document states. */
struct ig_rate_limit {
	uint32_t id; /* its number in the document: keys of two limits never share a bucket */
	uint32_t burst;
	uint64_t interval_us; /* the period over the rate: one request's share */
	enum ig_rate_key key;
	const char *header; /* IG_RATE_KEY_HEADER: the header's name */
	/* The IETF httpapi draft's RateLimit-Policy value ("name";q=burst;w=seconds)
	   and its name as a structured-field string, for RateLimit. */
	const char *policy, *policy_name;
};

/* Whether the request may go on under l; if not it has been answered 429
 * (problem+json, Retry-After, RateLimit-Policy, RateLimit) and counted in
 * ingot_rate_limited_total. */
bool ig_rate_limit_admit(ig_ctx *ctx, const struct ig_rate_limit *l);

#endif
