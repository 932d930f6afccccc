/* String formats of JSON Schema that ingot asserts (OpenAPI's "format"),
 * checked on the request path without allocation: RFC 3339 date-time and
 * full-date, RFC 5321 mailbox (addr-spec subset, see format.c), RFC 4122
 * uuid in its textual form, RFC 3986 URI (absolute, with a scheme). */
#ifndef NET_API_FORMAT_H
#define NET_API_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

bool ig_format_date_time(const char *s, size_t n);
bool ig_format_date(const char *s, size_t n);
bool ig_format_email(const char *s, size_t n);
bool ig_format_uuid(const char *s, size_t n);
bool ig_format_uri(const char *s, size_t n);

#endif
