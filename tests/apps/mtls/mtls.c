/* The mtls app's handlers: /whoami answers the principal the door made
 * from the client certificate (ingot/auth.h); /open answers anyone. */
#include "api.h"
#include "ingot/auth.h"

int getWhoami(ig_ctx *ctx, const struct getWhoami_in *in, struct getWhoami_out *out)
{
	(void)in;
	const struct ig_principal *p = ig_principal(ctx);
	if (!p)
		return 500; /* the door admits no one without it */
	out->r200.subject = p->subject;
	out->r200.scheme = (ig_str){ p->scheme, strlen(p->scheme) };
	return 200;
}

int getOpen(ig_ctx *ctx, const struct getOpen_in *in, struct getOpen_out *out)
{
	(void)ctx, (void)in, (void)out;
	return 204;
}
