/* Emits the response encoders: a writer per struct that some response
 * reaches (write_<struct>) and per operation an ig_encode_fn
 * (encode_<op>) switching on the status. Keys are pre-built literal
 * fragments ("{\"id\":", ",\"title\":"); the comma logic is decided here,
 * at build time, except after optional properties, where a flag decides. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

/* Marks the structs the encoders reach, so only those get writers (an
 * unused static function is an error under -Werror). */
static void mark_used(struct sc_schema *s)
{
	struct sc_schema *r = (struct sc_schema *)sc_resolve(s);
	if ((r->kind != SC_OBJECT && r->kind != SC_ARRAY) || r->encoder_used)
		return;
	r->encoder_used = true;
	if (r->items)
		mark_used(r->items);
	for (size_t i = 0; i < r->nprops; i++)
		mark_used(r->props[i].schema);
}

/* The statement that writes the value expression `v` of schema s. */
static void emit_value(struct sc_out *c, const struct sc_schema *s, const char *v)
{
	const struct sc_schema *r = sc_resolve(s);
	switch (r->kind) {
	case SC_STRING:
		out_line(c, "ig_json_string(w, %s.ptr, %s.len);", v, v);
		break;
	case SC_INTEGER:
		out_line(c, "ig_json_int(w, %s);", v);
		break;
	case SC_NUMBER:
		out_line(c, "ig_json_double(w, %s);", v);
		break;
	case SC_BOOLEAN:
		out_line(c, "ig_json_bool(w, %s);", v);
		break;
	case SC_OBJECT:
	case SC_ARRAY:
		out_line(c, "write_%s(w, &%s);", r->cname, v);
		break;
	case SC_REF:
		break;
	}
}

static void emit_array_writer(struct sc_out *c, const struct sc_schema *s)
{
	out_line(c, "static void write_%s(ig_wbuf *w, const struct %s *a)", s->cname, s->cname);
	out_open(c, "{");
	out_line(c, "ig_wbuf_lit(w, \"[\");");
	out_open(c, "for (size_t i = 0; i < a->len; i++) {");
	out_line(c, "if (i)");
	out_line(c, "\tig_wbuf_lit(w, \",\");");
	emit_value(c, s->items, "a->items[i]");
	out_close(c, "}");
	out_line(c, "ig_wbuf_lit(w, \"]\");");
	out_close(c, "}");
	out_blank(c);
}

/* What is known at build time about the members written so far. */
enum written { NONE, SOME, MAYBE };

static void emit_object_writer(struct sc_out *c, const struct sc_schema *s)
{
	out_line(c, "static void write_%s(ig_wbuf *w, const struct %s *o)", s->cname, s->cname);
	out_open(c, "{");
	if (!s->nprops) {
		out_line(c, "(void)o;");
		out_line(c, "ig_wbuf_lit(w, \"{}\");");
		out_close(c, "}");
		out_blank(c);
		return;
	}
	/* A flag is needed only if an optional member may be first and some
	   member comes after it. */
	bool need_flag = false;
	bool brace_merged = s->props[0].required;
	enum written state = NONE;
	for (size_t i = 0; i < s->nprops; i++) {
		if (state == MAYBE) {
			need_flag = true;
			break;
		}
		if (s->props[i].required)
			state = SOME;
		else if (state == NONE)
			state = MAYBE;
	}
	if (need_flag)
		out_line(c, "bool more = false; /* a member has been written */");
	if (!brace_merged)
		out_line(c, "ig_wbuf_lit(w, \"{\");");

	state = NONE;
	for (size_t i = 0; i < s->nprops; i++) {
		const struct sc_prop *p = &s->props[i];
		char *v = sc_printf("o->%s", p->cname);
		bool last = i + 1 == s->nprops;
		if (!p->required)
			out_open(c, "if (o->has_%s) {", p->cname);
		if (state == MAYBE) {
			char *key = json_key_literal("", p->name);
			out_line(c, "if (more)");
			out_line(c, "\tig_wbuf_lit(w, \",\");");
			out_line(c, "ig_wbuf_lit(w, %s);", key);
			free(key);
		} else {
			const char *prefix = state == SOME ? "," : (i == 0 && brace_merged) ? "{" : "";
			char *key = json_key_literal(prefix, p->name);
			out_line(c, "ig_wbuf_lit(w, %s);", key);
			free(key);
		}
		emit_value(c, p->schema, v);
		if (!p->required) {
			if (need_flag && state != SOME && !last)
				out_line(c, "more = true;");
			out_close(c, "}");
		}
		if (p->required)
			state = SOME;
		else if (state == NONE)
			state = MAYBE;
		free(v);
	}
	out_line(c, "ig_wbuf_lit(w, \"}\");");
	out_close(c, "}");
	out_blank(c);
}

/* Writers in a stable order: components, then each operation's inline
 * structs; prototypes first, as writers may call each other in any order. */
static void collect(struct sc_schema *s, struct sc_schema ***list, size_t *n)
{
	if (!s || (s->kind != SC_OBJECT && s->kind != SC_ARRAY) || !s->encoder_used || s->writer_listed)
		return;
	s->writer_listed = true;
	*list = realloc(*list, sizeof **list * (*n + 1));
	if (!*list)
		abort();
	(*list)[(*n)++] = s;
	collect(s->items, list, n);
	for (size_t i = 0; i < s->nprops; i++)
		collect(s->props[i].schema, list, n);
}

static void emit_op_encoder(struct sc_out *c, const struct sc_op *op)
{
	out_line(c, "/* %s %s */", op->method, op->path->tmpl);
	out_line(c, "static void encode_%s(ig_ctx *ctx, int status, const void *out)", op->id);
	out_open(c, "{");
	out_line(c, "const struct %s_out *o = out;", op->id);
	out_line(c, "ig_wbuf *w = ig_body(ctx);");
	out_line(c, "switch (status) {");
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		if (!r->schema)
			continue;
		char *v = sc_printf("o->r%d", r->status);
		out_open(c, "case %d:", r->status);
		emit_value(c, r->schema, v);
		out_line(c, "break;");
		c->indent--;
		free(v);
	}
	out_open(c, "default:");
	out_line(c, "break; /* no schema for this status: an empty body */");
	c->indent--;
	out_line(c, "}");
	out_close(c, "}");
	out_blank(c);
}

void emit_encoders(struct sc_model *m, struct sc_out *c)
{
	for (size_t i = 0; i < m->nops; i++)
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			if (m->ops[i]->responses[r].schema)
				mark_used(m->ops[i]->responses[r].schema);

	struct sc_schema **list = NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->ncomponents; i++)
		collect(m->components[i], &list, &n);
	for (size_t i = 0; i < m->nops; i++)
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			collect(m->ops[i]->responses[r].schema, &list, &n);

	out_line(c, "/* ---- response encoders ---- */");
	out_blank(c);
	for (size_t i = 0; i < n; i++)
		out_line(c, "static void write_%s(ig_wbuf *w, const struct %s *%s);", list[i]->cname, list[i]->cname,
			 list[i]->kind == SC_ARRAY ? "a" : "o");
	if (n)
		out_blank(c);
	for (size_t i = 0; i < n; i++) {
		if (list[i]->kind == SC_ARRAY)
			emit_array_writer(c, list[i]);
		else
			emit_object_writer(c, list[i]);
	}
	free(list);
	for (size_t i = 0; i < m->nops; i++)
		if (op_has_encoder(m->ops[i]))
			emit_op_encoder(c, m->ops[i]);
}
