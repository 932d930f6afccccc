/* A post's statistics: the count-words subscription (x-ingot-subscriptions)
 * counts the words of each post-created message's body into post_stats,
 * and GET /posts/{id}/stats reads them (404 until the message is handled).
 * A second delivery of one message writes the same row. */
#include "api.h"
#include "queries.h"

/* Words are runs of anything but white space (space, tab, CR, LF, VT, FF). */
static int64_t count_words(ig_str s)
{
	int64_t n = 0;
	bool in_word = false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		bool space = c == ' ' || (c >= '\t' && c <= '\r');
		n += !space && !in_word;
		in_word = !space;
	}
	return n;
}

enum ig_pubsub_result countWords(ig_ctx *ctx, const struct PostCreated *msg)
{
	ig_pg_error err;
	if (db_SavePostStats(ctx, msg->id, count_words(msg->body), &err) < 0)
		return IG_PUBSUB_RETRY; /* the database's error is logged with the delivery */
	return IG_PUBSUB_ACK;
}

int getPostStats(ig_ctx *ctx, const struct getPostStats_in *in, struct getPostStats_out *out)
{
	ig_pg_error err;
	int found = db_GetPostStats(ctx, in->id, &out->r200, &err);
	if (found < 0)
		return ig_pg_respond_error(ctx, &err);
	if (!found) {
		ig_respond_problem(ctx, 404, "no statistics for this post (yet)");
		return 404;
	}
	return 200;
}
