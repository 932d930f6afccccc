/* The stored posts (/posts, /posts/{id}) over the posts table
 * (schemas/migrations/001_posts.sql), written top to bottom: each handler
 * calls its query of schemas/queries/posts.sql (the generated db_* of
 * queries.h, rows decoded into the document's Post) and waits for it. A
 * failed query is answered by ig_pg_respond_error_as; the log gets the rest.
 * A new post is published to post-created in the transaction that stores
 * it (app/post_stats.c counts its words). */
#include "api.h"
#include "queries.h"

/* The one unique column is the title. */
static const struct ig_pg_answer post_answers[] = { { "23505", 409, "a post with this title exists" } };

static int failed(ig_ctx *ctx, const ig_pg_error *err)
{
	return ig_pg_respond_error_as(ctx, err, post_answers, IG_COUNTOF(post_answers));
}

static int not_found(ig_ctx *ctx)
{
	ig_respond_problem(ctx, 404, "no post has this id");
	return 404;
}

/* PostInput's tags as the text[] parameter: none is SQL NULL, [] stays []. */
static struct db_array_str tags(const struct PostInput *p)
{
	static const ig_str none;
	if (!p->has_tags)
		return (struct db_array_str){ 0 };
	return (struct db_array_str){ p->tags.len ? p->tags.items : &none, p->tags.len };
}

int listPosts(ig_ctx *ctx, const struct listPosts_in *in, struct listPosts_out *out)
{
	ig_pg_error err;
	struct Post *rows;
	int64_t n = db_ListPosts(ctx, in->limit, in->offset, &rows, &err);
	if (n < 0)
		return failed(ctx, &err);
	out->r200 = (struct PostList){ .posts = { rows, (size_t)n }, .limit = in->limit, .offset = in->offset };
	return 200;
}

int createPost(ig_ctx *ctx, const struct createPost_in *in, struct createPost_out *out)
{
	ig_pg_error err;
	const struct PostInput *p = &in->body;
	/* The row and its post-created message commit together or not at all:
	   the publish joins the open transaction, and a return without the
	   commit rolls it back. */
	if (!ig_pg_transaction_begin(ctx, &err))
		return failed(ctx, &err);
	if (db_CreatePost(ctx, p->title, p->body, p->likes, tags(p), &out->r201, &err) < 0)
		return failed(ctx, &err);
	ig_pubsub_error perr;
	const struct PostCreated created = { .id = out->r201.id, .body = p->body };
	if (ig_publish_post_created(ctx, &created, &perr) < 0) {
		ig_respond_problem(ctx, 503, "the post's post-created message could not be stored");
		return 503;
	}
	if (!ig_pg_transaction_commit(ctx, &err))
		return failed(ctx, &err);
	char loc[40] = "/posts/";
	ig_add_header(ctx, "Location", (ig_str){ loc, 7 + ig_fmt_i64(loc + 7, out->r201.id) });
	return 201;
}

int getPost(ig_ctx *ctx, const struct getPost_in *in, struct getPost_out *out)
{
	ig_pg_error err;
	int found = db_GetPost(ctx, in->id, &out->r200, &err);
	return found < 0 ? failed(ctx, &err) : found ? 200 : not_found(ctx);
}

int updatePost(ig_ctx *ctx, const struct updatePost_in *in, struct updatePost_out *out)
{
	ig_pg_error err;
	const struct PostInput *p = &in->body;
	int found = db_UpdatePost(ctx, in->id, p->title, p->body, p->likes, tags(p), &out->r200, &err);
	return found < 0 ? failed(ctx, &err) : found ? 200 : not_found(ctx);
}

int deletePost(ig_ctx *ctx, const struct deletePost_in *in, struct deletePost_out *out)
{
	(void)out;
	ig_pg_error err;
	int64_t n = db_DeletePost(ctx, in->id, &err);
	return n < 0 ? failed(ctx, &err) : n ? 204 : not_found(ctx);
}
