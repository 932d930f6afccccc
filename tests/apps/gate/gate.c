/* The gate app's handler and its auth handler, which waits: the key is
 * judged after a linear sleep, as a database lookup would be; a sleep that
 * cannot wait (cancelled, or not on a coroutine) refuses. */
#include "api.h"
#include "ingot/auth.h"

int getGate(ig_ctx *ctx, const struct getGate_in *in, struct getGate_out *out)
{
	const struct ig_principal *p = ig_principal(ctx);
	out->r200.name = in->name;
	out->r200.by = p ? p->subject : IG_STR("");
	out->r200.n = in->n;
	return 200;
}

enum ig_auth_result ig_auth_handler(ig_ctx *ctx, const struct ig_credentials *cred, struct ig_principal *out)
{
	if (ig_sleep(ctx, 5) != IG_WAIT_OK)
		return IG_AUTH_REFUSED;
	if (!ig_secret_eq(cred->key, IG_STR("k-good")))
		return IG_AUTH_REFUSED;
	out->subject = IG_STR("gate-user");
	return IG_AUTH_OK;
}
