/* Absolute http:// and https:// URLs and origins, as the outbound client
 * needs them: where to connect (host, port), what to send (the origin-form
 * target and the Host header) and the key of a per-origin pool (origin).
 * No allocation: slices point into the input or into the struct's own
 * buffer, so the input and the struct must outlive them (and a copy of the
 * struct still points into the original's buffer).
 *
 * Accepted: scheme http or https (any case); host a DNS name (letters,
 * digits, '-', '_', '.'), a dotted IPv4 address or a bracketed IPv6
 * literal without zone; an optional port 1..65535 (empty means the
 * scheme's default); then a path, a query, or nothing; a fragment is
 * dropped. Rejected (-1): user info, any other scheme, a space, control
 * byte or non-ASCII byte anywhere (percent-encode them), an empty host, a
 * host over 253 characters. */
#ifndef NET_CLIENT_URL_H
#define NET_CLIENT_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/runtime/ingot.h"

#define IG_URL_HOST_MAX 253
/* Room for the lower-cased host, the origin and the authority. */
#define IG_URL_BUF (3 * (IG_URL_HOST_MAX + 16))

struct ig_url {
	bool https;
	ig_str host;      /* lower case; an IPv6 literal without brackets */
	uint16_t port;    /* explicit, or 80 / 443 */
	ig_str path;      /* origin-form target with the query: "/a?b"; "/" if
			     empty; a slice of the input unless the URL had a
			     query without a path (then "/?q" in buf, if it fits) */
	ig_str origin;    /* "scheme://host:port", lower case, port always
			     given, IPv6 in brackets: the pool key */
	ig_str authority; /* the Host header: host, ":port" only when not the
			     scheme's default */
	char buf[IG_URL_BUF];
};

/* Parses url[0..len). Returns 0, or -1 when it is not an accepted URL. */
int ig_url_parse(const char *url, size_t len, struct ig_url *out);

/* An origin: like ig_url_parse, but the path must be empty or "/". */
int ig_url_parse_origin(const char *origin, size_t len, struct ig_url *out);

/* True when a and b name the same origin (scheme, host and port). */
bool ig_url_same_origin(const struct ig_url *a, const struct ig_url *b);

#endif
