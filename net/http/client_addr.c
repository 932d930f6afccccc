/* The client's address behind trusted proxies (client_addr.h): address and
 * CIDR parsing, and the walk over Forwarded / X-Forwarded-For hops from the
 * nearest. Reads only the fields it is given. */
#include "client_addr.h"
#include "net/ascii.h"

#include <arpa/inet.h>
#include <string.h>

static struct ig_cidr trusted_cidrs[IG_TRUSTED_PROXIES_MAX];
struct ig_trusted_proxies ig_trusted_proxies = { .list = "", .cidr = trusted_cidrs };

/* a (any case) equals lower, len bytes. */
static bool same_lower(const char *a, const char *lower, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (ig_ascii_lower(a[i]) != lower[i])
			return false;
	return true;
}

static bool parse_plain(const char *s, size_t len, uint8_t out[16])
{
	char buf[64];
	if (len == 0 || len >= sizeof buf)
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (inet_pton(AF_INET, buf, out + 12) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		return true;
	}
	return inet_pton(AF_INET6, buf, out) == 1;
}

bool ig_addr_parse(ig_str s, uint8_t out[16])
{
	const char *p = s.ptr;
	size_t len = s.len;
	if (len && p[0] == '[') {
		const char *close = memchr(p, ']', len);
		if (!close)
			return false;
		size_t rest = len - (size_t)(close + 1 - p);
		if (rest && close[1] != ':')
			return false;
		return parse_plain(p + 1, (size_t)(close - p - 1), out);
	}
	/* One ':' is IPv4's port; more are IPv6's own (a port needs brackets). */
	const char *colon = memchr(p, ':', len);
	if (colon && !memchr(colon + 1, ':', len - (size_t)(colon + 1 - p)))
		len = (size_t)(colon - p);
	return parse_plain(p, len, out);
}

static void mask(uint8_t a[16], unsigned bits)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = bits >= 8 * (i + 1) ? 8 : bits > 8 * i ? bits - 8 * i : 0;
		a[i] &= (uint8_t)(0xff00u >> keep);
	}
}

static bool is_v4_mapped(const uint8_t a[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return memcmp(a, prefix, 12) == 0;
}

const char *ig_trusted_parse(struct ig_trusted_proxies *p)
{
	static const char bad[] = "INGOT_TRUSTED_PROXIES: addresses or CIDRs (192.0.2.0/24, 2001:db8::/32), "
				  "comma-separated, at most 32";
	p->count = 0;
	const char *s = p->list;
	while (*s) {
		while (*s == ' ' || *s == ',')
			s++;
		if (!*s)
			break;
		const char *end = s;
		while (*end && *end != ',' && *end != ' ')
			end++;
		if (p->count == IG_TRUSTED_PROXIES_MAX)
			return bad;
		struct ig_cidr *c = &p->cidr[p->count];
		const char *slash = memchr(s, '/', (size_t)(end - s));
		if (!parse_plain(s, (size_t)((slash ? slash : end) - s), c->addr))
			return bad;
		unsigned max = is_v4_mapped(c->addr) && !memchr(s, ':', (size_t)(end - s)) ? 32 : 128;
		unsigned bits = max;
		if (slash) {
			if (slash + 1 == end || end - slash > 4)
				return bad;
			bits = 0;
			for (const char *d = slash + 1; d < end; d++) {
				if (*d < '0' || *d > '9')
					return bad;
				bits = bits * 10 + (unsigned)(*d - '0');
			}
			if (bits > max)
				return bad;
		}
		c->bits = (uint8_t)(bits + 128 - max);
		mask(c->addr, c->bits);
		p->count++;
		s = end;
	}
	return NULL;
}

bool ig_trusted(const struct ig_trusted_proxies *p, const uint8_t addr[16])
{
	for (size_t i = 0; i < p->count; i++) {
		uint8_t a[16];
		memcpy(a, addr, 16);
		mask(a, p->cidr[i].bits);
		if (memcmp(a, p->cidr[i].addr, 16) == 0)
			return true;
	}
	return false;
}

/* The hops, nearest last; only the nearest HOPS are kept (a walk from the
 * nearest never needs more than one untrusted hop past the trusted ones). */
#define HOPS 32
struct hops {
	ig_str hop[HOPS];
	size_t n; /* seen; hop[(n - 1) % HOPS] is the nearest */
};

static void hop_add(struct hops *h, const char *s, const char *end)
{
	h->hop[h->n++ % HOPS] = ig_ascii_trim_ows(s, end);
}

static bool name_is(ig_str name, const char *want, size_t len)
{
	return name.len == len && same_lower(name.ptr, want, len);
}

/* X-Forwarded-For: addresses, comma-separated. */
static void xff_hops(struct hops *h, ig_str v)
{
	const char *s = v.ptr, *end = v.ptr + v.len;
	while (s <= end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		hop_add(h, s, comma ? comma : end);
		if (!comma)
			break;
		s = comma + 1;
	}
}

/* Forwarded: elements, comma-separated, of ';'-separated pairs; each
 * element's for= is a hop (token or quoted string); one without for= is
 * an unknown hop. Commas inside quotes are not separators. */
static void forwarded_hops(struct hops *h, ig_str v)
{
	const char *s = v.ptr, *end = v.ptr + v.len;
	while (s < end) {
		ig_str hop = IG_STR("unknown");
		for (;;) {
			while (s < end && (*s == ' ' || *s == '\t' || *s == ';'))
				s++;
			const char *eq = s;
			while (eq < end && *eq != '=' && *eq != ',' && *eq != ';')
				eq++;
			if (eq == end || *eq != '=') {
				s = eq;
				break;
			}
			bool is_for = eq - s == 3 && same_lower(s, "for", 3);
			const char *val = eq + 1, *val_end;
			if (val < end && *val == '"') {
				val++;
				val_end = memchr(val, '"', (size_t)(end - val));
				if (!val_end)
					val_end = end;
				s = val_end < end ? val_end + 1 : end;
			} else {
				val_end = val;
				while (val_end < end && *val_end != ';' && *val_end != ',')
					val_end++;
				s = val_end;
			}
			if (is_for)
				hop = (ig_str){ val, (size_t)(val_end - val) };
			if (s >= end || *s == ',')
				break;
		}
		hop_add(h, hop.ptr, hop.ptr + hop.len);
		while (s < end && *s != ',')
			s++;
		if (s < end)
			s++;
	}
}

void ig_client_addr(const struct ig_trusted_proxies *p, const uint8_t peer[16], const ig_header *h, size_t n,
		    uint8_t out[16])
{
	memcpy(out, peer, 16);
	if (!p->count || !ig_trusted(p, peer))
		return;
	struct hops hops = { .n = 0 };
	bool forwarded = false;
	for (size_t i = 0; i < n; i++)
		if (name_is(h[i].name, "forwarded", 9)) {
			forwarded = true;
			forwarded_hops(&hops, h[i].value);
		}
	for (size_t i = 0; !forwarded && i < n; i++)
		if (name_is(h[i].name, "x-forwarded-for", 15))
			xff_hops(&hops, h[i].value);
	size_t kept = hops.n < HOPS ? hops.n : HOPS;
	for (size_t k = 0; k < kept; k++) {
		uint8_t a[16];
		if (!ig_addr_parse(hops.hop[(hops.n - 1 - k) % HOPS], a))
			return;
		memcpy(out, a, 16);
		if (!ig_trusted(p, a))
			return;
	}
}
