/* The server a TLS client names, read once for both backends: an IP
 * literal (no SNI, RFC 6066; the certificate must list the address) or a
 * host name without its trailing dot (an absolute name's dot is neither
 * sent as the SNI nor compared with the certificate). */
#ifndef NET_TLS_PEER_NAME_H
#define NET_TLS_PEER_NAME_H

#include <stdint.h>

struct tls_peer_name {
	char host[254];  /* a host name, NUL-terminated; "" for an address */
	uint8_t ip[16];  /* an address, in network order ... */
	uint8_t ip_len;  /* ... of 4 or 16 bytes; 0 for a host name */
};

/* Reads name (IPv4, IPv6 bare or in brackets, or a host name) into *p.
 * Returns 0, or -1 for a name that is empty or longer than 253 bytes
 * without its trailing dot. */
int ig_tls_peer_name_parse(struct tls_peer_name *p, const char *name);

#endif
