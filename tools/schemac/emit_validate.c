/* Emits the validators: validate_<name> walks an ig_json_value (built by
 * ig_jr_value) against one schema, with the full meaning of every keyword
 * schemac supports, reporting one error per violation with its JSON
 * pointer; inside anyOf/oneOf/not/if it runs quietly and stops at the first
 * failure. Also the support code they share with the body decoders (the
 * location chain, error reporting, number and uniqueness helpers), the
 * pattern matchers (regex.h), enum/const values as static ig_json_value
 * constants, and the messages every check uses. */
#include "emit.h"
#include "regex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- support code ---- */

static const char *const support_text[] = {
	"/* Where a value sits: a chain of keys and indexes up to the document's",
	" * root, on the stack; it becomes a JSON pointer only when an error is",
	" * reported. */",
	"struct where {",
	"\tconst struct where *up;",
	"\tconst char *key; /* NULL: an array element, its index in len */",
	"\tsize_t len;",
	"};",
	"",
	"typedef void report_fn(void *arg, const char *pointer, const char *keyword, const char *message);",
	"",
	"/* One validation: where errors go, and whether they are wanted. */",
	"struct vctx {",
	"\treport_fn *report;",
	"\tvoid *arg;",
	"\tig_arena *arena; /* scratch memory (uniqueItems) */",
	"\tbool quiet;      /* inside anyOf/oneOf/not/if: the first failure ends it, unreported */",
	"\tunsigned depth;  /* $ref nesting, against schemas that refer to themselves */",
	"\tsize_t failures;",
	"};",
	"",
	"typedef bool validate_fn(const ig_json_value *v, struct vctx *x, const struct where *at);",
	"",
	"/* The JSON pointer of at (RFC 6901) into buf; cut short if it does not fit. */",
	"static size_t pointer_text(const struct where *at, char *buf, size_t cap)",
	"{",
	"\tif (!at) {",
	"\t\tbuf[0] = 0;",
	"\t\treturn 0;",
	"\t}",
	"\tsize_t n = pointer_text(at->up, buf, cap);",
	"\tchar digits[24];",
	"\tconst char *s = at->key;",
	"\tsize_t len = at->len;",
	"\tif (!s) {",
	"\t\tlen = ig_fmt_u64(digits, at->len);",
	"\t\ts = digits;",
	"\t}",
	"\tif (n + 1 < cap)",
	"\t\tbuf[n++] = '/';",
	"\tfor (size_t i = 0; i < len && n + 2 < cap; i++) {",
	"\t\tif (s[i] == '~' || s[i] == '/') {",
	"\t\t\tbuf[n++] = '~';",
	"\t\t\tbuf[n++] = s[i] == '~' ? '0' : '1';",
	"\t\t} else {",
	"\t\t\tbuf[n++] = s[i];",
	"\t\t}",
	"\t}",
	"\tbuf[n] = 0;",
	"\treturn n;",
	"}",
	"",
	"/* Records a violation. Returns true when validation goes on (reporting),",
	" * false when it stops here (quiet). */",
	"static bool fail(struct vctx *x, const struct where *at, const char *keyword, const char *message)",
	"{",
	"\tx->failures++;",
	"\tif (x->quiet)",
	"\t\treturn false;",
	"\tchar pointer[512];",
	"\tpointer_text(at, pointer, sizeof pointer);",
	"\tx->report(x->arg, pointer, keyword, message);",
	"\treturn true;",
	"}",
	"",
	"static struct vctx quietly(const struct vctx *x)",
	"{",
	"\tstruct vctx q = *x;",
	"\tq.quiet = true;",
	"\tq.failures = 0;",
	"\treturn q;",
	"}",
	"",
	"/* A $ref: the only way a schema can reach itself without going deeper",
	" * into the value, so the only place that counts depth. */",
	"static bool via_ref(validate_fn *fn, const ig_json_value *v, struct vctx *x, const struct where *at)",
	"{",
	"\tif (x->depth >= 128) {",
	"\t\tfail(x, at, \"$ref\", \"the schema refers to itself too deeply\");",
	"\t\treturn false;",
	"\t}",
	"\tx->depth++;",
	"\tbool ok = fn(v, x, at);",
	"\tx->depth--;",
	"\treturn ok;",
	"}",
	"",
	"/* JSON Schema's integer: any number with no fraction (1.0 is one). */",
	"static bool is_integer(const ig_json_value *v)",
	"{",
	"\treturn v->type == IG_JSON_INT || (v->type == IG_JSON_NUMBER && v->d == floor(v->d));",
	"}",
	"",
	"/* -1, 0 or 1 as the number v is below, at or above a bound: d, held",
	" * exactly in i when is_int. Integers compare exactly. */",
	"static int compare_number(const ig_json_value *v, double d, bool is_int, int64_t i)",
	"{",
	"\tif (v->type == IG_JSON_INT) {",
	"\t\tif (is_int)",
	"\t\t\treturn (v->i > i) - (v->i < i);",
	"\t\tif (d >= 0x1p63)",
	"\t\t\treturn -1;",
	"\t\tif (d < -0x1p63)",
	"\t\t\treturn 1;",
	"\t\treturn v->i <= (int64_t)floor(d) ? -1 : 1; /* d has a fraction */",
	"\t}",
	"\tif (is_int && v->d >= -0x1p63 && v->d < 0x1p63) {",
	"\t\tdouble f = floor(v->d);",
	"\t\tint64_t fi = (int64_t)f;",
	"\t\tif (fi != i)",
	"\t\t\treturn fi < i ? -1 : 1;",
	"\t\treturn v->d > f ? 1 : 0;",
	"\t}",
	"\treturn (v->d > d) - (v->d < d);",
	"}",
	"",
	"/* Whether the number written raw is a multiple of digits * 10^-scale,",
	" * exactly: decimal arithmetic on the literal, so 0.0075 is a multiple of",
	" * 0.0001, and 1e308 is tested against 0.123456789 without overflow. */",
	"static bool decimal_multiple(ig_str raw, uint64_t digits, int scale)",
	"{",
	"\tconst char *p = raw.ptr, *end = raw.ptr + raw.len;",
	"\tif (p < end && *p == '-')",
	"\t\tp++;",
	"\tconst char *first = p;",
	"\tsize_t count = 0, zeros = 0; /* digit characters; trailing zeros among them */",
	"\tlong exp = 0;",
	"\tbool fraction = false, nonzero = false;",
	"\tfor (; p < end && ((*p >= '0' && *p <= '9') || *p == '.'); p++) {",
	"\t\tif (*p == '.') {",
	"\t\t\tfraction = true;",
	"\t\t\tcontinue;",
	"\t\t}",
	"\t\tcount++;",
	"\t\texp -= fraction;",
	"\t\tzeros = *p == '0' ? zeros + 1 : 0;",
	"\t\tnonzero |= *p != '0';",
	"\t}",
	"\tif (p < end && (*p == 'e' || *p == 'E')) {",
	"\t\tbool neg = ++p < end && *p == '-';",
	"\t\tif (p < end && (*p == '-' || *p == '+'))",
	"\t\t\tp++;",
	"\t\tlong e = 0;",
	"\t\tfor (; p < end && *p >= '0' && *p <= '9'; p++)",
	"\t\t\tif (e < 100000000)",
	"\t\t\t\te = e * 10 + (*p - '0');",
	"\t\texp += neg ? -e : e;",
	"\t}",
	"\tif (!nonzero)",
	"\t\treturn true; /* zero is a multiple of everything */",
	"\t/* value / divisor = A * 10^k / digits, A the literal's digits */",
	"\tlong k = exp + scale;",
	"\tsize_t use = count;",
	"\tif (k < 0) {",
	"\t\tif ((long)zeros < -k)",
	"\t\t\treturn false;",
	"\t\tuse = count - (size_t)-k; /* A / 10^-k: drop that many zeros */",
	"\t}",
	"\tuint64_t rem = 0;",
	"\tfor (p = first; use; p++) {",
	"\t\tif (*p == '.')",
	"\t\t\tcontinue;",
	"\t\trem = (rem * 10 + (uint64_t)(*p - '0')) % digits;",
	"\t\tuse--;",
	"\t}",
	"\tfor (long i = 0; i < k && rem; i++)",
	"\t\trem = rem * 10 % digits;",
	"\treturn rem == 0;",
	"}",
	"",
	"static bool int_multiple(int64_t v, int64_t m)",
	"{",
	"\treturn v % m == 0;",
	"}",
	"",
	"/* ---- uniqueItems: hashing that agrees with ig_json_equal ---- */",
	"",
	"static uint64_t bytes_hash(const char *s, size_t n)",
	"{",
	"\tuint64_t h = 14695981039346656037u;",
	"\tfor (size_t i = 0; i < n; i++)",
	"\t\th = (h ^ (unsigned char)s[i]) * 1099511628211u;",
	"\treturn h;",
	"}",
	"",
	"static uint64_t double_hash(double d)",
	"{",
	"\tif (d == 0)",
	"\t\treturn 0; /* 0 and -0 are equal */",
	"\tuint64_t bits;",
	"\tmemcpy(&bits, &d, sizeof bits);",
	"\treturn bits * 0x9e3779b97f4a7c15u;",
	"}",
	"",
	"static uint64_t value_hash(const ig_json_value *v)",
	"{",
	"\tuint64_t h;",
	"\tswitch (v->type) {",
	"\tcase IG_JSON_BOOL:",
	"\t\treturn v->b ? 2 : 3;",
	"\tcase IG_JSON_INT:",
	"\t\treturn double_hash((double)v->i);",
	"\tcase IG_JSON_NUMBER:",
	"\t\treturn double_hash(v->d);",
	"\tcase IG_JSON_STRING:",
	"\t\treturn bytes_hash(v->s.ptr, v->s.len);",
	"\tcase IG_JSON_ARRAY:",
	"\t\th = 5;",
	"\t\tfor (size_t i = 0; i < v->array.len; i++)",
	"\t\t\th = h * 1099511628211u ^ value_hash(v->array.items[i]);",
	"\t\treturn h;",
	"\tcase IG_JSON_OBJECT:",
	"\t\th = 7; /* a sum: member order does not matter */",
	"\t\tfor (size_t i = 0; i < v->object.len; i++)",
	"\t\t\th += bytes_hash(v->object.members[i].key.ptr, v->object.members[i].key.len) * 31 +",
	"\t\t\t     value_hash(v->object.members[i].value);",
	"\t\treturn h;",
	"\tdefault:",
	"\t\treturn 1;",
	"\t}",
	"}",
	"",
	"typedef uint64_t item_hash_fn(const void *items, size_t i);",
	"typedef bool item_equal_fn(const void *items, size_t i, size_t j);",
	"",
	"/* Whether two of the n items are equal: a hash table in the arena, or",
	" * pairwise for a few items (or when memory is short). */",
	"static bool has_duplicate(const void *items, size_t n, item_hash_fn *hash, item_equal_fn *equal, ig_arena *a)",
	"{",
	"\tsize_t cap = 16;",
	"\twhile (cap < 2 * n)",
	"\t\tcap *= 2;",
	"\tsize_t *slots = n > 16 && a ? ig_arena_alloc(a, cap * sizeof *slots) : NULL;",
	"\tif (!slots) {",
	"\t\tfor (size_t i = 1; i < n; i++)",
	"\t\t\tfor (size_t j = 0; j < i; j++)",
	"\t\t\t\tif (equal(items, i, j))",
	"\t\t\t\t\treturn true;",
	"\t\treturn false;",
	"\t}",
	"\tmemset(slots, 0, cap * sizeof *slots);",
	"\tfor (size_t i = 0; i < n; i++) {",
	"\t\tsize_t h = (size_t)hash(items, i) & (cap - 1);",
	"\t\tfor (; slots[h]; h = (h + 1) & (cap - 1))",
	"\t\t\tif (equal(items, slots[h] - 1, i))",
	"\t\t\t\treturn true;",
	"\t\tslots[h] = i + 1;",
	"\t}",
	"\treturn false;",
	"}",
	"",
	"static uint64_t value_hash_at(const void *items, size_t i)",
	"{",
	"\treturn value_hash(((ig_json_value *const *)items)[i]);",
	"}",
	"",
	"static bool value_equal_at(const void *items, size_t i, size_t j)",
	"{",
	"\tig_json_value *const *v = items;",
	"\treturn ig_json_equal(v[i], v[j]);",
	"}",
	"",
	"static bool unique_values(ig_json_value *const *items, size_t n, ig_arena *a)",
	"{",
	"\treturn !has_duplicate(items, n, value_hash_at, value_equal_at, a);",
	"}",
	"",
	"static uint64_t string_hash_at(const void *items, size_t i)",
	"{",
	"\tconst ig_str *s = items;",
	"\treturn bytes_hash(s[i].ptr, s[i].len);",
	"}",
	"",
	"static bool string_equal_at(const void *items, size_t i, size_t j)",
	"{",
	"\tconst ig_str *s = items;",
	"\treturn s[i].len == s[j].len && memcmp(s[i].ptr, s[j].ptr, s[i].len) == 0;",
	"}",
	"",
	"static bool unique_strings(const ig_str *items, size_t n, ig_arena *a)",
	"{",
	"\treturn !has_duplicate(items, n, string_hash_at, string_equal_at, a);",
	"}",
	"",
	"static uint64_t int_hash_at(const void *items, size_t i)",
	"{",
	"\treturn (uint64_t)((const int64_t *)items)[i] * 0x9e3779b97f4a7c15u;",
	"}",
	"",
	"static bool int_equal_at(const void *items, size_t i, size_t j)",
	"{",
	"\tconst int64_t *v = items;",
	"\treturn v[i] == v[j];",
	"}",
	"",
	"static bool unique_ints(const int64_t *items, size_t n, ig_arena *a)",
	"{",
	"\treturn !has_duplicate(items, n, int_hash_at, int_equal_at, a);",
	"}",
	"",
	"static uint64_t double_hash_at(const void *items, size_t i)",
	"{",
	"\treturn double_hash(((const double *)items)[i]);",
	"}",
	"",
	"static bool double_equal_at(const void *items, size_t i, size_t j)",
	"{",
	"\tconst double *v = items;",
	"\treturn v[i] == v[j];",
	"}",
	"",
	"static bool unique_doubles(const double *items, size_t n, ig_arena *a)",
	"{",
	"\treturn !has_duplicate(items, n, double_hash_at, double_equal_at, a);",
	"}",
	"",
	"static bool unique_bools(const bool *items, size_t n)",
	"{",
	"\tbool seen[2] = { false, false };",
	"\tfor (size_t i = 0; i < n; i++) {",
	"\t\tif (seen[items[i]])",
	"\t\t\treturn false;",
	"\t\tseen[items[i]] = true;",
	"\t}",
	"\treturn true;",
	"}",
	"",
	NULL,
};

/* Every helper is static and marked unused: each program uses a part. */
void emit_support(struct sc_model *m, struct sc_out *c)
{
	(void)m;
	out_line(c, "/* ---- validation support ---- */");
	out_blank(c);
	for (const char *const *l = support_text; *l; l++) {
		const char *line = *l;
		if (strncmp(line, "static ", 7) == 0 && strchr(line, '(') && !strchr(line, ';')) {
			/* A definition: the attribute goes on its own line before it. */
			out_line(c, "__attribute__((unused))");
		}
		if (*line)
			out_line(c, "%s", line);
		else
			out_blank(c);
	}
}

/* ---- messages ---- */

static const char *type_article(unsigned bit)
{
	switch (bit) {
	case SC_T_OBJECT: return "an object";
	case SC_T_ARRAY: return "an array";
	case SC_T_STRING: return "a string";
	case SC_T_NUMBER: return "a number";
	case SC_T_INTEGER: return "an integer";
	case SC_T_BOOLEAN: return "a boolean";
	default: return "null";
	}
}

char *msg_type(unsigned types)
{
	static const unsigned order[] = {
		SC_T_OBJECT, SC_T_ARRAY, SC_T_STRING, SC_T_NUMBER, SC_T_INTEGER, SC_T_BOOLEAN, SC_T_NULL,
	};
	if (types & SC_T_NUMBER)
		types &= ~(unsigned)SC_T_INTEGER;
	size_t count = 0, n = 0;
	for (size_t i = 0; i < 7; i++)
		count += (types & order[i]) != 0;
	char *msg = sc_strdup("must be ");
	for (size_t i = 0; i < 7; i++) {
		if (!(types & order[i]))
			continue;
		n++;
		char *next = sc_printf("%s%s%s", msg, n == 1 ? "" : n == count ? " or " : ", ", type_article(order[i]));
		free(msg);
		msg = next;
	}
	return msg;
}

static char *plural(uint64_t n, const char *one, const char *many)
{
	return sc_printf("%llu %s", (unsigned long long)n, n == 1 ? one : many);
}

/* JSON text of a value for a message, cut at about 60 bytes. */
static char *json_text(const cJSON *v)
{
	char *j = cJSON_PrintUnformatted(v);
	char *s = sc_strdup(j ? j : "?");
	cJSON_free(j);
	if (strlen(s) > 60)
		strcpy(s + 57, "...");
	return s;
}

char *msg_enum(const cJSON *values)
{
	char *msg = sc_strdup("must be one of: ");
	for (const cJSON *e = values->child; e; e = e->next) {
		char *item = json_text(e);
		char *next = sc_printf("%s%s%s", msg, item, e->next ? ", " : "");
		free(msg);
		free(item);
		msg = next;
		if (strlen(msg) > 200) {
			next = sc_printf("%s...", msg);
			free(msg);
			msg = next;
			break;
		}
	}
	return msg;
}

char *msg_keyword(const struct sc_schema *s, const char *kw)
{
	if (strcmp(kw, "minLength") == 0) {
		char *n = plural(s->min_length, "character", "characters"), *msg = sc_printf("must be at least %s", n);
		free(n);
		return msg;
	}
	if (strcmp(kw, "maxLength") == 0) {
		char *n = plural(s->max_length, "character", "characters"), *msg = sc_printf("must be at most %s", n);
		free(n);
		return msg;
	}
	if (strcmp(kw, "pattern") == 0)
		return sc_printf("must match the pattern %s", s->pattern);
	if (strcmp(kw, "format") == 0) {
		static const char *const text[] = {
			"", "must be a date-time (RFC 3339)", "must be a date (RFC 3339 full-date)",
			"must be an email address", "must be a UUID", "must be a URI",
		};
		return sc_strdup(text[s->format]);
	}
	if (strcmp(kw, "minimum") == 0)
		return sc_printf("must be >= %s", s->minimum.text);
	if (strcmp(kw, "maximum") == 0)
		return sc_printf("must be <= %s", s->maximum.text);
	if (strcmp(kw, "exclusiveMinimum") == 0)
		return sc_printf("must be > %s", s->exclusive_minimum.text);
	if (strcmp(kw, "exclusiveMaximum") == 0)
		return sc_printf("must be < %s", s->exclusive_maximum.text);
	if (strcmp(kw, "multipleOf") == 0)
		return sc_printf("must be a multiple of %s", s->multiple_of.text);
	if (strcmp(kw, "enum") == 0)
		return msg_enum(s->enum_values);
	if (strcmp(kw, "const") == 0) {
		char *j = json_text(s->const_value), *msg = sc_printf("must be %s", j);
		free(j);
		return msg;
	}
	if (strcmp(kw, "minItems") == 0 || strcmp(kw, "maxItems") == 0) {
		bool min = kw[1] == 'i';
		char *n = plural(min ? s->min_items : s->max_items, "item", "items");
		char *msg = sc_printf("must have at %s %s", min ? "least" : "most", n);
		free(n);
		return msg;
	}
	if (strcmp(kw, "minProperties") == 0 || strcmp(kw, "maxProperties") == 0) {
		bool min = kw[1] == 'i';
		char *n = plural(min ? s->min_props : s->max_props, "property", "properties");
		char *msg = sc_printf("must have at %s %s", min ? "least" : "most", n);
		free(n);
		return msg;
	}
	if (strcmp(kw, "minContains") == 0 || strcmp(kw, "contains") == 0) {
		uint64_t min = s->has_min_contains ? s->min_contains : 1;
		char *n = plural(min, "item", "items");
		char *msg = sc_printf("must contain at least %s matching the schema in contains", n);
		free(n);
		return msg;
	}
	if (strcmp(kw, "maxContains") == 0) {
		char *n = plural(s->max_contains, "item", "items");
		char *msg = sc_printf("must contain at most %s matching the schema in contains", n);
		free(n);
		return msg;
	}
	if (strcmp(kw, "uniqueItems") == 0)
		return sc_strdup("must not contain equal items");
	if (strcmp(kw, "required") == 0)
		return sc_strdup("is required");
	if (strcmp(kw, "additionalProperties") == 0)
		return sc_strdup("is not allowed (not a known property)");
	return sc_printf("breaks %s", kw);
}

/* ---- emitting checks ---- */

/* A line that reports a violation: decoders report and go on; validators
 * also stop when quiet. */
void emit_fail(struct sc_out *c, bool validator, const char *cond, const char *at, const char *kw, const char *msg)
{
	char *k = c_str(kw), *t = c_str(msg);
	if (validator && cond) {
		out_line(c, "if ((%s) && !fail(x, %s, %s, %s))", cond, at, k, t);
		out_line(c, "\treturn false;");
	} else if (validator) {
		out_line(c, "if (!fail(x, %s, %s, %s))", at, k, t);
		out_line(c, "\treturn false;");
	} else if (cond) {
		out_line(c, "if (%s)", cond);
		out_line(c, "\tfail(&d->v, %s, %s, %s);", at, k, t);
	} else {
		out_line(c, "fail(&d->v, %s, %s, %s);", at, k, t);
	}
	free(k);
	free(t);
}

void emit_keyword_fail(struct sc_out *c, bool validator, const char *cond, const char *at,
		       const struct sc_schema *s, const char *kw)
{
	char *msg = msg_keyword(s, kw);
	emit_fail(c, validator, cond, at, kw, msg);
	free(msg);
}

static const char *const format_fn[] = {
	NULL, "ig_format_date_time", "ig_format_date", "ig_format_email", "ig_format_uuid", "ig_format_uri",
};

/* String checks on ptr/len (length in code points, pattern, format). */
void emit_string_checks(struct sc_out *c, const struct sc_schema *s, bool validator, const char *ptr, const char *len,
			const char *at)
{
	if (s->has_min_length || s->has_max_length) {
		out_line(c, "size_t chars = ig_utf8_length(%s, %s);", ptr, len);
		if (s->has_min_length) {
			char *cond = sc_printf("chars < %llu", (unsigned long long)s->min_length);
			emit_keyword_fail(c, validator, cond, at, s, "minLength");
			free(cond);
		}
		if (s->has_max_length) {
			char *cond = sc_printf("chars > %llu", (unsigned long long)s->max_length);
			emit_keyword_fail(c, validator, cond, at, s, "maxLength");
			free(cond);
		}
	}
	if (s->pattern_fn) {
		char *cond = sc_printf("!%s(%s, %s)", s->pattern_fn, ptr, len);
		emit_keyword_fail(c, validator, cond, at, s, "pattern");
		free(cond);
	}
	if (s->format) {
		char *cond = sc_printf("!%s(%s, %s)", format_fn[s->format], ptr, len);
		emit_keyword_fail(c, validator, cond, at, s, "format");
		free(cond);
	}
}

bool has_string_checks(const struct sc_schema *s)
{
	return s->has_min_length || s->has_max_length || s->pattern_fn || s->format;
}

bool has_number_checks(const struct sc_schema *s)
{
	return s->minimum.set || s->maximum.set || s->exclusive_minimum.set || s->exclusive_maximum.set ||
	       s->multiple_of.set;
}

/* Number checks on an ig_json_value pointer v (INT or NUMBER). */
static void emit_value_number_checks(struct sc_out *c, const struct sc_schema *s, const char *v, const char *at)
{
	struct {
		const struct sc_number *b;
		const char *kw, *fail;
	} bounds[] = {
		{ &s->minimum, "minimum", "< 0" },
		{ &s->maximum, "maximum", "> 0" },
		{ &s->exclusive_minimum, "exclusiveMinimum", "<= 0" },
		{ &s->exclusive_maximum, "exclusiveMaximum", ">= 0" },
	};
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		const struct sc_number *b = bounds[i].b;
		if (!b->set)
			continue;
		char *cond = sc_printf("compare_number(%s, %.17g, %s, %lld) %s", v, b->d, b->is_int ? "true" : "false",
				       (long long)b->i, bounds[i].fail);
		emit_keyword_fail(c, true, cond, at, s, bounds[i].kw);
		free(cond);
	}
	if (s->multiple_of.set) {
		const struct sc_number *m = &s->multiple_of;
		char *raw = sc_printf("%s->raw", v), *cond;
		if (m->is_int)
			cond = sc_printf("%s->type == IG_JSON_INT ? !int_multiple(%s->i, %lld) : "
					 "!decimal_multiple(%s, %lluu, %d)", v, v, (long long)m->i, raw,
					 (unsigned long long)m->digits, m->scale);
		else
			cond = sc_printf("!decimal_multiple(%s, %lluu, %d)", raw, (unsigned long long)m->digits, m->scale);
		emit_keyword_fail(c, true, cond, at, s, "multipleOf");
		free(raw);
		free(cond);
	}
}

/* ---- constants (enum and const values) ---- */

static int const_counter;

/* Emits v as static ig_json_value definitions (children first); returns
 * the C name of the value. */
static char *emit_constant(struct sc_out *c, const cJSON *v, const char *base)
{
	char *name = sc_printf("%s_c%d", base, const_counter++);
	if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		size_t n = 0;
		for (const cJSON *e = v->child; e; e = e->next)
			n++;
		char **kids = sc_xmalloc(sizeof *kids * (n ? n : 1));
		size_t i = 0;
		for (const cJSON *e = v->child; e; e = e->next)
			kids[i++] = emit_constant(c, e, base);
		if (n && cJSON_IsArray(v)) {
			out_open(c, "static ig_json_value *%s_items[] = {", name);
			for (i = 0; i < n; i++)
				out_line(c, "&%s,", kids[i]);
			out_close(c, "};");
		} else if (n) {
			out_open(c, "static ig_json_member %s_members[] = {", name);
			i = 0;
			for (const cJSON *e = v->child; e; e = e->next, i++) {
				char *k = c_str(e->string);
				out_line(c, "{ { %s, %zu }, &%s },", k, strlen(e->string), kids[i]);
				free(k);
			}
			out_close(c, "};");
		}
		if (cJSON_IsArray(v))
			out_line(c, "static ig_json_value %s = { .type = IG_JSON_ARRAY, .array = { %s%s, %zu } };", name,
				 n ? name : "NULL", n ? "_items" : "", n);
		else
			out_line(c, "static ig_json_value %s = { .type = IG_JSON_OBJECT, .object = { %s%s, %zu } };", name,
				 n ? name : "NULL", n ? "_members" : "", n);
		for (i = 0; i < n; i++)
			free(kids[i]);
		free(kids);
	} else if (cJSON_IsString(v)) {
		char *lit = c_str(v->valuestring);
		out_line(c, "static ig_json_value %s = { .type = IG_JSON_STRING, .s = { %s, %zu } };", name, lit,
			 strlen(v->valuestring));
		free(lit);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
			long long i = (long long)d;
			if (i == INT64_MIN)
				out_line(c, "static ig_json_value %s = { .type = IG_JSON_INT, .i = INT64_MIN };", name);
			else
				out_line(c, "static ig_json_value %s = { .type = IG_JSON_INT, .i = %lld };", name, i);
		} else {
			out_line(c, "static ig_json_value %s = { .type = IG_JSON_NUMBER, .d = %.17g };", name, d);
		}
	} else if (cJSON_IsBool(v)) {
		out_line(c, "static ig_json_value %s = { .type = IG_JSON_BOOL, .b = %s };", name,
			 cJSON_IsTrue(v) ? "true" : "false");
	} else {
		out_line(c, "static ig_json_value %s = { .type = IG_JSON_NULL };", name);
	}
	return name;
}

char *emit_json_constant(struct sc_out *c, const cJSON *v, const char *base)
{
	const_counter = 0;
	return emit_constant(c, v, base);
}

/* ---- which schemas get validators ---- */

bool always_valid(const struct sc_schema *s)
{
	const struct sc_schema *r = sc_resolve(s);
	return !r || r->annotations_only;
}

static void mark_child(struct sc_schema *child, void *arg)
{
	mark_validator(child, *(unsigned *)arg);
}

void mark_validator(struct sc_schema *s, unsigned use)
{
	if (!s || (s->validator_use & use) == use)
		return;
	s->validator_use |= use;
	if (s->kind == SC_REF)
		mark_validator(s->target, use);
	mark_validator(s->ref, use);
	sc_children(s, mark_child, &use);
}

/* The expression "v is valid against s", in the vctx x. */
char *validator_call(const struct sc_schema *s, const char *v, const char *x, const char *at)
{
	if (always_valid(s))
		return sc_strdup("true");
	const struct sc_schema *r = sc_resolve(s);
	if (s->kind == SC_REF)
		return sc_printf("via_ref(validate_%s, %s, %s, %s)", r->name, v, x, at);
	return sc_printf("validate_%s(%s, %s, %s)", s->name, v, x, at);
}

/* A child schema applies to the same value or an element, in x: a failure
 * ends a quiet validation. */
static void emit_apply(struct sc_out *c, const struct sc_schema *child, const char *v, const char *at)
{
	if (always_valid(child))
		return;
	char *call = validator_call(child, v, "x", at);
	out_line(c, "if (!%s && x->quiet)", call);
	out_line(c, "\treturn false;");
	free(call);
}

/* ---- member lookup ---- */

/* member_<name>: the index of a property by key, or -1. */
static void emit_member_fn(struct sc_out *c, const struct sc_schema *s)
{
	out_line(c, "/* The index of a key among the properties of %s, or -1. */", s->name);
	out_line(c, "static int member_%s(const char *k, size_t n)", s->name);
	out_open(c, "{");
	/* Grouped by length: a switch, then a few memcmp. */
	size_t max = 0;
	for (size_t i = 0; i < s->nprops; i++)
		if (strlen(s->props[i].name) > max)
			max = strlen(s->props[i].name);
	out_line(c, "switch (n) {");
	for (size_t len = 0; len <= max; len++) {
		bool any = false;
		for (size_t i = 0; i < s->nprops; i++) {
			if (strlen(s->props[i].name) != len)
				continue;
			if (!any)
				out_open(c, "case %zu:", len);
			any = true;
			char *k = c_str(s->props[i].name);
			out_line(c, "if (memcmp(k, %s, %zu) == 0)", k, len);
			out_line(c, "\treturn %zu;", i);
			free(k);
		}
		if (any) {
			out_line(c, "break;");
			c->indent--;
		}
	}
	out_line(c, "}");
	out_line(c, "return -1;");
	out_close(c, "}");
	out_blank(c);
}

/* ---- validators ---- */

/* Whether C text uses an identifier (not as part of a longer one). */
static bool uses_ident(const char *text, const char *id)
{
	size_t n = strlen(id);
	for (const char *p = text; (p = strstr(p, id)); p += n) {
		bool before = p > text && (p[-1] == '_' || p[-1] == '.' || (p[-1] == '>' && p[-2] == '-') ||
					   (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
					   (p[-1] >= '0' && p[-1] <= '9'));
		char a = p[n];
		bool after = a == '_' || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z') || (a >= '0' && a <= '9');
		if (!before && !after)
			return true;
	}
	return false;
}

/* The condition "v has one of the types" in C. */
static char *type_condition(unsigned types, const char *v)
{
	char *cond = sc_strdup("");
	static const struct { unsigned bit; const char *fmt; } tests[] = {
		{ SC_T_NULL, "%s->type == IG_JSON_NULL" }, { SC_T_BOOLEAN, "%s->type == IG_JSON_BOOL" },
		{ SC_T_OBJECT, "%s->type == IG_JSON_OBJECT" }, { SC_T_ARRAY, "%s->type == IG_JSON_ARRAY" },
		{ SC_T_STRING, "%s->type == IG_JSON_STRING" },
		{ SC_T_NUMBER, "%s->type == IG_JSON_INT || %s->type == IG_JSON_NUMBER" },
		{ SC_T_INTEGER, "is_integer(%s)" },
	};
	if (types & SC_T_NUMBER)
		types &= ~(unsigned)SC_T_INTEGER;
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (!(types & tests[i].bit))
			continue;
		char *t = sc_printf(tests[i].fmt, v, v);
		char *next = sc_printf("%s%s%s", cond, *cond ? " || " : "", t);
		free(cond);
		free(t);
		cond = next;
	}
	return cond;
}

struct vstate {
	struct sc_out *c;
	const struct sc_schema *s;
};

static void emit_enum_const(struct sc_out *c, const struct sc_schema *s, char **consts)
{
	if (s->enum_values) {
		char *cond = sc_strdup("");
		int k = 0;
		for (const cJSON *e = s->enum_values->child; e; e = e->next, k++) {
			char *t = sc_printf("ig_json_equal(v, &%s)", consts[k]);
			char *next = sc_printf("%s%s%s", cond, *cond ? " || " : "", t);
			free(cond);
			free(t);
			cond = next;
		}
		char *neg = sc_printf("!(%s)", *cond ? cond : "false");
		emit_keyword_fail(c, true, neg, "at", s, "enum");
		free(neg);
		free(cond);
	}
	if (s->const_value) {
		char *cond = sc_printf("!ig_json_equal(v, &%s)", consts[s->enum_values ? cJSON_GetArraySize(s->enum_values) : 0]);
		emit_keyword_fail(c, true, cond, "at", s, "const");
		free(cond);
	}
}

/* The branch a discriminator value selects when every branch pins the
 * property (required, type object, a string const/enum) to its own
 * values: then no other branch can match, and only that one is run. */
static bool pinned_values(const struct sc_schema *branch, const char *prop, const cJSON **values)
{
	const struct sc_schema *r = sc_resolve(branch);
	if (!r || r->types != SC_T_OBJECT)
		return false;
	bool required = false;
	for (size_t i = 0; i < r->nrequired; i++)
		required |= strcmp(r->required[i], prop) == 0;
	if (!required)
		return false;
	for (size_t i = 0; i < r->nprops; i++) {
		if (strcmp(r->props[i].name, prop) != 0)
			continue;
		const struct sc_schema *p = sc_resolve(r->props[i].schema);
		if (p && p->const_value && cJSON_IsString(p->const_value)) {
			*values = p->const_value;
			return true;
		}
		if (p && p->enum_values && p->enum_values->child) {
			for (const cJSON *e = p->enum_values->child; e; e = e->next)
				if (!cJSON_IsString(e))
					return false;
			*values = p->enum_values;
			return true;
		}
	}
	return false;
}

static bool values_contain(const cJSON *values, const char *s)
{
	if (cJSON_IsString(values))
		return strcmp(values->valuestring, s) == 0;
	for (const cJSON *e = values->child; e; e = e->next)
		if (strcmp(e->valuestring, s) == 0)
			return true;
	return false;
}

static bool disjoint_branches(const struct sc_schema *s, struct sc_schema **branches, size_t n, const cJSON **pins)
{
	for (size_t b = 0; b < n; b++)
		if (!pinned_values(branches[b], s->discriminator, &pins[b]))
			return false;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			const cJSON *va = pins[a];
			if (cJSON_IsString(va) ? values_contain(pins[b], va->valuestring) : false)
				return false;
			for (const cJSON *e = cJSON_IsArray(va) ? va->child : NULL; e; e = e->next)
				if (values_contain(pins[b], e->valuestring))
					return false;
		}
	return true;
}

/* int branch = the index the discriminator selects, or -1: by the values
 * the branches pin, or else by the mapping (explicit and implicit). */
static void emit_discriminator_lookup(struct sc_out *c, const struct sc_schema *s, struct sc_schema **branches,
				      size_t n, const cJSON **pins)
{
	char *key = c_str(s->discriminator);
	out_line(c, "const ig_json_value *tag = v->type == IG_JSON_OBJECT ? ig_json_get(v, %s, %zu) : NULL;", key,
		 strlen(s->discriminator));
	out_line(c, "int branch = -1;");
	out_open(c, "if (tag && tag->type == IG_JSON_STRING) {");
	const char *els = "";
	for (size_t b = 0; b < n; b++) {
		const char **values = NULL;
		size_t nvalues = 0;
		if (pins && cJSON_IsString(pins[b]))
			SC_APPEND(values, nvalues, pins[b]->valuestring);
		else if (pins)
			for (const cJSON *e = pins[b]->child; e; e = e->next)
				SC_APPEND(values, nvalues, e->valuestring);
		else
			for (size_t i = 0; i < s->nmapping; i++)
				if (s->mapping[i].target == branches[b])
					SC_APPEND(values, nvalues, s->mapping[i].value);
		for (size_t i = 0; i < nvalues; i++) {
			char *lit = c_str(values[i]);
			out_line(c, "%sif (ig_str_eq(tag->s, %s, %zu))", els, lit, strlen(values[i]));
			out_line(c, "\tbranch = %zu;", b);
			els = "else ";
			free(lit);
		}
		free(values);
	}
	out_close(c, "}");
	free(key);
}

static void emit_any_one_of(struct sc_out *c, const struct sc_schema *s, bool one)
{
	struct sc_schema **branches = one ? s->one_of : s->any_of;
	size_t n = one ? s->none_of : s->nany_of;
	const char *kw = one ? "oneOf" : "anyOf";
	if (!one) {
		for (size_t b = 0; b < n; b++)
			if (always_valid(branches[b]))
				return; /* one branch takes everything */
	}
	out_open(c, "{ /* %s */", kw);
	const cJSON **pins = sc_xmalloc(sizeof *pins * n);
	bool disc = s->discriminator != NULL;
	bool proven = disc && disjoint_branches(s, branches, n, pins);
	if (disc)
		emit_discriminator_lookup(c, s, branches, n, proven ? pins : NULL);
	if (proven) {
		/* Only the selected branch can match: run it, reporting. */
		char *key = c_str(s->discriminator);
		char *msg = sc_printf("must be an object whose \"%s\" selects one of the %s schemas", s->discriminator, kw);
		char *m = c_str(msg);
		out_open(c, "switch (branch) {");
		for (size_t b = 0; b < n; b++) {
			out_open(c, "case %zu:", b);
			emit_apply(c, branches[b], "v", "at");
			out_line(c, "break;");
			c->indent--;
		}
		out_open(c, "default:");
		out_line(c, "if (!fail(x, at, \"discriminator\", %s))", m);
		out_line(c, "\treturn false;");
		out_line(c, "break;");
		c->indent--;
		out_line(c, "}");
		free(key);
		free(msg);
		free(m);
	} else {
		bool any = false;
		for (size_t b = 0; b < n; b++)
			any |= !always_valid(branches[b]);
		if (any)
			out_line(c, "struct vctx q = quietly(x);");
		out_line(c, "int matches = 0;");
		for (size_t b = 0; b < n; b++) {
			char *call = validator_call(branches[b], "v", "&q", "at");
			if (one)
				out_line(c, "matches += %s%s;", strcmp(call, "true") == 0 ? "(int)" : "", call);
			else
				out_line(c, "matches += !matches && %s;", call);
			free(call);
		}
		const char *cond = one ? "matches != 1" : "matches == 0";
		out_open(c, "if (%s) {", cond);
		if (disc) {
			/* The branch the discriminator names explains the failure best. */
			out_open(c, "switch (matches ? -1 : branch) {");
			for (size_t b = 0; b < n; b++) {
				if (always_valid(branches[b]))
					continue;
				out_open(c, "case %zu:", b);
				char *call = validator_call(branches[b], "v", "x", "at");
				out_line(c, "if (!%s && x->quiet)", call);
				out_line(c, "\treturn false;");
				out_line(c, "break;");
				c->indent--;
				free(call);
			}
			out_open(c, "default:");
		}
		if (one) {
			out_line(c, "if (!fail(x, at, \"oneOf\", matches ? \"must match exactly one of the schemas in oneOf "
				    "(it matches several)\" : \"must match exactly one of the schemas in oneOf (it matches "
				    "none)\"))");
		} else {
			out_line(c, "if (!fail(x, at, \"anyOf\", \"must match at least one of the schemas in anyOf\"))");
		}
		out_line(c, "\treturn false;");
		if (disc) {
			out_line(c, "break;");
			c->indent--;
			out_line(c, "}");
		}
		out_close(c, "}");
	}
	free(pins);
	out_close(c, "}");
}

static void emit_applicators(struct sc_out *c, const struct sc_schema *s)
{
	if (s->ref && !always_valid(s->ref)) {
		char *call = sc_printf("via_ref(validate_%s, v, x, at)", sc_resolve(s->ref)->name);
		out_line(c, "if (!%s && x->quiet)", call);
		out_line(c, "\treturn false;");
		free(call);
	}
	for (size_t i = 0; i < s->nall_of; i++)
		emit_apply(c, s->all_of[i], "v", "at");
	if (s->nany_of)
		emit_any_one_of(c, s, false);
	if (s->none_of)
		emit_any_one_of(c, s, true);
	if (s->not_schema) {
		if (always_valid(s->not_schema)) {
			emit_fail(c, true, NULL, "at", "not", "must not match the schema in not");
		} else {
			out_open(c, "{ /* not */");
			out_line(c, "struct vctx q = quietly(x);");
			char *call = validator_call(s->not_schema, "v", "&q", "at");
			char *msg = sc_strdup("must not match the schema in not");
			emit_fail(c, true, call, "at", "not", msg);
			free(call);
			free(msg);
			out_close(c, "}");
		}
	}
	if (s->if_schema && always_valid(s->if_schema)) {
		if (s->then_schema)
			emit_apply(c, s->then_schema, "v", "at");
	} else if (s->if_schema && (s->then_schema || s->else_schema)) {
		out_open(c, "{ /* if/then/else */");
		out_line(c, "struct vctx q = quietly(x);");
		char *call = validator_call(s->if_schema, "v", "&q", "at");
		out_open(c, "if (%s) {", call);
		if (s->then_schema)
			emit_apply(c, s->then_schema, "v", "at");
		if (s->else_schema) {
			c->indent--;
			out_open(c, "} else {");
			emit_apply(c, s->else_schema, "v", "at");
		}
		out_close(c, "}");
		out_close(c, "}");
		free(call);
	}
}

static bool has_object_keywords(const struct sc_schema *s)
{
	return s->nprops || s->nrequired || s->additional != SC_AP_ABSENT || s->npattern_props || s->property_names ||
	       s->ndep_required || s->ndep_schemas || s->has_min_props || s->has_max_props;
}

static int prop_index(const struct sc_schema *s, const char *name)
{
	for (size_t i = 0; i < s->nprops; i++)
		if (strcmp(s->props[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void emit_has(struct sc_out *c, const struct sc_schema *s, const char *name, char **out)
{
	int k = prop_index(s, name);
	if (k >= 0) {
		*out = sc_printf("(seen[%d] >> %d & 1)", k / 64, k % 64);
	} else {
		char *lit = c_str(name);
		*out = sc_printf("ig_json_get(v, %s, %zu)", lit, strlen(name));
		free(lit);
	}
	(void)c;
}

struct object_needs {
	bool seen;     /* which properties are present, for required and dependents */
	bool any_prop; /* some property has a schema to check */
	bool track;    /* additionalProperties: whether a key is known */
	bool here;     /* a member's location is needed */
};

static struct object_needs object_needs(const struct sc_schema *s)
{
	struct object_needs nd = { false, false, false, false };
	for (size_t i = 0; i < s->nrequired; i++)
		nd.seen |= prop_index(s, s->required[i]) >= 0;
	for (size_t i = 0; i < s->ndep_required; i++) {
		nd.seen |= prop_index(s, s->dep_required[i].name) >= 0;
		for (size_t k = 0; k < s->dep_required[i].n; k++)
			nd.seen |= prop_index(s, s->dep_required[i].names[k]) >= 0;
	}
	for (size_t i = 0; i < s->ndep_schemas; i++)
		nd.seen |= prop_index(s, s->dep_schemas[i].name) >= 0;
	for (size_t i = 0; i < s->nprops; i++)
		nd.any_prop |= !always_valid(s->props[i].schema);
	nd.track = s->additional != SC_AP_ABSENT;
	nd.here = nd.any_prop || s->npattern_props || (s->property_names && !always_valid(s->property_names)) ||
		  s->additional == SC_AP_FALSE ||
		  (s->additional == SC_AP_SCHEMA && !always_valid(s->additional_schema));
	return nd;
}

static bool validator_uses_member_fn(const struct sc_schema *s)
{
	struct object_needs nd = object_needs(s);
	return s->nprops && (nd.seen || nd.track || nd.any_prop);
}

static void emit_object_checks(struct sc_out *c, const struct sc_schema *s)
{
	if (!has_object_keywords(s))
		return;
	out_open(c, "if (v->type == IG_JSON_OBJECT) {");
	if (s->has_min_props) {
		char *cond = sc_printf("v->object.len < %llu", (unsigned long long)s->min_props);
		emit_keyword_fail(c, true, cond, "at", s, "minProperties");
		free(cond);
	}
	if (s->has_max_props) {
		char *cond = sc_printf("v->object.len > %llu", (unsigned long long)s->max_props);
		emit_keyword_fail(c, true, cond, "at", s, "maxProperties");
		free(cond);
	}
	struct object_needs nd = object_needs(s);
	bool need_seen = nd.seen, any_prop = nd.any_prop, track = nd.track, need_here = nd.here;
	bool loop = need_seen || need_here || track;
	if (need_seen)
		out_line(c, "uint64_t seen[%zu] = { 0 };", (s->nprops + 63) / 64);
	if (loop) {
		out_open(c, "for (size_t i = 0; i < v->object.len; i++) {");
		out_line(c, "const ig_json_member *mb = &v->object.members[i];");
		if (need_here)
			out_line(c, "struct where here = { at, mb->key.ptr, mb->key.len };");
		if (track && s->nprops)
			out_line(c, "bool known = false;");
		else if (track)
			out_line(c, "bool known = false; /* no properties: only patterns make a key known */");
		if (s->property_names && !always_valid(s->property_names)) {
			out_open(c, "{ /* propertyNames */");
			out_line(c, "ig_json_value name = { .type = IG_JSON_STRING, .s = mb->key };");
			emit_apply(c, s->property_names, "&name", "&here");
			out_close(c, "}");
		}
		if (s->nprops && (need_seen || track || any_prop)) {
			out_line(c, "int k = member_%s(mb->key.ptr, mb->key.len);", s->name);
			if (need_seen || track) {
				out_open(c, "if (k >= 0) {");
				if (need_seen)
					out_line(c, "seen[k / 64] |= (uint64_t)1 << (k %% 64);");
				if (track)
					out_line(c, "known = true;");
				out_close(c, "}");
			}
			if (any_prop) {
				out_line(c, "switch (k) {");
				for (size_t i = 0; i < s->nprops; i++) {
					if (always_valid(s->props[i].schema))
						continue;
					out_open(c, "case %zu:", i);
					emit_apply(c, s->props[i].schema, "mb->value", "&here");
					out_line(c, "break;");
					c->indent--;
				}
				out_line(c, "}");
			}
		}
		for (size_t i = 0; i < s->npattern_props; i++) {
			out_open(c, "if (%s(mb->key.ptr, mb->key.len)) {", s->pattern_props[i].fn);
			if (track)
				out_line(c, "known = true;");
			emit_apply(c, s->pattern_props[i].schema, "mb->value", "&here");
			out_close(c, "}");
		}
		if (s->additional == SC_AP_FALSE) {
			emit_keyword_fail(c, true, "!known", "&here", s, "additionalProperties");
		} else if (s->additional == SC_AP_SCHEMA) {
			if (always_valid(s->additional_schema)) {
				out_line(c, "(void)known;");
			} else {
				out_open(c, "if (!known) {");
				emit_apply(c, s->additional_schema, "mb->value", "&here");
				out_close(c, "}");
			}
		}
		out_close(c, "}");
	}
	for (size_t i = 0; i < s->nrequired; i++) {
		char *has, *lit = c_str(s->required[i]);
		emit_has(c, s, s->required[i], &has);
		char *cond = sc_printf("!%s", has);
		char *at = sc_printf("&(struct where){ at, %s, %zu }", lit, strlen(s->required[i]));
		emit_keyword_fail(c, true, cond, at, s, "required");
		free(has);
		free(lit);
		free(cond);
		free(at);
	}
	for (size_t i = 0; i < s->ndep_required; i++) {
		const struct sc_dep_required *d = &s->dep_required[i];
		char *has;
		emit_has(c, s, d->name, &has);
		out_open(c, "if (%s) { /* dependentRequired */", has);
		free(has);
		for (size_t k = 0; k < d->n; k++) {
			char *h, *lit = c_str(d->names[k]);
			emit_has(c, s, d->names[k], &h);
			char *cond = sc_printf("!%s", h);
			char *at = sc_printf("&(struct where){ at, %s, %zu }", lit, strlen(d->names[k]));
			char *msg = sc_printf("is required when \"%s\" is present", d->name);
			emit_fail(c, true, cond, at, "dependentRequired", msg);
			free(h);
			free(lit);
			free(cond);
			free(at);
			free(msg);
		}
		out_close(c, "}");
	}
	for (size_t i = 0; i < s->ndep_schemas; i++) {
		if (always_valid(s->dep_schemas[i].schema))
			continue;
		char *has;
		emit_has(c, s, s->dep_schemas[i].name, &has);
		out_open(c, "if (%s) { /* dependentSchemas */", has);
		emit_apply(c, s->dep_schemas[i].schema, "v", "at");
		out_close(c, "}");
		free(has);
	}
	out_close(c, "}");
}

static bool has_array_keywords(const struct sc_schema *s)
{
	return s->items || s->nprefix_items || s->contains || s->has_min_items || s->has_max_items || s->unique_items;
}

static void emit_array_checks(struct sc_out *c, const struct sc_schema *s)
{
	if (!has_array_keywords(s))
		return;
	out_open(c, "if (v->type == IG_JSON_ARRAY) {");
	if (s->has_min_items) {
		char *cond = sc_printf("v->array.len < %llu", (unsigned long long)s->min_items);
		emit_keyword_fail(c, true, cond, "at", s, "minItems");
		free(cond);
	}
	if (s->has_max_items) {
		char *cond = sc_printf("v->array.len > %llu", (unsigned long long)s->max_items);
		emit_keyword_fail(c, true, cond, "at", s, "maxItems");
		free(cond);
	}
	if (s->unique_items)
		emit_keyword_fail(c, true, "!unique_values(v->array.items, v->array.len, x->arena)", "at", s,
				  "uniqueItems");
	for (size_t i = 0; i < s->nprefix_items; i++) {
		if (always_valid(s->prefix_items[i]))
			continue;
		out_open(c, "if (v->array.len > %zu) {", i);
		out_line(c, "struct where here = { at, NULL, %zu };", i);
		char *item = sc_printf("v->array.items[%zu]", i);
		emit_apply(c, s->prefix_items[i], item, "&here");
		free(item);
		out_close(c, "}");
	}
	if (s->items && !always_valid(s->items)) {
		out_open(c, "for (size_t i = %zu; i < v->array.len; i++) {", s->nprefix_items);
		out_line(c, "struct where here = { at, NULL, i };");
		emit_apply(c, s->items, "v->array.items[i]", "&here");
		out_close(c, "}");
	}
	if (s->contains && always_valid(s->contains)) {
		uint64_t min = s->has_min_contains ? s->min_contains : 1;
		if (min) {
			char *cond = sc_printf("v->array.len < %llu", (unsigned long long)min);
			emit_keyword_fail(c, true, cond, "at", s, s->has_min_contains ? "minContains" : "contains");
			free(cond);
		}
		if (s->has_max_contains) {
			char *cond = sc_printf("v->array.len > %llu", (unsigned long long)s->max_contains);
			emit_keyword_fail(c, true, cond, "at", s, "maxContains");
			free(cond);
		}
	} else if (s->contains) {
		out_open(c, "{ /* contains */");
		out_line(c, "struct vctx q = quietly(x);");
		out_line(c, "size_t found = 0;");
		out_open(c, "for (size_t i = 0; i < v->array.len; i++) {");
		out_line(c, "struct where here = { at, NULL, i };");
		char *call = validator_call(s->contains, "v->array.items[i]", "&q", "&here");
		out_line(c, "found += %s;", call);
		free(call);
		out_close(c, "}");
		uint64_t min = s->has_min_contains ? s->min_contains : 1;
		if (min) {
			char *cond = sc_printf("found < %llu", (unsigned long long)min);
			emit_keyword_fail(c, true, cond, "at", s, s->has_min_contains ? "minContains" : "contains");
			free(cond);
		}
		if (s->has_max_contains) {
			char *cond = sc_printf("found > %llu", (unsigned long long)s->max_contains);
			emit_keyword_fail(c, true, cond, "at", s, "maxContains");
			free(cond);
		}
		out_close(c, "}");
	}
	out_close(c, "}");
}

static void emit_validator(struct sc_out *c, const struct sc_schema *s, char **consts)
{
	char *where = c_comment(*s->ptr ? s->ptr : "/");
	out_line(c, "/* %s */", where);
	free(where);
	out_line(c, "static bool validate_%s(const ig_json_value *v, struct vctx *x, const struct where *at)", s->name);
	out_open(c, "{");
	if (s->never) {
		out_line(c, "(void)v;");
		out_line(c, "fail(x, at, \"false\", \"no value is allowed here\");");
		out_line(c, "return false;");
		out_close(c, "}");
		out_blank(c);
		return;
	}
	/* The body goes to a side buffer first: parameters it does not use
	   are marked so. */
	struct sc_out body = { .indent = c->indent };
	struct sc_out *outer = c;
	c = &body;
	out_line(c, "size_t before = x->failures;");
	unsigned t = s->types;
	if (t) {
		char *cond = type_condition(t, "v"), *msg = msg_type(t), *k = c_str(msg);
		out_open(c, "if (!(%s)) {", cond);
		out_line(c, "fail(x, at, \"type\", %s);", k);
		out_line(c, "return false;");
		out_close(c, "}");
		free(cond);
		free(msg);
		free(k);
	}
	emit_enum_const(c, s, consts);
	emit_applicators(c, s);
	if (has_string_checks(s)) {
		out_open(c, "if (v->type == IG_JSON_STRING) {");
		emit_string_checks(c, s, true, "v->s.ptr", "v->s.len", "at");
		out_close(c, "}");
	}
	if (has_number_checks(s)) {
		out_open(c, "if (v->type == IG_JSON_INT || v->type == IG_JSON_NUMBER) {");
		emit_value_number_checks(c, s, "v", "at");
		out_close(c, "}");
	}
	emit_object_checks(c, s);
	emit_array_checks(c, s);
	out_line(c, "return x->failures == before;");
	c = outer;
	static const char *const params[] = { "v", "at", NULL };
	for (int i = 0; params[i]; i++)
		if (!uses_ident(body.buf, params[i]))
			out_line(c, "(void)%s;", params[i]);
	out_raw(c, body.buf, body.len);
	free(body.buf);
	out_close(c, "}");
	out_blank(c);
}

/* ---- the section ---- */

static bool emits_validator(const struct sc_schema *s)
{
	return s->validator_use && s->kind != SC_REF && !s->annotations_only;
}

static void emit_patterns(struct sc_out *c, struct sc_schema *s)
{
	if (s->regex_emitted)
		return;
	s->regex_emitted = true;
	if (s->regex && s->pattern_fn) {
		regex_emit(s->regex, s->pattern_fn, c);
		out_blank(c);
	}
	for (size_t i = 0; i < s->npattern_props; i++) {
		if (s->pattern_props[i].re) {
			regex_emit(s->pattern_props[i].re, s->pattern_props[i].fn, c);
			out_blank(c);
		}
	}
}

void emit_validators(struct sc_model *m, struct sc_out *c, unsigned check_only)
{
	bool any = false, patterns = false;
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		any |= emits_validator(s);
		patterns |= (s->validator_use || s->decoder_used || s->param_used) && (s->regex || s->npattern_props);
	}
	if (patterns) {
		out_line(c, "/* ---- pattern matchers ---- */");
		out_blank(c);
		for (size_t i = 0; i < m->nnodes; i++) {
			struct sc_schema *s = m->nodes[i];
			if (s->validator_use || s->decoder_used || s->param_used)
				emit_patterns(c, s);
		}
	}
	/* Member lookups serve validators and decoders alike. */
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if ((emits_validator(s) && validator_uses_member_fn(s)) || (s->decoder_used && s->kind == SC_OBJECT && s->nprops))
			emit_member_fn(c, s);
	}
	if (!any)
		return;
	out_line(c, "/* ---- validators: one per schema, over ig_json_value ---- */");
	out_blank(c);
	char ***consts = sc_xmalloc(sizeof *consts * m->nnodes);
	bool wrote = false;
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if (!emits_validator(s) || (!s->enum_values && !s->const_value))
			continue;
		size_t n = (s->enum_values ? (size_t)cJSON_GetArraySize(s->enum_values) : 0) + (s->const_value ? 1 : 0);
		consts[i] = sc_xmalloc(sizeof **consts * n);
		size_t k = 0;
		const_counter = 0;
		for (const cJSON *e = s->enum_values ? s->enum_values->child : NULL; e; e = e->next)
			consts[i][k++] = emit_constant(c, e, s->name);
		if (s->const_value)
			consts[i][k++] = emit_constant(c, s->const_value, s->name);
		wrote = true;
	}
	if (wrote)
		out_blank(c);
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if (!emits_validator(s))
			continue;
		/* Response checks only: unused unless IG_CHECK_RESPONSES. */
		bool unused = (s->validator_use & ~check_only) == 0;
		out_line(c, "static bool validate_%s(const ig_json_value *v, struct vctx *x, const struct where *at)%s;",
			 s->name, unused ? " __attribute__((unused))" : "");
	}
	out_blank(c);
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if (emits_validator(s))
			emit_validator(c, s, consts[i]);
	}
	free(consts);
}

/* ---- a bare JSON Schema (schemac --validator) ---- */

void emit_standalone(struct sc_model *m, struct sc_out *c, const char *name)
{
	emit_banner(m, c, "A validator over ig_json_value for one JSON Schema (schemac --validator).");
	out_line(c, "#include \"kernel/format.h\"");
	out_line(c, "#include \"kernel/json_read.h\"");
	out_blank(c);
	out_line(c, "#include <math.h>");
	out_line(c, "#include <string.h>");
	out_blank(c);
	/* Several of these files may share one translation unit. */
	out_line(c, "#ifndef SCHEMAC_VALIDATION_SUPPORT");
	out_line(c, "#define SCHEMAC_VALIDATION_SUPPORT");
	emit_support(m, c);
	out_line(c, "#endif");
	out_blank(c);
	mark_validator(m->root, 1);
	emit_validators(m, c, 0);
	out_line(c, "/* Whether v is valid; with report, every violation is reported through it. */");
	out_line(c, "bool %s(const ig_json_value *v, report_fn *report, void *arg, ig_arena *arena);", name);
	out_line(c, "bool %s(const ig_json_value *v, report_fn *report, void *arg, ig_arena *arena)", name);
	out_open(c, "{");
	out_line(c, "struct vctx x = { .report = report, .arg = arg, .arena = arena, .quiet = !report };");
	char *call = validator_call(m->root, "v", "&x", "NULL");
	if (strcmp(call, "true") == 0)
		out_line(c, "(void)v;");
	out_line(c, "(void)x;");
	out_line(c, "return %s;", call);
	free(call);
	out_close(c, "}");
}
