/* Handlers for rich.json, the schemac test document: each one makes the
 * generated encoders show a case (optional members in every combination,
 * nested arrays, recursion through arrays, empty objects, bodiless statuses). */
#include "api.h"

int root(ig_ctx *ctx, const struct root_in *in, struct root_out *out)
{
	(void)ctx;
	(void)in;
	out->r200 = IG_STR("he said \"hi\"\n");
	return 200;
}

int abd(ig_ctx *ctx, const struct abd_in *in, struct abd_out *out)
{
	(void)ctx;
	(void)in;
	(void)out;
	return 204;
}

/* x is a string of '0'/'1' flags: which optional members are present. */
int axc(ig_ctx *ctx, const struct axc_in *in, struct axc_out *out)
{
	(void)ctx;
	const char *f = in->x.ptr;
	size_t n = in->x.len;
	out->r200.has_a = n > 0 && f[0] == '1';
	out->r200.a = IG_STR("A");
	out->r200.has_b = n > 1 && f[1] == '1';
	out->r200.b = -7;
	out->r200.post_id = 0.1;
	out->r200.has_q_k__y = n > 2 && f[2] == '1';
	out->r200.q_k__y = true;
	out->r200.has_default_ = n > 3 && f[3] == '1';
	out->r200.default_ = IG_STR("d");
	return 200;
}

int axcPut(ig_ctx *ctx, const struct axcPut_in *in, struct axcPut_out *out)
{
	(void)in;
	static const int64_t a[] = { 1, 2 }, b[] = { 3 };
	struct axcPut_200_item *items = ig_alloc(ctx, 3 * sizeof *items);
	items[0] = (struct axcPut_200_item){ a, 2 };
	items[1] = (struct axcPut_200_item){ b, 1 };
	items[2] = (struct axcPut_200_item){ NULL, 0 };
	out->r200 = (struct axcPut_200){ items, 3 };
	return 200;
}

int axcDelete(ig_ctx *ctx, const struct axcDelete_in *in, struct axcDelete_out *out)
{
	(void)ctx;
	(void)in;
	(void)out;
	return 204;
}

int color(ig_ctx *ctx, const struct color_in *in, struct color_out *out)
{
	if (in->n == 2)
		return 201;
	if (in->n == 3)
		return 404;
	static const struct Node_meta_k_item ks[] = { { 1.5 }, { -0.0 } };
	struct Node *kids = ig_alloc(ctx, 2 * sizeof *kids);
	memset(kids, 0, 2 * sizeof *kids);
	kids[0].name = IG_STR("k0");
	kids[1].name = IG_STR("k1");
	kids[1].has_meta = true;
	kids[1].meta.has_k = true;
	kids[1].meta.k = (struct Node_meta_k){ ks, 2 };
	out->r200 = (struct Node){ .name = in->c, .children = { kids, 2 }, .has_meta = true };
	return 200;
}

static void echo_later(ig_ctx *ctx, void *arg)
{
	(void)arg;
	ig_finish(ctx, 200);
}

/* Pending on purpose: the value must survive in the arena until later. */
int echoInt(ig_ctx *ctx, const struct echoInt_in *in, struct echoInt_out *out)
{
	out->r200 = in->v;
	ig_after(ctx, 1, echo_later, NULL);
	return IG_PENDING;
}

/* Parameters of every kind, echoed (n is null when absent). */
int query(ig_ctx *ctx, const struct query_in *in, struct query_out *out)
{
	(void)ctx;
	out->r200 = (struct QueryEcho){
		.i = in->i,
		.n = in->n,
		.null_n = !in->has_n,
		.has_b = in->has_b,
		.b = in->b,
		.e = in->e,
		.arr = { in->arr.items, in->arr.len },
		.csv = { in->csv.items, in->csv.len },
		.has_num = in->has_X_Num,
		.num = in->X_Num,
		.name = in->X_Name,
	};
	return 200;
}

int thing(ig_ctx *ctx, const struct thing_in *in, struct thing_out *out)
{
	(void)ctx;
	out->r200 = in->body;
	return 200;
}

int thingLoose(ig_ctx *ctx, const struct thingLoose_in *in, struct thingLoose_out *out)
{
	(void)ctx;
	out->r200 = in->body;
	return 200;
}

/* A free-form body (oneOf with a discriminator), echoed; none: 202 null. */
int shape(ig_ctx *ctx, const struct shape_in *in, struct shape_out *out)
{
	(void)ctx;
	if (!in->has_body) {
		out->r202 = NULL;
		return 202;
	}
	out->r200 = in->body;
	return 200;
}

/* A recursive typed body (Node holds its children in an array), echoed. */
int node(ig_ctx *ctx, const struct node_in *in, struct node_out *out)
{
	(void)ctx;
	out->r200 = in->body;
	return 200;
}

/* Breaks its response schema (n must be even) when n is odd. */
int badResponse(ig_ctx *ctx, const struct badResponse_in *in, struct badResponse_out *out)
{
	(void)ctx;
	out->r200.n = in->n;
	return 200;
}

/* Text bodies: the name escaped into an HTML page, or plain text for "none". */
int page(ig_ctx *ctx, const struct page_in *in, struct page_out *out)
{
	if (ig_str_eq(in->who, "none", 4)) {
		out->r404 = IG_STR("nobody here\n");
		return 404;
	}
	ig_wbuf w = { .arena = ig_ctx_arena(ctx) };
	ig_wbuf_lit(&w, "<p title=\"");
	ig_html_escape(&w, in->who.ptr, in->who.len);
	ig_wbuf_lit(&w, "\">");
	ig_html_escape(&w, in->who.ptr, in->who.len);
	ig_wbuf_lit(&w, "</p>");
	if (w.failed)
		return 500;
	out->r200 = (ig_str){ w.ptr, w.len };
	return 200;
}
