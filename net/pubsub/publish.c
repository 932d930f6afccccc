/* ig_pubsub_publish (publish.h): what the generated ig_publish_<topic>
 * calls once the message is encoded and valid, handed to the deployment's
 * provider (provider.h). */
#include "provider.h"
#include "publish.h"

int ig_pubsub_publish(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
		      ig_pubsub_error *err)
{
	return ig_pubsub_provider()->publish(ctx, t, json, len, err);
}
