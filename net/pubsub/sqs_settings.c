/* SQS through Lambda's row of the settings table: which subscription each
 * queue's records go to. Linked with sqs.c (which reads it and checks it
 * against the document when the Lambda runtime starts), so only into a
 * binary whose document declares subscriptions; the start lists it weakly
 * (net/start.c). */
#include "sqs_settings.h"
#include "kernel/runtime/config.h"

struct ig_pubsub_sqs_config ig_pubsub_sqs_config;
static const struct ig_pubsub_sqs_config sqs_defaults = { .subscriptions = "" };

static const struct ig_option sqs_rows[] = {
	{ "INGOT_SQS_SUBSCRIPTIONS", IG_OPT_STR, &ig_pubsub_sqs_config.subscriptions, 0, 0,
	  IG_HELP("under Lambda, the subscription each SQS queue's records go to: queue=subscription, "
		  "comma-separated (the queue is the last part of the records' eventSourceARN); one that "
		  "names no subscription of the document stops the start") },
};

const struct ig_settings ig_pubsub_sqs_settings = {
	.part = "pubsub-sqs", .opts = sqs_rows, .count = IG_COUNTOF(sqs_rows),
	.values = &ig_pubsub_sqs_config, .defaults = &sqs_defaults, .size = sizeof ig_pubsub_sqs_config,
};
