/* The door bench app's handlers: /me answers what the token says, as the
 * reference service's does (app/auth.c); /open and /limited answer the
 * same body from constants. What differs between them is the door in
 * front (openapi.yaml). */
#include "api.h"
#include "ingot/auth.h"

static const ig_str scopes[] = { { "reports:read", 12 } };

/* The body, from the principal's subject and scopes (/me, as the
 * reference service's getMe) or from these constants (the others). */
static int body(struct Me *me, const struct ig_principal *p)
{
	*me = p ? (struct Me){ .sub = p->subject, .scopes = { .items = p->scopes, .len = p->nscopes } }
		: (struct Me){ .sub = IG_STR("user-1"), .scopes = { .items = scopes, .len = 1 } };
	return 200;
}

int getOpen(ig_ctx *ctx, const struct getOpen_in *in, struct getOpen_out *out)
{
	(void)ctx;
	(void)in;
	return body(&out->r200, NULL);
}

int getLimited(ig_ctx *ctx, const struct getLimited_in *in, struct getLimited_out *out)
{
	(void)ctx;
	(void)in;
	return body(&out->r200, NULL);
}

int getMe(ig_ctx *ctx, const struct getMe_in *in, struct getMe_out *out)
{
	(void)in;
	const struct ig_principal *p = ig_principal(ctx);
	/* the door admits no one without a token */
	return p ? body(&out->r200, p) : 500;
}
