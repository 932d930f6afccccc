/* Reads JSON Schema (the OpenAPI 3.1 / draft 2020-12 subset of the README)
 * into schema nodes, resolves $ref by JSON pointer within the document, and
 * decides how each schema is held in C (model.h, enum sc_kind). Every
 * keyword is understood, an annotation, or an error naming it. */
#include "model.h"
#include "regex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNSUPPORTED "(not supported by schemac)"

static const struct sc_keyword schema_keys[] = {
	{ "type", NULL }, { "properties", NULL }, { "required", NULL }, { "items", NULL },
	{ "prefixItems", NULL }, { "additionalProperties", NULL }, { "patternProperties", NULL },
	{ "propertyNames", NULL }, { "dependentRequired", NULL }, { "dependentSchemas", NULL },
	{ "minProperties", NULL }, { "maxProperties", NULL }, { "minItems", NULL }, { "maxItems", NULL },
	{ "uniqueItems", NULL }, { "contains", NULL }, { "minContains", NULL }, { "maxContains", NULL },
	{ "minimum", NULL }, { "maximum", NULL }, { "exclusiveMinimum", NULL }, { "exclusiveMaximum", NULL },
	{ "multipleOf", NULL }, { "minLength", NULL }, { "maxLength", NULL }, { "pattern", NULL },
	{ "format", NULL }, { "enum", NULL }, { "const", NULL }, { "default", NULL }, { "allOf", NULL },
	{ "anyOf", NULL }, { "oneOf", NULL }, { "not", NULL }, { "if", NULL }, { "then", NULL },
	{ "else", NULL }, { "$ref", NULL }, { "$defs", NULL }, { "discriminator", NULL }, { "$schema", NULL },
	/* annotations */
	{ "description", NULL }, { "summary", NULL }, { "title", NULL }, { "example", NULL },
	{ "examples", NULL }, { "$comment", NULL }, { "deprecated", NULL }, { "externalDocs", NULL },
	{ "readOnly", NULL }, { "writeOnly", NULL }, { "contentEncoding", NULL },
	{ "contentMediaType", NULL }, { "contentSchema", NULL },
	/* not supported */
	{ "nullable", "(an OpenAPI 3.0 keyword; 3.1 spells it \"type\": [T, \"null\"])" },
	{ "xml", "(XML is not supported)" },
	{ "$id", "(schemas are identified by JSON pointer only) " UNSUPPORTED },
	{ "$anchor", "(refer by JSON pointer instead) " UNSUPPORTED },
	{ "$dynamicRef", UNSUPPORTED }, { "$dynamicAnchor", UNSUPPORTED },
	{ "$vocabulary", UNSUPPORTED }, { "$recursiveRef", UNSUPPORTED }, { "$recursiveAnchor", UNSUPPORTED },
	{ "unevaluatedProperties", UNSUPPORTED }, { "unevaluatedItems", UNSUPPORTED },
	{ "definitions", "(draft 2019 and older; use $defs)" },
	{ "dependencies", "(draft 7 and older; use dependentRequired or dependentSchemas)" },
	{ NULL, NULL },
};

static const char *const dialects[] = {
	"https://json-schema.org/draft/2020-12/schema",
	"https://spec.openapis.org/oas/3.1/dialect/base",
	NULL,
};

/* ---- small parts ---- */

char *sc_types_text(unsigned types)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ SC_T_OBJECT, "object" }, { SC_T_ARRAY, "array" }, { SC_T_STRING, "string" },
		{ SC_T_NUMBER, "number" }, { SC_T_INTEGER, "integer" }, { SC_T_BOOLEAN, "boolean" },
		{ SC_T_NULL, "null" },
	};
	char buf[128] = "";
	size_t n = 0, count = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		count += (types & names[i].bit) != 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(types & names[i].bit))
			continue;
		n++;
		if (n > 1)
			strcat(buf, n == count ? " or " : ", ");
		strcat(buf, names[i].name);
	}
	return sc_strdup(buf);
}

/* Shortest "%g" text that reads back as the same double. */
static char *number_text(double v)
{
	char buf[40];
	if (v == floor(v) && fabs(v) < 1e17) {
		snprintf(buf, sizeof buf, "%.0f", v);
		return sc_strdup(buf);
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return sc_strdup(buf);
}

#define INT64_LIMIT 9223372036854775808.0 /* 2^63 */

static void set_number(struct sc_number *n, double v)
{
	n->set = true;
	n->d = v;
	n->is_int = v == floor(v) && v >= -INT64_LIMIT && v < INT64_LIMIT;
	n->i = n->is_int ? (int64_t)v : 0;
	n->text = number_text(v);
	/* digits * 10^-scale from the shortest decimal form. */
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, fabs(v));
		if (strtod(buf, NULL) == fabs(v))
			break;
	}
	uint64_t digits = 0;
	int frac = 0;
	bool dot = false;
	char *p = buf;
	for (; *p && *p != 'e'; p++) {
		if (*p == '.') {
			dot = true;
			continue;
		}
		digits = digits * 10 + (uint64_t)(*p - '0');
		frac += dot;
	}
	int exp = *p == 'e' ? atoi(p + 1) : 0;
	int scale = frac - exp;
	while (digits && digits % 10 == 0) {
		digits /= 10;
		scale--;
	}
	n->digits = digits;
	n->scale = scale;
}

static void parse_number(struct sc_model *m, const cJSON *j, const char *ptr, const char *key, struct sc_number *n,
			 bool positive, int *count)
{
	const cJSON *v = sc_get(j, key);
	if (!v)
		return;
	(*count)++;
	char *p = sc_ptr_key(ptr, key);
	if (!cJSON_IsNumber(v))
		sc_error(m, p, "\"%s\" must be a number%s", key,
			 cJSON_IsBool(v) ? " (the OpenAPI 3.0 boolean form is not 3.1)" : "");
	else if (!isfinite(v->valuedouble))
		sc_error(m, p, "\"%s\" is too large", key);
	else if (positive && !(v->valuedouble > 0))
		sc_error(m, p, "\"%s\" must be greater than 0", key);
	else
		set_number(n, v->valuedouble);
	free(p);
}

static void parse_count(struct sc_model *m, const cJSON *j, const char *ptr, const char *key, bool *has, uint64_t *out,
			int *count)
{
	const cJSON *v = sc_get(j, key);
	if (!v)
		return;
	(*count)++;
	char *p = sc_ptr_key(ptr, key);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble > 9007199254740992.0)
		sc_error(m, p, "\"%s\" must be a non-negative integer", key);
	else {
		*has = true;
		*out = (uint64_t)v->valuedouble;
	}
	free(p);
}

/* The types a keyword constrains, for the "does not apply" check. */
static const struct {
	const char *key;
	unsigned types;
} keyword_types[] = {
	{ "properties", SC_T_OBJECT }, { "required", SC_T_OBJECT }, { "additionalProperties", SC_T_OBJECT },
	{ "patternProperties", SC_T_OBJECT }, { "propertyNames", SC_T_OBJECT },
	{ "dependentRequired", SC_T_OBJECT }, { "dependentSchemas", SC_T_OBJECT },
	{ "minProperties", SC_T_OBJECT }, { "maxProperties", SC_T_OBJECT }, { "discriminator", SC_T_OBJECT },
	{ "items", SC_T_ARRAY }, { "prefixItems", SC_T_ARRAY }, { "minItems", SC_T_ARRAY },
	{ "maxItems", SC_T_ARRAY }, { "uniqueItems", SC_T_ARRAY }, { "contains", SC_T_ARRAY },
	{ "minContains", SC_T_ARRAY }, { "maxContains", SC_T_ARRAY },
	{ "minimum", SC_T_NUMBER | SC_T_INTEGER }, { "maximum", SC_T_NUMBER | SC_T_INTEGER },
	{ "exclusiveMinimum", SC_T_NUMBER | SC_T_INTEGER }, { "exclusiveMaximum", SC_T_NUMBER | SC_T_INTEGER },
	{ "multipleOf", SC_T_NUMBER | SC_T_INTEGER },
	{ "minLength", SC_T_STRING }, { "maxLength", SC_T_STRING }, { "pattern", SC_T_STRING },
};

static void check_applicable(struct sc_model *m, const cJSON *j, const char *ptr, unsigned types)
{
	if (!types)
		return;
	for (size_t i = 0; i < sizeof keyword_types / sizeof keyword_types[0]; i++) {
		if (!sc_get(j, keyword_types[i].key) || (keyword_types[i].types & types))
			continue;
		char *p = sc_ptr_key(ptr, keyword_types[i].key), *t = sc_types_text(types);
		sc_error(m, p, "\"%s\" does not apply to type %s", keyword_types[i].key, t);
		free(p);
		free(t);
	}
}

static unsigned type_bit(const char *name)
{
	static const struct { const char *name; unsigned bit; } types[] = {
		{ "string", SC_T_STRING }, { "integer", SC_T_INTEGER }, { "number", SC_T_NUMBER },
		{ "boolean", SC_T_BOOLEAN }, { "object", SC_T_OBJECT }, { "array", SC_T_ARRAY },
		{ "null", SC_T_NULL },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(types[i].name, name) == 0)
			return types[i].bit;
	return 0;
}

static void parse_type(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr)
{
	const cJSON *t = sc_get(j, "type");
	if (!t)
		return;
	char *p = sc_ptr_key(ptr, "type");
	if (cJSON_IsString(t)) {
		s->types = type_bit(t->valuestring);
		if (!s->types)
			sc_error(m, p, "unknown type \"%s\"", t->valuestring);
	} else if (cJSON_IsArray(t) && t->child) {
		int i = 0;
		for (const cJSON *e = t->child; e; e = e->next, i++) {
			unsigned bit = cJSON_IsString(e) ? type_bit(e->valuestring) : 0;
			char *pi = sc_ptr_index(p, i);
			if (!bit)
				sc_error(m, pi, "a type must be one of the names string, integer, number, boolean, "
						"object, array, null");
			else if (s->types & bit)
				sc_error(m, pi, "type \"%s\" is listed twice", e->valuestring);
			s->types |= bit;
			free(pi);
		}
	} else {
		sc_error(m, p, "\"type\" must be a type name or a non-empty array of them");
	}
	free(p);
}

static struct sc_schema *child(struct sc_model *m, const cJSON *j, const char *ptr, const char *key, int *count)
{
	const cJSON *v = sc_get(j, key);
	if (!v)
		return NULL;
	(*count)++;
	char *p = sc_ptr_key(ptr, key);
	struct sc_schema *s = sc_parse_schema(m, v, p);
	free(p);
	return s;
}

/* A non-empty array of schemas (allOf, anyOf, oneOf, prefixItems). */
static struct sc_schema **child_list(struct sc_model *m, const cJSON *j, const char *ptr, const char *key, size_t *n,
				     int *count)
{
	const cJSON *v = sc_get(j, key);
	struct sc_schema **list = NULL;
	*n = 0;
	if (!v)
		return NULL;
	(*count)++;
	char *p = sc_ptr_key(ptr, key);
	if (!cJSON_IsArray(v) || !v->child) {
		sc_error(m, p, "\"%s\" must be a non-empty array of schemas", key);
	} else {
		int i = 0;
		for (const cJSON *e = v->child; e; e = e->next, i++) {
			char *pi = sc_ptr_index(p, i);
			SC_APPEND(list, *n, sc_parse_schema(m, e, pi));
			free(pi);
		}
	}
	free(p);
	return list;
}

static const cJSON *get_object_member(struct sc_model *m, const cJSON *j, const char *ptr, const char *key)
{
	const cJSON *v = sc_get(j, key);
	if (v && !cJSON_IsObject(v)) {
		char *p = sc_ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be an object", key);
		free(p);
		return NULL;
	}
	return v;
}

static struct sc_regex *compile_regex(struct sc_model *m, const char *pattern, const char *ptr)
{
	char err[256] = "";
	struct sc_regex *re = regex_compile(pattern, err, sizeof err);
	if (!re)
		sc_error(m, ptr, "pattern \"%s\": %s", pattern, err[0] ? err : "not supported");
	return re;
}

/* ---- objects ---- */

static void parse_object_keywords(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr, int *count)
{
	const cJSON *props = get_object_member(m, j, ptr, "properties");
	if (props) {
		(*count)++;
		char *pp = sc_ptr_key(ptr, "properties");
		for (const cJSON *it = props->child; it; it = it->next) {
			char *p = sc_ptr_key(pp, it->string);
			struct sc_prop prop = {
				.name = sc_strdup(it->string),
				.cname = sc_member_name(it->string),
				.schema = sc_parse_schema(m, it, p),
			};
			SC_APPEND(s->props, s->nprops, prop);
			free(p);
		}
		free(pp);
	}

	const cJSON *req = sc_get(j, "required");
	if (req) {
		(*count)++;
		char *p = sc_ptr_key(ptr, "required");
		if (!cJSON_IsArray(req)) {
			sc_error(m, p, "\"required\" must be an array of property names");
		} else {
			int i = 0;
			for (const cJSON *e = req->child; e; e = e->next, i++) {
				char *pi = sc_ptr_index(p, i);
				if (!cJSON_IsString(e)) {
					sc_error(m, pi, "\"required\" must list property names (strings)");
				} else {
					for (size_t k = 0; k < s->nrequired; k++)
						if (strcmp(s->required[k], e->valuestring) == 0)
							sc_error(m, pi, "\"%s\" is listed twice", e->valuestring);
					SC_APPEND(s->required, s->nrequired, sc_strdup(e->valuestring));
					for (size_t k = 0; k < s->nprops; k++)
						if (strcmp(s->props[k].name, e->valuestring) == 0)
							s->props[k].required = true;
				}
				free(pi);
			}
		}
		free(p);
	}

	const cJSON *ap = sc_get(j, "additionalProperties");
	if (ap) {
		(*count)++;
		if (cJSON_IsFalse(ap)) {
			s->additional = SC_AP_FALSE;
		} else {
			s->additional = SC_AP_SCHEMA;
			char *p = sc_ptr_key(ptr, "additionalProperties");
			s->additional_schema = sc_parse_schema(m, ap, p);
			free(p);
		}
	}

	const cJSON *pprops = get_object_member(m, j, ptr, "patternProperties");
	if (pprops) {
		(*count)++;
		char *pp = sc_ptr_key(ptr, "patternProperties");
		for (const cJSON *it = pprops->child; it; it = it->next) {
			char *p = sc_ptr_key(pp, it->string);
			struct sc_pattern_prop pr = {
				.pattern = sc_strdup(it->string),
				.re = compile_regex(m, it->string, p),
				.schema = sc_parse_schema(m, it, p),
			};
			SC_APPEND(s->pattern_props, s->npattern_props, pr);
			free(p);
		}
		free(pp);
	}

	s->property_names = child(m, j, ptr, "propertyNames", count);

	const cJSON *dr = get_object_member(m, j, ptr, "dependentRequired");
	if (dr) {
		(*count)++;
		char *pp = sc_ptr_key(ptr, "dependentRequired");
		for (const cJSON *it = dr->child; it; it = it->next) {
			char *p = sc_ptr_key(pp, it->string);
			struct sc_dep_required d = { .name = sc_strdup(it->string) };
			if (!cJSON_IsArray(it))
				sc_error(m, p, "must be an array of property names");
			for (const cJSON *e = cJSON_IsArray(it) ? it->child : NULL; e; e = e->next) {
				if (cJSON_IsString(e))
					SC_APPEND(d.names, d.n, sc_strdup(e->valuestring));
				else
					sc_error(m, p, "must list property names (strings)");
			}
			SC_APPEND(s->dep_required, s->ndep_required, d);
			free(p);
		}
		free(pp);
	}

	const cJSON *ds = get_object_member(m, j, ptr, "dependentSchemas");
	if (ds) {
		(*count)++;
		char *pp = sc_ptr_key(ptr, "dependentSchemas");
		for (const cJSON *it = ds->child; it; it = it->next) {
			char *p = sc_ptr_key(pp, it->string);
			struct sc_dep_schema d = { .name = sc_strdup(it->string), .schema = sc_parse_schema(m, it, p) };
			SC_APPEND(s->dep_schemas, s->ndep_schemas, d);
			free(p);
		}
		free(pp);
	}

	parse_count(m, j, ptr, "minProperties", &s->has_min_props, &s->min_props, count);
	parse_count(m, j, ptr, "maxProperties", &s->has_max_props, &s->max_props, count);
}

static void parse_discriminator(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr)
{
	const cJSON *d = sc_get(j, "discriminator");
	if (!d)
		return;
	char *p = sc_ptr_key(ptr, "discriminator");
	if (!cJSON_IsObject(d)) {
		sc_error(m, p, "\"discriminator\" must be an object");
	} else {
		static const struct sc_keyword keys[] = {
			{ "propertyName", NULL }, { "mapping", NULL }, { NULL, NULL },
		};
		sc_check_keys(m, d, p, keys);
		s->discriminator = sc_get_string(m, d, p, "propertyName", true);
		if (!sc_get(j, "oneOf") && !sc_get(j, "anyOf"))
			sc_error(m, p, "a discriminator needs \"oneOf\" or \"anyOf\" beside it");
		const cJSON *map = sc_get(d, "mapping");
		if (map && !cJSON_IsObject(map))
			sc_error(m, p, "\"mapping\" must be an object");
		for (const cJSON *it = cJSON_IsObject(map) ? map->child : NULL; it; it = it->next) {
			char *pm = sc_ptr_key(p, "mapping"), *pv = sc_ptr_key(pm, it->string);
			if (!cJSON_IsString(it)) {
				sc_error(m, pv, "a mapping value must be a $ref or a schema name");
			} else {
				/* Kept as text in the target's place until refs resolve. */
				struct sc_schema *ref = sc_xmalloc(sizeof *ref);
				ref->ptr = sc_strdup(pv);
				ref->ref_text = it->valuestring[0] == '#' ? sc_strdup(it->valuestring)
									  : sc_printf("#/components/schemas/%s", it->valuestring);
				struct sc_mapping mp = { .value = sc_strdup(it->string), .target = ref };
				SC_APPEND(s->mapping, s->nmapping, mp);
			}
			free(pm);
			free(pv);
		}
	}
	free(p);
}

/* ---- the schema ---- */

static struct sc_schema *new_node(struct sc_model *m, const char *ptr)
{
	struct sc_schema *s = sc_xmalloc(sizeof *s);
	s->ptr = sc_strdup(ptr);
	s->kind = SC_VALUE;
	SC_APPEND(m->nodes, m->nnodes, s);
	return s;
}

static void parse_enum_const(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr, int *count)
{
	const cJSON *e = sc_get(j, "enum");
	if (e) {
		(*count)++;
		if (!cJSON_IsArray(e)) {
			char *p = sc_ptr_key(ptr, "enum");
			sc_error(m, p, "\"enum\" must be an array");
			free(p);
		} else {
			s->enum_values = e;
		}
	}
	const cJSON *c = sc_get(j, "const");
	if (c) {
		(*count)++;
		s->const_value = c;
	}
	s->default_value = sc_get(j, "default");
}

static void parse_string_keywords(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr, int *count)
{
	parse_count(m, j, ptr, "minLength", &s->has_min_length, &s->min_length, count);
	parse_count(m, j, ptr, "maxLength", &s->has_max_length, &s->max_length, count);
	const cJSON *pat = sc_get(j, "pattern");
	if (pat) {
		(*count)++;
		char *p = sc_ptr_key(ptr, "pattern");
		if (!cJSON_IsString(pat)) {
			sc_error(m, p, "\"pattern\" must be a string");
		} else {
			s->pattern = sc_strdup(pat->valuestring);
			s->regex = compile_regex(m, pat->valuestring, p);
		}
		free(p);
	}
	const cJSON *f = sc_get(j, "format");
	if (cJSON_IsString(f)) {
		static const struct { const char *name; enum sc_format f; } formats[] = {
			{ "date-time", SC_FMT_DATE_TIME }, { "date", SC_FMT_DATE }, { "email", SC_FMT_EMAIL },
			{ "uuid", SC_FMT_UUID }, { "uri", SC_FMT_URI },
		};
		for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
			if (strcmp(formats[i].name, f->valuestring) == 0) {
				s->format = formats[i].f;
				(*count)++;
			}
		}
		/* Other formats (int64, password, ipv4, ...) are annotations. */
	}
}

static void parse_defs(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr)
{
	const cJSON *defs = get_object_member(m, j, ptr, "$defs");
	if (!defs)
		return;
	char *pd = sc_ptr_key(ptr, "$defs");
	for (const cJSON *it = defs->child; it; it = it->next) {
		char *p = sc_ptr_key(pd, it->string);
		SC_APPEND(s->defs, s->ndefs, sc_parse_schema(m, it, p));
		free(p);
	}
	free(pd);
}

static void check_schema_uri(struct sc_model *m, const cJSON *j, const char *ptr)
{
	const cJSON *v = sc_get(j, "$schema");
	if (!v)
		return;
	char *p = sc_ptr_key(ptr, "$schema");
	bool known = false;
	for (int i = 0; cJSON_IsString(v) && dialects[i]; i++)
		known |= strcmp(v->valuestring, dialects[i]) == 0;
	if (*ptr && strncmp(ptr, "/components/schemas/", 20) != 0)
		sc_error(m, p, "\"$schema\" is only understood at a document's root");
	else if (!known)
		sc_error(m, p, "\"$schema\": only the draft 2020-12 and OpenAPI 3.1 base dialects are understood");
	free(p);
}

struct sc_schema *sc_parse_schema(struct sc_model *m, const cJSON *j, const char *ptr)
{
	struct sc_schema *s = new_node(m, ptr);
	if (cJSON_IsBool(j)) {
		s->never = cJSON_IsFalse(j);
		s->annotations_only = !s->never;
		return s;
	}
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a schema must be an object or a boolean");
		s->annotations_only = true;
		return s;
	}
	sc_check_keys(m, j, ptr, schema_keys);
	static const char *const strings[] = { "description", "summary", "title", "$comment", "format", NULL };
	for (int i = 0; strings[i]; i++)
		free(sc_get_string(m, j, ptr, strings[i], false));
	check_schema_uri(m, j, ptr);
	s->doc = sc_get_string(m, j, ptr, "title", false);
	if (!s->doc)
		s->doc = sc_get_string(m, j, ptr, "description", false);

	int count = 0; /* constraint keywords seen, $ref aside */
	parse_type(m, s, j, ptr);
	count += sc_get(j, "type") != NULL;
	check_applicable(m, j, ptr, s->types);

	const cJSON *ref = sc_get(j, "$ref");
	if (ref) {
		if (!cJSON_IsString(ref)) {
			char *p = sc_ptr_key(ptr, "$ref");
			sc_error(m, p, "\"$ref\" must be a string");
			free(p);
		} else {
			s->ref_text = sc_strdup(ref->valuestring);
		}
	}
	parse_object_keywords(m, s, j, ptr, &count);
	s->items = child(m, j, ptr, "items", &count);
	s->prefix_items = child_list(m, j, ptr, "prefixItems", &s->nprefix_items, &count);
	s->contains = child(m, j, ptr, "contains", &count);
	parse_count(m, j, ptr, "minContains", &s->has_min_contains, &s->min_contains, &count);
	parse_count(m, j, ptr, "maxContains", &s->has_max_contains, &s->max_contains, &count);
	parse_count(m, j, ptr, "minItems", &s->has_min_items, &s->min_items, &count);
	parse_count(m, j, ptr, "maxItems", &s->has_max_items, &s->max_items, &count);
	const cJSON *u = sc_get(j, "uniqueItems");
	if (u) {
		if (!cJSON_IsBool(u)) {
			char *p = sc_ptr_key(ptr, "uniqueItems");
			sc_error(m, p, "\"uniqueItems\" must be true or false");
			free(p);
		}
		s->unique_items = cJSON_IsTrue(u);
		count += s->unique_items;
	}

	parse_number(m, j, ptr, "minimum", &s->minimum, false, &count);
	parse_number(m, j, ptr, "maximum", &s->maximum, false, &count);
	parse_number(m, j, ptr, "exclusiveMinimum", &s->exclusive_minimum, false, &count);
	parse_number(m, j, ptr, "exclusiveMaximum", &s->exclusive_maximum, false, &count);
	parse_number(m, j, ptr, "multipleOf", &s->multiple_of, true, &count);
	parse_string_keywords(m, s, j, ptr, &count);
	parse_enum_const(m, s, j, ptr, &count);

	s->all_of = child_list(m, j, ptr, "allOf", &s->nall_of, &count);
	s->any_of = child_list(m, j, ptr, "anyOf", &s->nany_of, &count);
	s->one_of = child_list(m, j, ptr, "oneOf", &s->none_of, &count);
	s->not_schema = child(m, j, ptr, "not", &count);
	s->if_schema = child(m, j, ptr, "if", &count);
	/* then/else without if are annotations-only in 2020-12; parse them anyway. */
	s->then_schema = child(m, j, ptr, "then", &count);
	s->else_schema = child(m, j, ptr, "else", &count);
	if (!s->if_schema) {
		count -= (s->then_schema != NULL) + (s->else_schema != NULL);
		s->then_schema = s->else_schema = NULL;
	}
	parse_discriminator(m, s, j, ptr);
	parse_defs(m, s, j, ptr);

	if (s->ref_text && count == 0)
		s->kind = SC_REF; /* an alias: resolved to its target */
	s->annotations_only = !s->ref_text && count == 0;
	return s;
}

/* ---- $ref ---- */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *sc_ref_pointer(const char *ref)
{
	size_t n = strlen(ref);
	char *d = sc_xmalloc(n + 1), *o = d;
	for (size_t i = 1; i < n; i++) {
		int hi, lo;
		if (ref[i] == '%' && i + 2 < n && (hi = hex_digit(ref[i + 1])) >= 0 &&
		    (lo = hex_digit(ref[i + 2])) >= 0) {
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else {
			*o++ = ref[i];
		}
	}
	*o = 0;
	return d;
}

const cJSON *sc_lookup(const cJSON *doc, const char *ptr)
{
	const cJSON *v = doc;
	const char *p = ptr;
	while (*p) {
		if (*p != '/')
			return NULL;
		p++;
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *tok = sc_xmalloc(n + 1), *t = tok;
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
				*t++ = p[i + 1] == '0' ? '~' : '/';
				i++;
			} else {
				*t++ = p[i];
			}
		}
		*t = 0;
		if (cJSON_IsObject(v)) {
			v = sc_get(v, tok);
		} else if (cJSON_IsArray(v)) {
			char *e;
			long i = strtol(tok, &e, 10);
			v = (*tok && !*e && i >= 0) ? cJSON_GetArrayItem(v, (int)i) : NULL;
		} else {
			v = NULL;
		}
		free(tok);
		if (!v)
			return NULL;
		p += n;
	}
	return v;
}

static struct sc_schema *find_node(struct sc_model *m, const char *ptr)
{
	for (size_t i = 0; i < m->nnodes; i++)
		if (strcmp(m->nodes[i]->ptr, ptr) == 0)
			return m->nodes[i];
	return NULL;
}

static struct sc_schema *resolve_ref(struct sc_model *m, const char *ref, const char *where)
{
	if (ref[0] != '#') {
		sc_error(m, where, "\"$ref\" to \"%s\": only references within this document (\"#...\") are supported",
			 ref);
		return NULL;
	}
	char *ptr = sc_ref_pointer(ref);
	if (ptr[0] && ptr[0] != '/') {
		sc_error(m, where, "\"$ref\" to \"%s\": anchors are not supported (use a JSON pointer)", ref);
		free(ptr);
		return NULL;
	}
	struct sc_schema *t = find_node(m, ptr);
	if (!t) {
		const cJSON *j = sc_lookup(m->doc, ptr);
		if (!j) {
			const char *cs = "/components/schemas/";
			if (strncmp(ptr, cs, strlen(cs)) == 0 && !strchr(ptr + strlen(cs), '/'))
				sc_error(m, where, "\"$ref\" to \"%s\": there is no schema \"%s\" in components/schemas", ref,
					 ptr + strlen(cs));
			else
				sc_error(m, where, "\"$ref\" to \"%s\": nothing is there", ref);
		} else if (!m->standalone && !*ptr) {
			sc_error(m, where, "\"$ref\" to \"%s\": the document's root is not a schema", ref);
		} else {
			t = sc_parse_schema(m, j, ptr);
		}
	}
	free(ptr);
	return t;
}

/* ---- children ---- */

void sc_children(struct sc_schema *s, void (*fn)(struct sc_schema *child, void *arg), void *arg)
{
	struct sc_schema *one[] = {
		s->additional_schema, s->property_names, s->items, s->contains,
		s->not_schema, s->if_schema, s->then_schema, s->else_schema,
	};
	for (size_t i = 0; i < s->nprops; i++)
		fn(s->props[i].schema, arg);
	for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
		if (one[i])
			fn(one[i], arg);
	for (size_t i = 0; i < s->npattern_props; i++)
		fn(s->pattern_props[i].schema, arg);
	for (size_t i = 0; i < s->ndep_schemas; i++)
		fn(s->dep_schemas[i].schema, arg);
	for (size_t i = 0; i < s->nprefix_items; i++)
		fn(s->prefix_items[i], arg);
	for (size_t i = 0; i < s->nall_of; i++)
		fn(s->all_of[i], arg);
	for (size_t i = 0; i < s->nany_of; i++)
		fn(s->any_of[i], arg);
	for (size_t i = 0; i < s->none_of; i++)
		fn(s->one_of[i], arg);
	for (size_t i = 0; i < s->ndefs; i++)
		fn(s->defs[i], arg);
}

/* ---- kinds ---- */

static bool is_integer_json(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= -INT64_LIMIT &&
	       v->valuedouble < INT64_LIMIT;
}

static bool typed_scalar(const struct sc_schema *s)
{
	const struct sc_schema *r = sc_resolve(s);
	return r && !r->nullable &&
	       (r->kind == SC_STRING || r->kind == SC_INTEGER || r->kind == SC_NUMBER || r->kind == SC_BOOLEAN);
}

static enum sc_kind decide_kind(const struct sc_schema *s)
{
	if (s->never || s->annotations_only)
		return SC_VALUE;
	unsigned t = s->types & ~(unsigned)SC_T_NULL;
	if (t == (SC_T_NUMBER | SC_T_INTEGER))
		t = SC_T_NUMBER;
	enum sc_kind k;
	switch (t) {
	case SC_T_STRING: k = SC_STRING; break;
	case SC_T_INTEGER: k = SC_INTEGER; break;
	case SC_T_NUMBER: k = SC_NUMBER; break;
	case SC_T_BOOLEAN: k = SC_BOOLEAN; break;
	case SC_T_OBJECT: k = SC_OBJECT; break;
	case SC_T_ARRAY: k = SC_ARRAY; break;
	default: return SC_VALUE;
	}
	if (s->ref || s->nall_of || s->nany_of || s->none_of || s->not_schema || s->if_schema || s->contains ||
	    s->ndep_required || s->ndep_schemas || s->npattern_props || s->property_names || s->nprefix_items)
		return SC_VALUE;
	if ((k == SC_OBJECT || k == SC_ARRAY) && (s->enum_values || s->const_value))
		return SC_VALUE;
	if (k == SC_OBJECT) {
		for (size_t i = 0; i < s->nrequired; i++) {
			size_t p = 0;
			while (p < s->nprops && strcmp(s->props[p].name, s->required[i]) != 0)
				p++;
			if (p == s->nprops)
				return SC_VALUE; /* required but not a property: checked on the value */
		}
	}
	return k;
}

/* A chain of aliases must end at a schema; marks loops. */
static void check_alias_loops(struct sc_model *m)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		size_t steps = 0;
		const struct sc_schema *t = s;
		while (t && t->kind == SC_REF && steps <= m->nnodes) {
			t = t->target;
			steps++;
		}
		if (t && t->kind == SC_REF) {
			sc_error(m, s->ptr, "\"$ref\" chain loops back to itself");
			s->target = NULL;
		}
	}
}

static void check_default(struct sc_model *m, struct sc_schema *s)
{
	const cJSON *d = s->default_value;
	if (!d || m->standalone)
		return;
	const struct sc_schema *r = sc_resolve(s);
	bool ok;
	switch (r->kind) {
	case SC_STRING: ok = cJSON_IsString(d); break;
	case SC_INTEGER: ok = is_integer_json(d); break;
	case SC_NUMBER: ok = cJSON_IsNumber(d); break;
	case SC_BOOLEAN: ok = cJSON_IsBool(d); break;
	case SC_VALUE: ok = true; break;
	default: ok = false; break;
	}
	if (cJSON_IsNull(d) && r->nullable)
		ok = true;
	if (!ok) {
		char *p = sc_ptr_key(s->ptr, "default"), *t = sc_types_text(r->types);
		if (r->kind == SC_OBJECT || r->kind == SC_ARRAY)
			sc_error(m, p, "a default for an %s is not supported (defaults are for scalars and "
				       "free-form values)", r->kind == SC_OBJECT ? "object" : "array");
		else
			sc_error(m, p, "the default is not of type %s", t);
		free(p);
		free(t);
	}
}

static void resolve_mapping(struct sc_model *m, struct sc_schema *s)
{
	if (!s->discriminator)
		return;
	struct sc_schema **branches = s->none_of ? s->one_of : s->any_of;
	size_t n = s->none_of ? s->none_of : s->nany_of;
	for (size_t i = 0; i < s->nmapping; i++) {
		struct sc_schema *ref = s->mapping[i].target;
		struct sc_schema *t = resolve_ref(m, ref->ref_text, ref->ptr);
		s->mapping[i].target = NULL;
		for (size_t b = 0; t && b < n; b++)
			if (branches[b] == t || (branches[b]->kind == SC_REF && branches[b]->target == t))
				s->mapping[i].target = branches[b];
		if (t && !s->mapping[i].target)
			sc_error(m, ref->ptr, "the mapping's target %s is not one of the %s branches", ref->ref_text,
				 s->none_of ? "oneOf" : "anyOf");
	}
	/* Implicit: a branch that refers to a component is selected by its name. */
	for (size_t b = 0; b < n; b++) {
		const struct sc_schema *t = branches[b]->kind == SC_REF ? branches[b]->target : NULL;
		if (!t || !t->component)
			continue;
		bool mapped = false;
		for (size_t i = 0; i < s->nmapping; i++)
			mapped |= s->mapping[i].target == branches[b] || strcmp(s->mapping[i].value, t->component) == 0;
		if (!mapped) {
			struct sc_mapping mp = { .value = sc_strdup(t->component), .target = branches[b] };
			SC_APPEND(s->mapping, s->nmapping, mp);
		}
	}
}

void sc_finish_schemas(struct sc_model *m)
{
	/* Nodes parsed on demand (refs to odd places) join the list as it grows. */
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if (!s->ref_text)
			continue;
		char *where = sc_ptr_key(s->ptr, "$ref");
		struct sc_schema *t = resolve_ref(m, s->ref_text, where);
		free(where);
		if (s->kind == SC_REF)
			s->target = t;
		else
			s->ref = t;
		if (!t && s->kind == SC_REF) {
			s->kind = SC_VALUE;
			s->annotations_only = true;
		}
	}
	check_alias_loops(m);
	if (m->errors)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if (s->kind != SC_REF) {
			s->kind = decide_kind(s);
			s->nullable = s->kind != SC_VALUE && (s->types & SC_T_NULL);
		}
	}
	/* Typed arrays check uniqueItems on typed scalar items only; the kinds
	   of the items are known now. */
	for (size_t i = 0; i < m->nnodes; i++) {
		struct sc_schema *s = m->nodes[i];
		if (s->kind == SC_ARRAY && s->unique_items && (!s->items || !typed_scalar(s->items))) {
			s->kind = SC_VALUE;
			s->nullable = false;
		}
	}
	for (size_t i = 0; i < m->nnodes; i++) {
		resolve_mapping(m, m->nodes[i]);
		check_default(m, m->nodes[i]);
	}
}

const cJSON *sc_default(const struct sc_schema *s)
{
	for (; s; s = s->kind == SC_REF ? s->target : NULL)
		if (s->default_value)
			return s->default_value;
	return NULL;
}

const struct sc_schema *sc_resolve(const struct sc_schema *s)
{
	/* Alias chains are checked for loops when loading, so this ends. */
	while (s && s->kind == SC_REF)
		s = s->target;
	return s;
}
