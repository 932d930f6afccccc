/* Emits the request body decoders: decode_<name> reads one typed schema's
 * value straight from the bytes with the pull reader (include/ingot/json_read.h)
 * into its C struct or scalar, in the request arena, and checks its
 * constraints as it goes; duplicate keys are a JSON error (seen bitmap,
 * and a key set for other members). Free-form parts are read with
 * ig_jr_value and checked by their validator. A type error skips that
 * value and decoding goes on, so every violation is reported. Also the
 * typed scalar checks that parameters share. */
#include "emit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---- typed scalar checks (bodies and parameters) ---- */

static void report(struct sc_out *c, const char *report_fmt, const char *cond, const char *kw, const char *msg)
{
	char *k = c_str(kw), *m = c_str(msg);
	if (cond) {
		out_line(c, "if (%s)", cond);
		c->indent++;
	}
	char *stmt = sc_printf(report_fmt, k, m);
	out_line(c, "%s", stmt);
	if (cond)
		c->indent--;
	free(stmt);
	free(k);
	free(m);
}

static void report_keyword(struct sc_out *c, const char *report_fmt, const char *cond, const struct sc_schema *s,
			   const char *kw)
{
	char *msg = msg_keyword(s, kw);
	report(c, report_fmt, cond, kw, msg);
	free(msg);
}

/* Reports kw when `left` (a variable and a comparison, "chars <") holds
 * against bound. */
static void report_count(struct sc_out *c, const char *report_fmt, const char *left,
			 unsigned long long bound, const struct sc_schema *s, const char *kw)
{
	char *cond = sc_printf("%s %llu", left, bound);
	report_keyword(c, report_fmt, cond, s, kw);
	free(cond);
}

static bool integral_json(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= -0x1p63 &&
	       v->valuedouble < 0x1p63;
}

/* "var equals value" for a typed scalar, or NULL when it never can. */
static char *equals(enum sc_kind kind, const char *var, const cJSON *v)
{
	switch (kind) {
	case SC_STRING:
		if (cJSON_IsString(v)) {
			char *lit = c_str(v->valuestring), *t = sc_printf("ig_str_eq(%s, %s, %zu)", var, lit,
									 strlen(v->valuestring));
			free(lit);
			return t;
		}
		return NULL;
	case SC_INTEGER:
		if (!integral_json(v))
			return NULL;
		if ((long long)v->valuedouble == INT64_MIN)
			return sc_printf("%s == INT64_MIN", var);
		return sc_printf("%s == %lld", var, (long long)v->valuedouble);
	case SC_NUMBER:
		return cJSON_IsNumber(v) ? sc_printf("%s == %.17g", var, v->valuedouble) : NULL;
	case SC_BOOLEAN:
		return cJSON_IsBool(v) ? sc_printf("%s == %s", var, cJSON_IsTrue(v) ? "true" : "false") : NULL;
	default:
		return NULL;
	}
}

static void emit_enum_const_checks(struct sc_out *c, const struct sc_schema *s, const char *var, const char *report_fmt)
{
	if (s->enum_values) {
		char *cond = sc_strdup("");
		for (const cJSON *e = s->enum_values->child; e; e = e->next) {
			char *t = equals(s->kind, var, e);
			if (!t)
				continue;
			char *next = sc_printf("%s%s%s", cond, *cond ? " || " : "", t);
			free(cond);
			free(t);
			cond = next;
		}
		char *neg = *cond ? sc_printf("!(%s)", cond) : NULL;
		report_keyword(c, report_fmt, neg, s, "enum");
		free(neg);
		free(cond);
	}
	if (s->const_value) {
		char *t = equals(s->kind, var, s->const_value);
		char *neg = t ? sc_printf("!(%s)", t) : NULL;
		report_keyword(c, report_fmt, neg, s, "const");
		free(t);
		free(neg);
	}
}

/* Integer bounds, made exact for int64: v < 1.5 is v < 2. */
static void emit_int_bounds(struct sc_out *c, const struct sc_schema *s, const char *var, const char *report_fmt)
{
	struct {
		const struct sc_number *b;
		const char *kw;
		bool upper, exclusive;
	} bounds[] = {
		{ &s->minimum, "minimum", false, false },
		{ &s->maximum, "maximum", true, false },
		{ &s->exclusive_minimum, "exclusiveMinimum", false, true },
		{ &s->exclusive_maximum, "exclusiveMaximum", true, true },
	};
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		const struct sc_number *b = bounds[i].b;
		if (!b->set)
			continue;
		/* The smallest allowed value (lower) or the largest (upper), as a double. */
		double lim;
		if (!bounds[i].upper)
			lim = bounds[i].exclusive ? floor(b->d) + 1 : ceil(b->d);
		else
			lim = bounds[i].exclusive ? ceil(b->d) - 1 : floor(b->d);
		char *cond = NULL;
		if (!bounds[i].upper) {
			if (lim <= -0x1p63)
				continue; /* every int64 is allowed */
			if (lim < 0x1p63)
				cond = sc_printf("%s < %lld", var, (long long)lim);
		} else {
			if (lim >= 0x1p63)
				continue;
			if (lim >= -0x1p63)
				cond = sc_printf("%s > %lld", var, (long long)lim);
		}
		/* No int64 is allowed when cond stays NULL. */
		report_keyword(c, report_fmt, cond, s, bounds[i].kw);
		free(cond);
	}
}

static void emit_double_bounds(struct sc_out *c, const struct sc_schema *s, const char *var, const char *report_fmt)
{
	struct {
		const struct sc_number *b;
		const char *kw, *fail;
	} bounds[] = {
		{ &s->minimum, "minimum", "<" },
		{ &s->maximum, "maximum", ">" },
		{ &s->exclusive_minimum, "exclusiveMinimum", "<=" },
		{ &s->exclusive_maximum, "exclusiveMaximum", ">=" },
	};
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		if (!bounds[i].b->set)
			continue;
		char *cond = sc_printf("%s %s %.17g", var, bounds[i].fail, bounds[i].b->d);
		report_keyword(c, report_fmt, cond, s, bounds[i].kw);
		free(cond);
	}
}

/* var.ptr, or out->ptr for *out. */
static char *field(const char *var, const char *f)
{
	return var[0] == '*' ? sc_printf("%s->%s", var + 1, f) : sc_printf("%s.%s", var, f);
}

void emit_scalar_checks(struct sc_out *c, const struct sc_schema *s, const char *var, const char *raw,
			const char *report_fmt)
{
	char *ptr = field(var, "ptr"), *len = field(var, "len");
	switch (s->kind) {
	case SC_STRING:
		if (s->has_min_length || s->has_max_length) {
			out_line(c, "size_t chars = ig_utf8_length(%s, %s);", ptr, len);
			if (s->has_min_length) {
				report_count(c, report_fmt, "chars <", s->min_length, s, "minLength");
			}
			if (s->has_max_length) {
				report_count(c, report_fmt, "chars >", s->max_length, s, "maxLength");
			}
		}
		if (s->pattern_fn) {
			char *cond = sc_printf("!%s(%s, %s)", s->pattern_fn, ptr, len);
			report_keyword(c, report_fmt, cond, s, "pattern");
			free(cond);
		}
		if (s->format) {
			static const char *const fn[] = {
				NULL, "ig_format_date_time", "ig_format_date", "ig_format_email", "ig_format_uuid",
				"ig_format_uri",
			};
			char *cond = sc_printf("!%s(%s, %s)", fn[s->format], ptr, len);
			report_keyword(c, report_fmt, cond, s, "format");
			free(cond);
		}
		break;
	case SC_INTEGER:
		emit_int_bounds(c, s, var, report_fmt);
		if (s->multiple_of.set) {
			char *cond = s->multiple_of.is_int
					     ? sc_printf("!ig_int_multiple(%s, %lld)", var, (long long)s->multiple_of.i)
					     : sc_printf("!ig_decimal_multiple(%s, %lluu, %d)", raw,
							 (unsigned long long)s->multiple_of.digits, s->multiple_of.scale);
			report_keyword(c, report_fmt, cond, s, "multipleOf");
			free(cond);
		}
		break;
	case SC_NUMBER:
		emit_double_bounds(c, s, var, report_fmt);
		if (s->multiple_of.set) {
			char *cond = sc_printf("!ig_decimal_multiple(%s, %lluu, %d)", raw,
					       (unsigned long long)s->multiple_of.digits, s->multiple_of.scale);
			report_keyword(c, report_fmt, cond, s, "multipleOf");
			free(cond);
		}
		break;
	default:
		break;
	}
	emit_enum_const_checks(c, s, var, report_fmt);
	free(ptr);
	free(len);
}

bool has_scalar_checks(const struct sc_schema *s)
{
	return has_string_checks(s) || has_number_checks(s) || s->enum_values || s->const_value;
}

static bool null_breaks_enum_const(const struct sc_schema *s)
{
	bool enum_null = false;
	for (const cJSON *e = s->enum_values ? s->enum_values->child : NULL; e; e = e->next)
		enum_null |= cJSON_IsNull(e);
	return (s->enum_values && !enum_null) || (s->const_value && !cJSON_IsNull(s->const_value));
}

/* A nullable value that is null: enum and const must allow it. */
void emit_null_checks(struct sc_out *c, const struct sc_schema *s, const char *report_fmt)
{
	bool enum_null = false;
	for (const cJSON *e = s->enum_values ? s->enum_values->child : NULL; e; e = e->next)
		enum_null |= cJSON_IsNull(e);
	if (s->enum_values && !enum_null)
		report_keyword(c, report_fmt, NULL, s, "enum");
	if (s->const_value && !cJSON_IsNull(s->const_value))
		report_keyword(c, report_fmt, NULL, s, "const");
}

/* ---- which schemas get decoders ---- */

/* hot: a request's path reaches it (a body, a token's claims, a topic);
 * else only a WebSocket's messages do, and it goes to the cold block. */
static void mark_slot(struct sc_schema *slot, bool null_flag, bool hot)
{
	if (!slot)
		return;
	struct sc_schema *r = (struct sc_schema *)sc_resolve(slot);
	if (slot_is_value(slot, null_flag)) {
		mark_validator(r, VALIDATE_REQUEST);
		return;
	}
	if (r->decoder_used && (r->decoder_hot || !hot))
		return;
	r->decoder_used = true;
	r->decoder_hot |= hot;
	for (size_t i = 0; i < r->nprops; i++)
		mark_slot(r->props[i].schema, true, hot);
	if (r->kind == SC_ARRAY)
		mark_slot(r->items, false, hot);
	if (r->kind == SC_OBJECT && r->additional == SC_AP_SCHEMA)
		mark_validator(r->additional_schema, VALIDATE_REQUEST);
}

void mark_body_decoders(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i]->body)
			mark_slot(m->ops[i]->body, false, true);
	/* x-ingot-principal: a bearer JWT's claims are decoded as a body is
	   (emit_router.c's ig_principal_claims). */
	if (m->principal && m->bearer_used)
		mark_slot(m->principal, false, true);
	/* A topic's message is decoded as a body is: by its publish call, to
	   check it, and for its subscribers. */
	for (size_t i = 0; i < m->ntopics; i++)
		mark_slot(m->topics[i]->message, false, true);
	/* A WebSocket's inbound message, likewise, by its socket. */
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i]->ws_in)
			mark_slot(m->ops[i]->ws_in, false, false);
}

/* The validator a free-form slot runs, as a function name, or "NULL". */
static char *value_validator(const struct sc_schema *s)
{
	if (always_valid(s))
		return sc_strdup("NULL");
	return sc_printf("validate_%s", sc_resolve(s)->name);
}

/* Statements that decode the value at `at` into the lvalue target. */
void emit_slot_decode(struct sc_out *c, const struct sc_schema *slot, bool null_flag, const char *target,
		      const char *null_target, const char *at)
{
	if (slot_is_value(slot, null_flag)) {
		char *fn = value_validator(slot);
		out_line(c, "%s = ig_read_value(d, %s, %s);", target, at, fn);
		free(fn);
		return;
	}
	const struct sc_schema *r = sc_resolve(slot);
	if (r->nullable)
		out_line(c, "decode_%s(d, %s, &%s, &%s);", r->name, at, target, null_target);
	else
		out_line(c, "decode_%s(d, %s, &%s);", r->name, at, target);
}

static const char *const decoder_report = "ig_fail(&d->v, at, %s, %s);";

static void emit_signature(struct sc_out *c, const struct sc_schema *s, bool proto)
{
	char *t = c_type(s);
	out_line(c, "%s static void decode_%s(struct ig_dctx *d, const struct ig_where *at, %s *out%s)%s",
		 s->decoder_hot ? "IG_HOT" : "IG_STREAM_CODE", s->name, t, s->nullable ? ", bool *null" : "", proto ? ";" : "");
	free(t);
}

static void emit_null_prologue(struct sc_out *c, const struct sc_schema *s)
{
	if (!s->nullable)
		return;
	out_open(c, "if (ig_read_null(d)) {");
	out_line(c, "*null = true;");
	if (null_breaks_enum_const(s)) {
		out_open(c, "if (d->check) {");
		emit_null_checks(c, s, decoder_report);
		out_close(c, "}");
	}
	out_line(c, "return;");
	out_close(c, "}");
}

static void emit_scalar_decoder(struct sc_out *c, const struct sc_schema *s)
{
	char *msg = msg_type(s->types), *m = c_str(msg);
	bool checks = has_scalar_checks(s);
	const char *num = "";
	switch (s->kind) {
	case SC_STRING:
		out_line(c, "%sig_read_string(d, at, out, %s)%s", checks ? "if (!" : "", m, checks ? " || !d->check)" : ";");
		break;
	case SC_INTEGER:
	case SC_NUMBER:
		out_line(c, "ig_json_value num;");
		num = s->kind == SC_INTEGER ? "integer" : "number";
		out_line(c, "%sig_read_%s(d, at, out, &num, %s)%s", checks ? "if (!" : "", num, m,
			 checks ? " || !d->check)" : ";");
		break;
	default:
		out_line(c, "%sig_read_boolean(d, at, out, %s)%s", checks ? "if (!" : "", m, checks ? " || !d->check)" : ";");
		break;
	}
	if (checks) {
		out_line(c, "\treturn;");
		emit_scalar_checks(c, s, "*out", "num.raw", decoder_report);
	}
	free(msg);
	free(m);
}

static void emit_array_decoder(struct sc_out *c, const struct sc_schema *s)
{
	char *msg = msg_type(s->types), *m = c_str(msg);
	out_line(c, "if (!ig_begin_array(d, at, %s))", m);
	out_line(c, "\treturn;");
	char *t = slot_type(s->items, false);
	bool ptr = t[strlen(t) - 1] == '*';
	out_line(c, "%s%s*items = NULL;", t, ptr ? "" : " ");
	out_line(c, "size_t n = 0, cap = 0;");
	if (s->unique_items)
		out_line(c, "size_t before = d->v.failures; /* items that failed are not compared */");
	if (s->has_max_items)
		out_line(c, "size_t over = 0; /* items past maxItems: counted, not kept */");
	out_open(c, "while (ig_jr_array_next(d->r)) {");
	if (s->has_max_items) {
		out_open(c, "if (n == %llu && d->check) {", (unsigned long long)s->max_items);
		out_line(c, "over++;");
		out_line(c, "ig_jr_skip(d->r);");
		out_line(c, "continue;");
		out_close(c, "}");
	}
	out_line(c, "if (!(items = ig_grow_items(d, items, n, &cap, sizeof *items)))");
	out_line(c, "\treturn;");
	out_line(c, "struct ig_where here = { at, NULL, n };");
	if (s->items) {
		emit_slot_decode(c, s->items, false, "items[n]", NULL, "&here");
	} else {
		out_line(c, "items[n] = ig_read_value(d, &here, NULL);");
	}
	out_line(c, "n++;");
	out_close(c, "}");
	out_line(c, "out->items = items;");
	out_line(c, "out->len = n;");
	bool checks = s->has_min_items || s->has_max_items || s->unique_items;
	if (checks) {
		out_line(c, "if (d->r->error || !d->check)");
		out_line(c, "\treturn;");
		if (s->has_min_items) {
			report_count(c, decoder_report, "n <", s->min_items, s, "minItems");
		}
		if (s->has_max_items) {
			char *cond = sc_strdup("over");
			report_keyword(c, decoder_report, cond, s, "maxItems");
			free(cond);
		}
		if (s->unique_items) {
			/* Typed scalar items only (anything else is a free-form array). */
			const struct sc_schema *it = sc_resolve(s->items);
			const char *fn = it->kind == SC_STRING ? "ig_unique_strings(items, n, d->r->arena)"
				       : it->kind == SC_INTEGER ? "ig_unique_ints(items, n, d->r->arena)"
				       : it->kind == SC_NUMBER ? "ig_unique_doubles(items, n, d->r->arena)"
							       : "ig_unique_bools(items, n)";
			char *cond = sc_printf("d->v.failures == before && !%s", fn);
			report_keyword(c, decoder_report, cond, s, "uniqueItems");
			free(cond);
		}
	}
	free(t);
	free(msg);
	free(m);
}

static void emit_default(struct sc_out *c, const struct sc_prop *p, const char *target)
{
	const cJSON *d = sc_default(p->schema);
	const struct sc_schema *r = sc_resolve(p->schema);
	if (cJSON_IsNull(d) && prop_null_flag(p)) {
		out_line(c, "out->null_%s = true;", p->cname);
		return;
	}
	if (slot_is_value(p->schema, true)) {
		/* A free-form default: a constant value, static in this block. */
		char *base = sc_printf("%s_default", r->name);
		char *name = emit_json_constant(c, d, base);
		out_line(c, "%s = &%s;", target, name);
		free(base);
		free(name);
		return;
	}
	char *lit = default_literal(r, d, false);
	out_line(c, "%s = %s;", target, lit);
	free(lit);
}

static void emit_object_decoder(struct sc_out *c, const struct sc_schema *s)
{
	char *msg = msg_type(s->types), *m = c_str(msg);
	out_line(c, "if (!ig_begin_object(d, at, %s))", m);
	out_line(c, "\treturn;");
	bool counted = s->has_min_props || s->has_max_props;
	if (s->nprops)
		out_line(c, "uint64_t seen[%zu] = { 0 };", (s->nprops + 63) / 64);
	out_line(c, "struct ig_keyset others = { NULL, 0, 0 };");
	if (counted)
		out_line(c, "size_t count = 0;");
	if (s->additional == SC_AP_SCHEMA) {
		out_line(c, "ig_json_member *members = NULL;");
		out_line(c, "size_t nmembers = 0, cap = 0;");
	}
	out_line(c, "ig_str key;");
	out_open(c, "while (ig_jr_object_next_key(d->r, &key)) {");
	if (s->nprops || s->additional != SC_AP_ABSENT)
		out_line(c, "struct ig_where here = { at, key.ptr, key.len };");
	if (counted)
		out_line(c, "count++;");
	if (s->nprops) {
		out_line(c, "int k = member_%s(key.ptr, key.len);", s->name);
		out_open(c, "if (k >= 0) {");
		out_open(c, "if (seen[k / 64] >> (k %% 64) & 1) {");
		out_line(c, "ig_jr_fail(d->r, \"duplicate key\");");
		out_line(c, "return;");
		out_close(c, "}");
		out_line(c, "seen[k / 64] |= (uint64_t)1 << (k %% 64);");
		out_close(c, "}");
		out_line(c, "switch (k) {");
		for (size_t i = 0; i < s->nprops; i++) {
			const struct sc_prop *p = &s->props[i];
			out_open(c, "case %zu:", i);
			if (prop_has_flag(p))
				out_line(c, "out->has_%s = true;", p->cname);
			char *target = sc_printf("out->%s", p->cname), *null = sc_printf("out->null_%s", p->cname);
			emit_slot_decode(c, p->schema, true, target, null, "&here");
			free(target);
			free(null);
			out_line(c, "break;");
			c->indent--;
		}
		out_open(c, "default:");
	}
	/* A member that is not a property. */
	out_line(c, "if (!ig_keyset_add(d, &others, key))");
	out_line(c, "\treturn;");
	if (s->additional == SC_AP_FALSE) {
		char *am = msg_keyword(s, "additionalProperties"), *lit = c_str(am);
		out_line(c, "if (d->check)");
		out_line(c, "\tig_fail(&d->v, &here, \"additionalProperties\", %s);", lit);
		out_line(c, "ig_jr_skip(d->r);");
		free(am);
		free(lit);
	} else if (s->additional == SC_AP_SCHEMA) {
		char *fn = value_validator(s->additional_schema);
		out_line(c, "if (!(members = ig_grow_items(d, members, nmembers, &cap, sizeof *members)))");
		out_line(c, "\treturn;");
		out_line(c, "members[nmembers].key = key;");
		out_line(c, "members[nmembers].value = ig_read_value(d, &here, %s);", fn);
		out_line(c, "nmembers++;");
		free(fn);
	} else {
		out_line(c, "ig_jr_skip(d->r); /* other members are allowed, and not kept */");
	}
	if (s->nprops) {
		out_line(c, "break;");
		c->indent--;
		out_line(c, "}");
	}
	out_close(c, "}");
	out_line(c, "if (d->r->error)");
	out_line(c, "\treturn;");
	if (s->additional == SC_AP_SCHEMA) {
		out_open(c, "if (nmembers) {");
		out_line(c, "ig_json_value *o = ig_arena_alloc(d->r->arena, sizeof *o);");
		out_line(c, "if (!o) {");
		out_line(c, "\tig_jr_fail(d->r, \"out of memory\");");
		out_line(c, "\treturn;");
		out_line(c, "}");
		out_line(c, "*o = (ig_json_value){ .type = IG_JSON_OBJECT, .object = { members, nmembers } };");
		out_line(c, "out->additional = o;");
		out_close(c, "}");
	}
	for (size_t i = 0; i < s->nprops; i++) {
		const struct sc_prop *p = &s->props[i];
		if (!sc_default(p->schema) || p->required)
			continue;
		out_open(c, "if (!(seen[%zu] >> %zu & 1)) { /* the default */", i / 64, i % 64);
		char *target = sc_printf("out->%s", p->cname);
		emit_default(c, p, target);
		free(target);
		out_close(c, "}");
	}
	bool req = false;
	for (size_t i = 0; i < s->nprops; i++)
		req |= s->props[i].required;
	if (req || counted) {
		out_line(c, "if (!d->check)");
		out_line(c, "\treturn;");
	}
	for (size_t i = 0; i < s->nprops; i++) {
		const struct sc_prop *p = &s->props[i];
		if (!p->required)
			continue;
		char *lit = c_str(p->name);
		out_line(c, "if (!(seen[%zu] >> %zu & 1))", i / 64, i % 64);
		out_line(c, "\tig_fail(&d->v, &(struct ig_where){ at, %s, %zu }, \"required\", \"is required\");", lit,
			 strlen(p->name));
		free(lit);
	}
	if (s->has_min_props) {
		report_count(c, decoder_report, "count <", s->min_props, s, "minProperties");
	}
	if (s->has_max_props) {
		report_count(c, decoder_report, "count >", s->max_props, s, "maxProperties");
	}
	free(msg);
	free(m);
}

static void emit_decoder(struct sc_out *c, const struct sc_schema *s)
{
	char *where = c_comment(s->ptr);
	out_line(c, "/* %s */", where);
	free(where);
	emit_signature(c, s, false);
	out_open(c, "{");
	emit_null_prologue(c, s);
	switch (s->kind) {
	case SC_OBJECT:
		emit_object_decoder(c, s);
		break;
	case SC_ARRAY:
		emit_array_decoder(c, s);
		break;
	default:
		emit_scalar_decoder(c, s);
		break;
	}
	out_close(c, "}");
	out_blank(c);
}

/* ---- json(b) columns into structs (schemac --queries) ---- */

bool json_struct_slot(const struct sc_schema *slot)
{
	if (slot_is_value(slot, true))
		return false;
	const struct sc_schema *r = sc_resolve(slot);
	if (r->kind == SC_OBJECT)
		return true;
	return r->kind == SC_ARRAY && r->items && !slot_is_value(r->items, false) &&
	       sc_resolve(r->items)->kind == SC_OBJECT;
}

/* Adds s to out[0..n) unless it is there; returns the new count. */
static size_t add_once(const struct sc_schema **out, size_t n, const struct sc_schema *s)
{
	for (size_t k = 0; k < n; k++)
		if (out[k] == s)
			return n;
	out[n] = s;
	return n + 1;
}

/* The schemas of json_struct_slot properties of typed component objects
 * and the topics' messages (pubsub_ext.c's publish and delivery decode
 * them), each once, into out (room for m->nnodes); returns how many. */
static size_t json_schemas(const struct sc_model *m, const struct sc_schema **out)
{
	size_t n = 0;
	for (size_t i = 0; i < m->ntopics; i++)
		n = add_once(out, n, sc_resolve(m->topics[i]->message));
	for (size_t i = 0; i < m->ncomponents; i++) {
		const struct sc_schema *s = sc_resolve(m->components[i]);
		if (!s || s->kind != SC_OBJECT || !s->cname)
			continue;
		for (size_t j = 0; j < s->nprops; j++) {
			if (!json_struct_slot(s->props[j].schema))
				continue;
			n = add_once(out, n, sc_resolve(s->props[j].schema));
		}
	}
	return n;
}

static void emit_json_signature(struct sc_out *o, const struct sc_schema *s, bool proto)
{
	char *t = c_type(s);
	out_line(o, "bool ig_json_decode_%s(ig_str json, ig_arena *arena, %s *out%s)%s", s->name, t,
		 s->nullable ? ", bool *null" : "", proto ? ";" : "");
	free(t);
}

void emit_json_prototypes(struct sc_model *m, struct sc_out *h)
{
	const struct sc_schema **ss = sc_xmalloc(sizeof *ss * (m->nnodes + 1));
	size_t n = json_schemas(m, ss);
	if (n) {
		out_line(h, "/* A JSON text (a json or jsonb column: schemac --queries; a topic's message) into the struct, in");
		out_line(h, " * arena, by the decoder request bodies use: false when it is not JSON or");
		out_line(h, " * does not fit the schema. */");
	}
	for (size_t i = 0; i < n; i++)
		emit_json_signature(h, ss[i], true);
	if (n)
		out_blank(h);
	free(ss);
}

void mark_json_decoders(struct sc_model *m)
{
	const struct sc_schema **ss = sc_xmalloc(sizeof *ss * (m->nnodes + 1));
	size_t n = json_schemas(m, ss);
	for (size_t i = 0; i < n; i++)
		mark_slot((struct sc_schema *)ss[i], true, true);
	free(ss);
}

/* Unused ones cost nothing: --gc-sections drops them and their decoders. */
static void emit_json_decoders(struct sc_model *m, struct sc_out *c)
{
	const struct sc_schema **ss = sc_xmalloc(sizeof *ss * (m->nnodes + 1));
	size_t n = json_schemas(m, ss);
	for (size_t i = 0; i < n; i++) {
		emit_json_signature(c, ss[i], false);
		out_open(c, "{");
		out_line(c, "ig_json_reader r;");
		out_line(c, "ig_jr_init(&r, json.ptr, json.len, arena, 64);");
		out_line(c, "/* quiet: the first violation is enough, and nothing is reported */");
		out_line(c, "struct ig_dctx dc = { &r, { .arena = arena, .quiet = true }, true };");
		out_line(c, "decode_%s(&dc, NULL, out%s);", ss[i]->name, ss[i]->nullable ? ", null" : "");
		out_line(c, "if (!r.error)");
		out_line(c, "	ig_jr_finish(&r);");
		out_line(c, "return !r.error && !dc.v.failures;");
		out_close(c, "}");
		out_blank(c);
	}
	free(ss);
}

void emit_body_decoders(struct sc_model *m, struct sc_out *c)
{
	bool any = false;
	for (size_t i = 0; i < m->nnodes; i++)
		any |= m->nodes[i]->decoder_used;
	if (!any)
		return;
	out_line(c, "/* ---- request body decoders: one per typed schema ---- */");
	out_blank(c);
	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i]->decoder_used)
			emit_signature(c, m->nodes[i], true);
	out_blank(c);
	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i]->decoder_used)
			emit_decoder(c, m->nodes[i]);
	emit_json_decoders(m, c);
}
