/* Text output for the emitters: an indenting buffer and the escaping that
 * keeps generated literals and comments valid C whatever the document holds
 * (quotes, backslashes, trigraph-forming '?', non-ASCII bytes, comment ends). */
#include "emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void out_raw(struct sc_out *o, const char *s, size_t n)
{
	if (o->cap - o->len < n + 1) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap - o->len < n + 1)
			cap *= 2;
		char *b = realloc(o->buf, cap);
		if (!b) {
			fprintf(stderr, "schemac: out of memory\n");
			exit(2);
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

static void out_v(struct sc_out *o, const char *fmt, va_list ap)
{
	char *s = sc_vprintf(fmt, ap);
	out_raw(o, s, strlen(s));
	free(s);
}

void out_f(struct sc_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	out_v(o, fmt, ap);
	va_end(ap);
}

static void line_v(struct sc_out *o, const char *fmt, va_list ap)
{
	for (int i = 0; i < o->indent; i++)
		out_raw(o, "\t", 1);
	out_v(o, fmt, ap);
	out_raw(o, "\n", 1);
}

void out_blank(struct sc_out *o)
{
	out_raw(o, "\n", 1);
}

void out_line(struct sc_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line_v(o, fmt, ap);
	va_end(ap);
}

void out_lines(struct sc_out *o, const char *const *lines)
{
	for (; *lines; lines++) {
		if (**lines)
			out_line(o, "%s", *lines);
		else
			out_blank(o);
	}
}

void out_open(struct sc_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line_v(o, fmt, ap);
	va_end(ap);
	o->indent++;
}

void out_close(struct sc_out *o, const char *fmt, ...)
{
	o->indent--;
	va_list ap;
	va_start(ap, fmt);
	line_v(o, fmt, ap);
	va_end(ap);
}

char *c_string(const char *s, size_t n)
{
	/* Octal escapes end after three digits, so what follows can't extend
	   them (hex escapes would swallow a following hex digit). */
	char *d = sc_xmalloc(4 * n + 3), *p = d;
	*p++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\' || c == '?') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else if (c == '\t') {
			*p++ = '\\';
			*p++ = 't';
		} else if (c < ' ' || c >= 127) {
			p += sprintf(p, "\\%03o", c);
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	*p = 0;
	return d;
}

char *c_comment(const char *s)
{
	size_t n = strlen(s);
	char *d = sc_xmalloc(n + 1), *p = d;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\n' || c == '\r' || c == '\t')
			c = ' ';
		/* No comment end or nested start, no trigraphs, no line splice. */
		if ((c == '*' && s[i + 1] == '/') || (c == '/' && s[i + 1] == '*') || c == '?' || c == '\\')
			c = c == '?' ? '.' : '_';
		*p++ = c;
	}
	*p = 0;
	/* Trim trailing spaces left by newlines. */
	while (p > d && p[-1] == ' ')
		*--p = 0;
	return d;
}

char *c_type(const struct sc_schema *s)
{
	const struct sc_schema *r = sc_resolve(s);
	switch (r->kind) {
	case SC_STRING: return sc_strdup("ig_str");
	case SC_INTEGER: return sc_strdup("int64_t");
	case SC_NUMBER: return sc_strdup("double");
	case SC_BOOLEAN: return sc_strdup("bool");
	case SC_OBJECT:
	case SC_ARRAY: return sc_printf("struct %s", r->cname);
	case SC_VALUE: return sc_strdup("const ig_json_value *");
	case SC_REF: break;
	}
	return sc_strdup("void");
}

bool slot_is_value(const struct sc_schema *s, bool null_flag)
{
	const struct sc_schema *r = sc_resolve(s);
	return !r || r->kind == SC_VALUE || (r->nullable && !null_flag);
}

char *slot_type(const struct sc_schema *s, bool null_flag)
{
	return slot_is_value(s, null_flag) ? sc_strdup("const ig_json_value *") : c_type(s);
}

const struct sc_schema *slot_struct(const struct sc_schema *s, bool null_flag)
{
	const struct sc_schema *r = sc_resolve(s);
	if (slot_is_value(s, null_flag) || (r->kind != SC_OBJECT && r->kind != SC_ARRAY))
		return NULL;
	return r;
}

bool prop_has_flag(const struct sc_prop *p)
{
	return !p->required && !sc_default(p->schema);
}

bool prop_null_flag(const struct sc_prop *p)
{
	const struct sc_schema *r = sc_resolve(p->schema);
	return r && r->kind != SC_VALUE && r->nullable;
}

bool param_has_flag(const struct sc_param *p)
{
	return !p->required && !sc_default(p->schema);
}

/* The key as JSON (quoted, escaped like ig_json_string), then as C. */
char *json_key_literal(const char *prefix, const char *key)
{
	size_t n = strlen(key);
	char *j = sc_xmalloc(strlen(prefix) + 6 * n + 4), *p = j;
	p += sprintf(p, "%s\"", prefix);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)key[i];
		if (c == '"' || c == '\\')
			p += sprintf(p, "\\%c", c);
		else if (c < ' ')
			p += sprintf(p, "\\u%04x", c);
		else
			*p++ = (char)c;
	}
	p += sprintf(p, "\":");
	char *lit = c_string(j, (size_t)(p - j));
	free(j);
	return lit;
}

void emit_banner(struct sc_model *m, struct sc_out *o, const char *role)
{
	char *file = c_comment(m->file), *title = c_comment(m->title), *version = c_comment(m->version);
	out_line(o, "/* Generated by schemac from %s", file);
	out_line(o, " * (\"%s\" %s). Do not edit: change the document and rebuild.", title, version);
	out_line(o, " * %s */", role);
	free(file);
	free(title);
	free(version);
}

bool op_has_encoder(const struct sc_op *op)
{
	for (size_t i = 0; i < op->nresponses; i++)
		if (op->responses[i].schema)
			return true;
	return false;
}

bool model_has_params(const struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i]->nparams)
			return true;
	return false;
}
