/* The quota app's handlers: each answers {"ok": true}; the limits in front
 * of them are the runtime's (openapi.yaml's x-ingot-rate-limit). */
#include "api.h"

int getQuota(ig_ctx *ctx, const struct getQuota_in *in, struct getQuota_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.ok = true;
	return 200;
}

int getOther(ig_ctx *ctx, const struct getOther_in *in, struct getOther_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.ok = true;
	return 200;
}

int getFree(ig_ctx *ctx, const struct getFree_in *in, struct getFree_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.ok = true;
	return 200;
}

int getMine(ig_ctx *ctx, const struct getMine_in *in, struct getMine_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.ok = true;
	return 200;
}

int getAnyone(ig_ctx *ctx, const struct getAnyone_in *in, struct getAnyone_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.ok = true;
	return 200;
}
