/* Emits the generated header: a C struct for every typed object and array
 * schema, the in/out structs of each operation and its handler prototype.
 * Structs are written after the structs they hold by value; a cycle by
 * value (an object that contains itself) has no C layout and is reported.
 * Free-form values are const ig_json_value pointers. */
#include "api_includes.h"
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static void emit_struct(struct sc_model *m, struct sc_out *h, struct sc_schema *s);

/* Emits the struct a member needs by value. */
static void emit_deps(struct sc_model *m, struct sc_out *h, const struct sc_schema *s, bool null_flag)
{
	const struct sc_schema *r = slot_struct(s, null_flag);
	if (r)
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

static void emit_member(struct sc_out *h, const char *type, const char *cname, const char *json_name, const char *note)
{
	bool ptr = type[strlen(type) - 1] == '*';
	char *key = json_name && strcmp(json_name, cname) != 0 ? c_comment(json_name) : NULL;
	if (key || note)
		out_line(h, "%s%s%s; /* %s%s%s%s */", type, ptr ? "" : " ", cname, key ? "\"" : "", key ? key : "",
			 key ? "\"" : "", note ? note : "");
	else
		out_line(h, "%s%s%s;", type, ptr ? "" : " ", cname);
	free(key);
}

static void emit_struct(struct sc_model *m, struct sc_out *h, struct sc_schema *s)
{
	if (s->type_mark == 2)
		return;
	if (s->type_mark == 1) {
		sc_error(m, s->ptr, "this schema contains itself by value, which has no C layout "
				    "(hold the recursion in an array, or make the schema free-form)");
		return;
	}
	s->type_mark = 1;
	/* Array items are held by pointer: declared is enough (see sweep). */
	for (size_t i = 0; i < s->nprops; i++)
		emit_deps(m, h, s->props[i].schema, true);
	s->type_mark = 2;

	emit_doc_comment(h, s->doc);
	out_open(h, "struct %s {", s->cname);
	if (s->kind == SC_ARRAY) {
		if (slot_is_value(s->items, false) || !s->items) {
			out_line(h, "const ig_json_value *const *items;");
		} else {
			char *t = c_type(s->items);
			out_line(h, "const %s *items;", t);
			free(t);
		}
		out_line(h, "size_t len;");
	}
	for (size_t i = 0; i < s->nprops; i++) {
		const struct sc_prop *p = &s->props[i];
		char *t = slot_type(p->schema, true);
		if (prop_has_flag(p))
			out_line(h, "bool has_%s;", p->cname);
		if (prop_null_flag(p))
			out_line(h, "bool null_%s; /* the value is null */", p->cname);
		emit_member(h, t, p->cname, p->name, NULL);
		free(t);
	}
	if (s->kind == SC_OBJECT && s->additional == SC_AP_SCHEMA)
		out_line(h, "const ig_json_value *additional; /* the other members, as an object; or NULL */");
	if (s->kind == SC_OBJECT && !s->nprops && s->additional != SC_AP_SCHEMA)
		out_line(h, "char unused; /* an empty object: C needs a member */");
	out_close(h, "};");
	out_blank(h);
}

/* Emits every struct under a slot not emitted yet. Array items come here,
 * after the array, so an item that holds its container by value is no
 * cycle. */
static void sweep(struct sc_model *m, struct sc_out *h, const struct sc_schema *slot, bool null_flag)
{
	struct sc_schema *s = (struct sc_schema *)slot_struct(slot, null_flag);
	if (!s || s->swept)
		return;
	s->swept = true;
	emit_struct(m, h, s);
	if (s->items)
		sweep(m, h, s->items, false);
	for (size_t i = 0; i < s->nprops; i++)
		sweep(m, h, s->props[i].schema, true);
}

static void forward_declare(struct sc_out *h, const struct sc_schema *slot, bool null_flag)
{
	struct sc_schema *s = (struct sc_schema *)slot_struct(slot, null_flag);
	if (!s || s->type_mark == 3)
		return;
	/* Mark 3 only guards this pass; reset_marks clears it before emitting. */
	s->type_mark = 3;
	out_line(h, "struct %s;", s->cname);
	if (s->items)
		forward_declare(h, s->items, false);
	for (size_t i = 0; i < s->nprops; i++)
		forward_declare(h, s->props[i].schema, true);
}

static void reset_marks(struct sc_model *m)
{
	for (size_t i = 0; i < m->nnodes; i++)
		m->nodes[i]->type_mark = 0;
}

/* Calls fn on every slot an operation's types hold. */
static void op_slots(struct sc_model *m, struct sc_out *h, const struct sc_op *op,
		     void (*fn)(struct sc_model *, struct sc_out *, const struct sc_schema *, bool))
{
	for (size_t i = 0; i < op->nparams; i++)
		fn(m, h, op->params[i].schema, false);
	if (op->body)
		fn(m, h, op->body, false);
	for (size_t i = 0; i < op->nresponses; i++)
		if (op->responses[i].schema && !op->responses[i].problem)
			fn(m, h, op->responses[i].schema, false);
}

static void declare_slot(struct sc_model *m, struct sc_out *h, const struct sc_schema *s, bool null_flag)
{
	(void)m;
	forward_declare(h, s, null_flag);
}

static const char *const location[] = { "path", "query", "header" };

static void emit_op_types(struct sc_model *m, struct sc_out *h, const struct sc_op *op)
{
	char *summary = op->summary ? c_comment(op->summary) : NULL;
	out_line(h, "/* ---- %s: %s %s%s%s ---- */", op->id, op->method, op->path->tmpl,
		 summary ? ": " : "", summary ? summary : "");
	free(summary);
	out_blank(h);
	op_slots(m, h, op, sweep);

	out_open(h, "struct %s_in {", op->id);
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		char *t = c_type(p->schema);
		char *name = c_comment(p->name);
		char *note = sc_printf("%s: %s", location[p->in], name);
		if (param_has_flag(p))
			out_line(h, "bool has_%s;", p->cname);
		emit_member(h, t, p->cname, NULL, note);
		free(t);
		free(name);
		free(note);
	}
	if (op->body) {
		char *t = slot_type(op->body, false);
		if (!op->body_required)
			out_line(h, "bool has_body;");
		emit_member(h, t, "body", NULL, "the JSON request body");
		free(t);
	}
	if (!op->nparams && !op->body)
		out_line(h, "char unused; /* no parameters */");
	out_close(h, "};");
	out_blank(h);

	/* One member per response key with a JSON or text body, named
	   r<status>, r<d>XX or rdefault; the runtime's problem has none. */
	out_open(h, "struct %s_out {", op->id);
	bool members = false;
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		if ((!r->schema && !r->text_type) || r->problem)
			continue;
		members = true;
		char *name = sc_printf("r%s", r->key);
		if (r->text_type) {
			char *note = c_comment(r->text_type);
			out_line(h, "ig_str %s; /* the %s body, sent as it is */", name, note);
			free(note);
		} else {
			char *t = slot_type(r->schema, false);
			emit_member(h, t, name, NULL, NULL);
			free(t);
		}
		free(name);
	}
	if (!members)
		out_line(h, "char unused; /* no response has a JSON or text body of the app's */");
	out_close(h, "};");
	out_blank(h);

	/* The asm label gives the handler a symbol of its own, ig_op_<id>: an
	   operationId such as recv then names no libc, runtime or library
	   symbol, so the app's definition cannot take one over at link time. */
	out_line(h, "int %s(ig_ctx *ctx, const struct %s_in *in, struct %s_out *out) __asm__(\"ig_op_%s\");",
		 op->id, op->id, op->id, op->id);
	out_blank(h);
}

/* x-ingot-principal: the typed accessor, and the typed auth handler the
 * app writes instead of ig_auth_handler (ingot/auth.h). */
static void emit_principal_types(struct sc_model *m, struct sc_out *h)
{
	if (!m->principal)
		return;
	const char *n = m->principal->component;
	char *t = c_type(m->principal);
	out_line(h, "/* ---- the principal (x-ingot-principal: %s) ---- */", n);
	out_blank(h);
	out_line(h, "/* The request's principal as a %s: what the auth handler filled, or a", t);
	out_line(h, " * bearer JWT's claims decoded with the schema (a token whose claims break");
	out_line(h, " * it is refused 401 invalid_token before any handler). NULL on an open");
	out_line(h, " * operation, and for a principal a client certificate admitted. */");
	out_line(h, "static inline const %s *ig_principal_%s(const ig_ctx *ctx)", t, n);
	out_open(h, "{");
	out_line(h, "const struct ig_principal *p = ig_principal(ctx);");
	out_line(h, "return p ? (const %s *)p->data : NULL;", t);
	out_close(h, "}");
	out_blank(h);
	if (m->handler_used) {
		out_line(h, "/* The auth handler for the apiKey and basic schemes (ingot/auth.h's");
		out_line(h, " * contract for ig_auth_handler, which this replaces): data is zeroed in the");
		out_line(h, " * arena; on IG_AUTH_OK it is the principal's (ig_principal_%s). */", n);
		out_line(h, "enum ig_auth_result ig_auth_handler_%s(ig_ctx *ctx, const struct ig_credentials *cred,", n);
		out_line(h, "\t\t\t\t\t struct ig_principal *out, %s *data);", t);
		out_blank(h);
	}
	free(t);
}

void emit_types(struct sc_model *m, struct sc_out *h)
{
	emit_banner(m, h, "The API's types and one handler prototype per operationId; app/ implements them.");
	out_line(h, "#ifndef SCHEMAC_API_H");
	out_line(h, "#define SCHEMAC_API_H");
	out_blank(h);
	static const char *const includes[] = { SC_API_INCLUDES };
	for (size_t i = 0; i < sizeof includes / sizeof includes[0]; i++)
		out_line(h, "#include \"%s\"", includes[i]);
	if (sc_has_hooks(m)) /* it includes only http.h: no C library name more */
		out_line(h, "#include \"ingot/hooks.h\"");
	if (m->principal) /* its accessor and typed auth handler */
		out_line(h, "#include \"ingot/auth.h\"");
	if (m->ntopics) /* it includes only http.h: no C library name more */
		out_line(h, "#include \"ingot/pubsub.h\"");
	if (sc_has_streams(m)) /* as pubsub.h */
		out_line(h, "#include \"ingot/sse.h\"");
	if (sc_has_websockets(m)) /* as pubsub.h */
		out_line(h, "#include \"ingot/websocket.h\"");
	out_blank(h);
	out_line(h, "/* A handler returns the status to send, or IG_PENDING and calls ig_finish");
	out_line(h, " * later. Each member r<status> of <op>_out is the body for that status,");
	out_line(h, " * r4XX for a status of that range, rdefault for any other (an ig_str");
	out_line(h, " * for a text/plain or text/html one, see ig_html_escape, and for an");
	out_line(h, " * application/octet-stream one, which its handler may stream instead:");
	out_line(h, " * ingot/body.h); a status answered with the runtime's problem+json has");
	out_line(h, " * none (ig_respond_problem);");
	out_line(h, " * a property that is not required (and has no default) has a has_<name>");
	out_line(h, " * flag beside it, a nullable one a null_<name> flag. Free-form values");
	out_line(h, " * are ig_json_value trees in the request arena (NULL writes null). */");
	out_blank(h);

	/* Every struct tag is declared before any use, so pointers to types
	   defined later (array items, recursion) are fine. */
	for (size_t i = 0; i < m->ncomponents; i++)
		forward_declare(h, m->components[i], false);
	for (size_t i = 0; i < m->nops; i++) {
		op_slots(m, h, m->ops[i], declare_slot);
		out_line(h, "struct %s_in;", m->ops[i]->id);
		out_line(h, "struct %s_out;", m->ops[i]->id);
	}
	out_blank(h);
	reset_marks(m);

	bool any = false;
	for (size_t i = 0; i < m->ncomponents; i++)
		any |= slot_struct(m->components[i], false) != NULL;
	if (any) {
		out_line(h, "/* ---- components/schemas ---- */");
		out_blank(h);
	}
	for (size_t i = 0; i < m->ncomponents; i++)
		sweep(m, h, m->components[i], false);
	for (size_t i = 0; i < m->nops; i++)
		emit_op_types(m, h, m->ops[i]);
	emit_hook_prototypes(m, h);
	emit_pubsub_prototypes(m, h);
	emit_sse_prototypes(m, h);
	emit_ws_prototypes(m, h);
	emit_json_prototypes(m, h);
	emit_principal_types(m, h);
	out_line(h, "#endif");
}
