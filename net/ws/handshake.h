/* RFC 6455's opening handshake, the server's half that is pure
 * computation: a client's Sec-WebSocket-Key checked, and the
 * Sec-WebSocket-Accept that answers it. The engine checks the request's
 * other fields (Upgrade, Connection, Sec-WebSocket-Version) as it parses
 * them. */
#ifndef NET_WS_HANDSHAKE_H
#define NET_WS_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>

/* The only version RFC 6455 defines; a request with another is answered
 * 426 with this one in Sec-WebSocket-Version. */
#define IG_WS_VERSION "13"

/* Sec-WebSocket-Accept's length: base64 of a SHA-1. */
#define IG_WS_ACCEPT_LEN 28

/* Whether key[0..n) is what a client must send: the base64 of 16 bytes
 * (24 characters, two of them padding). */
bool ig_ws_key_valid(const char *key, size_t n);

/* The Sec-WebSocket-Accept for key[0..n): the base64 of SHA-1 over the
 * key and RFC 6455's GUID, IG_WS_ACCEPT_LEN characters into out (no
 * NUL). */
void ig_ws_accept(const char *key, size_t n, char *out);

#endif
