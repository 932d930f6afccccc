/* ASCII for protocol text (HTTP field names and tokens, URL hosts, DNS
 * names, comma-separated settings): case, the bytes A-Z only, whatever the
 * C locale says, which tolower() does not promise; and HTTP's optional
 * white space around a list element. One definition for net/http and
 * net/client. */
#ifndef NET_ASCII_H
#define NET_ASCII_H

#include "ingot/base.h"

static inline char ig_ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* [p, end) without the spaces and tabs (RFC 9110's OWS) at either end. */
static inline ig_str ig_ascii_trim_ows(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return (ig_str){ p, (size_t)(end - p) };
}

#endif
