/* pubsub.yaml's handlers over the stand-in runtime (mock_runtime.c), no
 * consumer, and a stand-in provider that keeps what it was handed: POST /posts?case=...
 * publishes a valid message (204 when the provider got exactly its JSON)
 * or one that breaks PostCreated (422 when the publish refused it and the
 * provider got nothing). */
#include "api.h"
#include "net/pubsub/publish.h"
#include "net/pubsub/consumer.h"

#include <stdio.h>
#include <string.h>

static char stored[64];
static int provided;

int ig_pubsub_publish(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
		      ig_pubsub_error *err)
{
	(void)ctx;
	(void)err;
	provided++;
	snprintf(stored, sizeof stored, "%s %.*s", t->name, (int)len, json);
	return 0;
}

/* The router's last resort (a delivery's in-process request): none here. */
bool ig_pubsub_serve(struct ig_ctx *ctx)
{
	(void)ctx;
	return false;
}

static char long_body[10002];

int createPost(ig_ctx *ctx, const struct createPost_in *in, struct createPost_out *out)
{
	(void)out;
	ig_pubsub_error err = { IG_PUBSUB_OK, NULL };
	struct PostCreated msg = { .id = 7, .body = IG_STR("hi") };
	provided = 0;
	if (ig_str_eq(in->case_, "valid", 5)) {
		int rc = ig_publish_post_created(ctx, &msg, &err);
		return rc == 0 && provided == 1 && !strcmp(stored, "post-created {\"id\":7,\"body\":\"hi\"}") ? 204 : 500;
	}
	/* body: maxLength 10000, one over */
	memset(long_body, 'x', 10001);
	msg.body = (ig_str){ long_body, 10001 };
	int rc = ig_publish_post_created(ctx, &msg, &err);
	return rc == -1 && err.kind == IG_PUBSUB_INVALID && provided == 0 ? 422 : 500;
}

enum ig_pubsub_result countWords(ig_ctx *ctx, const struct PostCreated *msg)
{
	(void)ctx;
	(void)msg;
	return IG_PUBSUB_ACK;
}

enum ig_pubsub_result indexPost(ig_ctx *ctx, const struct PostCreated *msg)
{
	(void)ctx;
	(void)msg;
	return IG_PUBSUB_ACK;
}

enum ig_pubsub_result readDead(ig_ctx *ctx, const struct PostCreated *msg)
{
	(void)ctx;
	(void)msg;
	return IG_PUBSUB_ACK;
}
