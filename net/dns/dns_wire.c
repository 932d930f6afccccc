/* The DNS wire format (see dns_wire.h): questions out, replies in. A
 * reply is untrusted bytes from the network: every offset is checked
 * against its length before it is read, and compression pointers must go
 * strictly backward. */
#include "net/dns/dns_wire.h"

#include "net/ascii.h"

#include <string.h>

#define MAX_CNAME_LINKS 8
#define MAX_RRS 64 /* answer records looked at per reply */

#define TYPE_A 1
#define TYPE_CNAME 5
#define TYPE_AAAA 28
#define CLASS_IN 1

static const uint16_t question_type[2] = { TYPE_A, TYPE_AAAA };

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool ig_dns_add_addr(struct dns_addrs *a, bool v6, const uint8_t *addr)
{
	if (v6 ? a->n6 == DNS_MAX_PER_FAMILY : a->n4 == DNS_MAX_PER_FAMILY)
		return false;
	if (v6)
		memcpy(a->v6[a->n6++], addr, 16);
	else
		memcpy(a->v4[a->n4++], addr, 4);
	return true;
}

size_t ig_dns_name_to_wire(const char *name, size_t n, uint8_t *out)
{
	size_t o = 0, start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || name[i] == '.') {
			out[o++] = (uint8_t)(i - start);
			memcpy(out + o, name + start, i - start);
			o += i - start;
			start = i + 1;
		}
	}
	out[o++] = 0;
	return o;
}

size_t ig_dns_build_question(const struct dns_exchange *x, int fam, uint8_t *out)
{
	uint8_t *p = out;
	*p++ = (uint8_t)(x->id[fam] >> 8);
	*p++ = (uint8_t)x->id[fam];
	*p++ = 0x01; /* RD */
	*p++ = 0x00;
	static const uint8_t counts[8] = { 0, 1, 0, 0, 0, 0, 0, 0 };
	memcpy(p, counts, 8);
	p += 8;
	memcpy(p, x->qname, x->qname_len);
	p += x->qname_len;
	*p++ = 0;
	*p++ = (uint8_t)question_type[fam];
	*p++ = 0;
	*p++ = CLASS_IN;
	return (size_t)(p - out);
}

/* ---- reading replies -------------------------------------------------- */

/* Reads the (possibly compressed) name at *off into out, in wire form and
 * lowercase, and moves *off past it. Pointers must go strictly backward,
 * which, with the 255-octet bound, ends every loop a hostile reply builds. */
static bool read_name(const uint8_t *m, size_t n, size_t *off, uint8_t *out, size_t *out_len)
{
	size_t p = *off, o = 0;
	bool jumped = false;
	for (;;) {
		if (p >= n)
			return false;
		uint8_t c = m[p];
		if ((c & 0xC0) == 0xC0) {
			if (p + 1 >= n)
				return false;
			size_t target = (size_t)(c & 0x3F) << 8 | m[p + 1];
			if (target >= p)
				return false;
			if (!jumped)
				*off = p + 2;
			jumped = true;
			p = target;
			continue;
		}
		if (c & 0xC0)
			return false; /* the obsolete extended label types */
		if (o + 1 + c > DNS_NAME_WIRE_MAX || p + 1 + c > n)
			return false;
		out[o++] = c;
		if (c == 0)
			break;
		for (size_t i = 0; i < c; i++)
			out[o++] = (uint8_t)ig_ascii_lower((char)m[p + 1 + i]);
		p += 1 + (size_t)c;
	}
	if (!jumped)
		*off = p + 1;
	*out_len = o;
	return true;
}

static bool name_at_is(const uint8_t *m, size_t n, size_t off, const uint8_t *name, size_t len)
{
	uint8_t got[DNS_NAME_WIRE_MAX];
	size_t got_len;
	return read_name(m, n, &off, got, &got_len) && got_len == len && memcmp(got, name, len) == 0;
}

struct rr {
	size_t owner; /* offset of the owner name */
	uint16_t type, class;
	uint32_t ttl;
	size_t rdata;
	uint16_t rdlength;
};

static uint32_t rr_ttl(const uint8_t *p)
{
	uint32_t ttl = get32(p);
	return ttl > INT32_MAX ? 0 : ttl; /* RFC 2181 8 */
}

/* The answer section: follows CNAMEs from the question's name, then takes
 * the addresses of the question's type owned by the chain's last name. */
static bool read_answers(struct dns_exchange *x, int fam, const uint8_t *m, size_t n, size_t off,
			 unsigned ancount)
{
	struct rr rrs[MAX_RRS];
	size_t count = 0;
	for (unsigned i = 0; i < ancount; i++) {
		uint8_t skip[DNS_NAME_WIRE_MAX];
		size_t skip_len, owner = off;
		if (!read_name(m, n, &off, skip, &skip_len) || off + 10 > n)
			return false;
		struct rr rr = { .owner = owner, .type = get16(m + off), .class = get16(m + off + 2),
				 .ttl = rr_ttl(m + off + 4), .rdlength = get16(m + off + 8) };
		off += 10;
		if (off + rr.rdlength > n)
			return false;
		rr.rdata = off;
		off += rr.rdlength;
		if (count < MAX_RRS && rr.class == CLASS_IN)
			rrs[count++] = rr;
	}
	uint8_t cur[DNS_NAME_WIRE_MAX];
	size_t cur_len = x->qname_len;
	memcpy(cur, x->qname, cur_len);
	uint32_t ttl = UINT32_MAX;
	for (unsigned links = 0; links < MAX_CNAME_LINKS; links++) {
		size_t i = 0;
		while (i < count && !(rrs[i].type == TYPE_CNAME &&
				      name_at_is(m, n, rrs[i].owner, cur, cur_len)))
			i++;
		if (i == count)
			break;
		size_t at = rrs[i].rdata;
		if (!read_name(m, n, &at, cur, &cur_len))
			return false;
		if (rrs[i].ttl < ttl)
			ttl = rrs[i].ttl;
	}
	size_t want = fam == DNS_FAM_V6 ? 16 : 4;
	bool any = false;
	for (size_t i = 0; i < count; i++) {
		const struct rr *rr = &rrs[i];
		if (rr->type != question_type[fam] || rr->rdlength != want ||
		    !name_at_is(m, n, rr->owner, cur, cur_len))
			continue;
		if (ig_dns_add_addr(&x->addrs, fam == DNS_FAM_V6, m + rr->rdata)) {
			any = true;
			if (rr->ttl < ttl)
				ttl = rr->ttl;
		}
	}
	if (any && ttl < x->ttl)
		x->ttl = ttl;
	return true;
}

enum dns_reply ig_dns_read_reply(struct dns_exchange *x, const uint8_t *m, size_t n, const char **failure)
{
	if (n < 12)
		return DNS_REPLY_IGNORED;
	uint16_t id = get16(m), flags = get16(m + 2);
	int fam = id == x->id[DNS_FAM_V4] && !x->answered[DNS_FAM_V4]   ? DNS_FAM_V4
		  : id == x->id[DNS_FAM_V6] && !x->answered[DNS_FAM_V6] ? DNS_FAM_V6
								: -1;
	if (fam < 0 || !(flags & 0x8000) || (flags >> 11 & 0xF) != 0 || get16(m + 4) != 1)
		return DNS_REPLY_IGNORED;
	size_t off = 12, qlen;
	uint8_t q[DNS_NAME_WIRE_MAX];
	if (!read_name(m, n, &off, q, &qlen) || off + 4 > n || qlen != x->qname_len ||
	    memcmp(q, x->qname, qlen) != 0 || get16(m + off) != question_type[fam] ||
	    get16(m + off + 2) != CLASS_IN)
		return DNS_REPLY_IGNORED;
	off += 4;
	if (flags & 0x0200) {
		*failure = "DNS reply truncated (TC) and TCP fallback is not supported";
		return DNS_REPLY_FATAL;
	}
	switch (flags & 0xF) {
	case 0:
		break;
	case 3:
		*failure = "host not found (NXDOMAIN)";
		return DNS_REPLY_FATAL;
	case 2:
		*failure = "DNS server failure (SERVFAIL)";
		return DNS_REPLY_SERVER_FAILED;
	case 5:
		*failure = "DNS query refused (REFUSED)";
		return DNS_REPLY_SERVER_FAILED;
	default:
		*failure = "DNS server error";
		return DNS_REPLY_SERVER_FAILED;
	}
	if (!read_answers(x, fam, m, n, off, get16(m + 6))) {
		*failure = "malformed DNS reply";
		return DNS_REPLY_SERVER_FAILED;
	}
	x->answered[fam] = true;
	return DNS_REPLY_USED;
}
