/* Emits the request decoders: per operation, decode_<op> checks the body's
 * media type (415), then turns the raw path segments, query pairs and
 * header values into the typed in struct (net/api/params.h parses them)
 * and decodes the JSON body (emit_body.c), checking every constraint and
 * collecting one error per violation (ig_error_add) so the client hears
 * about all of them at once. With x-ingot-validate: false, only the types
 * are decoded. */
#include "emit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const location[] = { "path", "query", "header" };
static const char *const location_const[] = { "IG_IN_PATH", "IG_IN_QUERY", "IG_IN_HEADER" };

/* The statement that reports a violation of parameter p. */
static char *param_report(const struct sc_param *p)
{
	char *name = c_str(p->name);
	/* %% survives the sc_printf here; the two %s take keyword and message. */
	char *fmt = sc_printf("ig_error_add(ctx, \"%s\", %s, %%s, %%s);", location[p->in], name);
	free(name);
	return fmt;
}

static void param_error(struct sc_out *c, const struct sc_param *p, const char *kw, const char *msg)
{
	char *name = c_str(p->name), *k = c_str(kw), *m = c_str(msg);
	out_line(c, "ig_error_add(ctx, \"%s\", %s, %s, %s);", location[p->in], name, k, m);
	free(name);
	free(k);
	free(m);
}

/* Out of int64 range: name the bound it breaks when the schema has one. */
static void emit_int_overflow(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s, bool above)
{
	const struct sc_number *b = above ? &s->maximum : &s->minimum;
	const struct sc_number *xb = above ? &s->exclusive_maximum : &s->exclusive_minimum;
	if (b->set) {
		char *msg = msg_keyword(s, above ? "maximum" : "minimum");
		param_error(c, p, above ? "maximum" : "minimum", msg);
		free(msg);
	} else if (xb->set) {
		char *msg = msg_keyword(s, above ? "exclusiveMaximum" : "exclusiveMinimum");
		param_error(c, p, above ? "exclusiveMaximum" : "exclusiveMinimum", msg);
		free(msg);
	} else if (s->enum_values) {
		char *msg = msg_keyword(s, "enum");
		param_error(c, p, "enum", msg);
		free(msg);
	} else {
		param_error(c, p, "format", "must fit in a 64-bit signed integer");
	}
}

static bool uses_literal(const struct sc_schema *s)
{
	return s->multiple_of.set && !(s->kind == SC_INTEGER && s->multiple_of.is_int);
}

/* Decodes one scalar value (raw text) of parameter p into target. */
static void emit_scalar_param(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s,
			      const char *raw, const char *target, bool validate, const char *on_error)
{
	const char *in = location_const[p->in];
	bool checks = validate && has_scalar_checks(s);
	char *fmt = param_report(p);
	switch (s->kind) {
	case SC_INTEGER:
		out_line(c, "switch (ig_param_int64(ctx, %s, %s, &%s, %s)) {", raw, in, target,
			 checks && uses_literal(s) ? "&lit" : "NULL");
		break;
	case SC_NUMBER:
		out_line(c, "switch (ig_param_double(ctx, %s, %s, &%s, %s)) {", raw, in, target,
			 checks && uses_literal(s) ? "&lit" : "NULL");
		break;
	case SC_BOOLEAN:
		out_line(c, "switch (ig_param_bool(ctx, %s, %s, &%s)) {", raw, in, target);
		break;
	default:
		out_line(c, "switch (ig_param_string(ctx, %s, %s, &%s)) {", raw, in, target);
		break;
	}
	out_open(c, "case IG_PARAM_OK: {");
	if (checks)
		emit_scalar_checks(c, s, target, "lit", fmt);
	out_line(c, "break;");
	out_close(c, "}");
	if (s->kind == SC_INTEGER) {
		out_open(c, "case IG_PARAM_ABOVE:");
		emit_int_overflow(c, p, s, true);
		if (on_error)
			out_line(c, "%s", on_error);
		out_line(c, "break;");
		c->indent--;
		out_open(c, "case IG_PARAM_BELOW:");
		emit_int_overflow(c, p, s, false);
		if (on_error)
			out_line(c, "%s", on_error);
		out_line(c, "break;");
		c->indent--;
	} else if (s->kind == SC_NUMBER) {
		out_line(c, "case IG_PARAM_ABOVE:");
		out_open(c, "case IG_PARAM_BELOW:");
		param_error(c, p, "type", "must be a number within the range of a double");
		if (on_error)
			out_line(c, "%s", on_error);
		out_line(c, "break;");
		c->indent--;
	}
	out_open(c, "case IG_PARAM_NO_MEMORY:");
	out_line(c, "return 500;");
	c->indent--;
	if (s->kind == SC_STRING) {
		out_open(c, "case IG_PARAM_BAD_ESCAPE:");
		param_error(c, p, "type", "must be a string: it has an invalid %-escape");
		if (on_error)
			out_line(c, "%s", on_error);
		out_line(c, "break;");
		c->indent--;
		out_open(c, "default:");
		param_error(c, p, "type", "must be a string: it is not UTF-8");
	} else {
		out_open(c, "default:");
		param_error(c, p, "type", s->kind == SC_INTEGER ? "must be an integer"
					  : s->kind == SC_NUMBER ? "must be a number" : "must be true or false");
	}
	if (on_error)
		out_line(c, "%s", on_error);
	out_line(c, "break;");
	c->indent--;
	out_line(c, "}");
	free(fmt);
}

/* A C literal of a default value for a slot of schema r. */
char *default_literal(const struct sc_schema *r, const cJSON *d, bool value)
{
	if (value)
		return sc_strdup("NULL"); /* handled by the caller with a constant */
	switch (r->kind) {
	case SC_STRING: {
		char *lit = c_str(d->valuestring), *t = sc_printf("(ig_str){ %s, %zu }", lit, strlen(d->valuestring));
		free(lit);
		return t;
	}
	case SC_INTEGER:
		if ((long long)d->valuedouble == INT64_MIN)
			return sc_strdup("INT64_MIN");
		return sc_printf("%lld", (long long)d->valuedouble);
	case SC_NUMBER:
		return sc_printf("%.17g", d->valuedouble);
	case SC_BOOLEAN:
		return sc_strdup(cJSON_IsTrue(d) ? "true" : "false");
	default:
		return sc_strdup("0");
	}
}

/* Checks of an array parameter's items, once they are all read. */
static void emit_array_param_checks(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s,
				    const char *items, const char *n)
{
	char *fmt = param_report(p);
	struct {
		bool on;
		const char *kw, *op;
		uint64_t v;
	} counts[] = {
		{ s->has_min_items, "minItems", "<", s->min_items },
		{ s->has_max_items, "maxItems", ">", s->max_items },
	};
	for (size_t i = 0; i < 2; i++) {
		if (!counts[i].on)
			continue;
		char *cond = sc_printf("%s %s %llu", n, counts[i].op, (unsigned long long)counts[i].v);
		char *msg = msg_keyword(s, counts[i].kw), *k = c_str(counts[i].kw), *m = c_str(msg);
		char *stmt = sc_printf(fmt, k, m);
		out_line(c, "if (%s)", cond);
		out_line(c, "\t%s", stmt);
		free(cond);
		free(msg);
		free(k);
		free(m);
		free(stmt);
	}
	if (s->unique_items) {
		const struct sc_schema *it = sc_resolve(s->items);
		char *bad = sc_printf("%s_bad", p->cname);
		char *fn = it->kind == SC_STRING ? sc_printf("ig_unique_strings(%s, %s, ig_ctx_arena(ctx))", items, n)
			 : it->kind == SC_INTEGER ? sc_printf("ig_unique_ints(%s, %s, ig_ctx_arena(ctx))", items, n)
			 : it->kind == SC_NUMBER ? sc_printf("ig_unique_doubles(%s, %s, ig_ctx_arena(ctx))", items, n)
						 : sc_printf("ig_unique_bools(%s, %s)", items, n);
		char *msg = msg_keyword(s, "uniqueItems"), *m = c_str(msg);
		char *stmt = sc_printf(fmt, "\"uniqueItems\"", m);
		out_line(c, "if (!%s && !%s)", bad, fn);
		out_line(c, "\t%s", stmt);
		free(bad);
		free(fn);
		free(msg);
		free(m);
		free(stmt);
	}
	free(fmt);
}

static bool needs_literal(const struct sc_op *op)
{
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_schema *s = sc_resolve(op->params[i].schema);
		if (s->kind == SC_ARRAY)
			s = sc_resolve(s->items);
		if (op->validate && uses_literal(s))
			return true;
	}
	return false;
}

/* What to do about a parameter that is absent: required, default, or nothing. */
static void emit_absent(struct sc_out *c, const struct sc_param *p, const char *present, bool validate)
{
	const cJSON *d = sc_default(p->schema);
	const struct sc_schema *r = sc_resolve(p->schema);
	if (p->required && validate) {
		out_line(c, "if (!%s)", present);
		c->indent++;
		param_error(c, p, "required", "is required");
		c->indent--;
	} else if (d && r->kind != SC_ARRAY) {
		char *lit = default_literal(r, d, false);
		out_line(c, "if (!%s)", present);
		out_line(c, "\tin->%s = %s;", p->cname, lit);
		free(lit);
	}
	if (param_has_flag(p))
		out_line(c, "in->has_%s = %s;", p->cname, present);
}

static void emit_path_params(struct sc_out *c, const struct sc_op *op)
{
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		if (p->in != SC_IN_PATH)
			continue;
		char *name = c_comment(p->name), *raw = sc_printf("seg[%zu]", p->segment);
		char *target = sc_printf("in->%s", p->cname);
		out_open(c, "{ /* %s (path) */", name);
		emit_scalar_param(c, p, sc_resolve(p->schema), raw, target, op->validate, NULL);
		out_close(c, "}");
		free(name);
		free(raw);
		free(target);
	}
}

static void emit_header_params(struct sc_out *c, const struct sc_op *op)
{
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		if (p->in != SC_IN_HEADER)
			continue;
		char *name = c_comment(p->name), *lit = c_str(p->name), *target = sc_printf("in->%s", p->cname);
		out_open(c, "{ /* %s (header) */", name);
		out_line(c, "ig_str raw = ig_req_header(ctx, %s);", lit);
		out_line(c, "bool present = raw.ptr != NULL;");
		out_open(c, "if (present) {");
		emit_scalar_param(c, p, sc_resolve(p->schema), "raw", target, op->validate, NULL);
		out_close(c, "}");
		emit_absent(c, p, "present", op->validate);
		out_close(c, "}");
		free(name);
		free(lit);
		free(target);
	}
}

static void emit_query_params(struct sc_out *c, const struct sc_op *op)
{
	bool any = false;
	for (size_t i = 0; i < op->nparams; i++)
		any |= op->params[i].in == SC_IN_QUERY;
	if (!any)
		return;
	out_open(c, "{ /* the query string */");
	out_line(c, "ig_str query = ig_req(ctx)->query;");
	out_line(c, "ig_query q;");
	out_line(c, "ig_query_init(&q, query);");
	out_line(c, "ig_str name, raw;");
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		if (p->in != SC_IN_QUERY)
			continue;
		out_line(c, "bool seen_%s = false;", p->cname);
		const struct sc_schema *s = sc_resolve(p->schema);
		if (s->kind == SC_ARRAY) {
			char *t = c_type(s->items);
			out_line(c, "%s *%s_items = NULL;", t, p->cname);
			out_line(c, "size_t %s_n = 0;", p->cname);
			if (op->validate && s->unique_items)
				out_line(c, "bool %s_bad = false; /* an item failed to decode */", p->cname);
			free(t);
		}
	}
	out_open(c, "while (ig_query_next(&q, &name, &raw)) {");
	const char *els = "";
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		if (p->in != SC_IN_QUERY)
			continue;
		const struct sc_schema *s = sc_resolve(p->schema);
		char *lit = c_str(p->name);
		if (*els)
			c->indent--; /* "} else if" closes the branch before */
		out_open(c, "%sif (ig_query_name_is(name, %s, %zu)) {", els, lit, strlen(p->name));
		els = "} else ";
		if (s->kind == SC_ARRAY && p->explode) {
			/* Repeated keys: one item each. */
			out_line(c, "seen_%s = true;", p->cname);
			out_line(c, "if (!%s_items && !(%s_items = ig_alloc(ctx, ig_query_count(query) * sizeof *%s_items)))",
				 p->cname, p->cname, p->cname);
			out_line(c, "\treturn 500;");
			char *target = sc_printf("%s_items[%s_n]", p->cname, p->cname);
			char *bad = op->validate && s->unique_items ? sc_printf("%s_bad = true;", p->cname) : NULL;
			emit_scalar_param(c, p, sc_resolve(s->items), "raw", target, op->validate, bad);
			free(bad);
			out_line(c, "%s_n++;", p->cname);
			free(target);
		} else {
			out_open(c, "if (seen_%s) {", p->cname);
			param_error(c, p, "type", "must be given once");
			out_line(c, "continue;");
			out_close(c, "}");
			out_line(c, "seen_%s = true;", p->cname);
			if (s->kind == SC_ARRAY) {
				/* One key, comma-separated items (explode: false). */
				out_line(c, "size_t most = raw.len ? ig_param_count_items(raw) : 0;");
				out_line(c, "if (most && !(%s_items = ig_alloc(ctx, most * sizeof *%s_items)))", p->cname,
					 p->cname);
				out_line(c, "\treturn 500;");
				out_line(c, "ig_str rest = raw.len ? raw : (ig_str){ NULL, 0 }, item;");
				out_open(c, "while (ig_param_next_item(&rest, &item)) {");
				char *target = sc_printf("%s_items[%s_n]", p->cname, p->cname);
				char *bad = op->validate && s->unique_items ? sc_printf("%s_bad = true;", p->cname) : NULL;
				emit_scalar_param(c, p, sc_resolve(s->items), "item", target, op->validate, bad);
				free(bad);
				out_line(c, "%s_n++;", p->cname);
				out_close(c, "}");
				free(target);
			} else {
				char *target = sc_printf("in->%s", p->cname);
				emit_scalar_param(c, p, s, "raw", target, op->validate, NULL);
				free(target);
			}
		}
		free(lit);
	}
	c->indent--;
	out_line(c, "}");
	out_close(c, "}");
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		if (p->in != SC_IN_QUERY)
			continue;
		const struct sc_schema *s = sc_resolve(p->schema);
		char *present = sc_printf("seen_%s", p->cname);
		if (s->kind == SC_ARRAY) {
			out_line(c, "in->%s.items = %s_items;", p->cname, p->cname);
			out_line(c, "in->%s.len = %s_n;", p->cname, p->cname);
			if (op->validate && (s->has_min_items || s->has_max_items || s->unique_items)) {
				char *items = sc_printf("%s_items", p->cname), *n = sc_printf("%s_n", p->cname);
				out_open(c, "if (seen_%s) {", p->cname);
				emit_array_param_checks(c, p, s, items, n);
				out_close(c, "}");
				free(items);
				free(n);
			}
		}
		emit_absent(c, p, present, op->validate);
		free(present);
	}
	out_close(c, "}");
}

static void emit_body(struct sc_out *c, const struct sc_op *op)
{
	out_open(c, "{ /* the JSON body */");
	out_open(c, "if (!ig_req(ctx)->body.len) {");
	if (op->body_required) /* even unvalidated: a body the handler relies on */
		out_line(c, "ig_error_add(ctx, \"body\", \"\", \"required\", \"a JSON body is required\");");
	else
		out_line(c, "/* optional: has_body stays false */");
	c->indent--;
	out_open(c, "} else {");
	out_line(c, "ig_body_reader b;");
	out_line(c, "if (!ig_body_begin(ctx, &b, 64))");
	out_line(c, "\treturn 500;");
	out_line(c, "struct ig_dctx dc = { &b.r, { .report = ig_body_error, .arg = &b, .arena = b.r.arena }, %s };",
		 op->validate ? "true" : "false");
	out_line(c, "struct ig_dctx *d = &dc;");
	emit_slot_decode(c, op->body, false, "in->body", NULL, "NULL");
	out_line(c, "ig_body_end(&b);");
	if (!op->body_required)
		out_line(c, "in->has_body = true;");
	out_close(c, "}");
	out_close(c, "}");
}

bool op_has_path_params(const struct sc_op *op)
{
	for (size_t i = 0; i < op->nparams; i++)
		if (op->params[i].in == SC_IN_PATH)
			return true;
	return false;
}

bool op_has_decoder(const struct sc_op *op)
{
	return op->nparams || op->body;
}

static void emit_op_decoder(struct sc_out *c, const struct sc_op *op)
{
	out_line(c, "/* %s %s: %s. Returns 0, or the status to answer. */", op->method, op->path->tmpl,
		 op->body ? (op->nparams ? "parameters and body" : "the body") : "parameters");
	/* The signature of ig_decode_op_fn (net/api/operation.h). */
	out_line(c, "%s static int decode_%s(ig_ctx *ctx, const ig_str *seg, void *in_)",
		 sc_op_is_stream(op) ? "IG_STREAM_CODE" : "IG_HOT", op->id);
	out_open(c, "{");
	out_line(c, "struct %s_in *in = in_;", op->id);
	if (!op_has_path_params(op))
		out_line(c, "(void)seg;");
	if (!op->validate)
		out_line(c, "/* x-ingot-validate: false: types are decoded, constraints not checked. */");
	if (op->body) {
		out_line(c, "if (ig_req(ctx)->body.len && !ig_is_json(ig_req_header(ctx, \"content-type\")))");
		out_line(c, "\treturn 415;");
	}
	if (needs_literal(op))
		out_line(c, "ig_str lit = { NULL, 0 }; /* a number as written, for multipleOf */");
	emit_path_params(c, op);
	emit_query_params(c, op);
	emit_header_params(c, op);
	if (op->body)
		emit_body(c, op);
	out_line(c, "return ig_has_errors(ctx) ? 400 : 0;");
	out_close(c, "}");
	out_blank(c);
}

void mark_param_schemas(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++) {
		for (size_t k = 0; k < m->ops[i]->nparams; k++) {
			struct sc_schema *s = (struct sc_schema *)sc_resolve(m->ops[i]->params[k].schema);
			s->param_used = true;
			if (s->kind == SC_ARRAY && s->items)
				((struct sc_schema *)sc_resolve(s->items))->param_used = true;
		}
	}
}

void emit_decoders(struct sc_model *m, struct sc_out *c)
{
	bool any = false;
	for (size_t i = 0; i < m->nops; i++)
		any |= op_has_decoder(m->ops[i]);
	if (!any)
		return;
	out_line(c, "/* ---- request decoders ---- */");
	out_blank(c);
	for (size_t i = 0; i < m->nops; i++)
		if (op_has_decoder(m->ops[i]))
			emit_op_decoder(c, m->ops[i]);
}
