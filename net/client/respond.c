/* A failed outbound call as the inbound request's answer: the client gets
 * a problem+json that names the kind of failure (connect, timeout,
 * protocol, ...) and nothing of the upstream (no URL, host or address);
 * the log gets the whole error once, as the request's error line
 * (net/http/error_log.c). */
#include "ingot/client.h"
#include "net/http/internal.h"

static bool is_timeout(enum ig_client_error e)
{
	return e == IG_CLIENT_CONNECT_TIMEOUT || e == IG_CLIENT_HEADERS_TIMEOUT || e == IG_CLIENT_BODY_TIMEOUT;
}

/* The client's detail: what failed, in the runtime's words. */
static const char *detail_of(enum ig_client_error e)
{
	switch (e) {
	case IG_CLIENT_DNS: return "the upstream's name did not resolve";
	case IG_CLIENT_CONNECT: return "the upstream refused the connection or could not be reached";
	case IG_CLIENT_CONNECT_TIMEOUT: return "the upstream did not accept the connection in time";
	case IG_CLIENT_HEADERS_TIMEOUT: return "the upstream did not answer in time";
	case IG_CLIENT_BODY_TIMEOUT: return "the upstream's response body stalled";
	case IG_CLIENT_RESET: return "the upstream closed the connection before its response was complete";
	case IG_CLIENT_PROTOCOL: return "the upstream's response was malformed";
	case IG_CLIENT_TOO_LARGE: return "the upstream's response was over a limit";
	case IG_CLIENT_TLS: return "the TLS handshake with the upstream failed";
	case IG_CLIENT_BUSY: return "too many calls to the upstream at once";
	case IG_CLIENT_REDIRECT_LIMIT: return "the upstream redirected too many times";
	default: return "the call to the upstream failed";
	}
}

int ig_fetch_problem_status(enum ig_client_error error)
{
	if (is_timeout(error))
		return 504;
	if (error == IG_CLIENT_BUSY || error == IG_CLIENT_ABORTED)
		return 503;
	return 502;
}

int ig_fetch_respond_error(ig_ctx *ctx, const ig_response *res)
{
	int status = ig_fetch_problem_status(res->error);
	const char *kind = ig_client_error_name(res->error), *detail = detail_of(res->error);
	struct ig_logline l;
	if (ig_http_error_line_begin(ctx, &l, "upstream error", status, kind)) {
		ig_log_cstr(&l, "error", kind);
		if (res->error_message)
			ig_log_cstr(&l, "message", res->error_message);
		ig_log_end(&l);
	}
	ig_http_problem_set(ctx, status, detail, kind);
	return status;
}
