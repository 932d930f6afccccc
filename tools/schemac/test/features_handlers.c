/* Handlers for features.yaml: a redirect, the runtime's problem answered
 * by the handler (ig_respond_problem) or written by the encoder for a
 * status the document gives the runtime's Problem, and statuses that fall
 * under an exact key, a range or default. */
#include "api.h"

#include <string.h>

int follow(ig_ctx *ctx, const struct follow_in *in, struct follow_out *out)
{
	(void)out;
	if (ig_str_eq(in->code, "gone", 4)) {
		ig_respond_problem(ctx, 404, "no link \"gone\"");
		return 404;
	}
	if (ig_str_eq(in->code, "missing", 7))
		return 404; /* the encoder writes the runtime's problem */
	if (ig_str_eq(in->code, "odd", 3))
		return ig_redirect(ctx, 200, IG_STR("/not-a-redirect")); /* 500 */
	return ig_redirect(ctx, 302, in->code);
}

/* The body's url says which status to answer. */
int putLink(ig_ctx *ctx, const struct putLink_in *in, struct putLink_out *out)
{
	(void)ctx;
	ig_str url = in->body.url;
	if (ig_str_eq(url, "same:", 5))
		return 204;
	if (ig_str_eq(url, "invalid:", 8)) {
		out->r2XX.url = IG_STR("not a uri"); /* breaks format: uri */
		return 201;
	}
	if (ig_str_eq(url, "refused:", 8)) {
		out->r4XX = (struct LinkProblem){ .title = IG_STR("Unprocessable"), .field = IG_STR("url") };
		return 422;
	}
	if (ig_str_eq(url, "moved:", 6))
		return ig_redirect(ctx, 308, IG_STR("/links/elsewhere")); /* default gives it no body */
	if (ig_str_eq(url, "down:", 5))
		return 503; /* default: the runtime's problem */
	out->r2XX.url = url;
	out->r2XX.has_hits = true;
	out->r2XX.hits = 7;
	return url.len > 20 ? 202 : 201;
}

int getLimited(ig_ctx *ctx, const struct getLimited_in *in, struct getLimited_out *out)
{
	(void)ctx;
	(void)in;
	(void)out;
	return 204;
}
