/* The request's principal, as the door set it (ingot/auth.h's accessor):
 * here, beside the exchange that holds it, so that a binary without
 * security links only these two functions of the door. */
#include "internal.h"
#include "ingot/auth.h"

const struct ig_principal *ig_principal(const ig_ctx *x)
{
	return x->principal;
}

void ig_set_principal(ig_ctx *x, const struct ig_principal *p)
{
	x->principal = p;
}
