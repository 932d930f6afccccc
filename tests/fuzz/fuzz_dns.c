/* libFuzzer target for net/dns/dns_wire.c: one UDP datagram as a
 * nameserver (or anyone who can reach the port) could send it, read as the
 * reply to an A or AAAA question for one of a few names. The reader must
 * not read outside the datagram (ASan), and its verdict must be sane:
 * addresses only when a question was answered, never more than the
 * family's room, a reason with every failure, TTLs within RFC 2181's
 * bound; and the same datagram again is ignored once its question is
 * answered, as a duplicate reply must be. */

/* Input: 1 control byte, then the datagram.
 *   c bit 0    the question is AAAA (else A); its id is the datagram's own,
 *              so that replies get past the id check
 *     bit 1    the other family's question is answered already
 *     bits 2-3 the name asked: example.com, www.example.com, a.b.c.d.example.org, x
 * Build: FUZZ_SRC_dns in the Makefile (make fuzz-build). */
#include "net/dns/dns_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_dns: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[4] = { "example.com", "www.example.com", "a.b.c.d.example.org", "x" };
	if (size < 1)
		return 0;
	uint8_t c = data[0];
	const uint8_t *m = data + 1;
	size_t n = size - 1;
	/* An exact-size copy: a read one past the end is an ASan report. */
	uint8_t *reply = malloc(n ? n : 1);
	if (!reply)
		return 0;
	memcpy(reply, m, n);

	int fam = c & 1 ? DNS_FAM_V6 : DNS_FAM_V4, other = !fam;
	const char *name = names[c >> 2 & 3];
	struct dns_exchange x = { .ttl = UINT32_MAX };
	x.qname_len = ig_dns_name_to_wire(name, strlen(name), x.qname);
	uint16_t id = n >= 2 ? (uint16_t)(m[0] << 8 | m[1]) : 0;
	x.id[fam] = id;
	x.id[other] = (uint16_t)~id;
	x.answered[other] = (c & 2) != 0;

	const char *failure = NULL;
	enum dns_reply r = ig_dns_read_reply(&x, reply, n, &failure);
	switch (r) {
	case DNS_REPLY_IGNORED:
	case DNS_REPLY_USED:
		break;
	case DNS_REPLY_SERVER_FAILED:
	case DNS_REPLY_FATAL:
		if (!failure || !*failure)
			die("a failure without a reason");
		break;
	default:
		die("an unknown verdict");
	}
	if (x.addrs.n4 > DNS_MAX_PER_FAMILY || x.addrs.n6 > DNS_MAX_PER_FAMILY)
		die("more addresses than the family holds");
	if (r != DNS_REPLY_USED && x.addrs.n4 + x.addrs.n6 > 0)
		die("addresses from a reply that was not used");
	if ((fam == DNS_FAM_V4 ? x.addrs.n6 : x.addrs.n4) > 0)
		die("addresses of the family not asked for");
	if (r == DNS_REPLY_USED && !x.answered[fam])
		die("a used reply that answered nothing");
	if (x.ttl != UINT32_MAX && x.ttl > INT32_MAX)
		die("a TTL above 2^31 - 1");
	if (x.addrs.n4 + x.addrs.n6 > 0 && x.ttl == UINT32_MAX)
		die("addresses without a TTL");
	if (r == DNS_REPLY_USED) {
		struct dns_addrs before = x.addrs;
		failure = NULL;
		if (ig_dns_read_reply(&x, reply, n, &failure) != DNS_REPLY_IGNORED)
			die("the same reply used twice");
		if (memcmp(&before, &x.addrs, sizeof before) != 0)
			die("an ignored reply changed the addresses");
	}
	free(reply);
	return 0;
}
