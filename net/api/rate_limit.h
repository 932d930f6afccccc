/* Rate limits (the document's x-ingot-rate-limit, read by schemac into
 * one struct ig_rate_limit each, which an operation's descriptor points
 * to): checked by ig_run_operation before decoding, keyed by the client's
 * address (net/http/client_addr.h), a request header or the principal's
 * subject, counted in the shared buckets of rate_table.h, and refused
 * with 429. */
#ifndef NET_API_RATE_LIMIT_H
#define NET_API_RATE_LIMIT_H

#include "ingot/http.h"

#include <stdint.h>

enum ig_rate_key {
	IG_RATE_KEY_ADDRESS, /* the client's address */
	IG_RATE_KEY_HEADER,  /* a request header's value (absent: "") */
	/* The principal's subject (ingot/auth.h), so checked after the door's
	   security; a request without a principal, or whose principal has an
	   empty subject, is keyed by its client's address instead (in its own
	   key space: an address never shares a subject's bucket). */
	IG_RATE_KEY_SUBJECT,
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

/* The client as rate limits see it: the peer, or behind
 * INGOT_TRUSTED_PROXIES the nearest untrusted hop (net/http/
 * client_addr.h), as 16 bytes (IPv4 mapped). Returns: false, with out
 * zeroed, when the listener kept no peer address. */
bool ig_rate_client(ig_ctx *ctx, uint8_t out[16]);

#endif
