/* The links app's handlers: GET redirects to the link's target or answers
 * the runtime's 404 problem; PUT answers a status under the document's
 * exact key, its 2XX and 4XX ranges or its default, as the body's url
 * says. */
#include "api.h"

#include <string.h>

int follow(ig_ctx *ctx, const struct follow_in *in, struct follow_out *out)
{
	(void)out;
	if (ig_str_eq(in->code, "gone", 4)) {
		ig_respond_problem(ctx, 404, "the link \"gone\" was deleted");
		return 404;
	}
	if (ig_str_eq(in->code, "missing", 7))
		return 404; /* the runtime's problem, written by the encoder */
	static const char base[] = "https://example.com/to/";
	char *to = ig_alloc(ctx, sizeof base - 1 + in->code.len);
	if (!to)
		return 500;
	memcpy(to, base, sizeof base - 1);
	memcpy(to + sizeof base - 1, in->code.ptr, in->code.len);
	return ig_redirect(ctx, in->has_verbose && in->verbose ? 307 : 302,
			   (ig_str){ to, sizeof base - 1 + in->code.len });
}

int putLink(ig_ctx *ctx, const struct putLink_in *in, struct putLink_out *out)
{
	(void)ctx;
	ig_str url = in->body.url;
	if (ig_str_eq(url, "same:", 5))
		return 204;
	if (ig_str_eq(url, "refused:", 8)) {
		out->r4XX = (struct LinkProblem){ .title = IG_STR("Unprocessable Content"), .field = IG_STR("url") };
		return 422;
	}
	if (ig_str_eq(url, "down:", 5))
		return 503; /* default: the runtime's problem */
	out->r2XX.url = url;
	out->r2XX.has_hits = true;
	out->r2XX.hits = (int64_t)in->code.len;
	return url.len > 20 ? 202 : 201;
}
