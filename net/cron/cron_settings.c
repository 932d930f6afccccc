/* Cron's row of the settings table: the shared secret that POST
 * /_ingot/cron (endpoint.c) takes as a bearer token. Linked with the
 * endpoint, so only into a binary whose document declares jobs; the start
 * lists it weakly (net/start.c). */
#include "jobs.h"
#include "kernel/runtime/config.h"

struct ig_cron_config ig_cron_config;
static const struct ig_cron_config cron_defaults = { .secret = "" };

static const struct ig_option cron_rows[] = {
	{ "INGOT_CRON_SECRET", IG_OPT_SECRET, &ig_cron_config.secret, 0, 0,
	  IG_HELP("the bearer token POST /_ingot/cron takes (a platform's trigger: Knative PingSource); "
		  "not set: that path is 404") },
};

const struct ig_settings ig_cron_settings = {
	.part = "cron", .opts = cron_rows, .count = IG_COUNTOF(cron_rows),
	.values = &ig_cron_config, .defaults = &cron_defaults, .size = sizeof ig_cron_config,
};
