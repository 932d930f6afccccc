/* URL parsing for the outbound client: a single left-to-right pass, strict
 * about what may reach a request line or a Host header (no space, control
 * or non-ASCII byte), lenient only where RFC 3986 is (scheme and host case,
 * an empty port). */
#include "url.h"

#include "net/ascii.h"

#include <arpa/inet.h>

static bool is_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

/* Visible ASCII: what may appear in a request target. */
static bool is_target_char(char c)
{
	return c > 0x20 && c < 0x7f;
}

static bool has_prefix_nocase(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);
	if (len < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ig_ascii_lower(s[i]) != p[i])
			return false;
	return true;
}

struct writer {
	char *p, *end;
};

static const char *put(struct writer *w, const char *s, size_t n)
{
	if ((size_t)(w->end - w->p) < n)
		return NULL;
	char *at = w->p;
	memcpy(at, s, n);
	w->p += n;
	return at;
}

/* Parses the port digits in s[0..len): empty means dflt. */
static int parse_port(const char *s, size_t len, uint16_t dflt, uint16_t *out)
{
	if (len == 0) {
		*out = dflt;
		return 0;
	}
	if (len > 5)
		return -1;
	uint32_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* Splits the authority s[0..len) into host and port; the host goes into
 * the buffer in lower case. */
static int parse_authority(const char *s, size_t len, struct ig_url *u, struct writer *w, bool *v6)
{
	const char *host = s, *port = NULL;
	size_t host_len, port_len = 0;
	*v6 = false;
	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return -1;
		host = s + 1;
		host_len = (size_t)(close - host);
		size_t rest = len - (size_t)(close + 1 - s);
		if (rest) {
			if (close[1] != ':')
				return -1;
			port = close + 2;
			port_len = rest - 1;
		}
		char tmp[64];
		struct in6_addr a;
		if (host_len == 0 || host_len >= sizeof tmp)
			return -1;
		memcpy(tmp, host, host_len);
		tmp[host_len] = 0;
		if (inet_pton(AF_INET6, tmp, &a) != 1)
			return -1;
		*v6 = true;
	} else {
		const char *colon = memchr(s, ':', len);
		host_len = colon ? (size_t)(colon - s) : len;
		if (colon) {
			port = colon + 1;
			port_len = len - host_len - 1;
		}
		if (host_len == 0 || host_len > IG_URL_HOST_MAX)
			return -1;
		for (size_t i = 0; i < host_len; i++)
			if (!is_host_char(host[i]))
				return -1;
	}
	if (parse_port(port, port_len, u->https ? 443 : 80, &u->port) != 0)
		return -1;
	char *h = w->p;
	if ((size_t)(w->end - w->p) < host_len)
		return -1;
	for (size_t i = 0; i < host_len; i++)
		h[i] = ig_ascii_lower(host[i]);
	w->p += host_len;
	u->host = (ig_str){ h, host_len };
	return 0;
}

/* origin and authority, in the buffer after the host. */
static int build_names(struct ig_url *u, struct writer *w, bool v6)
{
	char port[8] = ":";
	size_t port_len = 1;
	for (uint32_t div = 10000; div; div /= 10)
		if (u->port >= div || port_len > 1)
			port[port_len++] = (char)('0' + u->port / div % 10);
	const char *scheme = u->https ? "https://" : "http://";
	const char *o = w->p;
	if (!put(w, scheme, strlen(scheme)) || (v6 && !put(w, "[", 1)) ||
	    !put(w, u->host.ptr, u->host.len) || (v6 && !put(w, "]", 1)) || !put(w, port, port_len))
		return -1;
	u->origin = (ig_str){ o, (size_t)(w->p - o) };
	bool default_port = u->port == (u->https ? 443 : 80);
	/* The authority is the origin without its scheme, and without the
	   port when it is the default: a slice of the origin. */
	size_t skip = strlen(scheme);
	u->authority = (ig_str){ o + skip, u->origin.len - skip - (default_port ? port_len : 0) };
	return 0;
}

int ig_url_parse(const char *url, size_t len, struct ig_url *u)
{
	*u = (struct ig_url){ 0 };
	size_t i;
	if (has_prefix_nocase(url, len, "http://")) {
		i = 7;
	} else if (has_prefix_nocase(url, len, "https://")) {
		u->https = true;
		i = 8;
	} else {
		return -1;
	}
	for (size_t k = 0; k < len; k++)
		if (!is_target_char(url[k]))
			return -1;
	size_t auth_start = i;
	while (i < len && url[i] != '/' && url[i] != '?' && url[i] != '#')
		i++;
	if (memchr(url + auth_start, '@', i - auth_start))
		return -1; /* user info: never sent, so refuse rather than drop it */
	struct writer w = { u->buf, u->buf + sizeof u->buf };
	bool v6;
	if (parse_authority(url + auth_start, i - auth_start, u, &w, &v6) != 0 ||
	    build_names(u, &w, v6) != 0)
		return -1;
	const char *hash = memchr(url + i, '#', len - i);
	size_t end = hash ? (size_t)(hash - url) : len;
	if (i == end) {
		u->path = IG_STR("/");
	} else if (url[i] == '/') {
		u->path = (ig_str){ url + i, end - i };
	} else { /* "?q" without a path: the target needs a leading '/' */
		const char *p = put(&w, "/", 1);
		if (!p || !put(&w, url + i, end - i))
			return -1;
		u->path = (ig_str){ p, end - i + 1 };
	}
	return 0;
}

int ig_url_parse_origin(const char *origin, size_t len, struct ig_url *u)
{
	if (ig_url_parse(origin, len, u) != 0 || !ig_str_eq(u->path, "/", 1))
		return -1;
	/* "http://a/?" and "http://a/#x" are not origins either. */
	const char *end = origin + len;
	if (len && end[-1] != '/' && u->path.ptr >= origin && u->path.ptr < end)
		return -1;
	return 0;
}

bool ig_url_same_origin(const struct ig_url *a, const struct ig_url *b)
{
	return a->origin.len == b->origin.len && memcmp(a->origin.ptr, b->origin.ptr, a->origin.len) == 0;
}
