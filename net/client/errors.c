/* The names of the client's errors: short, stable, lower-case identifiers
 * for logs, problem+json bodies and test output ("connect_timeout"), so
 * that a reader never needs the enum's numbers. */
#include "ingot/client.h"

static const char *const error_names[] = {
	[IG_CLIENT_OK] = "ok",
	[IG_CLIENT_DNS] = "dns",
	[IG_CLIENT_CONNECT] = "connect",
	[IG_CLIENT_CONNECT_TIMEOUT] = "connect_timeout",
	[IG_CLIENT_HEADERS_TIMEOUT] = "headers_timeout",
	[IG_CLIENT_BODY_TIMEOUT] = "body_timeout",
	[IG_CLIENT_RESET] = "reset",
	[IG_CLIENT_PROTOCOL] = "protocol",
	[IG_CLIENT_TOO_LARGE] = "too_large",
	[IG_CLIENT_TLS] = "tls",
	[IG_CLIENT_ABORTED] = "aborted",
	[IG_CLIENT_BUSY] = "busy",
	[IG_CLIENT_REDIRECT_LIMIT] = "redirect_limit",
	[IG_CLIENT_MOCK_UNMATCHED] = "mock_unmatched",
	[IG_CLIENT_NET_FORBIDDEN] = "net_forbidden",
	[IG_CLIENT_BAD_REQUEST] = "bad_request",
	[IG_CLIENT_CANCELLED] = "cancelled",
};

const char *ig_client_error_name(enum ig_client_error e)
{
	if ((unsigned)e < IG_COUNTOF(error_names) && error_names[e])
		return error_names[e];
	return "unknown";
}
