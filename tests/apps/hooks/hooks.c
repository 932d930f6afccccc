/* The hooks app's handlers and hooks (openapi.yaml's x-ingot-hooks): the
 * root's gate answers 418 for a request with X-Teapot, stamp adds
 * X-Hooked: <status> (and X-Order: stamp) to every answer; getItem's own
 * hooks add X-Order lines after the root's, so that the order shows in
 * the response. The API key "secret" passes the door. */
#include "api.h"
#include "ingot/auth.h"

#include <stdatomic.h>

static _Atomic long gate_runs, item_runs;

int gate(ig_ctx *ctx, const char *operation_id, const void *in)
{
	(void)in;
	atomic_fetch_add(&gate_runs, 1);
	ig_add_header(ctx, "X-Before", (ig_str){ operation_id, strlen(operation_id) });
	if (!ig_req_header(ctx, "X-Teapot").len)
		return IG_HOOK_NEXT;
	ig_json_string(ig_body(ctx), "short and stout", 15);
	return 418;
}

int item_before(ig_ctx *ctx, const char *operation_id, const void *in)
{
	(void)operation_id;
	const struct getItem_in *item = in;
	atomic_fetch_add(&item_runs, 1);
	ig_add_header(ctx, "X-Before", IG_STR("item"));
	/* The principal is the door's: the before-hook runs after it. */
	const struct ig_principal *p = ig_principal(ctx);
	if (!p)
		return 500;
	if (item->id == 13) {
		ig_respond_problem(ctx, 403, "item 13 is not for anyone");
		return 403;
	}
	return IG_HOOK_NEXT;
}

void stamp(const struct ig_answer *a)
{
	char digits[20];
	ig_answer_add_header(a, "X-Hooked", (ig_str){ digits, ig_fmt_i64(digits, a->status) });
	ig_answer_add_header(a, "X-Order", IG_STR("stamp"));
	ig_answer_add_header(a, "X-Exchange", a->ctx ? IG_STR("yes") : IG_STR("no"));
}

void item_after(const struct ig_answer *a)
{
	ig_answer_add_header(a, "X-Order", IG_STR("item"));
}

int getItem(ig_ctx *ctx, const struct getItem_in *in, struct getItem_out *out)
{
	(void)ctx;
	out->r200.id = in->id;
	return 200;
}

int getRuns(ig_ctx *ctx, const struct getRuns_in *in, struct getRuns_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.gate = atomic_load(&gate_runs);
	out->r200.item = atomic_load(&item_runs);
	return 200;
}

enum ig_auth_result ig_auth_handler(ig_ctx *ctx, const struct ig_credentials *cred, struct ig_principal *out)
{
	(void)ctx;
	if (cred->kind != IG_CRED_API_KEY || !ig_secret_eq(cred->key, IG_STR("secret")))
		return IG_AUTH_REFUSED;
	out->subject = IG_STR("key");
	return IG_AUTH_OK;
}
