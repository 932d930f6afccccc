/* Emits the validators: validate_<name> walks an ig_json_value (built by
 * ig_jr_value) against one schema, with the full meaning of every keyword
 * schemac supports, reporting one error per violation with its JSON
 * pointer; inside anyOf/oneOf/not/if it runs quietly and stops at the first
 * failure (the support they call is net/api/validate.h). Also the pattern
 * matchers (regex.h), enum/const values as static ig_json_value constants,
 * and the messages every check uses. */
#include "emit.h"
#include "regex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		out_line(c, "if ((%s) && !ig_fail(x, %s, %s, %s))", cond, at, k, t);
		out_line(c, "\treturn false;");
	} else if (validator) {
		out_line(c, "if (!ig_fail(x, %s, %s, %s))", at, k, t);
		out_line(c, "\treturn false;");
	} else if (cond) {
		out_line(c, "if (%s)", cond);
		out_line(c, "\tig_fail(&d->v, %s, %s, %s);", at, k, t);
	} else {
		out_line(c, "ig_fail(&d->v, %s, %s, %s);", at, k, t);
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
		char *cond = sc_printf("ig_compare_number(%s, %.17g, %s, %lld) %s", v, b->d, b->is_int ? "true" : "false",
				       (long long)b->i, bounds[i].fail);
		emit_keyword_fail(c, true, cond, at, s, bounds[i].kw);
		free(cond);
	}
	if (s->multiple_of.set) {
		const struct sc_number *m = &s->multiple_of;
		char *raw = sc_printf("%s->raw", v), *cond;
		if (m->is_int)
			cond = sc_printf("%s->type == IG_JSON_INT ? !ig_int_multiple(%s->i, %lld) : "
					 "!ig_decimal_multiple(%s, %lluu, %d)", v, v, (long long)m->i, raw,
					 (unsigned long long)m->digits, m->scale);
		else
			cond = sc_printf("!ig_decimal_multiple(%s, %lluu, %d)", raw, (unsigned long long)m->digits, m->scale);
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
		return sc_printf("ig_via_ref(validate_%s, %s, %s, %s)", r->name, v, x, at);
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
	out_line(c, "IG_HOT static int member_%s(const char *k, size_t n)", s->name);
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
		{ SC_T_INTEGER, "ig_is_integer(%s)" },
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
		out_line(c, "if (!ig_fail(x, at, \"discriminator\", %s))", m);
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
			out_line(c, "struct ig_vctx q = ig_quietly(x);");
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
			out_line(c, "if (!ig_fail(x, at, \"oneOf\", matches ? \"must match exactly one of the schemas in oneOf "
				    "(it matches several)\" : \"must match exactly one of the schemas in oneOf (it matches "
				    "none)\"))");
		} else {
			out_line(c, "if (!ig_fail(x, at, \"anyOf\", \"must match at least one of the schemas in anyOf\"))");
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
		char *call = sc_printf("ig_via_ref(validate_%s, v, x, at)", sc_resolve(s->ref)->name);
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
			out_line(c, "struct ig_vctx q = ig_quietly(x);");
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
		out_line(c, "struct ig_vctx q = ig_quietly(x);");
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
			out_line(c, "struct ig_where here = { at, mb->key.ptr, mb->key.len };");
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
		char *at = sc_printf("&(struct ig_where){ at, %s, %zu }", lit, strlen(s->required[i]));
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
			char *at = sc_printf("&(struct ig_where){ at, %s, %zu }", lit, strlen(d->names[k]));
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
		emit_keyword_fail(c, true, "!ig_unique_values(v->array.items, v->array.len, x->arena)", "at", s,
				  "uniqueItems");
	for (size_t i = 0; i < s->nprefix_items; i++) {
		if (always_valid(s->prefix_items[i]))
			continue;
		out_open(c, "if (v->array.len > %zu) {", i);
		out_line(c, "struct ig_where here = { at, NULL, %zu };", i);
		char *item = sc_printf("v->array.items[%zu]", i);
		emit_apply(c, s->prefix_items[i], item, "&here");
		free(item);
		out_close(c, "}");
	}
	if (s->items && !always_valid(s->items)) {
		out_open(c, "for (size_t i = %zu; i < v->array.len; i++) {", s->nprefix_items);
		out_line(c, "struct ig_where here = { at, NULL, i };");
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
		out_line(c, "struct ig_vctx q = ig_quietly(x);");
		out_line(c, "size_t found = 0;");
		out_open(c, "for (size_t i = 0; i < v->array.len; i++) {");
		out_line(c, "struct ig_where here = { at, NULL, i };");
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
	out_line(c, "static bool validate_%s(const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at)", s->name);
	out_open(c, "{");
	if (s->never) {
		out_line(c, "(void)v;");
		out_line(c, "ig_fail(x, at, \"false\", \"no value is allowed here\");");
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
		out_line(c, "ig_fail(x, at, \"type\", %s);", k);
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
		out_line(c, "static bool validate_%s(const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at)%s;",
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
	out_line(c, "#include \"net/api/format.h\"");
	out_line(c, "#include \"net/api/validate.h\"");
	out_blank(c);
	out_line(c, "#include <string.h>");
	out_blank(c);
	mark_validator(m->root, 1);
	emit_validators(m, c, 0);
	out_line(c, "/* Whether v is valid; with report, every violation is reported through it. */");
	out_line(c, "bool %s(const ig_json_value *v, ig_report_fn *report, void *arg, ig_arena *arena);", name);
	out_line(c, "bool %s(const ig_json_value *v, ig_report_fn *report, void *arg, ig_arena *arena)", name);
	out_open(c, "{");
	out_line(c, "struct ig_vctx x = { .report = report, .arg = arg, .arena = arena, .quiet = !report };");
	char *call = validator_call(m->root, "v", "&x", "NULL");
	if (strcmp(call, "true") == 0)
		out_line(c, "(void)v;");
	out_line(c, "(void)x;");
	out_line(c, "return %s;", call);
	free(call);
	out_close(c, "}");
}
