/* Emits the request decoders: per operation, decode_<op> turns the raw
 * path segments into the typed in struct and checks every constraint,
 * collecting one error per violation (ig_error_add) so the client hears
 * about all of them at once. The parsing helpers are emitted once, and only
 * when some parameter needs them. Query, header and body decoding will join
 * here, on the same pattern. */
#include "emit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void emit_int_helper(struct sc_out *c)
{
	static const char *const text[] = {
		"enum { INT_OK, INT_SYNTAX, INT_ABOVE, INT_BELOW };",
		"",
		"/* Strict decimal: an optional '-', then digits without leading zeros; no",
		" * '+', no spaces. A value beyond int64 is reported as such, never wrapped. */",
		"static int parse_int64(ig_str s, int64_t *out)",
		"{",
		"\tbool neg = s.len && s.ptr[0] == '-';",
		"\tsize_t i = neg;",
		"\tif (i == s.len || (s.ptr[i] == '0' && s.len - i > 1))",
		"\t\treturn INT_SYNTAX;",
		"\tuint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;",
		"\tuint64_t v = 0;",
		"\tbool over = false;",
		"\tfor (; i < s.len; i++) {",
		"\t\tunsigned d = (unsigned)(unsigned char)s.ptr[i] - '0';",
		"\t\tif (d > 9)",
		"\t\t\treturn INT_SYNTAX;",
		"\t\tif (over || v > (limit - d) / 10)",
		"\t\t\tover = true; /* keep scanning: \"9...9x\" is still not a number */",
		"\t\telse",
		"\t\t\tv = v * 10 + d;",
		"\t}",
		"\tif (over)",
		"\t\treturn neg ? INT_BELOW : INT_ABOVE;",
		"\t*out = neg && v ? -(int64_t)(v - 1) - 1 : (int64_t)v;",
		"\treturn INT_OK;",
		"}",
		"",
		NULL,
	};
	out_lines(c, text);
}

static void emit_string_helpers(struct sc_out *c)
{
	static const char *const text[] = {
		"enum { STR_OK, STR_BAD_ESCAPE, STR_BAD_UTF8, STR_NO_MEMORY };",
		"",
		"static int hex_value(char c)",
		"{",
		"\tif (c >= '0' && c <= '9')",
		"\t\treturn c - '0';",
		"\tif (c >= 'a' && c <= 'f')",
		"\t\treturn c - 'a' + 10;",
		"\tif (c >= 'A' && c <= 'F')",
		"\t\treturn c - 'A' + 10;",
		"\treturn -1;",
		"}",
		"",
		"/* Code points in s[0..n), or SIZE_MAX when it is not UTF-8 (overlong",
		" * forms, surrogates and values past U+10FFFF are not). */",
		"static size_t utf8_length(const char *s, size_t n)",
		"{",
		"\tconst unsigned char *p = (const unsigned char *)s;",
		"\tsize_t count = 0;",
		"\tfor (size_t i = 0; i < n; count++) {",
		"\t\tunsigned c = p[i];",
		"\t\tsize_t more;",
		"\t\tuint32_t cp, min;",
		"\t\tif (c < 0x80) {",
		"\t\t\ti++;",
		"\t\t\tcontinue;",
		"\t\t} else if ((c & 0xe0) == 0xc0) {",
		"\t\t\tmore = 1, cp = c & 0x1f, min = 0x80;",
		"\t\t} else if ((c & 0xf0) == 0xe0) {",
		"\t\t\tmore = 2, cp = c & 0x0f, min = 0x800;",
		"\t\t} else if ((c & 0xf8) == 0xf0) {",
		"\t\t\tmore = 3, cp = c & 0x07, min = 0x10000;",
		"\t\t} else {",
		"\t\t\treturn SIZE_MAX;",
		"\t\t}",
		"\t\tif (n - i - 1 < more)",
		"\t\t\treturn SIZE_MAX;",
		"\t\tfor (size_t k = 1; k <= more; k++) {",
		"\t\t\tif ((p[i + k] & 0xc0) != 0x80)",
		"\t\t\t\treturn SIZE_MAX;",
		"\t\t\tcp = cp << 6 | (p[i + k] & 0x3f);",
		"\t\t}",
		"\t\tif (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))",
		"\t\t\treturn SIZE_MAX;",
		"\t\ti += more + 1;",
		"\t}",
		"\treturn count;",
		"}",
		"",
		"/* Percent-decodes a path segment into the arena, so the value outlives",
		" * the connection's read buffer (a pending handler keeps it), and checks",
		" * that it is UTF-8. *chars, when asked for, gets its length in code points. */",
		"static int decode_string(ig_ctx *ctx, ig_str raw, ig_str *out, size_t *chars)",
		"{",
		"\tchar *d = ig_alloc(ctx, raw.len ? raw.len : 1);",
		"\tif (!d)",
		"\t\treturn STR_NO_MEMORY;",
		"\tsize_t n = 0;",
		"\tfor (size_t i = 0; i < raw.len; i++) {",
		"\t\tchar c = raw.ptr[i];",
		"\t\tif (c == '%') {",
		"\t\t\tint hi = i + 2 < raw.len ? hex_value(raw.ptr[i + 1]) : -1;",
		"\t\t\tint lo = hi >= 0 ? hex_value(raw.ptr[i + 2]) : -1;",
		"\t\t\tif (lo < 0)",
		"\t\t\t\treturn STR_BAD_ESCAPE;",
		"\t\t\tc = (char)(hi << 4 | lo);",
		"\t\t\ti += 2;",
		"\t\t}",
		"\t\td[n++] = c;",
		"\t}",
		"\tsize_t count = utf8_length(d, n);",
		"\tif (count == SIZE_MAX)",
		"\t\treturn STR_BAD_UTF8;",
		"\t*out = (ig_str){ d, n };",
		"\tif (chars)",
		"\t\t*chars = count;",
		"\treturn STR_OK;",
		"}",
		"",
		NULL,
	};
	out_lines(c, text);
}

static void emit_error(struct sc_out *c, const struct sc_param *p, const char *keyword, const char *msg)
{
	char *name = c_str(p->name), *kw = c_str(keyword), *text = c_str(msg);
	out_line(c, "ig_error_add(ctx, \"path\", %s, %s, %s);", name, kw, text);
	free(name);
	free(kw);
	free(text);
}

/* "must be one of: 1, 2" or "must be one of: \"a\", \"b\"". */
static char *enum_message(const struct sc_schema *s)
{
	char *msg = sc_strdup("must be one of: ");
	for (const cJSON *e = s->enum_values->child; e; e = e->next) {
		char *item = cJSON_IsString(e) ? sc_printf("\"%s\"", e->valuestring)
					       : sc_printf("%lld", (long long)e->valuedouble);
		char *next = sc_printf("%s%s%s", msg, item, e->next ? ", " : "");
		free(msg);
		free(item);
		msg = next;
	}
	return msg;
}

/* The condition "value is one of the enum's" in C. */
static char *enum_condition(const struct sc_schema *s, const char *v)
{
	char *cond = sc_strdup("");
	for (const cJSON *e = s->enum_values->child; e; e = e->next) {
		char *term;
		if (cJSON_IsString(e)) {
			char *lit = c_str(e->valuestring);
			term = sc_printf("ig_str_eq(%s, %s, %zu)", v, lit, strlen(e->valuestring));
			free(lit);
		} else {
			term = sc_printf("%s == %lld", v, (long long)e->valuedouble);
		}
		char *next = sc_printf("%s%s%s", cond, *cond ? " || " : "", term);
		free(cond);
		free(term);
		cond = next;
	}
	return cond;
}

static void emit_int_checks(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s, const char *v)
{
	struct {
		const struct sc_bound *b;
		const char *keyword, *op, *fail;
	} checks[] = {
		{ &s->minimum, "minimum", ">=", "<" },
		{ &s->maximum, "maximum", "<=", ">" },
		{ &s->exclusive_minimum, "exclusiveMinimum", ">", "<=" },
		{ &s->exclusive_maximum, "exclusiveMaximum", "<", ">=" },
	};
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		if (!checks[i].b->set)
			continue;
		out_line(c, "if (%s %s %s)", v, checks[i].fail, checks[i].b->text);
		c->indent++;
		char *msg = sc_printf("must be %s %s", checks[i].op, checks[i].b->text);
		emit_error(c, p, checks[i].keyword, msg);
		free(msg);
		c->indent--;
	}
	if (s->enum_values) {
		char *cond = enum_condition(s, v), *msg = enum_message(s);
		out_line(c, "if (!(%s))", cond);
		c->indent++;
		emit_error(c, p, "enum", msg);
		c->indent--;
		free(cond);
		free(msg);
	}
}

/* Out of int64 range: name the bound it breaks when the schema has one. */
static void emit_int_overflow(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s, bool above)
{
	const struct sc_bound *b = above ? &s->maximum : &s->minimum;
	const struct sc_bound *xb = above ? &s->exclusive_maximum : &s->exclusive_minimum;
	char *msg;
	if (b->set) {
		msg = sc_printf("must be %s %s", above ? "<=" : ">=", b->text);
		emit_error(c, p, above ? "maximum" : "minimum", msg);
	} else if (xb->set) {
		msg = sc_printf("must be %s %s", above ? "<" : ">", xb->text);
		emit_error(c, p, above ? "exclusiveMaximum" : "exclusiveMinimum", msg);
	} else if (s->enum_values) {
		msg = enum_message(s);
		emit_error(c, p, "enum", msg);
	} else {
		msg = sc_strdup("must fit in a 64-bit signed integer");
		emit_error(c, p, "format", msg);
	}
	free(msg);
}

static void emit_int_param(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s)
{
	char *v = sc_printf("in->%s", p->cname);
	out_line(c, "switch (parse_int64(seg[%zu], &%s)) {", p->segment, v);
	out_open(c, "case INT_OK:");
	emit_int_checks(c, p, s, v);
	out_line(c, "break;");
	c->indent--;
	out_open(c, "case INT_ABOVE:");
	emit_int_overflow(c, p, s, true);
	out_line(c, "break;");
	c->indent--;
	out_open(c, "case INT_BELOW:");
	emit_int_overflow(c, p, s, false);
	out_line(c, "break;");
	c->indent--;
	out_open(c, "default:");
	emit_error(c, p, "type", "must be an integer");
	out_line(c, "break;");
	c->indent--;
	out_line(c, "}");
	free(v);
}

static bool has_length(const struct sc_schema *s)
{
	return s->has_min_length || s->has_max_length;
}

static void emit_string_param(struct sc_out *c, const struct sc_param *p, const struct sc_schema *s)
{
	char *v = sc_printf("in->%s", p->cname);
	out_line(c, "switch (decode_string(ctx, seg[%zu], &%s, %s)) {", p->segment, v,
		 has_length(s) ? "&chars" : "NULL");
	out_open(c, "case STR_OK:");
	if (s->has_min_length) {
		out_line(c, "if (chars < %llu)", (unsigned long long)s->min_length);
		c->indent++;
		char *msg = sc_printf("must be at least %llu character%s long", (unsigned long long)s->min_length,
				      s->min_length == 1 ? "" : "s");
		emit_error(c, p, "minLength", msg);
		free(msg);
		c->indent--;
	}
	if (s->has_max_length) {
		out_line(c, "if (chars > %llu)", (unsigned long long)s->max_length);
		c->indent++;
		char *msg = sc_printf("must be at most %llu character%s long", (unsigned long long)s->max_length,
				      s->max_length == 1 ? "" : "s");
		emit_error(c, p, "maxLength", msg);
		free(msg);
		c->indent--;
	}
	if (s->enum_values) {
		char *cond = enum_condition(s, v), *msg = enum_message(s);
		out_line(c, "if (!(%s))", cond);
		c->indent++;
		emit_error(c, p, "enum", msg);
		c->indent--;
		free(cond);
		free(msg);
	}
	out_line(c, "break;");
	c->indent--;
	out_open(c, "case STR_NO_MEMORY:");
	out_line(c, "return 500;");
	c->indent--;
	out_open(c, "case STR_BAD_ESCAPE:");
	emit_error(c, p, "type", "must be a string: it has an invalid %-escape");
	out_line(c, "break;");
	c->indent--;
	out_open(c, "default:");
	emit_error(c, p, "type", "must be a string: it is not UTF-8");
	out_line(c, "break;");
	c->indent--;
	out_line(c, "}");
	free(v);
}

static void emit_op_decoder(struct sc_out *c, const struct sc_op *op)
{
	out_line(c, "/* Path parameters of %s %s. Returns 0, or the status to answer. */", op->method,
		 op->path->tmpl);
	out_line(c, "static int decode_%s(ig_ctx *ctx, const ig_str *seg, struct %s_in *in)", op->id, op->id);
	out_open(c, "{");
	bool chars = false;
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_schema *s = sc_resolve(op->params[i].schema);
		chars |= s->kind == SC_STRING && has_length(s);
	}
	if (chars)
		out_line(c, "size_t chars = 0; /* a string's length in code points */");
	for (size_t i = 0; i < op->nparams; i++) {
		const struct sc_param *p = &op->params[i];
		const struct sc_schema *s = sc_resolve(p->schema);
		char *name = c_comment(p->name);
		if (i || chars)
			out_blank(c);
		out_line(c, "/* %s */", name);
		free(name);
		if (s->kind == SC_INTEGER)
			emit_int_param(c, p, s);
		else
			emit_string_param(c, p, s);
	}
	out_line(c, "return ig_has_errors(ctx) ? 400 : 0;");
	out_close(c, "}");
	out_blank(c);
}

void emit_decoders(struct sc_model *m, struct sc_out *c)
{
	bool ints = model_has_param_kind(m, SC_INTEGER), strings = model_has_param_kind(m, SC_STRING);
	if (!ints && !strings)
		return;
	out_line(c, "/* ---- parameter decoders ---- */");
	out_blank(c);
	if (ints)
		emit_int_helper(c);
	if (strings)
		emit_string_helpers(c);
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i]->nparams)
			emit_op_decoder(c, m->ops[i]);
}
