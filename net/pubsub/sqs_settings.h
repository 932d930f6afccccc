/* INGOT_SQS_SUBSCRIPTIONS (sqs_settings.c), read by sqs.c. */
#ifndef NET_PUBSUB_SQS_SETTINGS_H
#define NET_PUBSUB_SQS_SETTINGS_H

struct ig_pubsub_sqs_config {
	const char *subscriptions; /* "queue=subscription,..."; "" when not set */
};
extern struct ig_pubsub_sqs_config ig_pubsub_sqs_config;

#endif
