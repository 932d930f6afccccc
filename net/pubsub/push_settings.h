/* INGOT_PUSH_SECRET (push_settings.c), read by push.c. */
#ifndef NET_PUBSUB_PUSH_SETTINGS_H
#define NET_PUBSUB_PUSH_SETTINGS_H

struct ig_pubsub_push_config {
	const char *secret; /* the bearer token POST /_ingot/push/<subscription> takes; "" when not set */
};
extern struct ig_pubsub_push_config ig_pubsub_push_config;

#endif
