/* Redacting access_token from a request target (redact.h). A parameter's
 * name is compared %-decoded, as the door reads it, so "access%5Ftoken"
 * is hidden too. */
#include "redact.h"

#include <string.h>

static const char token_name[] = "access_token";

/* Whether raw[0..n), %-decoded, is "access_token". */
static bool names_token(const char *raw, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++, k++) {
		char c = raw[i];
		if (c == '%') {
			int hi = i + 2 < n ? ig_hex_digit(raw[i + 1]) : -1, lo = hi >= 0 ? ig_hex_digit(raw[i + 2]) : -1;
			if (lo < 0)
				return false;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (k >= sizeof token_name - 1 || c != token_name[k])
			return false;
	}
	return k == sizeof token_name - 1;
}

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, const char *p, size_t n)
{
	if (n > o->cap - o->len)
		n = o->cap - o->len;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

ig_str ig_http_target_loggable(ig_str target, char *buf, size_t cap)
{
	const char *q = target.len ? memchr(target.ptr, '?', target.len) : NULL;
	if (!q)
		return target;
	const char *p = q + 1, *end = target.ptr + target.len;
	size_t qlen = (size_t)(end - p);
	if (!memmem(p, qlen, token_name, sizeof token_name - 1) && !memchr(p, '%', qlen))
		return target;
	struct out o = { buf, cap, 0 };
	put(&o, target.ptr, (size_t)(p - target.ptr));
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		if (eq && names_token(p, (size_t)(eq - p))) {
			put(&o, p, (size_t)(eq + 1 - p));
			put(&o, IG_HTTP_REDACTED, sizeof IG_HTTP_REDACTED - 1);
		} else {
			put(&o, p, (size_t)(stop - p));
		}
		if (amp)
			put(&o, "&", 1);
		p = amp ? amp + 1 : end;
	}
	return (ig_str){ buf, o.len };
}
