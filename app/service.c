/* The reference service's handlers, one per operationId of
 * schemas/service.json. They only fill the output struct: routing,
 * parameters, request bodies, validation and JSON encoding are generated
 * (build/gen/api.c). The integration tests and the benchmarks compare its
 * bodies byte for byte. */
#include "api.h"

#include <bearssl.h>

int getHealth(ig_ctx *ctx, const struct getHealth_in *in, struct getHealth_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.status = IG_STR("ok");
	return 200;
}

/* Static data: the body is rebuilt by the encoder on every request, so
 * this measures encoding, not building the values. */
static const ig_str widget_tags[] = { { "a", 1 }, { "b", 1 }, { "c", 1 } };

int getJson(ig_ctx *ctx, const struct getJson_in *in, struct getJson_out *out)
{
	(void)ctx;
	(void)in;
	out->r200 = (struct getJson_200){
		.id = 1,
		.name = IG_STR("widget"),
		.tags = { widget_tags, IG_COUNTOF(widget_tags) },
		.price = 12.5,
		.stock = { .warehouse = IG_STR("north"), .count = 42 },
		.active = true,
	};
	return 200;
}

/* Read through a volatile so the compiler can't fold the loop into a
 * constant: the point of /compute is CPU work on every request. */
static volatile uint64_t compute_rounds = 1000000;

int getCompute(ig_ctx *ctx, const struct getCompute_in *in, struct getCompute_out *out)
{
	(void)ctx;
	(void)in;
	uint64_t rounds = compute_rounds, result = 0;
	for (uint64_t i = 0; i < rounds; i++)
		result = (result + i * 31) % 1000000007;
	out->r200.result = (int64_t)result;
	return 200;
}

/* Hashed on every request, like /compute: the cost is the point. */
int getHash(ig_ctx *ctx, const struct getHash_in *in, struct getHash_out *out)
{
	static const char hexdigits[] = "0123456789abcdef";
	(void)in;
	br_sha256_context sha;
	unsigned char digest[32];
	br_sha256_init(&sha);
	for (int i = 0; i < 100; i++)
		br_sha256_update(&sha, "hello world", 11);
	br_sha256_out(&sha, digest);

	char *hex = ig_alloc(ctx, 2 * sizeof digest);
	if (!hex)
		return 500;
	for (size_t i = 0; i < sizeof digest; i++) {
		hex[2 * i] = hexdigits[digest[i] >> 4];
		hex[2 * i + 1] = hexdigits[digest[i] & 15];
	}
	out->r200.sha256 = (ig_str){ hex, 2 * sizeof digest };
	return 200;
}

/* "<prefix><id><suffix>" in the arena: the encoder reads it after we return. */
static ig_str with_id(ig_ctx *ctx, const char *prefix, size_t plen, int64_t id, const char *suffix, size_t slen)
{
	char *s = ig_alloc(ctx, plen + 20 + slen);
	if (!s)
		return (ig_str){ NULL, 0 };
	memcpy(s, prefix, plen);
	size_t n = plen + ig_fmt_i64(s + plen, id);
	memcpy(s + n, suffix, slen);
	return (ig_str){ s, n + slen };
}

/* The synthetic post of an id: its text is made from the id. */
static int synthetic_post(ig_ctx *ctx, int64_t id, struct Post *post)
{
	ig_str title = with_id(ctx, "post ", 5, id, "", 0);
	ig_str body = with_id(ctx, "This is post ", 13, id, ".", 1);
	if (!title.ptr || !body.ptr)
		return -1;
	*post = (struct Post){ .id = id, .title = title, .body = body, .likes = 0 };
	return 0; /* no tags: has_tags stays false and "tags" is omitted */
}

int getBlogPost(ig_ctx *ctx, const struct getBlogPost_in *in, struct getBlogPost_out *out)
{
	return synthetic_post(ctx, in->id, &out->r200) ? 500 : 200;
}

int listBlogPosts(ig_ctx *ctx, const struct listBlogPosts_in *in, struct listBlogPosts_out *out)
{
	/* Posts offset+1 .. offset+limit, as far as ids go (offset may be huge). */
	int64_t n = in->limit;
	if (in->offset > INT64_MAX - n)
		n = INT64_MAX - in->offset;
	struct Post *posts = ig_alloc(ctx, (size_t)(n ? n : 1) * sizeof *posts);
	if (!posts)
		return 500;
	for (int64_t i = 0; i < n; i++)
		if (synthetic_post(ctx, in->offset + i + 1, &posts[i]))
			return 500;
	out->r200 = (struct PostList){ .posts = { posts, (size_t)n }, .limit = in->limit, .offset = in->offset };
	return 200;
}

/* Ids unique across cores without a lock: each core counts on its own
 * (its loop is its thread) and takes the ids congruent to its index. */
static _Thread_local uint64_t posts_created;

static struct Post post_from(int64_t id, const struct PostInput *p)
{
	return (struct Post){
		.id = id,
		.title = p->title,
		.body = p->body,
		.likes = p->likes,
		.has_tags = p->has_tags,
		.tags = { p->tags.items, p->tags.len },
	};
}

int createBlogPost(ig_ctx *ctx, const struct createBlogPost_in *in, struct createBlogPost_out *out)
{
	uint64_t id = posts_created++ * ig_core_count(ctx) + ig_core_index(ctx) + 1;
	ig_str location = with_id(ctx, "/blog/", 6, (int64_t)id, "", 0);
	if (!location.ptr)
		return 500;
	ig_add_header(ctx, "Location", location);
	out->r201 = post_from((int64_t)id, &in->body);
	return 201;
}

int updateBlogPost(ig_ctx *ctx, const struct updateBlogPost_in *in, struct updateBlogPost_out *out)
{
	(void)ctx;
	out->r200 = post_from(in->id, &in->body);
	return 200;
}

/* The validation benchmark: the decoded request, echoed. */
static void echo(struct ValidateOutput *o, int64_t page, const ig_str *tags, size_t ntags, ig_str foo,
		 const struct ValidateInput *body)
{
	*o = (struct ValidateOutput){
		.page = page, .tags = { tags, ntags }, .foo = foo, .body = *body,
	};
}

int validateRequest(ig_ctx *ctx, const struct validateRequest_in *in, struct validateRequest_out *out)
{
	(void)ctx;
	echo(&out->r200, in->page, in->tags.items, in->tags.len, in->x_foo, &in->body);
	return 200;
}

int noValidateRequest(ig_ctx *ctx, const struct noValidateRequest_in *in, struct noValidateRequest_out *out)
{
	(void)ctx;
	echo(&out->r200, in->page, in->tags.items, in->tags.len, in->x_foo, &in->body);
	return 200;
}

/* The pending path: in and out live in the request's arena until
 * ig_finish, so the timer callback can still use them. */
struct delay {
	const struct getDelay_in *in;
	struct getDelay_out *out;
};

static void delay_done(ig_ctx *ctx, void *arg)
{
	struct delay *d = arg;
	d->out->r200.delayed_ms = d->in->ms;
	/* Even if the client left (ig_cancelled), finish: that releases the
	   request; the runtime drops the response. */
	ig_finish(ctx, 200);
}

int getDelay(ig_ctx *ctx, const struct getDelay_in *in, struct getDelay_out *out)
{
	struct delay *d = ig_alloc(ctx, sizeof *d);
	if (!d)
		return 500;
	*d = (struct delay){ in, out };
	ig_after(ctx, (uint32_t)in->ms, delay_done, d);
	return IG_PENDING;
}
