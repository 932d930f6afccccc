/* Request targets as a log line may carry them: the value of every query
 * parameter named access_token (RFC 6750 2.3: a bearer token, which a
 * browser's EventSource or WebSocket can only send in the URL) becomes
 * [redacted], whatever operation the request was for. Pure text, no
 * exchange: the lines that write a target call it, no request's path does. */
#ifndef NET_HTTP_REDACT_H
#define NET_HTTP_REDACT_H

#include "ingot/base.h"

#define IG_HTTP_REDACTED "[redacted]"

/* target as it may be logged: target itself when it holds nothing to
 * hide (no query, or none that can name access_token: a memchr and a
 * memmem on the query), else a copy in buf[0..cap) with each
 * access_token's value replaced, cut at cap (a cut copy never shows more
 * of a value, only less of the rest). */
IG_NONNULL(2) ig_str ig_http_target_loggable(ig_str target, char *buf, size_t cap);

#endif
