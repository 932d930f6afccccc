/* The NATS client's URL (url.h): one server's nats:// or tls:// URL with
 * its userinfo (percent-decoded) and port, or a comma-separated list of
 * them. Pure: no I/O, no allocation. */
#include "url.h"

#include <string.h>

#include "ingot/base.h"

/* A part of the URL (the userinfo, the host), percent-decoded (a password with ':' or
 * '@' is written %3A, %40), NUL-terminated. */
static bool copy_part(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			int hi = i + 2 < n ? ig_hex_digit(s[i + 1]) : -1;
			int lo = hi >= 0 ? ig_hex_digit(s[i + 2]) : -1;
			if (lo < 0)
				return false;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == 0 || o + 1 >= cap)
			return false;
		dst[o++] = c;
	}
	dst[o] = 0;
	return true;
}

/* One URL of the list: url[0..len). */
static bool parse_url(struct ig_nats_server *sv, const char *url, size_t len, const char **why)
{
	*why = "the NATS URL is not nats://[token@|user:password@]host[:port] or tls://..., or a list of them";
	const char *s = url, *stop = url + len;
	if (len >= 7 && !strncmp(s, "nats://", 7))
		s += 7;
	else if (len >= 6 && !strncmp(s, "tls://", 6))
		s += 6, sv->tls_url = true;
	else
		return false;
	const char *end = s;
	while (end < stop && *end != '/' && *end != '?' && *end != '#')
		end++;
	/* The last '@' ends the userinfo: a password may hold one. */
	const char *at = memrchr(s, '@', (size_t)(end - s));
	if (at) {
		const char *colon = memchr(s, ':', (size_t)(at - s));
		if (colon) {
			if (!copy_part(sv->user, sizeof sv->user, s, (size_t)(colon - s)) ||
			    !copy_part(sv->pass, sizeof sv->pass, colon + 1, (size_t)(at - colon - 1)))
				return false;
		} else {
			if (!copy_part(sv->user, sizeof sv->user, s, (size_t)(at - s)))
				return false;
			sv->token_auth = true;
		}
		s = at + 1;
	}
	const char *host_end = end;
	const char *port = NULL;
	if (s < end && *s == '[') {
		const char *close = memchr(s, ']', (size_t)(end - s));
		if (!close)
			return false;
		if (close + 1 < end && close[1] == ':')
			port = close + 2;
		else if (close + 1 != end)
			return false;
		s++;
		host_end = close;
	} else {
		const char *colon = memchr(s, ':', (size_t)(end - s));
		if (colon)
			port = colon + 1, host_end = colon;
	}
	if (host_end == s || !copy_part(sv->host, sizeof sv->host, s, (size_t)(host_end - s)))
		return false;
	sv->port = 4222;
	if (port) {
		unsigned v = 0;
		if (port == end)
			return false;
		for (const char *p = port; p < end; p++) {
			if (*p < '0' || *p > '9' || (v = v * 10 + (unsigned)(*p - '0')) > 65535)
				return false;
		}
		if (v == 0)
			return false;
		sv->port = (uint16_t)v;
	}
	return true;
}

size_t ig_nats_url_parse(const char *urls, struct ig_nats_server *out, size_t max, const char **why)
{
	size_t count = 0;
	for (const char *s = urls;; s++) {
		size_t n = strcspn(s, ",");
		if (count == max) {
			*why = "the NATS URL lists more servers than the client keeps";
			return 0;
		}
		out[count] = (struct ig_nats_server){ 0 };
		if (!parse_url(&out[count++], s, n, why))
			return 0;
		s += n;
		if (!*s)
			return count;
	}
}
