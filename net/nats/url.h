/* The NATS client's URL, read once by ig_nats_new (conn.c): a server's
 * address, whether TLS is required, and its credentials (a token, or a user
 * and password). Pure; tested alone (tests/unit/net/nats/test_url.c). */
#ifndef NET_NATS_URL_H
#define NET_NATS_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One server of the URL's list, and how to log in there. */
struct ig_nats_server {
	char host[256]; /* a name or an IP literal, IPv6 without its brackets */
	char user[256]; /* the token when token_auth */
	char pass[256];
	uint16_t port;  /* 4222 when the URL has none */
	bool tls_url;   /* tls://: TLS required */
	bool token_auth;
};

/* Reads urls, nats://[token@|user:password@]host[:port] or tls://...,
 * or a comma-separated list of them, into out[0..max). Returns how many;
 * 0 with *why (static text, naming no secret) when one is malformed (an
 * unknown scheme, no host, a port outside 1..65535, a bad %-escape, a
 * part too long) or there are more than max. */
size_t ig_nats_url_parse(const char *urls, struct ig_nats_server *out, size_t max, const char **why);

#endif
