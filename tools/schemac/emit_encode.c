/* Emits the response encoders: a writer per typed struct that some
 * response reaches (write_<struct>) and per operation an ig_encode_fn
 * (encode_<op>) switching on the status. Keys are pre-built literal
 * fragments ("{\"id\":", ",\"title\":"); the comma logic is decided here,
 * at build time, except after optional members, where a flag decides.
 * Free-form values go through ig_json_write_value; a nullable member
 * writes null when its flag says so. Debug builds (IG_CHECK_RESPONSES)
 * also get each operation's list of response schemas to check against. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

/* Marks the structs the encoders reach, so only those get writers (an
 * unused static function is an error under -Werror). */
static void mark_used(const struct sc_schema *slot, bool null_flag, bool hot)
{
	struct sc_schema *r = (struct sc_schema *)slot_struct(slot, null_flag);
	if (!r || (r->encoder_used && (r->encoder_hot || !hot)))
		return;
	r->encoder_used = true;
	r->encoder_hot |= hot;
	if (r->items)
		mark_used(r->items, false, hot);
	for (size_t i = 0; i < r->nprops; i++)
		mark_used(r->props[i].schema, true, hot);
}

/* A writer only events reach goes to the cold block with the stream
 * operations' code (IG_STREAM_CODE, api_hooks.h). */
static const char *writer_attr(const struct sc_schema *s)
{
	return s->encoder_hot ? "IG_HOT" : "IG_STREAM_CODE";
}

/* The statement that writes the value expression `v` held in a slot. */
static void emit_value(struct sc_out *c, const struct sc_schema *slot, bool null_flag, const char *v)
{
	if (slot_is_value(slot, null_flag)) {
		out_line(c, "ig_json_write_value(w, %s);", v);
		return;
	}
	const struct sc_schema *r = sc_resolve(slot);
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
	default:
		break;
	}
}

static void emit_array_writer(struct sc_out *c, const struct sc_schema *s)
{
	out_line(c, "%s static void write_%s(ig_wbuf *w, const struct %s *a)", writer_attr(s), s->cname, s->cname);
	out_open(c, "{");
	out_line(c, "ig_wbuf_lit(w, \"[\");");
	out_open(c, "for (size_t i = 0; i < a->len; i++) {");
	out_line(c, "if (i)");
	out_line(c, "\tig_wbuf_lit(w, \",\");");
	if (s->items)
		emit_value(c, s->items, false, "a->items[i]");
	else
		out_line(c, "ig_json_write_value(w, a->items[i]);");
	out_close(c, "}");
	out_line(c, "ig_wbuf_lit(w, \"]\");");
	out_close(c, "}");
	out_blank(c);
}

/* What is known at build time about the members written so far. */
enum written { NONE, SOME, MAYBE };

static void emit_member_value(struct sc_out *c, const struct sc_prop *p, const char *v)
{
	if (prop_null_flag(p)) {
		out_line(c, "if (o->null_%s)", p->cname);
		out_line(c, "\tig_wbuf_lit(w, \"null\");");
		out_open(c, "else");
		emit_value(c, p->schema, true, v);
		c->indent--;
	} else {
		emit_value(c, p->schema, true, v);
	}
}

static void emit_object_writer(struct sc_out *c, const struct sc_schema *s)
{
	bool extra = s->additional == SC_AP_SCHEMA;
	out_line(c, "%s static void write_%s(ig_wbuf *w, const struct %s *o)", writer_attr(s), s->cname, s->cname);
	out_open(c, "{");
	if (!s->nprops && !extra) {
		out_line(c, "(void)o;");
		out_line(c, "ig_wbuf_lit(w, \"{}\");");
		out_close(c, "}");
		out_blank(c);
		return;
	}
	/* A flag is needed only if an optional member may be first and some
	   member (or the additional ones) comes after it. */
	bool need_flag = false;
	bool brace_merged = s->nprops && s->props[0].required;
	enum written state = NONE;
	for (size_t i = 0; i <= s->nprops; i++) {
		bool member = i < s->nprops || extra;
		if (!member)
			break;
		if (state == MAYBE) {
			need_flag = true;
			break;
		}
		if (i < s->nprops && s->props[i].required)
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
		bool last = i + 1 == s->nprops && !extra;
		bool optional = prop_has_flag(p);
		if (optional)
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
		emit_member_value(c, p, v);
		if (optional) {
			if (need_flag && state != SOME && !last)
				out_line(c, "more = true;");
			out_close(c, "}");
		}
		if (!optional)
			state = SOME;
		else if (state == NONE)
			state = MAYBE;
		free(v);
	}
	if (extra) {
		out_open(c, "if (o->additional && o->additional->type == IG_JSON_OBJECT) {");
		out_open(c, "for (size_t i = 0; i < o->additional->object.len; i++) {");
		out_line(c, "const ig_json_member *mb = &o->additional->object.members[i];");
		if (state == SOME)
			out_line(c, "ig_wbuf_lit(w, \",\");");
		else
			out_line(c, "if (%si)", state == MAYBE ? "more || " : "");
		if (state != SOME)
			out_line(c, "\tig_wbuf_lit(w, \",\");");
		out_line(c, "ig_json_string(w, mb->key.ptr, mb->key.len);");
		out_line(c, "ig_wbuf_lit(w, \":\");");
		out_line(c, "ig_json_write_value(w, mb->value);");
		out_close(c, "}");
		out_close(c, "}");
	}
	out_line(c, "ig_wbuf_lit(w, \"}\");");
	out_close(c, "}");
	out_blank(c);
}

/* Writers in a stable order: components, then each operation's inline
 * structs; prototypes first, as writers may call each other in any order. */
static void collect(const struct sc_schema *slot, bool null_flag, struct sc_schema ***list, size_t *n)
{
	struct sc_schema *s = (struct sc_schema *)slot_struct(slot, null_flag);
	if (!s || !s->encoder_used || s->writer_listed)
		return;
	s->writer_listed = true;
	SC_APPEND(*list, *n, s);
	if (s->items)
		collect(s->items, false, list, n);
	for (size_t i = 0; i < s->nprops; i++)
		collect(s->props[i].schema, true, list, n);
}

/* The statements that write response r's body (held in v) for status. */
static void emit_response_body(struct sc_out *c, const struct sc_response *r)
{
	char *v = sc_printf("o->r%s", r->key);
	if (r->problem) {
		out_line(c, "ig_encode_problem(ctx, status);");
	} else if (r->text_type) {
		char *ct = c_str(r->text_type);
		out_line(c, "ig_wbuf_put(w, %s.ptr, %s.len);", v, v);
		out_line(c, "ig_set_content_type(ctx, %s);", ct);
		free(ct);
	} else if (r->schema) {
		emit_value(c, r->schema, false, v);
		if (r->problem_type)
			out_line(c, "ig_set_content_type(ctx, \"application/problem+json\");");
	}
	free(v);
}

static bool has_body(const struct sc_response *r)
{
	return r->schema || r->text_type || r->problem;
}

/* The body of a case whose label out_open has written, and its end. */
static void emit_case_end(struct sc_out *c, const struct sc_response *r)
{
	if (r && has_body(r))
		emit_response_body(c, r);
	else
		out_line(c, "/* no body */");
	out_line(c, "break;");
	c->indent--;
}

/* An exact status wins over its range, a range over default: exact
 * statuses are the switch's cases, ranges and default its default. 204
 * and 304 never have a body, whatever range or default would give them. */
static void emit_op_encoder(struct sc_out *c, const struct sc_op *op)
{
	bool fallback = false, uses_o = false, uses_w = false;
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		fallback |= r->key_kind != SC_RESP_STATUS && has_body(r);
		uses_o |= (r->schema && !r->problem) || r->text_type;
		uses_w |= r->text_type || (r->schema && !r->problem);
	}
	out_line(c, "/* %s %s */", op->method, op->path->tmpl);
	out_line(c, "%s static void encode_%s(ig_ctx *ctx, int status, const void *out)",
		 sc_op_is_stream(op) ? "IG_STREAM_CODE" : "IG_HOT", op->id);
	out_open(c, "{");
	if (uses_o)
		out_line(c, "const struct %s_out *o = out;", op->id);
	else
		out_line(c, "(void)out;");
	if (uses_w)
		out_line(c, "ig_wbuf *w = ig_body(ctx);");
	out_line(c, "switch (status) {");
	bool listed204 = false, listed304 = false;
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		if (r->key_kind != SC_RESP_STATUS || (!has_body(r) && !fallback))
			continue;
		listed204 |= r->status == 204;
		listed304 |= r->status == 304;
		out_open(c, "case %d:", r->status);
		emit_case_end(c, r);
	}
	if (fallback && (!listed204 || !listed304)) {
		if (!listed204)
			out_line(c, "case 204:");
		if (!listed304)
			out_line(c, "case 304:");
		c->indent++;
		out_line(c, "break; /* never a body */");
		c->indent--;
	}
	out_open(c, "default:");
	if (!fallback) {
		out_line(c, "break; /* no schema for this status: an empty body */");
		c->indent--;
		out_line(c, "}");
		out_close(c, "}");
		out_blank(c);
		return;
	}
	out_line(c, "switch (status / 100) {");
	const struct sc_response *def = NULL;
	bool range3 = false;
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		if (r->key_kind == SC_RESP_DEFAULT)
			def = r;
		if (r->key_kind != SC_RESP_RANGE)
			continue;
		range3 |= r->status == 3;
		out_open(c, "case %d: /* %s */", r->status, r->key);
		emit_case_end(c, r);
	}
	/* default's body is not a redirect's (ig_redirect drops the encoder;
	   the debug builds' check calls it itself): only a 3xx key gives one. */
	if (!range3 && def && has_body(def)) {
		out_open(c, "case 3: /* a redirect: default gives it no body */");
		emit_case_end(c, NULL);
	}
	out_open(c, "default:");
	emit_case_end(c, def);
	out_line(c, "}");
	out_line(c, "break;");
	c->indent--;
	out_line(c, "}");
	out_close(c, "}");
	out_blank(c);
}

/* ---- debug builds: responses checked against their schemas ---- */


void mark_response_validators(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++)
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			if (m->ops[i]->responses[r].schema)
				mark_validator((struct sc_schema *)sc_resolve(m->ops[i]->responses[r].schema),
					       VALIDATE_RESPONSE);
}

/* Whether a response is checked in debug builds: it has a schema that
 * can fail (x-ingot-validate: false turns the checks of responses off
 * too). */
static bool response_checked(const struct sc_op *op, const struct sc_response *r)
{
	return op->validate && r->schema && !always_valid(r->schema);
}

/* When a range or default is checked, every key is listed (NULL: not
 * checked), so that an exact status without a schema is not checked
 * against its range's. */
static bool list_every_key(const struct sc_op *op)
{
	for (size_t i = 0; i < op->nresponses; i++)
		if (op->responses[i].key_kind != SC_RESP_STATUS && response_checked(op, &op->responses[i]))
			return true;
	return false;
}

/* The length of op's list of response schemas (emit_op_checks); 0: none. */
size_t op_checked_responses(const struct sc_op *op)
{
	size_t n = 0;
	for (size_t i = 0; i < op->nresponses; i++)
		n += response_checked(op, &op->responses[i]);
	return n && list_every_key(op) ? op->nresponses : n;
}

/* The list: a status, a range (its digit, 2 for 2XX) or 0 for default,
 * as operation.h's struct ig_response_schema says. */
static void emit_op_checks(struct sc_out *c, const struct sc_op *op)
{
	if (!op_checked_responses(op))
		return;
	bool all = list_every_key(op);
	out_open(c, "static const struct ig_response_schema ig_responses_%s[] = {", op->id);
	for (size_t i = 0; i < op->nresponses; i++) {
		const struct sc_response *r = &op->responses[i];
		if (response_checked(op, r))
			out_line(c, "{ %d, validate_%s }, /* %s */", r->status, sc_resolve(r->schema)->name, r->key);
		else if (all)
			out_line(c, "{ %d, NULL }, /* %s: not checked */", r->status, r->key);
	}
	out_close(c, "};");
}

void emit_encoders(struct sc_model *m, struct sc_out *c)
{
	for (size_t i = 0; i < m->nops; i++)
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			if (m->ops[i]->responses[r].schema && !m->ops[i]->responses[r].problem)
				mark_used(m->ops[i]->responses[r].schema, false, true);
	for (size_t i = 0; i < m->ntopics; i++) /* its publish call encodes the message */
		mark_used(m->topics[i]->message, false, true);
	for (size_t i = 0; i < m->nops; i++) /* its typed send encodes the event */
		if (sc_op_event(m->ops[i]))
			mark_used(sc_op_event(m->ops[i]), false, false);
	for (size_t i = 0; i < m->nops; i++) /* its typed send encodes the message */
		if (m->ops[i]->ws_out)
			mark_used(m->ops[i]->ws_out, false, false);

	struct sc_schema **list = NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->ncomponents; i++)
		collect(m->components[i], false, &list, &n);
	for (size_t i = 0; i < m->nops; i++)
		for (size_t r = 0; r < m->ops[i]->nresponses; r++)
			if (m->ops[i]->responses[r].schema && !m->ops[i]->responses[r].problem)
				collect(m->ops[i]->responses[r].schema, false, &list, &n);
	for (size_t i = 0; i < m->ntopics; i++)
		collect(m->topics[i]->message, false, &list, &n);
	for (size_t i = 0; i < m->nops; i++)
		if (sc_op_event(m->ops[i]))
			collect(sc_op_event(m->ops[i]), false, &list, &n);
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i]->ws_out)
			collect(m->ops[i]->ws_out, false, &list, &n);

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
	bool any = false;
	for (size_t i = 0; i < m->nops; i++) {
		if (op_has_encoder(m->ops[i])) {
			emit_op_encoder(c, m->ops[i]);
			any = true;
		}
	}
	size_t checked = 0;
	for (size_t i = 0; i < m->nops; i++)
		checked += op_has_encoder(m->ops[i]) && op_checked_responses(m->ops[i]);
	if (!any || !checked)
		return;
	out_line(c, "/* Debug builds (IG_CHECK_RESPONSES): the schemas responses are checked");
	out_line(c, " * against (net/api/check.c); the shipped binary has neither these nor");
	out_line(c, " * the validators only they name. */");
	out_line(c, "#ifdef IG_CHECK_RESPONSES");
	for (size_t i = 0; i < m->nops; i++)
		if (op_has_encoder(m->ops[i]))
			emit_op_checks(c, m->ops[i]);
	out_line(c, "#endif");
	out_blank(c);
}
