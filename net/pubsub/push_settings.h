/* INGOT_PUSH_SECRET (push_settings.c), read by push.c. */
#ifndef NET_PUBSUB_PUSH_SETTINGS_H
#define NET_PUBSUB_PUSH_SETTINGS_H

#include <stdbool.h>

struct ig_ctx;

struct ig_pubsub_push_config {
	const char *secret; /* the bearer token POST /_ingot/push/<subscription> takes; "" when not set */
	/* No row: set by the start (net/start.c) after the parse, where the
	   document has a bearer JWT scheme and a key set is configured: the
	   door's check (net/api's ig_security_bearer), true when the request's
	   token passes, else it has answered (401, 429). NULL: none. */
	bool (*jwt)(struct ig_ctx *ctx);
};
extern struct ig_pubsub_push_config ig_pubsub_push_config;

#endif
