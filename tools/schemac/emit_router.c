/* Emits the router: ig_route() splits the path into segments on the stack,
 * switches on their count, then walks a tree of if-chains on segment
 * strings (literal segments before parameters, so /a/b wins over /a/{x},
 * falling back to /a/{x} when /a/b's subtree does not match). A matched
 * path runs its methods' operations; the runtime answers any other method
 * (ig_answer_other_method: OPTIONS 204 + Allow, or a CORS preflight's answer with
 * the path's request header names; else 405 + Allow). An operation is a descriptor (decoder, handler, encoder, sizes)
 * that the runtime's ig_run_operation runs. */
#include "emit.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Per operation: the handler behind the runtime's handler type (a call
 * through a pointer of another function type is undefined) and the
 * descriptor ig_run_operation runs. */
/* The operation's security table (net/api/security.h): scopes, uses,
 * alternatives; data only. */
static void emit_security(struct sc_out *c, const struct sc_op *op)
{
	const char *id = op->id;
	const struct sc_security *sec = op->security;
	for (size_t a = 0; a < sec->nalts; a++) {
		const struct sc_sec_alt *alt = &sec->alts[a];
		for (size_t u = 0; u < alt->nuses; u++) {
			if (!alt->uses[u].nscopes)
				continue;
			out_open(c, "static const char *const ig_scopes_%s_%zu_%zu[] = {", id, a, u);
			for (size_t k = 0; k < alt->uses[u].nscopes; k++) {
				char *lit = c_str(alt->uses[u].scopes[k]);
				out_line(c, "%s,", lit);
				free(lit);
			}
			out_close(c, "};");
		}
		out_open(c, "static const struct ig_sec_use ig_uses_%s_%zu[] = {", id, a);
		for (size_t u = 0; u < alt->nuses; u++) {
			const struct sc_sec_use *use = &alt->uses[u];
			if (use->nscopes)
				out_line(c, "{ &ig_scheme_%zu, ig_scopes_%s_%zu_%zu, %zu },", use->scheme->index, id, a, u,
					 use->nscopes);
			else
				out_line(c, "{ &ig_scheme_%zu, NULL, 0 },", use->scheme->index);
		}
		out_close(c, "};");
	}
	out_open(c, "static const struct ig_sec_alt ig_alts_%s[] = {", id);
	for (size_t a = 0; a < sec->nalts; a++)
		out_line(c, "{ ig_uses_%s_%zu, %zu },", id, a, sec->alts[a].nuses);
	out_close(c, "};");
	out_line(c, "static const struct ig_security ig_security_%s = { ig_security_check, ig_alts_%s, %zu, %s };", id, id,
		 sec->nalts, op->query_token_ptr ? "true" : "false");
}

static bool scheme_used(const struct sc_model *m, const struct sc_scheme *s)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_security *sec = m->ops[i]->security;
		for (size_t a = 0; sec && a < sec->nalts; a++)
			for (size_t u = 0; u < sec->alts[a].nuses; u++)
				if (sec->alts[a].uses[u].scheme == s)
					return true;
	}
	return false;
}

/* x-ingot-principal's glue (model.h's principal): the decoder of a
 * verified JWT's claims into the schema's struct (ig_claims_decode_fn;
 * any violation refuses the token), and the runtime's auth handler type
 * over the app's typed one (ig_auth_handler_<Name>, api.h). */
static void emit_principal(struct sc_out *c, const struct sc_model *m)
{
	if (!m->principal)
		return;
	char *t = c_type(m->principal);
	if (m->bearer_used) {
		out_line(c, "/* x-ingot-principal: a verified JWT's claims into %s (net/api/security.h). */", t);
		out_line(c, "static void *ig_principal_claims(ig_ctx *ctx, const char *json, size_t len)");
		out_open(c, "{");
		out_line(c, "%s *out = ig_alloc(ctx, sizeof *out);", t);
		out_line(c, "if (!out)");
		out_line(c, "\treturn NULL;");
		out_line(c, "memset(out, 0, sizeof *out);");
		out_line(c, "ig_json_reader r;");
		out_line(c, "ig_jr_init(&r, json, len, ig_ctx_arena(ctx), 64);");
		out_line(c, "/* quiet: the first violation is enough, and nothing is reported */");
		out_line(c, "struct ig_dctx dc = { &r, { .arena = r.arena, .quiet = true }, true };");
		out_line(c, "struct ig_dctx *d = &dc;");
		emit_slot_decode(c, m->principal, false, "*out", NULL, "NULL");
		out_line(c, "if (!r.error)");
		out_line(c, "\tig_jr_finish(&r);");
		out_line(c, "return r.error || dc.v.failures ? NULL : out;");
		out_close(c, "}");
		out_blank(c);
	}
	if (m->handler_used) {
		out_line(c, "/* x-ingot-principal: the app's typed auth handler, its struct zeroed in the arena. */");
		out_line(c, "static enum ig_auth_result ig_auth_typed(ig_ctx *ctx, const struct ig_credentials *cred,");
		out_line(c, "\t\t\t\t\t    struct ig_principal *out)");
		out_open(c, "{");
		out_line(c, "%s *data = ig_alloc(ctx, sizeof *data);", t);
		out_line(c, "if (!data)");
		out_line(c, "\treturn IG_AUTH_REFUSED;");
		out_line(c, "memset(data, 0, sizeof *data);");
		out_line(c, "enum ig_auth_result r = ig_auth_handler_%s(ctx, cred, out, data);", m->principal->component);
		out_line(c, "if (r == IG_AUTH_OK)");
		out_line(c, "\tout->data = data;");
		out_line(c, "return r;");
		out_close(c, "}");
		out_blank(c);
	}
	free(t);
}

/* The document's securitySchemes that some operation uses, one table
 * each (an unused one would be an unused static). */
static void emit_schemes(struct sc_out *c, const struct sc_model *m)
{
	static const char *const types[] = { "IG_SEC_BEARER", "IG_SEC_API_KEY", "IG_SEC_BASIC", "IG_SEC_MUTUAL_TLS" };
	static const char *const ins[] = { "IG_SEC_IN_HEADER", "IG_SEC_IN_QUERY", "IG_SEC_IN_COOKIE" };
	for (size_t i = 0; i < m->nschemes; i++) {
		const struct sc_scheme *s = m->schemes[i];
		if (!scheme_used(m, s))
			continue;
		char *name = c_str(s->name), *param = s->param ? c_str(s->param) : sc_strdup("NULL");
		const char *handler = s->type == SC_SEC_BEARER || s->type == SC_SEC_MUTUAL_TLS ? "NULL"
				      : m->principal ? "ig_auth_typed" : "ig_auth_handler";
		const char *claims = s->type == SC_SEC_BEARER && m->principal ? "ig_principal_claims" : "NULL";
		out_line(c, "static const struct ig_sec_scheme ig_scheme_%zu = { %s, %s, %s, %s, %s, %s };", i, name,
			 types[s->type], ins[s->in], param, handler, claims);
		free(name);
		free(param);
	}
	if (m->nschemes)
		out_blank(c);
}

static void emit_operation(struct sc_model *m, struct sc_out *c, const struct sc_op *op)
{
	const char *id = op->id;
	char *lit = c_str(id);
	if (op->security)
		emit_security(c, op);
	bool hooked = sc_op_has_hooks(m, op);
	if (hooked)
		emit_op_hooks(m, c, op);
	out_line(c, "/* %s %s */", op->method, op->path->tmpl);
	/* Parameter names clear of any operationId (none starts with ig_). */
	out_line(c, "%s static int ig_handle_%s(ig_ctx *ig_c, const void *ig_in, void *ig_out)",
		 sc_op_is_stream(op) ? "IG_STREAM_CODE" : "IG_HOT", id);
	out_open(c, "{");
	out_line(c, "return %s(ig_c, ig_in, ig_out);", id);
	out_close(c, "}");
	out_blank(c);
	if (sc_op_is_stream(op)) /* its name too: only its requests read it */
		out_line(c, "static const char ig_op_name_%s[] IG_STREAM_DATA = %s;", id, lit);
	out_open(c, "static const struct ig_operation ig_operation_%s%s = {", id, sc_op_is_stream(op) ? " IG_STREAM_DATA" : "");
	if (sc_op_is_stream(op))
		out_line(c, ".id = ig_op_name_%s,", id);
	else
		out_line(c, ".id = %s,", lit);
	out_line(c, ".in_size = sizeof(struct %s_in),", id);
	out_line(c, ".out_size = sizeof(struct %s_out),", id);
	if (op_has_decoder(op))
		out_line(c, ".decode = decode_%s,", id);
	out_line(c, ".handle = ig_handle_%s,", id);
	if (op->security)
		out_line(c, ".security = &ig_security_%s,", id);
	if (op->rate_limit)
		out_line(c, ".rate_limit = &ig_rate_limit_%u,", op->rate_limit->id);
	if (hooked)
		out_line(c, ".hooks = &ig_hooks_%s,", id);
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

/* Appends ", name" to the list buf unless it holds name (any case). */
static void add_header_name(char *buf, const char *name)
{
	size_t n = strlen(name);
	for (const char *t = buf; *t; t = strchr(t, ',') ? strchr(t, ',') + 2 : t + strlen(t))
		if (strncasecmp(t, name, n) == 0 && (t[n] == ',' || t[n] == 0))
			return;
	strcat(buf, ", ");
	strcat(buf, name);
}

/* The request header names a preflight may ask for on this path (CORS's
 * Access-Control-Allow-Headers): Content-Type and Authorization, then the
 * header parameters of its operations, each once whatever its case. */
static char *path_request_headers(const struct sc_path *p)
{
	size_t cap = 32;
	for (size_t i = 0; i < p->nops; i++) {
		for (size_t k = 0; k < p->ops[i]->nparams; k++)
			cap += strlen(p->ops[i]->params[k].name) + 2;
		const struct sc_security *sec = p->ops[i]->security;
		for (size_t a = 0; sec && a < sec->nalts; a++)
			for (size_t u = 0; u < sec->alts[a].nuses; u++)
				if (sec->alts[a].uses[u].scheme->param)
					cap += strlen(sec->alts[a].uses[u].scheme->param) + 2;
	}
	char *buf = sc_xmalloc(cap);
	strcpy(buf, "Content-Type, Authorization");
	for (size_t i = 0; i < p->nops; i++) {
		for (size_t k = 0; k < p->ops[i]->nparams; k++) {
			const struct sc_param *q = &p->ops[i]->params[k];
			if (q->in == SC_IN_HEADER)
				add_header_name(buf, q->name);
		}
		/* The header names of its apiKey schemes: a browser sends them. */
		const struct sc_security *sec = p->ops[i]->security;
		for (size_t a = 0; sec && a < sec->nalts; a++)
			for (size_t u = 0; u < sec->alts[a].nuses; u++) {
				const struct sc_scheme *s = sec->alts[a].uses[u].scheme;
				if (s->type == SC_SEC_API_KEY && s->in == 0)
					add_header_name(buf, s->param);
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
	/* An if per count of segments, not a switch: with three counts or more
	   a switch becomes a jump table, which costs every request (a
	   one-segment /health included) more than the compare it replaces. */
	out_line(c, "size_t nseg = ig_split_path(req->path, seg, %zu);", max_segs);
	bool first = true;
	struct sc_path **group = sc_xmalloc(sizeof *group * m->npaths);
	for (size_t count = 1; count <= max_segs; count++) {
		size_t gn = 0;
		for (size_t i = 0; i < m->npaths; i++)
			if (m->paths[i]->nsegs == count)
				group[gn++] = m->paths[i];
		if (!gn)
			continue;
		out_open(c, "%sif (nseg == %zu) {", first ? "" : "} else ", count);
		first = false;
		emit_tree(c, group, gn, 0);
		c->indent--;
	}
	free(group);
	if (!first)
		out_line(c, "}");
	if (m->ncron_jobs) { /* POST /_ingot/cron, on a miss only (net/cron/jobs.h) */
		out_line(c, "if (ig_cron_serve(ctx))");
		out_line(c, "\treturn;");
	}
	if (m->nsubs) { /* the consumers' in-process deliveries, on a miss only (net/pubsub/serve.h) */
		out_line(c, "if (ig_pubsub_serve(ctx))");
		out_line(c, "\treturn;");
	}
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
	emit_principal(c, m);
	emit_schemes(c, m);
	emit_rate_limits(m, c);
	for (size_t i = 0; i < m->nops; i++)
		emit_operation(m, c, m->ops[i]);
	out_line(c, "/* ---- the router ---- */");
	out_blank(c);
	out_line(c, "static void ig_serve_openapi(ig_ctx *ctx);");
	out_blank(c);
	emit_route(m, c, max_segs);
}
