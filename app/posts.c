/* The stored posts (/posts, /posts/{id}): Post and PostInput over the
 * posts table (schemas/migrations/001_posts.sql) on the core's PostgreSQL
 * pool (include/ingot/pg.h). Each handler runs one statement and returns
 * IG_PENDING; its completion fills out and finishes. tags is a jsonb array
 * of strings (NULL: none), read back with the JSON reader into the arena. */
#include "api.h"
#include "ingot/pg.h"

#define POST_COLUMNS "id, title, body, likes, tags"

static const char post_list[] = "SELECT " POST_COLUMNS " FROM posts ORDER BY id LIMIT $1 OFFSET $2";
static const char post_insert[] = "INSERT INTO posts (title, body, likes, tags) VALUES ($1, $2, $3, $4) "
				  "RETURNING " POST_COLUMNS;
static const char post_select[] = "SELECT " POST_COLUMNS " FROM posts WHERE id = $1";
static const char post_update[] = "UPDATE posts SET title = $2, body = $3, likes = $4, tags = $5 WHERE id = $1 "
				  "RETURNING " POST_COLUMNS;
static const char post_delete[] = "DELETE FROM posts WHERE id = $1";

/* What a completion needs: the request, and where its answer goes. */
struct post_call {
	ig_ctx *ctx;
	void *out; /* struct Post or struct PostList */
	int64_t limit, offset;
};

static struct post_call *post_call(ig_ctx *ctx, void *out)
{
	struct post_call *c = ig_alloc(ctx, sizeof *c);
	if (c)
		*c = (struct post_call){ .ctx = ctx, .out = out };
	return c;
}

/* tags as a jsonb parameter: a JSON array of the strings, or NULL. */
static bool tags_param(ig_ctx *ctx, const struct PostInput *p, ig_pg_value *v)
{
	if (!p->has_tags) {
		*v = ig_pg_null(IG_PG_JSONB);
		return true;
	}
	ig_wbuf w = { .arena = ig_ctx_arena(ctx) };
	ig_wbuf_lit(&w, "[");
	for (size_t i = 0; i < p->tags.len; i++) {
		if (i)
			ig_wbuf_lit(&w, ",");
		ig_json_string(&w, p->tags.items[i].ptr, p->tags.items[i].len);
	}
	ig_wbuf_lit(&w, "]");
	*v = ig_pg_jsonb((ig_str){ w.ptr, w.len });
	return !w.failed;
}

/* A jsonb array of strings into tags (in the arena); false when it is not one. */
static bool tags_from(ig_ctx *ctx, ig_str json, struct Post *post)
{
	ig_json_reader r;
	size_t n = 0;
	ig_jr_init(&r, json.ptr, json.len, ig_ctx_arena(ctx), 2);
	if (!ig_jr_array_begin(&r))
		return false;
	while (ig_jr_array_next(&r)) {
		if (!ig_jr_skip(&r))
			return false;
		n++;
	}
	if (r.error)
		return false;
	ig_str *tags = ig_alloc(ctx, (n ? n : 1) * sizeof *tags);
	if (!tags)
		return false;
	ig_jr_init(&r, json.ptr, json.len, ig_ctx_arena(ctx), 2);
	ig_jr_array_begin(&r);
	for (size_t i = 0; i < n && ig_jr_array_next(&r); i++)
		if (!ig_jr_string(&r, &tags[i]))
			return false;
	post->has_tags = true;
	post->tags.items = tags;
	post->tags.len = n;
	return true;
}

/* Row row of a result of POST_COLUMNS into a Post. */
static bool post_from(ig_ctx *ctx, const ig_pg_result *res, uint32_t row, struct Post *post)
{
	if (res->cols != 5)
		return false;
	const ig_pg_value *tags = ig_pg_at(res, row, 4);
	*post = (struct Post){
		.id = ig_pg_at(res, row, 0)->i,
		.title = ig_pg_at(res, row, 1)->s,
		.body = ig_pg_at(res, row, 2)->s,
		.likes = ig_pg_at(res, row, 3)->i,
	};
	return tags->null || tags_from(ctx, tags->s, post);
}

/* A completion's error as the answer (the log gets the details). It
 * finishes the exchange: no ig_finish after it (a pending ctx may be gone
 * once finished). The one unique column is the title. */
static const struct ig_pg_answer post_answers[] = { { "23505", 409, "a post with this title exists" } };

static void finish_error(ig_ctx *ctx, const ig_pg_error *err)
{
	(void)ig_pg_respond_error_as(ctx, err, post_answers, IG_COUNTOF(post_answers));
}

/* ---- GET /posts ---- */

static void list_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct post_call *c = arg;
	if (err) {
		finish_error(c->ctx, err);
		return;
	}
	struct Post *posts = ig_alloc(c->ctx, (res->rows ? res->rows : 1) * sizeof *posts);
	if (!posts) {
		ig_respond_problem(c->ctx, 500, "out of request memory");
		return;
	}
	for (uint32_t i = 0; i < res->rows; i++) {
		if (!post_from(c->ctx, res, i, &posts[i])) {
			ig_respond_problem(c->ctx, 500, "a stored post could not be read");
			return;
		}
	}
	*(struct PostList *)c->out = (struct PostList){
		.posts = { posts, res->rows }, .limit = c->limit, .offset = c->offset,
	};
	ig_finish(c->ctx, 200);
}

int listPosts(ig_ctx *ctx, const struct listPosts_in *in, struct listPosts_out *out)
{
	struct post_call *c = post_call(ctx, &out->r200);
	if (!c)
		return 500;
	c->limit = in->limit;
	c->offset = in->offset;
	ig_pg_value params[2] = { ig_pg_int8(in->limit), ig_pg_int8(in->offset) };
	ig_pg_query(ctx, post_list, params, 2, list_done, c);
	return IG_PENDING;
}

/* ---- one post: create, read, replace ---- */

/* A statement that returns the post (or no row: 404). */
static void one_done(void *arg, const ig_pg_result *res, const ig_pg_error *err, int status)
{
	struct post_call *c = arg;
	if (err) {
		finish_error(c->ctx, err);
	} else if (res->rows == 0) {
		ig_respond_problem(c->ctx, 404, "no post has this id");
	} else if (!post_from(c->ctx, res, 0, c->out)) {
		ig_respond_problem(c->ctx, 500, "the stored post could not be read");
	} else {
		if (status == 201) {
			char loc[40] = "/posts/";
			size_t n = 7 + ig_fmt_i64(loc + 7, ((struct Post *)c->out)->id);
			ig_add_header(c->ctx, "Location", (ig_str){ loc, n });
		}
		ig_finish(c->ctx, status);
	}
}

static void created(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	one_done(arg, res, err, 201);
}

static void found(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	one_done(arg, res, err, 200);
}

/* $first.. : title, body, likes, tags. */
static bool input_params(ig_ctx *ctx, const struct PostInput *p, ig_pg_value *v)
{
	v[0] = ig_pg_text(p->title);
	v[1] = ig_pg_text(p->body);
	v[2] = ig_pg_int8(p->likes);
	return tags_param(ctx, p, &v[3]);
}

int createPost(ig_ctx *ctx, const struct createPost_in *in, struct createPost_out *out)
{
	struct post_call *c = post_call(ctx, &out->r201);
	ig_pg_value params[4];
	if (!c || !input_params(ctx, &in->body, params))
		return 500;
	ig_pg_query(ctx, post_insert, params, 4, created, c);
	return IG_PENDING;
}

int getPost(ig_ctx *ctx, const struct getPost_in *in, struct getPost_out *out)
{
	struct post_call *c = post_call(ctx, &out->r200);
	if (!c)
		return 500;
	ig_pg_value id = ig_pg_int8(in->id);
	ig_pg_query(ctx, post_select, &id, 1, found, c);
	return IG_PENDING;
}

int updatePost(ig_ctx *ctx, const struct updatePost_in *in, struct updatePost_out *out)
{
	struct post_call *c = post_call(ctx, &out->r200);
	ig_pg_value params[5];
	params[0] = ig_pg_int8(in->id);
	if (!c || !input_params(ctx, &in->body, params + 1))
		return 500;
	ig_pg_query(ctx, post_update, params, 5, found, c);
	return IG_PENDING;
}

/* ---- DELETE /posts/{id} ---- */

static void deleted(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct post_call *c = arg;
	if (err)
		finish_error(c->ctx, err);
	else if (res->affected == 0)
		ig_respond_problem(c->ctx, 404, "no post has this id");
	else
		ig_finish(c->ctx, 204);
}

int deletePost(ig_ctx *ctx, const struct deletePost_in *in, struct deletePost_out *out)
{
	(void)out;
	struct post_call *c = post_call(ctx, NULL);
	if (!c)
		return 500;
	ig_pg_value id = ig_pg_int8(in->id);
	ig_pg_query(ctx, post_delete, &id, 1, deleted, c);
	return IG_PENDING;
}
