/* Push delivery's row of the settings table: the shared secret POST
 * /_ingot/push/<subscription> (push.c) takes as a bearer token. Linked
 * with push.c, so only into a binary whose document declares
 * subscriptions; the start lists it weakly (net/start.c). */
#include "push_settings.h"
#include "kernel/runtime/config.h"

struct ig_pubsub_push_config ig_pubsub_push_config;
static const struct ig_pubsub_push_config push_defaults = { .secret = "" };

static const struct ig_option push_rows[] = {
	{ "INGOT_PUSH_SECRET", IG_OPT_SECRET, &ig_pubsub_push_config.secret, 0, 0,
	  IG_HELP("the bearer token POST /_ingot/push/<subscription> takes (CloudEvents from Knative "
		  "Eventing or Eventarc, GCP Pub/Sub push); not set: that path is 404, unless the door's bearer "
		  "JWT keys are configured") },
};

const struct ig_settings ig_pubsub_push_settings = {
	.part = "pubsub-push", .opts = push_rows, .count = IG_COUNTOF(push_rows),
	.values = &ig_pubsub_push_config, .defaults = &push_defaults, .size = sizeof ig_pubsub_push_config,
};
