/* "Authorization: Bearer <secret>" against a shared secret, for the
 * runtime's own endpoints that a platform's trigger calls (POST
 * /_ingot/cron, POST /_ingot/push/<subscription>). Inline: a binary that
 * serves neither has none of it. */
#ifndef NET_HTTP_BEARER_H
#define NET_HTTP_BEARER_H

#include "ingot/base.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* Whether auth (the field's value) is "Bearer " (any case) and secret,
 * compared in time that does not depend on where the first difference
 * lies. False for an empty secret. */
static inline bool ig_http_bearer_is(ig_str auth, const char *secret)
{
	size_t n = strlen(secret);
	if (!n || auth.len != 7 + n || strncasecmp(auth.ptr, "Bearer ", 7) != 0)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(auth.ptr[7 + i] ^ secret[i]);
	return diff == 0;
}

#endif
