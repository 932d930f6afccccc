/* The client's address, as a rate limit keys it: the peer's, or, when the
 * peer is a trusted proxy (INGOT_TRUSTED_PROXIES, client_addr_settings.c),
 * the nearest hop of Forwarded (RFC 7239) or X-Forwarded-For that is not
 * one. Pure parsing over the request's fields: no exchange, no allocation.
 * Addresses are 16 bytes, an IPv4 one mapped (::ffff:a.b.c.d). */
#ifndef NET_HTTP_CLIENT_ADDR_H
#define NET_HTTP_CLIENT_ADDR_H

#include "ingot/base.h"
#include "ingot/settings.h"

#include <stdint.h>

#define IG_TRUSTED_PROXIES_MAX 32

struct ig_cidr {
	uint8_t addr[16]; /* masked to its prefix */
	uint8_t bits;     /* of the 128 (an IPv4 CIDR's /n is 96 + n) */
};

struct ig_trusted_proxies {
	const char *list; /* INGOT_TRUSTED_PROXIES as given; "": none */
	size_t count;
	/* room for IG_TRUSTED_PROXIES_MAX, the owner's (ig_trusted_proxies':
	   client_addr.c's, apart so that the start's pages hold 24 bytes of
	   this, not 560) */
	struct ig_cidr *cidr;
};

extern struct ig_trusted_proxies ig_trusted_proxies;
extern const struct ig_settings ig_client_addr_settings;

/* An address as text ("192.0.2.7", "2001:db8::1", "[2001:db8::1]",
 * either with ":port" after it) into out; false when it is none. */
bool ig_addr_parse(ig_str s, uint8_t out[16]);
/* "192.0.2.0/24,2001:db8::/32,10.0.0.1" (spaces allowed) into p's list;
 * NULL, or what is wrong. */
const char *ig_trusted_parse(struct ig_trusted_proxies *p);
bool ig_trusted(const struct ig_trusted_proxies *p, const uint8_t addr[16]);
/* The client of a request that peer (the connection's address) relayed:
 * out is peer unless peer is trusted and the request carries Forwarded
 * (its for= parameters) or, without it, X-Forwarded-For; then, walking
 * their hops from the nearest, the first that is not trusted, or the
 * farthest when all are. A hop that is no address ("unknown", an
 * obfuscated name, garbage) ends the walk at the hop before it: the
 * trusted proxy that wrote it is the client then. */
void ig_client_addr(const struct ig_trusted_proxies *p, const uint8_t peer[16], const ig_header *h, size_t n,
		    uint8_t out[16]);

#endif
