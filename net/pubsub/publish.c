/* ig_pubsub_publish (publish.h): what the generated ig_publish_<topic>
 * calls once the message is encoded and valid, handed to the deployment's
 * provider (provider.h). */
#include "provider.h"
#include "publish.h"
#include "net/http/wait.h"

int ig_pubsub_publish(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
		      ig_pubsub_error *err)
{
	/* Both providers wait on the handler's coroutine; one whose exchange
	   is cancelled already sends nothing (its calls' cancels have run). */
	if (!ig_wait_in_handler(ctx)) {
		*err = (ig_pubsub_error){ IG_PUBSUB_NOT_IN_HANDLER, "a publish outside its handler's coroutine" };
		return -1;
	}
	if (ig_wait_cancelled(ctx)) {
		*err = (ig_pubsub_error){ IG_PUBSUB_CANCELLED, "cancelled before publishing" };
		return -1;
	}
	return ig_pubsub_provider()->publish(ctx, t, json, len, err);
}
