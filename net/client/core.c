/* The core's shared Agent, the top of net/client: made on a handler's
 * first ig_core_agent with the public ig_agent_new, like any app's, from
 * the INGOT_CLIENT_* settings parsed at startup
 * (net/client/client_settings.c); or a test's dispatcher in its place. */
#include "internal.h"
#include "net/client/settings.h"

ig_dispatcher *ig_core_agent(ig_ctx *ctx)
{
	struct client_core *core = ig_client_core_of(ig_ctx_loop(ctx));
	if (!core)
		return NULL;
	if (!core->agent) /* the settings were parsed at startup */
		core->agent = ig_agent_new(core->loop, &ig_client_settings_opts);
	return core->agent;
}

void ig_core_set_agent(struct ig_loop *loop, ig_dispatcher *d)
{
	struct client_core *core = ig_client_core_of(loop);
	if (core)
		core->agent = d;
}
