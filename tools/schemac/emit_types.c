/* Emits the generated header: a C struct for every object and array schema,
 * the in/out structs of each operation and its handler prototype. Structs
 * are written after the structs they hold by value; a cycle by value (an
 * object that contains itself) has no C layout and is reported. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static void emit_struct(struct sc_model *m, struct sc_out *h, struct sc_schema *s);

/* Emits the structs a member of schema s needs by value. */
static void emit_deps(struct sc_model *m, struct sc_out *h, const struct sc_schema *s)
{
	const struct sc_schema *r = sc_resolve(s);
	if (r->kind == SC_OBJECT || r->kind == SC_ARRAY)
		emit_struct(m, h, (struct sc_schema *)r);
}

static void emit_doc_comment(struct sc_out *h, const char *doc)
{
	if (!doc)
		return;
	char *c = c_comment(doc);
	out_line(h, "/* %s */", c);
	free(c);
}

static void emit_struct(struct sc_model *m, struct sc_out *h, struct sc_schema *s)
{
	if (s->type_mark == 2)
		return;
	if (s->type_mark == 1) {
		sc_error(m, s->ptr, "this schema contains itself by value, which has no C layout "
				    "(hold the recursion in an array)");
		return;
	}
	s->type_mark = 1;
	/* Array items are held by pointer: declared is enough (see sweep). */
	for (size_t i = 0; i < s->nprops; i++)
		emit_deps(m, h, s->props[i].schema);
	s->type_mark = 2;

	emit_doc_comment(h, s->doc);
	out_open(h, "struct %s {", s->cname);
	if (s->kind == SC_ARRAY) {
		char *t = c_type(s->items);
		out_line(h, "const %s *items;", t);
		out_line(h, "size_t len;");
		free(t);
	}
	for (size_t i = 0; i < s->nprops; i++) {
		const struct sc_prop *p = &s->props[i];
		char *t = c_type(p->schema);
		if (!p->required)
			out_line(h, "bool has_%s;", p->cname);
		if (strcmp(p->name, p->cname) != 0) {
			char *key = c_comment(p->name);
			out_line(h, "%s %s; /* \"%s\" */", t, p->cname, key);
			free(key);
		} else {
			out_line(h, "%s %s;", t, p->cname);
		}
		free(t);
	}
	if (s->kind == SC_OBJECT && !s->nprops)
		out_line(h, "char unused; /* an empty object: C needs a member */");
	out_close(h, "};");
	out_blank(h);
}

/* Emits every struct under s not emitted yet. Array items come here, after
 * the array, so an item that holds its container by value is no cycle. */
static void sweep(struct sc_model *m, struct sc_out *h, struct sc_schema *s)
{
	if (!s || (s->kind != SC_OBJECT && s->kind != SC_ARRAY))
		return;
	emit_struct(m, h, s);
	sweep(m, h, s->items);
	for (size_t i = 0; i < s->nprops; i++)
		sweep(m, h, s->props[i].schema);
}

static void forward_declare(struct sc_out *h, const struct sc_schema *s)
{
	if (!s || s->kind == SC_REF || s->type_mark == 3 || (s->kind != SC_OBJECT && s->kind != SC_ARRAY))
		return;
	/* Mark 3 only guards this pass; reset_marks clears it before emitting. */
	((struct sc_schema *)s)->type_mark = 3;
	out_line(h, "struct %s;", s->cname);
	forward_declare(h, s->items);
	for (size_t i = 0; i < s->nprops; i++)
		forward_declare(h, s->props[i].schema);
}

static void reset_marks(struct sc_schema *s)
{
	if (!s || s->kind == SC_REF || s->type_mark == 0)
		return;
	s->type_mark = 0;
	reset_marks(s->items);
	for (size_t i = 0; i < s->nprops; i++)
		reset_marks(s->props[i].schema);
}

static void emit_op_types(struct sc_model *m, struct sc_out *h, const struct sc_op *op)
{
	char *summary = op->summary ? c_comment(op->summary) : NULL;
	out_line(h, "/* ---- %s: %s %s%s%s ---- */", op->id, op->method, op->path->tmpl,
		 summary ? ": " : "", summary ? summary : "");
	free(summary);
	out_blank(h);
	for (size_t i = 0; i < op->nresponses; i++)
		sweep(m, h, op->responses[i].schema);

	out_open(h, "struct %s_in {", op->id);
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		char *t = c_type(p->schema);
		char *name = c_comment(p->name);
		out_line(h, "%s %s; /* path: %s */", t, p->cname, name);
		free(t);
		free(name);
	}
	if (!op->nparams)
		out_line(h, "char unused; /* no parameters */");
	out_close(h, "};");
	out_blank(h);

	/* One member per status with a JSON body, named r<status>. */
	out_open(h, "struct %s_out {", op->id);
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		if (!r->schema)
			continue;
		char *t = c_type(r->schema);
		out_line(h, "%s r%d;", t, r->status);
		free(t);
	}
	if (!op_has_encoder(op))
		out_line(h, "char unused; /* no response has a JSON body */");
	out_close(h, "};");
	out_blank(h);

	out_line(h, "int %s(ig_ctx *ctx, const struct %s_in *in, struct %s_out *out);", op->id, op->id, op->id);
	out_blank(h);
}

void emit_types(struct sc_model *m, struct sc_out *h)
{
	emit_banner(m, h, "The API's types and one handler prototype per operationId; app/ implements them.");
	out_line(h, "#ifndef SCHEMAC_API_H");
	out_line(h, "#define SCHEMAC_API_H");
	out_blank(h);
	out_line(h, "#include \"net/http/exchange.h\"");
	out_blank(h);
	out_line(h, "/* A handler returns the status to send, or IG_PENDING and calls ig_finish");
	out_line(h, " * later. Each member r<status> of <op>_out is the body for that status;");
	out_line(h, " * a property that is not required has a has_<name> flag beside it. */");
	out_blank(h);

	/* Every struct tag is declared before any use, so pointers to types
	   defined later (array items, recursion) are fine. */
	for (size_t i = 0; i < m->ncomponents; i++)
		forward_declare(h, m->components[i]);
	for (size_t i = 0; i < m->nops; i++) {
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			forward_declare(h, m->ops[i]->responses[r].schema);
		out_line(h, "struct %s_in;", m->ops[i]->id);
		out_line(h, "struct %s_out;", m->ops[i]->id);
	}
	out_blank(h);
	for (size_t i = 0; i < m->ncomponents; i++)
		reset_marks(m->components[i]);
	for (size_t i = 0; i < m->nops; i++)
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			reset_marks(m->ops[i]->responses[r].schema);

	if (m->ncomponents) {
		out_line(h, "/* ---- components/schemas ---- */");
		out_blank(h);
	}
	for (size_t i = 0; i < m->ncomponents; i++)
		sweep(m, h, m->components[i]);
	for (size_t i = 0; i < m->nops; i++)
		emit_op_types(m, h, m->ops[i]);
	out_line(h, "#endif");
}
