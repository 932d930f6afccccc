/* Emits the router: ig_route() splits the path into segments on the stack,
 * switches on their count, then walks a tree of if-chains on segment
 * strings (literal segments before parameters, so /a/b wins over /a/{x},
 * falling back to /a/{x} when /a/b's subtree does not match). A matched
 * path runs its methods' operations; the runtime answers any other method
 * (ig_answer_other_method: OPTIONS 204 + Allow, or a CORS preflight's answer with
 * the path's request header names; else 405 + Allow). An operation is a descriptor (decoder, handler, encoder, sizes)
 * that the runtime's ig_run_operation runs. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Per operation: the handler behind the runtime's handler type (a call
 * through a pointer of another function type is undefined) and the
 * descriptor ig_run_operation runs. */
static void emit_operation(struct sc_out *c, const struct sc_op *op)
{
	const char *id = op->id;
	char *lit = c_str(id);
	out_line(c, "/* %s %s */", op->method, op->path->tmpl);
	/* Parameter names clear of any operationId (none starts with ig_). */
	out_line(c, "IG_HOT static int ig_handle_%s(ig_ctx *ig_c, const void *ig_in, void *ig_out)", id);
	out_open(c, "{");
	out_line(c, "return %s(ig_c, ig_in, ig_out);", id);
	out_close(c, "}");
	out_blank(c);
	out_open(c, "static const struct ig_operation ig_operation_%s = {", id);
	out_line(c, ".id = %s,", lit);
	out_line(c, ".in_size = sizeof(struct %s_in),", id);
	out_line(c, ".out_size = sizeof(struct %s_out),", id);
	if (op_has_decoder(op))
		out_line(c, ".decode = decode_%s,", id);
	out_line(c, ".handle = ig_handle_%s,", id);
	if (op->rate_limit)
		out_line(c, ".rate_limit = &ig_rate_limit_%u,", op->rate_limit->id);
	if (op_has_encoder(op)) {
		out_line(c, ".encode = encode_%s,", id);
		size_t n = op_checked_responses(op);
		if (n) {
			char *list = sc_printf("ig_responses_%s", id);
			out_line(c, "IG_RESPONSE_CHECK(%s, %zu),", list, n);
			free(list);
		} else {
			out_line(c, "IG_RESPONSE_CHECK(NULL, 0),");
		}
	}
	out_close(c, "};");
	out_blank(c);
	free(lit);
}

/* The request header names a preflight may ask for on this path (CORS's
 * Access-Control-Allow-Headers): Content-Type and Authorization, then the
 * header parameters of its operations, each once whatever its case. */
static char *path_request_headers(const struct sc_path *p)
{
	size_t cap = 32;
	for (size_t i = 0; i < p->nops; i++)
		for (size_t k = 0; k < p->ops[i]->nparams; k++)
			cap += strlen(p->ops[i]->params[k].name) + 2;
	char *buf = sc_xmalloc(cap);
	strcpy(buf, "Content-Type, Authorization");
	for (size_t i = 0; i < p->nops; i++)
		for (size_t k = 0; k < p->ops[i]->nparams; k++) {
			const struct sc_param *q = &p->ops[i]->params[k];
			if (q->in != SC_IN_HEADER)
				continue;
			bool seen = false;
			size_t n = strlen(q->name);
			for (const char *t = buf; *t && !seen; t = strchr(t, ',') ? strchr(t, ',') + 2 : t + strlen(t))
				seen = strncasecmp(t, q->name, n) == 0 && (t[n] == ',' || t[n] == 0);
			if (!seen) {
				strcat(buf, ", ");
				strcat(buf, q->name);
			}
		}
	return buf;
}

static void emit_dispatch(struct sc_out *c, const struct sc_path *p)
{
	char *tmpl = c_comment(p->tmpl), *allow = sc_path_allow(p), *allow_lit = c_str(allow);
	char *headers = path_request_headers(p), *headers_lit = c_str(headers);
	out_line(c, "/* %s */", tmpl);
	/* Before the method: a 405 or OPTIONS counts under the route too. */
	out_line(c, "ig_set_route(ctx, %zu);", p->index);
	const char *els = "";
	if (p->builtin_openapi) {
		out_line(c, "if (ig_str_eq(m, \"GET\", 3))");
		out_line(c, "\tig_serve_openapi(ctx);");
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
			out_line(c, "\tig_run_operation(ctx, &ig_operation_%s, seg);", op->id);
			els = "else ";
		}
	}
	out_line(c, "else");
	out_line(c, "\tig_answer_other_method(ctx, IG_STR(%s), IG_STR(%s));", allow_lit, headers_lit);
	out_line(c, "return;");
	free(headers);
	free(headers_lit);
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
	out_line(c, "IG_HOT static void ig_route(ig_ctx *ctx)");
	out_open(c, "{");
	out_line(c, "const ig_request *req = ig_req(ctx);");
	out_line(c, "ig_str m = req->method; /* HEAD arrives as GET */");
	out_line(c, "ig_str seg[%zu];", max_segs);
	out_blank(c);
	out_open(c, "if (ig_str_eq(req->path, \"*\", 1)) {");
	out_line(c, "if (ig_str_eq(m, \"OPTIONS\", 7))");
	out_line(c, "\tig_answer_options(ctx, IG_STR(%s), IG_STR(\"\"));", all);
	out_line(c, "else");
	out_line(c, "\tig_respond_problem(ctx, 400, \"the target * is only for OPTIONS\");");
	out_line(c, "return;");
	out_close(c, "}");
	out_open(c, "if (req->path.len == 0 || req->path.ptr[0] != '/') {");
	out_line(c, "ig_respond_problem(ctx, 404, \"no such resource\");");
	out_line(c, "return;");
	out_close(c, "}");
	out_line(c, "switch (ig_split_path(req->path, seg, %zu)) {", max_segs);
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
	out_line(c, "/* ---- the operations: what ig_run_operation runs (net/api/operation.h) ---- */");
	out_blank(c);
	emit_rate_limits(m, c);
	for (size_t i = 0; i < m->nops; i++)
		emit_operation(c, m->ops[i]);
	out_line(c, "/* ---- the router ---- */");
	out_blank(c);
	out_line(c, "static void ig_serve_openapi(ig_ctx *ctx);");
	out_blank(c);
	emit_route(m, c, max_segs);
}
