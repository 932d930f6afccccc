/* The door bench app's handlers: /me answers what the token says, as the
 * reference service's does (app/auth.c); /open and /limited answer the
 * same body from constants. What differs between them is the door in
 * front (openapi.yaml). */
#include "api.h"
#include "ingot/auth.h"

static const ig_str scopes[] = { { "reports:read", 12 } };

static void same_body(struct Me *me)
{
	me->sub = IG_STR("user-1");
	me->scopes.items = scopes;
	me->scopes.len = 1;
}

int getOpen(ig_ctx *ctx, const struct getOpen_in *in, struct getOpen_out *out)
{
	(void)ctx;
	(void)in;
	same_body(&out->r200);
	return 200;
}

int getLimited(ig_ctx *ctx, const struct getLimited_in *in, struct getLimited_out *out)
{
	(void)ctx;
	(void)in;
	same_body(&out->r200);
	return 200;
}

int getMe(ig_ctx *ctx, const struct getMe_in *in, struct getMe_out *out)
{
	(void)in;
	const struct ig_principal *p = ig_principal(ctx);
	if (!p) /* the door admits no one without a token */
		return 500;
	out->r200.sub = p->subject;
	out->r200.scopes.items = p->scopes;
	out->r200.scopes.len = p->nscopes;
	return 200;
}
