/* Emits the router: route() splits the path into segments on the stack,
 * switches on their count, then walks a tree of if-chains on segment
 * strings (literal segments before parameters, so /a/b wins over /a/{x},
 * falling back to /a/{x} when /a/b's subtree does not match). A matched
 * path answers its methods, OPTIONS (204 + Allow) and anything else (405 +
 * Allow); run_<op> then decodes, registers the encoder, calls the handler. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static void emit_router_helpers(struct sc_out *c)
{
	static const char *const text[] = {
		"/* ---- the router ---- */",
		"",
		"static void serve_openapi(ig_ctx *ctx);",
		"",
		"/* Splits the path after its leading '/' at each '/' (\"/\" is one empty",
		" * segment). Returns the count, or max + 1 when there are more segments",
		" * than any route has: no route can match then. */",
		"static size_t split_path(ig_str path, ig_str *seg, size_t max)",
		"{",
		"\tconst char *p = path.ptr + 1, *end = path.ptr + path.len;",
		"\tsize_t n = 0;",
		"\tfor (;;) {",
		"\t\tconst char *slash = memchr(p, '/', (size_t)(end - p));",
		"\t\tif (n == max)",
		"\t\t\treturn max + 1;",
		"\t\tseg[n++] = (ig_str){ p, (size_t)((slash ? slash : end) - p) };",
		"\t\tif (!slash)",
		"\t\t\treturn n;",
		"\t\tp = slash + 1;",
		"\t}",
		"}",
		"",
		"static void answer_options(ig_ctx *ctx, ig_str allow)",
		"{",
		"\tig_add_header(ctx, \"Allow\", allow);",
		"\tig_finish(ctx, 204);",
		"}",
		"",
		"static void answer_not_allowed(ig_ctx *ctx, ig_str allow)",
		"{",
		"\tig_add_header(ctx, \"Allow\", allow);",
		"\tig_respond_problem(ctx, 405, \"the method is not allowed for this resource\");",
		"}",
		"",
		NULL,
	};
	out_lines(c, text);
}

static void emit_rejected_helper(struct sc_out *c)
{
	out_line(c, "/* A decoder's verdict: 400 with the collected errors, 415, or 500. */");
	out_line(c, "static void answer_rejected(ig_ctx *ctx, int status)");
	out_open(c, "{");
	out_line(c, "if (status == 400)");
	out_line(c, "\tig_respond_errors(ctx, \"the request does not match the API\");");
	out_line(c, "else if (status == 415)");
	out_line(c, "\tig_respond_problem(ctx, 415, \"the request body must be application/json\");");
	out_line(c, "else");
	out_line(c, "\tig_respond_problem(ctx, status, \"out of request memory\");");
	out_close(c, "}");
	out_blank(c);
}

static void emit_run(struct sc_out *c, const struct sc_op *op)
{
	const char *id = op->id;
	bool seg = op_has_path_params(op);
	out_line(c, "/* %s %s */", op->method, op->path->tmpl);
	out_line(c, "static void run_%s(ig_ctx *ctx%s)", id, seg ? ", const ig_str *seg" : "");
	out_open(c, "{");
	/* In the arena, zeroed: a pending handler may keep pointers to them. */
	out_line(c, "struct %s_in *in = ig_alloc(ctx, sizeof *in);", id);
	out_line(c, "struct %s_out *out = ig_alloc(ctx, sizeof *out);", id);
	out_open(c, "if (!in || !out) {");
	out_line(c, "ig_respond_problem(ctx, 500, \"out of request memory\");");
	out_line(c, "return;");
	out_close(c, "}");
	out_line(c, "memset(in, 0, sizeof *in);");
	out_line(c, "memset(out, 0, sizeof *out);");
	if (op_has_decoder(op)) {
		out_line(c, "int bad = decode_%s(ctx, %sin);", id, seg ? "seg, " : "");
		out_open(c, "if (bad) {");
		out_line(c, "answer_rejected(ctx, bad);");
		out_line(c, "return;");
		out_close(c, "}");
	}
	if (op_has_encoder(op)) {
		out_line(c, "#ifdef IG_CHECK_RESPONSES");
		out_line(c, "/* Debug builds: the body is encoded here and checked against its");
		out_line(c, " * schema before it leaves (a pending answer is checked, and logged, as");
		out_line(c, " * it is encoded). */");
		out_line(c, "int status = %s(ctx, in, out);", id);
		out_open(c, "if (status == IG_PENDING) {");
		out_line(c, "ig_set_encoder(ctx, encode_checked_%s, out);", id);
		out_line(c, "return;");
		out_close(c, "}");
		out_open(c, "if (ig_body(ctx)->len == 0) { /* not answered by the handler itself */");
		out_line(c, "encode_%s(ctx, status, out);", id);
		out_open(c, "if (!check_%s(ctx, status)) {", id);
		out_line(c, "ig_respond_problem(ctx, 500, \"the response does not match its schema\");");
		out_line(c, "return;");
		out_close(c, "}");
		out_close(c, "}");
		out_line(c, "ig_finish(ctx, status);");
		out_line(c, "#else");
		out_line(c, "ig_set_encoder(ctx, encode_%s, out);", id);
		out_line(c, "int status = %s(ctx, in, out);", id);
		out_line(c, "if (status != IG_PENDING)");
		out_line(c, "\tig_finish(ctx, status);");
		out_line(c, "#endif");
	} else {
		out_line(c, "int status = %s(ctx, in, out);", id);
		out_line(c, "if (status != IG_PENDING)");
		out_line(c, "\tig_finish(ctx, status);");
	}
	out_close(c, "}");
	out_blank(c);
}

static void emit_dispatch(struct sc_out *c, const struct sc_path *p)
{
	char *tmpl = c_comment(p->tmpl), *allow = sc_path_allow(p), *allow_lit = c_str(allow);
	out_line(c, "/* %s */", tmpl);
	const char *els = "";
	if (p->builtin_openapi) {
		out_line(c, "if (ig_str_eq(m, \"GET\", 3))");
		out_line(c, "\tserve_openapi(ctx);");
		els = "else ";
	}
	/* Methods in the order Allow lists them. */
	static const char *const order[] = { "GET", "PUT", "POST", "DELETE", "PATCH" };
	for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
		for (size_t i = 0; i < p->nops; i++) {
			const struct sc_op *op = p->ops[i];
			if (strcmp(op->method, order[k]) != 0)
				continue;
			out_line(c, "%sif (ig_str_eq(m, \"%s\", %zu))", els, op->method, strlen(op->method));
			out_line(c, "\trun_%s(ctx%s);", op->id, op_has_path_params(op) ? ", seg" : "");
			els = "else ";
		}
	}
	out_line(c, "else if (ig_str_eq(m, \"OPTIONS\", 7))");
	out_line(c, "\tanswer_options(ctx, IG_STR(%s));", allow_lit);
	out_line(c, "else");
	out_line(c, "\tanswer_not_allowed(ctx, IG_STR(%s));", allow_lit);
	out_line(c, "return;");
	free(tmpl);
	free(allow);
	free(allow_lit);
}

/* The if-tree for paths of one segment count that agree on segments
 * before depth. */
static void emit_tree(struct sc_out *c, struct sc_path **paths, size_t n, size_t depth)
{
	if (depth == paths[0]->nsegs) {
		/* The model rejects two templates of the same shape: one is left. */
		emit_dispatch(c, paths[0]);
		return;
	}
	struct sc_path **group = sc_xmalloc(sizeof *group * n);
	bool *done = sc_xmalloc(n);
	for (size_t i = 0; i < n; i++) {
		if (done[i] || paths[i]->segs[depth].param)
			continue;
		const char *text = paths[i]->segs[depth].text;
		size_t gn = 0;
		for (size_t k = i; k < n; k++) {
			if (!done[k] && !paths[k]->segs[depth].param && strcmp(paths[k]->segs[depth].text, text) == 0) {
				group[gn++] = paths[k];
				done[k] = true;
			}
		}
		char *lit = c_str(text);
		out_open(c, "if (ig_str_eq(seg[%zu], %s, %zu)) {", depth, lit, strlen(text));
		emit_tree(c, group, gn, depth + 1);
		out_close(c, "}");
		free(lit);
	}
	size_t gn = 0;
	for (size_t k = 0; k < n; k++)
		if (paths[k]->segs[depth].param)
			group[gn++] = paths[k];
	if (gn) {
		/* A parameter takes any non-empty segment. */
		out_open(c, "if (seg[%zu].len) {", depth);
		emit_tree(c, group, gn, depth + 1);
		out_close(c, "}");
	}
	free(group);
	free(done);
}

static void emit_route(struct sc_model *m, struct sc_out *c, size_t max_segs)
{
	char *all = c_str(m->all_methods);
	out_line(c, "/* Matches method and path, then decodes and calls, or answers 404/405. */");
	out_line(c, "static void route(ig_ctx *ctx)");
	out_open(c, "{");
	out_line(c, "const ig_request *req = ig_req(ctx);");
	out_line(c, "ig_str m = req->method; /* HEAD arrives as GET */");
	out_line(c, "ig_str seg[%zu];", max_segs);
	out_blank(c);
	out_open(c, "if (ig_str_eq(req->path, \"*\", 1)) {");
	out_line(c, "if (ig_str_eq(m, \"OPTIONS\", 7))");
	out_line(c, "\tanswer_options(ctx, IG_STR(%s));", all);
	out_line(c, "else");
	out_line(c, "\tig_respond_problem(ctx, 400, \"the target * is only for OPTIONS\");");
	out_line(c, "return;");
	out_close(c, "}");
	out_open(c, "if (req->path.len == 0 || req->path.ptr[0] != '/') {");
	out_line(c, "ig_respond_problem(ctx, 404, \"no such resource\");");
	out_line(c, "return;");
	out_close(c, "}");
	out_line(c, "switch (split_path(req->path, seg, %zu)) {", max_segs);
	struct sc_path **group = sc_xmalloc(sizeof *group * m->npaths);
	for (size_t count = 1; count <= max_segs; count++) {
		size_t gn = 0;
		for (size_t i = 0; i < m->npaths; i++)
			if (m->paths[i]->nsegs == count)
				group[gn++] = m->paths[i];
		if (!gn)
			continue;
		out_open(c, "case %zu:", count);
		emit_tree(c, group, gn, 0);
		out_line(c, "break;");
		c->indent--;
	}
	free(group);
	out_line(c, "}");
	out_line(c, "ig_respond_problem(ctx, 404, \"no such resource\");");
	out_close(c, "}");
	out_blank(c);
	free(all);
}

void emit_router(struct sc_model *m, struct sc_out *c)
{
	size_t max_segs = 1;
	for (size_t i = 0; i < m->npaths; i++)
		if (m->paths[i]->nsegs > max_segs)
			max_segs = m->paths[i]->nsegs;
	emit_router_helpers(c);
	bool decoders = false;
	for (size_t i = 0; i < m->nops; i++)
		decoders |= op_has_decoder(m->ops[i]);
	if (decoders)
		emit_rejected_helper(c);
	for (size_t i = 0; i < m->nops; i++)
		emit_run(c, m->ops[i]);
	emit_route(m, c, max_segs);
}
