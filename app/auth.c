/* The reference service's authenticated routes (the door: the document's
 * securitySchemes, checked by the runtime before these run): /me answers
 * what the bearer token says, /reports/{name} takes an API key from
 * REPORTS_API_KEYS (judged by the auth handler below) or a token with
 * reports:read. The principal is typed (the document's x-ingot-principal:
 * struct Caller), from the token's claims or the auth handler. */
#include "api.h"
#include "ingot/auth.h"
#include "ingot/settings.h"

#include <string.h>

int getMe(ig_ctx *ctx, const struct getMe_in *in, struct getMe_out *out)
{
	(void)in;
	const struct ig_principal *p = ig_principal(ctx);
	const struct Caller *who = ig_principal_Caller(ctx);
	if (!p || !who) /* the door admits no one without a token */
		return 500;
	out->r200.sub = who->has_sub ? who->sub : IG_STR("");
	out->r200.scopes.items = p->scopes;
	out->r200.scopes.len = p->nscopes;
	return 200;
}

int getReport(ig_ctx *ctx, const struct getReport_in *in, struct getReport_out *out)
{
	const struct Caller *who = ig_principal_Caller(ctx);
	out->r200.name = in->name;
	out->r200.by = who && who->has_sub ? who->sub : IG_STR("");
	return 200;
}

/* REPORTS_API_KEYS (app/service.c's settings): comma-separated keys;
 * unset, no key passes. */
extern const char *reports_api_keys;

/* The auth handler for the document's apiKey scheme, typed by its
 * x-ingot-principal: every key is compared (in constant time) so the time
 * taken does not say which one came close. */
enum ig_auth_result ig_auth_handler_Caller(ig_ctx *ctx, const struct ig_credentials *cred, struct ig_principal *out,
					   struct Caller *data)
{
	(void)ctx;
	if (cred->kind != IG_CRED_API_KEY)
		return IG_AUTH_REFUSED;
	bool ok = false;
	const char *k = reports_api_keys;
	while (*k) {
		const char *comma = strchr(k, ',');
		size_t n = comma ? (size_t)(comma - k) : strlen(k);
		if (n)
			ok |= ig_secret_eq((ig_str){ k, n }, cred->key);
		k += n + (comma != NULL);
	}
	if (!ok)
		return IG_AUTH_REFUSED;
	out->subject = IG_STR("api-key"); /* the access log's, and a limit by subject's */
	data->sub = out->subject;
	data->has_sub = true;
	return IG_AUTH_OK;
}
