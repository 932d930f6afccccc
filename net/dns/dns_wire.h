/* The DNS wire format of the stub resolver (dns.c): its A and AAAA
 * questions (RFC 1035 4.1) and the replies to them, which come from the
 * network and are untrusted. No I/O and no state but the caller's, so the
 * reply reader runs alone under a fuzzer (tests/fuzz/fuzz_dns.c). */
#ifndef NET_DNS_DNS_WIRE_H
#define NET_DNS_DNS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_WIRE_MAX 255 /* RFC 1035 3.1 */
/* The addresses of each family a lookup keeps (dns.h). */
#define DNS_MAX_PER_FAMILY 8

enum { DNS_FAM_V4, DNS_FAM_V6 }; /* index of a question: A, AAAA */

/* Up to DNS_MAX_PER_FAMILY addresses of each family, in network order. */
struct dns_addrs {
	uint8_t v4[DNS_MAX_PER_FAMILY][4];
	uint8_t v6[DNS_MAX_PER_FAMILY][16];
	uint8_t n4, n6;
};

/* One name's questions and what the replies to them have given. The caller
 * sets qname (ig_dns_name_to_wire), the two ids and ttl = UINT32_MAX; each used
 * reply sets answered[fam], adds its addresses and lowers ttl to the least
 * TTL of the records it used. */
struct dns_exchange {
	uint8_t qname[DNS_NAME_WIRE_MAX]; /* wire form, lowercase */
	size_t qname_len;
	uint16_t id[2];                   /* of the A and AAAA questions */
	bool answered[2];
	struct dns_addrs addrs;
	uint32_t ttl;
};

enum dns_reply {
	DNS_REPLY_IGNORED,       /* not an answer to our question: keep waiting */
	DNS_REPLY_USED,          /* one question answered */
	DNS_REPLY_SERVER_FAILED, /* ask the next server (*failure says why) */
	DNS_REPLY_FATAL,         /* the lookup fails with *failure */
};

/* Reads one datagram m[0..n) as a reply to x's unanswered questions. Reads
 * no byte outside m, whatever it holds; *failure is set (to a static string)
 * only for SERVER_FAILED and FATAL. */
enum dns_reply ig_dns_read_reply(struct dns_exchange *x, const uint8_t *m, size_t n, const char **failure);

/* Writes the question of family fam (recursion desired) into out, which
 * holds 12 + DNS_NAME_WIRE_MAX + 4 bytes; returns its length. */
size_t ig_dns_build_question(const struct dns_exchange *x, int fam, uint8_t *out);

/* A normalised name (see dns.h: lowercase, labels of 1-63 octets, n < 254)
 * in wire form into out (DNS_NAME_WIRE_MAX bytes); returns its length. */
size_t ig_dns_name_to_wire(const char *name, size_t n, uint8_t *out);

/* Adds addr (16 bytes if v6, else 4) to a; false if that family is full. */
bool ig_dns_add_addr(struct dns_addrs *a, bool v6, const uint8_t *addr);

#endif
