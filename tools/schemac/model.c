/* Reads the OpenAPI document (cJSON tree) into the model of model.h and
 * checks it. Every key of every object is either understood, an annotation,
 * or an error naming the keyword and its JSON pointer: what this first cut
 * cannot compile must fail the build, never be dropped silently. */
#include "model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */

void *sc_xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	return p;
}

char *sc_strdup(const char *s)
{
	size_t n = strlen(s);
	char *d = sc_xmalloc(n + 1);
	memcpy(d, s, n + 1);
	return d;
}

static char *vformat(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	char *s = sc_xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *sc_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vformat(fmt, ap);
	va_end(ap);
	return s;
}

void sc_error(struct sc_model *m, const char *ptr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = vformat(fmt, ap);
	va_end(ap);
	fprintf(stderr, "schemac: %s: %s: %s\n", m->file, ptr && *ptr ? ptr : "/", msg);
	free(msg);
	m->errors++;
}

/* The JSON pointer of a member of the value at ptr (RFC 6901 escaping). */
static char *ptr_key(const char *ptr, const char *key)
{
	size_t n = strlen(ptr), extra = 0;
	for (const char *k = key; *k; k++)
		extra += (*k == '~' || *k == '/');
	char *s = sc_xmalloc(n + 1 + strlen(key) + extra + 1);
	char *d = s + n;
	memcpy(s, ptr, n);
	*d++ = '/';
	for (const char *k = key; *k; k++) {
		if (*k == '~' || *k == '/') {
			*d++ = '~';
			*d++ = *k == '~' ? '0' : '1';
		} else {
			*d++ = *k;
		}
	}
	*d = 0;
	return s;
}

static char *ptr_index(const char *ptr, int i)
{
	return sc_printf("%s/%d", ptr, i);
}

#define APPEND(arr, n, item) \
	do { \
		(arr) = xrealloc((arr), sizeof *(arr) * ((n) + 1)); \
		(arr)[(n)++] = (item); \
	} while (0)

/* ---- C identifiers ---- */

static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do",
	"double", "else", "enum", "extern", "float", "for", "goto", "if",
	"inline", "int", "long", "register", "restrict", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union",
	"unsigned", "void", "volatile", "while", "bool", "true", "false",
	"_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
	"_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local", "main",
};

static bool is_keyword(const char *s)
{
	for (size_t i = 0; i < sizeof c_keywords / sizeof c_keywords[0]; i++)
		if (strcmp(s, c_keywords[i]) == 0)
			return true;
	return false;
}

static bool is_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* A name the generated code may use for a global symbol or struct tag:
 * an identifier, not a keyword, clear of the runtime's ig_ prefix and of
 * the names C reserves (a leading underscore). */
static bool is_global_ident(const char *s)
{
	return is_ident(s) && !is_keyword(s) && s[0] != '_' && strncmp(s, "ig_", 3) != 0 &&
	       strncmp(s, "IG_", 3) != 0;
}

/* A struct member name for a JSON key: other characters become '_'. */
static char *member_name(const char *key)
{
	size_t n = strlen(key);
	char *s = sc_xmalloc(n + 3);
	char *d = s;
	if (!n || (key[0] >= '0' && key[0] <= '9'))
		*d++ = '_';
	for (const char *k = key; *k; k++) {
		char c = *k;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		*d++ = ok ? c : '_';
	}
	if (is_keyword(s))
		*d++ = '_';
	*d = 0;
	return s;
}

/* ---- keyword tables ---- */

struct keyword {
	const char *name;
	const char *hint; /* NULL: understood or an annotation; else: unsupported */
};

#define COMING_JSON_SCHEMA "(coming with full JSON Schema support)"

static const struct keyword root_keys[] = {
	{ "openapi", NULL }, { "info", NULL }, { "paths", NULL }, { "components", NULL },
	{ "servers", NULL }, { "tags", NULL }, { "externalDocs", NULL },
	{ "jsonSchemaDialect", "(only the OpenAPI 3.1 base dialect is understood)" },
	{ "security", "(coming with authentication)" },
	{ "webhooks", "(webhooks are not served)" },
	{ NULL, NULL },
};

static const struct keyword info_keys[] = {
	{ "title", NULL }, { "version", NULL }, { "summary", NULL }, { "description", NULL },
	{ "termsOfService", NULL }, { "contact", NULL }, { "license", NULL }, { NULL, NULL },
};

static const struct keyword components_keys[] = {
	{ "schemas", NULL },
	{ "responses", "(coming later; write the response inline)" },
	{ "parameters", "(coming later; write the parameter inline)" },
	{ "examples", NULL },
	{ "requestBodies", "(coming with request bodies)" },
	{ "headers", "(coming with header parameters)" },
	{ "securitySchemes", "(coming with authentication)" },
	{ "links", "(links are not supported)" },
	{ "callbacks", "(callbacks are not supported)" },
	{ "pathItems", "(coming later; write the path item inline)" },
	{ NULL, NULL },
};

static const struct keyword path_item_keys[] = {
	{ "summary", NULL }, { "description", NULL }, { "parameters", NULL },
	{ "get", NULL }, { "put", NULL }, { "post", NULL }, { "delete", NULL }, { "patch", NULL },
	{ "head", "(HEAD is answered by the GET operation)" },
	{ "options", "(OPTIONS is answered by the router)" },
	{ "trace", "(TRACE is not served)" },
	{ "servers", "(per-path servers are not supported)" },
	{ "$ref", "(coming later; write the path item inline)" },
	{ NULL, NULL },
};

static const struct keyword operation_keys[] = {
	{ "operationId", NULL }, { "summary", NULL }, { "description", NULL }, { "tags", NULL },
	{ "parameters", NULL }, { "responses", NULL }, { "deprecated", NULL }, { "externalDocs", NULL },
	{ "requestBody", "(coming with request bodies)" },
	{ "callbacks", "(callbacks are not supported)" },
	{ "security", "(coming with authentication)" },
	{ "servers", "(per-operation servers are not supported)" },
	{ NULL, NULL },
};

static const struct keyword parameter_keys[] = {
	{ "name", NULL }, { "in", NULL }, { "required", NULL }, { "schema", NULL },
	{ "description", NULL }, { "deprecated", NULL }, { "example", NULL }, { "examples", NULL },
	{ "style", "(only the default style is understood)" },
	{ "explode", "(only the default style is understood)" },
	{ "allowReserved", "(coming with query parameters)" },
	{ "allowEmptyValue", "(coming with query parameters)" },
	{ "content", "(coming later; use schema)" },
	{ "$ref", "(coming later; write the parameter inline)" },
	{ NULL, NULL },
};

static const struct keyword response_keys[] = {
	{ "description", NULL }, { "content", NULL },
	{ "headers", "(coming with response headers)" },
	{ "links", "(links are not supported)" },
	{ "$ref", "(coming later; write the response inline)" },
	{ NULL, NULL },
};

static const struct keyword media_keys[] = {
	{ "schema", NULL }, { "example", NULL }, { "examples", NULL },
	{ "encoding", "(coming with request bodies)" },
	{ NULL, NULL },
};

static const struct keyword schema_keys[] = {
	{ "type", NULL }, { "properties", NULL }, { "required", NULL }, { "items", NULL },
	{ "$ref", NULL }, { "minimum", NULL }, { "maximum", NULL }, { "exclusiveMinimum", NULL },
	{ "exclusiveMaximum", NULL }, { "minLength", NULL }, { "maxLength", NULL }, { "enum", NULL },
	{ "additionalProperties", NULL },
	/* annotations */
	{ "description", NULL }, { "summary", NULL }, { "title", NULL }, { "example", NULL },
	{ "examples", NULL }, { "format", NULL }, { "$comment", NULL }, { "deprecated", NULL },
	{ "externalDocs", NULL },
	/* not yet */
	{ "default", "(coming with request decoding)" },
	{ "readOnly", "(coming with request bodies)" },
	{ "writeOnly", "(coming with request bodies)" },
	{ "nullable", "(an OpenAPI 3.0 keyword; 3.1 spells it type: [T, \"null\"], which is "
		      "coming with full JSON Schema support)" },
	{ "discriminator", COMING_JSON_SCHEMA }, { "xml", "(XML is not supported)" },
	{ "allOf", COMING_JSON_SCHEMA }, { "anyOf", COMING_JSON_SCHEMA }, { "oneOf", COMING_JSON_SCHEMA },
	{ "not", COMING_JSON_SCHEMA }, { "if", COMING_JSON_SCHEMA }, { "then", COMING_JSON_SCHEMA },
	{ "else", COMING_JSON_SCHEMA }, { "const", COMING_JSON_SCHEMA }, { "pattern", COMING_JSON_SCHEMA },
	{ "multipleOf", COMING_JSON_SCHEMA }, { "minItems", COMING_JSON_SCHEMA },
	{ "maxItems", COMING_JSON_SCHEMA }, { "uniqueItems", COMING_JSON_SCHEMA },
	{ "contains", COMING_JSON_SCHEMA }, { "minContains", COMING_JSON_SCHEMA },
	{ "maxContains", COMING_JSON_SCHEMA }, { "prefixItems", COMING_JSON_SCHEMA },
	{ "minProperties", COMING_JSON_SCHEMA }, { "maxProperties", COMING_JSON_SCHEMA },
	{ "patternProperties", COMING_JSON_SCHEMA }, { "propertyNames", COMING_JSON_SCHEMA },
	{ "dependentRequired", COMING_JSON_SCHEMA }, { "dependentSchemas", COMING_JSON_SCHEMA },
	{ "unevaluatedProperties", COMING_JSON_SCHEMA }, { "unevaluatedItems", COMING_JSON_SCHEMA },
	{ "contentEncoding", COMING_JSON_SCHEMA }, { "contentMediaType", COMING_JSON_SCHEMA },
	{ "contentSchema", COMING_JSON_SCHEMA },
	{ "$defs", "(put shared schemas under components/schemas)" },
	{ "$id", COMING_JSON_SCHEMA }, { "$anchor", COMING_JSON_SCHEMA }, { "$schema", COMING_JSON_SCHEMA },
	{ "$dynamicRef", COMING_JSON_SCHEMA }, { "$dynamicAnchor", COMING_JSON_SCHEMA },
	{ "$vocabulary", COMING_JSON_SCHEMA },
	{ NULL, NULL },
};

/* Keys that may stand beside $ref (3.1 allows siblings; these change nothing). */
static const char *const ref_sibling_keys[] = {
	"$ref", "description", "summary", "title", "example", "examples", "$comment", "deprecated", NULL,
};

/* Checks every key of obj against a table; x- extensions are allowed. */
static void check_keys(struct sc_model *m, const cJSON *obj, const char *ptr, const struct keyword *table)
{
	for (const cJSON *it = obj->child; it; it = it->next) {
		if (strncmp(it->string, "x-", 2) == 0)
			continue;
		const struct keyword *k = table;
		while (k->name && strcmp(k->name, it->string) != 0)
			k++;
		char *p = ptr_key(ptr, it->string);
		if (!k->name)
			sc_error(m, p, "unknown keyword \"%s\"", it->string);
		else if (k->hint)
			sc_error(m, p, "unsupported keyword \"%s\" %s", it->string, k->hint);
		free(p);
	}
}

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A member that must be an object when present; NULL (and an error when
 * required) otherwise. */
static const cJSON *get_object(struct sc_model *m, const cJSON *obj, const char *ptr, const char *key, bool required)
{
	const cJSON *v = get(obj, key);
	if (!v) {
		if (required)
			sc_error(m, ptr, "missing \"%s\"", key);
		return NULL;
	}
	if (!cJSON_IsObject(v)) {
		char *p = ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be an object", key);
		free(p);
		return NULL;
	}
	return v;
}

static char *get_string(struct sc_model *m, const cJSON *obj, const char *ptr, const char *key, bool required)
{
	const cJSON *v = get(obj, key);
	if (!v) {
		if (required)
			sc_error(m, ptr, "missing \"%s\"", key);
		return NULL;
	}
	if (!cJSON_IsString(v)) {
		char *p = ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be a string", key);
		free(p);
		return NULL;
	}
	return sc_strdup(v->valuestring);
}

static void check_annotation_strings(struct sc_model *m, const cJSON *obj, const char *ptr)
{
	static const char *const keys[] = { "description", "summary", "title", "format", "$comment", NULL };
	for (int i = 0; keys[i]; i++)
		free(get_string(m, obj, ptr, keys[i], false));
}

/* ---- schemas ---- */

static struct sc_schema *find_component(const struct sc_model *m, const char *name)
{
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->component, name) == 0)
			return m->components[i];
	return NULL;
}

const struct sc_schema *sc_resolve(const struct sc_schema *s)
{
	/* Chains of components that only refer on are checked for cycles when
	   loading, so this ends. */
	while (s && s->kind == SC_REF)
		s = s->target;
	return s;
}

static const char *kind_name(enum sc_kind k)
{
	switch (k) {
	case SC_STRING: return "string";
	case SC_INTEGER: return "integer";
	case SC_NUMBER: return "number";
	case SC_BOOLEAN: return "boolean";
	case SC_OBJECT: return "object";
	case SC_ARRAY: return "array";
	case SC_REF: break;
	}
	return "$ref";
}

/* Shortest "%g" text that reads back as the same double. */
static char *number_text(double v)
{
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return sc_strdup(buf);
}

/* Integers beyond 2^53 do not survive the trip through a double. */
#define EXACT_LIMIT 9007199254740992.0

static void parse_bound(struct sc_model *m, struct sc_schema *s, const cJSON *obj, const char *ptr,
			const char *key, struct sc_bound *b)
{
	const cJSON *v = get(obj, key);
	if (!v)
		return;
	char *p = ptr_key(ptr, key);
	if (s->kind != SC_INTEGER && s->kind != SC_NUMBER) {
		sc_error(m, p, "\"%s\" does not apply to type \"%s\"", key, kind_name(s->kind));
	} else if (!cJSON_IsNumber(v)) {
		sc_error(m, p, "\"%s\" must be a number%s", key,
			 cJSON_IsBool(v) ? " (the OpenAPI 3.0 boolean form is not 3.1)" : "");
	} else if (s->kind == SC_INTEGER && (v->valuedouble != floor(v->valuedouble) ||
					     fabs(v->valuedouble) > EXACT_LIMIT)) {
		sc_error(m, p, "\"%s\" of an integer must be a whole number within +-2^53", key);
	} else {
		b->set = true;
		b->d = v->valuedouble;
		b->i = (int64_t)v->valuedouble;
		b->text = s->kind == SC_INTEGER ? sc_printf("%lld", (long long)b->i) : number_text(b->d);
	}
	free(p);
}

static void parse_length(struct sc_model *m, struct sc_schema *s, const cJSON *obj, const char *ptr,
			 const char *key, bool *has, uint64_t *out)
{
	const cJSON *v = get(obj, key);
	if (!v)
		return;
	char *p = ptr_key(ptr, key);
	if (s->kind != SC_STRING)
		sc_error(m, p, "\"%s\" does not apply to type \"%s\"", key, kind_name(s->kind));
	else if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) ||
		 v->valuedouble > EXACT_LIMIT)
		sc_error(m, p, "\"%s\" must be a non-negative integer", key);
	else {
		*has = true;
		*out = (uint64_t)v->valuedouble;
	}
	free(p);
}

static void parse_enum(struct sc_model *m, struct sc_schema *s, const cJSON *obj, const char *ptr)
{
	const cJSON *v = get(obj, "enum");
	if (!v)
		return;
	char *p = ptr_key(ptr, "enum");
	if (s->kind != SC_STRING && s->kind != SC_INTEGER) {
		sc_error(m, p, "\"enum\" is supported for strings and integers only, not \"%s\" %s",
			 kind_name(s->kind), COMING_JSON_SCHEMA);
	} else if (!cJSON_IsArray(v) || !v->child) {
		sc_error(m, p, "\"enum\" must be a non-empty array");
	} else {
		int i = 0;
		for (const cJSON *e = v->child; e; e = e->next, i++) {
			bool ok = s->kind == SC_STRING ? cJSON_IsString(e)
						       : cJSON_IsNumber(e) && e->valuedouble == floor(e->valuedouble) &&
							 fabs(e->valuedouble) <= EXACT_LIMIT;
			if (!ok) {
				char *pi = ptr_index(p, i);
				sc_error(m, pi, "an enum value of a%s schema must be a%s", s->kind == SC_STRING ? " string" : "n integer",
					 s->kind == SC_STRING ? " string" : " whole number within +-2^53");
				free(pi);
			}
		}
		s->enum_values = (cJSON *)v;
	}
	free(p);
}

static struct sc_schema *parse_schema(struct sc_model *m, const cJSON *j, const char *ptr);

static void parse_properties(struct sc_model *m, struct sc_schema *s, const cJSON *j, const char *ptr)
{
	const cJSON *props = get_object(m, j, ptr, "properties", false);
	char *pp = ptr_key(ptr, "properties");
	if (props) {
		for (const cJSON *it = props->child; it; it = it->next) {
			char *p = ptr_key(pp, it->string);
			struct sc_prop prop = {
				.name = sc_strdup(it->string),
				.cname = member_name(it->string),
				.schema = parse_schema(m, it, p),
			};
			for (size_t i = 0; i < s->nprops; i++)
				if (strcmp(s->props[i].name, prop.name) == 0)
					sc_error(m, p, "property \"%s\" appears twice", prop.name);
			APPEND(s->props, s->nprops, prop);
			free(p);
		}
	}
	free(pp);

	const cJSON *req = get(j, "required");
	if (req) {
		char *p = ptr_key(ptr, "required");
		if (!cJSON_IsArray(req)) {
			sc_error(m, p, "\"required\" must be an array of property names");
		} else {
			int i = 0;
			for (const cJSON *e = req->child; e; e = e->next, i++) {
				char *pi = ptr_index(p, i);
				size_t k = 0;
				if (cJSON_IsString(e))
					while (k < s->nprops && strcmp(s->props[k].name, e->valuestring) != 0)
						k++;
				if (!cJSON_IsString(e))
					sc_error(m, pi, "\"required\" must list property names (strings)");
				else if (k == s->nprops)
					sc_error(m, pi, "\"%s\" is required but not in \"properties\" %s", e->valuestring,
						 COMING_JSON_SCHEMA);
				else
					s->props[k].required = true;
				free(pi);
			}
		}
		free(p);
	}

	const cJSON *ap = get(j, "additionalProperties");
	if (ap && !cJSON_IsFalse(ap)) {
		char *p = ptr_key(ptr, "additionalProperties");
		sc_error(m, p, "only \"additionalProperties\": false is supported %s", COMING_JSON_SCHEMA);
		free(p);
	}
}

static enum sc_kind parse_type(struct sc_model *m, const cJSON *j, const char *ptr, bool *ok)
{
	static const struct { const char *name; enum sc_kind kind; } types[] = {
		{ "string", SC_STRING }, { "integer", SC_INTEGER }, { "number", SC_NUMBER },
		{ "boolean", SC_BOOLEAN }, { "object", SC_OBJECT }, { "array", SC_ARRAY },
	};
	const cJSON *t = get(j, "type");
	*ok = false;
	if (!t) {
		sc_error(m, ptr, "missing \"type\" (untyped schemas are coming with full JSON Schema support)");
		return SC_STRING;
	}
	char *p = ptr_key(ptr, "type");
	if (cJSON_IsString(t)) {
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
			if (strcmp(types[i].name, t->valuestring) == 0) {
				*ok = true;
				free(p);
				return types[i].kind;
			}
		}
		if (strcmp(t->valuestring, "null") == 0)
			sc_error(m, p, "type \"null\" is not supported %s", COMING_JSON_SCHEMA);
		else
			sc_error(m, p, "unknown type \"%s\"", t->valuestring);
	} else if (cJSON_IsArray(t)) {
		sc_error(m, p, "a list of types is not supported %s", COMING_JSON_SCHEMA);
	} else {
		sc_error(m, p, "\"type\" must be a string");
	}
	free(p);
	return SC_STRING;
}

static struct sc_schema *parse_ref(struct sc_model *m, const cJSON *j, const char *ptr)
{
	static const char prefix[] = "#/components/schemas/";
	struct sc_schema *s = sc_xmalloc(sizeof *s);
	s->kind = SC_REF;
	s->ptr = sc_strdup(ptr);
	char *p = ptr_key(ptr, "$ref");
	const cJSON *ref = get(j, "$ref");
	for (const cJSON *it = j->child; it; it = it->next) {
		int k = 0;
		while (ref_sibling_keys[k] && strcmp(ref_sibling_keys[k], it->string) != 0)
			k++;
		if (!ref_sibling_keys[k] && strncmp(it->string, "x-", 2) != 0) {
			char *pk = ptr_key(ptr, it->string);
			sc_error(m, pk, "keyword \"%s\" beside \"$ref\" is not supported %s", it->string,
				 COMING_JSON_SCHEMA);
			free(pk);
		}
	}
	check_annotation_strings(m, j, ptr);
	if (!cJSON_IsString(ref)) {
		sc_error(m, p, "\"$ref\" must be a string");
	} else if (strncmp(ref->valuestring, prefix, sizeof prefix - 1) != 0) {
		sc_error(m, p, "\"$ref\" to \"%s\": only refs to #/components/schemas/<name> are supported",
			 ref->valuestring);
	} else {
		const char *name = ref->valuestring + sizeof prefix - 1;
		s->target = find_component(m, name);
		if (!s->target)
			sc_error(m, p, "\"$ref\" to \"%s\": there is no schema \"%s\" in components/schemas",
				 ref->valuestring, name);
	}
	free(p);
	return s;
}

static struct sc_schema *parse_schema(struct sc_model *m, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a schema must be an object%s",
			 cJSON_IsBool(j) ? " (boolean schemas are coming with full JSON Schema support)" : "");
		struct sc_schema *s = sc_xmalloc(sizeof *s);
		s->kind = SC_STRING;
		s->ptr = sc_strdup(ptr);
		return s;
	}
	if (get(j, "$ref"))
		return parse_ref(m, j, ptr);

	struct sc_schema *s = sc_xmalloc(sizeof *s);
	s->ptr = sc_strdup(ptr);
	check_keys(m, j, ptr, schema_keys);
	check_annotation_strings(m, j, ptr);
	bool ok;
	s->kind = parse_type(m, j, ptr, &ok);
	if (!ok)
		return s;
	s->doc = get_string(m, j, ptr, "title", false);
	if (!s->doc)
		s->doc = get_string(m, j, ptr, "description", false);

	static const char *const object_only[] = { "properties", "required", "additionalProperties", NULL };
	for (int i = 0; object_only[i]; i++) {
		if (s->kind != SC_OBJECT && get(j, object_only[i])) {
			char *p = ptr_key(ptr, object_only[i]);
			sc_error(m, p, "\"%s\" does not apply to type \"%s\"", object_only[i], kind_name(s->kind));
			free(p);
		}
	}
	if (s->kind == SC_OBJECT)
		parse_properties(m, s, j, ptr);

	const cJSON *items = get(j, "items");
	char *pi = ptr_key(ptr, "items");
	if (s->kind == SC_ARRAY) {
		if (!items) {
			sc_error(m, ptr, "missing \"items\" (arrays of any value are coming with full JSON Schema support)");
		} else {
			s->items = parse_schema(m, items, pi);
		}
	} else if (items) {
		sc_error(m, pi, "\"items\" does not apply to type \"%s\"", kind_name(s->kind));
	}
	free(pi);

	parse_bound(m, s, j, ptr, "minimum", &s->minimum);
	parse_bound(m, s, j, ptr, "maximum", &s->maximum);
	parse_bound(m, s, j, ptr, "exclusiveMinimum", &s->exclusive_minimum);
	parse_bound(m, s, j, ptr, "exclusiveMaximum", &s->exclusive_maximum);
	parse_length(m, s, j, ptr, "minLength", &s->has_min_length, &s->min_length);
	parse_length(m, s, j, ptr, "maxLength", &s->has_max_length, &s->max_length);
	parse_enum(m, s, j, ptr);
	return s;
}

/* components/schemas: every entry gets its node first, so refs between
 * them resolve in any order. */
static void parse_components(struct sc_model *m, const cJSON *doc)
{
	const cJSON *comp = get_object(m, doc, "", "components", false);
	if (!comp)
		return;
	check_keys(m, comp, "/components", components_keys);
	const cJSON *schemas = get_object(m, comp, "/components", "schemas", false);
	if (!schemas)
		return;
	for (const cJSON *it = schemas->child; it; it = it->next) {
		struct sc_schema *s = sc_xmalloc(sizeof *s);
		s->component = sc_strdup(it->string);
		s->ptr = ptr_key("/components/schemas", it->string);
		if (!is_global_ident(it->string))
			sc_error(m, s->ptr, "a schema name must be a C identifier (not a keyword, not starting "
					    "with \"ig_\" or \"_\"): it names the struct");
		APPEND(m->components, m->ncomponents, s);
	}
	size_t i = 0;
	for (const cJSON *it = schemas->child; it; it = it->next, i++) {
		struct sc_schema *shell = m->components[i];
		struct sc_schema *s = parse_schema(m, it, shell->ptr);
		char *name = shell->component, *ptr = shell->ptr;
		*shell = *s;
		shell->component = name;
		shell->ptr = ptr;
		free(s);
	}
	/* A component that is only a $ref must not lead back to itself. */
	for (i = 0; i < m->ncomponents; i++) {
		const struct sc_schema *s = m->components[i];
		size_t steps = 0;
		while (s && s->kind == SC_REF && steps <= m->ncomponents) {
			s = s->target;
			steps++;
		}
		if (s && s->kind == SC_REF) {
			sc_error(m, m->components[i]->ptr, "\"$ref\" chain loops back to itself");
			m->components[i]->target = NULL;
		}
	}
}

/* ---- paths and operations ---- */

static const char *const methods[] = { "get", "put", "post", "delete", "patch" };
#define NMETHODS (sizeof methods / sizeof methods[0])

static char *upper(const char *s)
{
	char *u = sc_strdup(s);
	for (char *c = u; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	return u;
}

static void parse_template(struct sc_model *m, struct sc_path *p)
{
	const char *t = p->tmpl;
	if (t[0] != '/') {
		sc_error(m, p->ptr, "a path must start with '/'");
		return;
	}
	const char *seg = t + 1;
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		struct sc_segment sg = { 0 };
		const char *open = memchr(seg, '{', n), *close = memchr(seg, '}', n);
		if (n >= 2 && seg[0] == '{' && seg[n - 1] == '}' && open == seg && close == seg + n - 1) {
			sg.param = true;
			sg.text = sc_xmalloc(n - 1);
			memcpy(sg.text, seg + 1, n - 2);
			if (!sg.text[0])
				sc_error(m, p->ptr, "empty parameter name in the path template");
		} else {
			if (open || close)
				sc_error(m, p->ptr, "a path parameter must fill a whole segment (\"/a/{id}\", not \"/a/x{id}\")");
			for (size_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char)seg[i];
				if (c <= ' ' || c >= 127 || c == '%' || c == '?' || c == '#') {
					sc_error(m, p->ptr, "the path template holds '%c' (use plain characters; "
							    "matching is on the raw, undecoded path)", c > ' ' && c < 127 ? c : '?');
					break;
				}
			}
			sg.text = sc_xmalloc(n + 1);
			memcpy(sg.text, seg, n);
		}
		for (size_t i = 0; sg.param && i < p->nsegs; i++)
			if (p->segs[i].param && strcmp(p->segs[i].text, sg.text) == 0)
				sc_error(m, p->ptr, "parameter {%s} appears twice in the path", sg.text);
		APPEND(p->segs, p->nsegs, sg);
		if (!end)
			break;
		seg = end + 1;
	}
}

static bool same_shape(const struct sc_path *a, const struct sc_path *b)
{
	if (a->nsegs != b->nsegs)
		return false;
	for (size_t i = 0; i < a->nsegs; i++) {
		if (a->segs[i].param != b->segs[i].param)
			return false;
		if (!a->segs[i].param && strcmp(a->segs[i].text, b->segs[i].text) != 0)
			return false;
	}
	return true;
}

static void parse_parameter(struct sc_model *m, struct sc_op *op, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a parameter must be an object");
		return;
	}
	check_keys(m, j, ptr, parameter_keys);
	free(get_string(m, j, ptr, "description", false));
	char *name = get_string(m, j, ptr, "name", true);
	char *in = get_string(m, j, ptr, "in", true);
	const cJSON *sj = get(j, "schema");
	if (!name || !in)
		return;
	char *pin = ptr_key(ptr, "in");
	bool ok = false;
	if (strcmp(in, "path") == 0)
		ok = true;
	else if (strcmp(in, "query") == 0)
		sc_error(m, pin, "unsupported parameter location \"query\" (coming with query parameters)");
	else if (strcmp(in, "header") == 0)
		sc_error(m, pin, "unsupported parameter location \"header\" (coming with header parameters)");
	else if (strcmp(in, "cookie") == 0)
		sc_error(m, pin, "unsupported parameter location \"cookie\" (cookies are not supported)");
	else
		sc_error(m, pin, "unknown parameter location \"%s\"", in);
	free(pin);
	if (!ok)
		return;

	const cJSON *req = get(j, "required");
	if (!cJSON_IsTrue(req))
		sc_error(m, ptr, "a path parameter must have \"required\": true");
	if (!sj) {
		sc_error(m, ptr, "missing \"schema\"");
		return;
	}
	char *ps = ptr_key(ptr, "schema");
	struct sc_param prm = {
		.name = name,
		.cname = member_name(name),
		.in = SC_IN_PATH,
		.schema = parse_schema(m, sj, ps),
		.ptr = sc_strdup(ptr),
	};
	const struct sc_schema *r = sc_resolve(prm.schema);
	if (r && r->kind != SC_INTEGER && r->kind != SC_STRING)
		sc_error(m, ps, "path parameters of type \"%s\" are not supported yet (integer and string are)",
			 kind_name(r->kind));
	free(ps);

	/* An operation's parameter replaces the path item's one of that name. */
	for (size_t i = 0; i < op->nparams; i++) {
		if (strcmp(op->params[i].name, name) == 0) {
			op->params[i] = prm;
			return;
		}
	}
	APPEND(op->params, op->nparams, prm);
}

static void parse_parameters(struct sc_model *m, struct sc_op *op, const cJSON *list, const char *ptr)
{
	if (!list)
		return;
	char *p = ptr_key(ptr, "parameters");
	if (!cJSON_IsArray(list)) {
		sc_error(m, p, "\"parameters\" must be an array");
		free(p);
		return;
	}
	size_t before = op->nparams;
	int i = 0;
	for (const cJSON *e = list->child; e; e = e->next, i++) {
		char *pi = ptr_index(p, i);
		const cJSON *name = get(e, "name");
		if (cJSON_IsString(name)) {
			/* Twice in one list is a document error; an operation's
			   parameter replacing its path item's is not. */
			for (size_t k = before; k < op->nparams; k++)
				if (strcmp(op->params[k].name, name->valuestring) == 0)
					sc_error(m, pi, "parameter \"%s\" is listed twice", name->valuestring);
		}
		parse_parameter(m, op, e, pi);
		free(pi);
	}
	free(p);
}

static void parse_response(struct sc_model *m, struct sc_op *op, const char *code, const cJSON *j, const char *ptr)
{
	int status = 0;
	if (strlen(code) == 3 && code[0] >= '1' && code[0] <= '5' && code[1] >= '0' && code[1] <= '9' &&
	    code[2] >= '0' && code[2] <= '9')
		status = atoi(code);
	if (!status) {
		if (strcmp(code, "default") == 0 || (strlen(code) == 3 && strcmp(code + 1, "XX") == 0))
			sc_error(m, ptr, "response \"%s\" is not supported yet (list each status)", code);
		else
			sc_error(m, ptr, "\"%s\" is not an HTTP status code", code);
		return;
	}
	if (status < 200) {
		sc_error(m, ptr, "1xx responses are not supported");
		return;
	}
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a response must be an object");
		return;
	}
	check_keys(m, j, ptr, response_keys);
	free(get_string(m, j, ptr, "description", !get(j, "$ref")));
	struct sc_response r = { .status = status, .ptr = sc_strdup(ptr) };
	const cJSON *content = get_object(m, j, ptr, "content", false);
	if (content) {
		char *pc = ptr_key(ptr, "content");
		for (const cJSON *it = content->child; it; it = it->next) {
			char *pm = ptr_key(pc, it->string);
			if (strcmp(it->string, "application/json") != 0) {
				sc_error(m, pm, "media type \"%s\" is not supported yet (application/json is)", it->string);
			} else if (!cJSON_IsObject(it)) {
				sc_error(m, pm, "a media type must be an object");
			} else if (status == 204 || status == 304) {
				sc_error(m, pm, "a %d response has no body", status);
			} else {
				check_keys(m, it, pm, media_keys);
				const cJSON *sj = get(it, "schema");
				char *ps = ptr_key(pm, "schema");
				if (!sj)
					sc_error(m, pm, "missing \"schema\" (the encoder is generated from it)");
				else
					r.schema = parse_schema(m, sj, ps);
				free(ps);
			}
			free(pm);
		}
		free(pc);
	}
	APPEND(op->responses, op->nresponses, r);
}

static void parse_operation(struct sc_model *m, struct sc_path *path, const char *method, const cJSON *j,
			    const cJSON *path_params, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "an operation must be an object");
		return;
	}
	check_keys(m, j, ptr, operation_keys);
	struct sc_op *op = sc_xmalloc(sizeof *op);
	op->method = upper(method);
	op->path = path;
	op->ptr = sc_strdup(ptr);
	op->summary = get_string(m, j, ptr, "summary", false);
	free(get_string(m, j, ptr, "description", false));
	op->id = get_string(m, j, ptr, "operationId", true);
	if (!op->id)
		op->id = sc_strdup("missing_operationId");
	else if (!is_global_ident(op->id)) {
		char *p = ptr_key(ptr, "operationId");
		sc_error(m, p, "operationId \"%s\" must be a C identifier (not a keyword, not starting with \"ig_\" "
			       "or \"_\"): it names the handler", op->id);
		free(p);
	}
	for (size_t i = 0; i < m->nops; i++) {
		if (strcmp(m->ops[i]->id, op->id) == 0) {
			char *p = ptr_key(ptr, "operationId");
			sc_error(m, p, "operationId \"%s\" is used twice (also at %s)", op->id, m->ops[i]->ptr);
			free(p);
		}
	}

	parse_parameters(m, op, path_params, path->ptr);
	parse_parameters(m, op, get(j, "parameters"), ptr);

	/* Every {name} has its parameter and every path parameter its {name}. */
	for (size_t s = 0; s < path->nsegs; s++) {
		if (!path->segs[s].param)
			continue;
		size_t k = 0;
		while (k < op->nparams && strcmp(op->params[k].name, path->segs[s].text) != 0)
			k++;
		if (k == op->nparams)
			sc_error(m, ptr, "path parameter {%s} is not declared in \"parameters\"", path->segs[s].text);
		else
			op->params[k].segment = s;
	}
	for (size_t k = 0; k < op->nparams; k++) {
		size_t s = 0;
		while (s < path->nsegs && !(path->segs[s].param && strcmp(path->segs[s].text, op->params[k].name) == 0))
			s++;
		if (s == path->nsegs)
			sc_error(m, op->params[k].ptr, "path parameter \"%s\" is not in the path %s", op->params[k].name,
				 path->tmpl);
		for (size_t o = 0; o < k; o++)
			if (strcmp(op->params[o].cname, op->params[k].cname) == 0)
				sc_error(m, op->params[k].ptr, "parameters \"%s\" and \"%s\" have the same C name \"%s\"",
					 op->params[o].name, op->params[k].name, op->params[k].cname);
	}

	const cJSON *responses = get_object(m, j, ptr, "responses", true);
	char *pr = ptr_key(ptr, "responses");
	if (responses) {
		if (!responses->child)
			sc_error(m, pr, "an operation needs at least one response");
		for (const cJSON *it = responses->child; it; it = it->next) {
			char *p = ptr_key(pr, it->string);
			parse_response(m, op, it->string, it, p);
			free(p);
		}
	}
	free(pr);
	APPEND(path->ops, path->nops, op);
	APPEND(m->ops, m->nops, op);
}

static void parse_path(struct sc_model *m, const char *tmpl, const cJSON *j)
{
	struct sc_path *p = sc_xmalloc(sizeof *p);
	p->tmpl = sc_strdup(tmpl);
	p->ptr = ptr_key("/paths", tmpl);
	parse_template(m, p);
	if (strcmp(tmpl, "/openapi.json") == 0)
		sc_error(m, p->ptr, "the path /openapi.json is reserved: it serves this document");
	for (size_t i = 0; i < m->npaths; i++)
		if (same_shape(m->paths[i], p))
			sc_error(m, p->ptr, "matches the same requests as %s", m->paths[i]->tmpl);
	if (!cJSON_IsObject(j)) {
		sc_error(m, p->ptr, "a path item must be an object");
		return;
	}
	check_keys(m, j, p->ptr, path_item_keys);
	free(get_string(m, j, p->ptr, "summary", false));
	free(get_string(m, j, p->ptr, "description", false));
	const cJSON *params = get(j, "parameters");
	for (size_t i = 0; i < NMETHODS; i++) {
		const cJSON *op = get(j, methods[i]);
		if (op) {
			char *po = ptr_key(p->ptr, methods[i]);
			parse_operation(m, p, methods[i], op, params, po);
			free(po);
		}
	}
	if (!p->nops)
		sc_error(m, p->ptr, "a path needs at least one operation");
	APPEND(m->paths, m->npaths, p);
}

/* ---- names ---- */

struct nameset {
	char **names, **where;
	size_t n;
};

static bool claim(struct sc_model *m, struct nameset *set, const char *name, const char *where, const char *what)
{
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->names[i], name) == 0) {
			sc_error(m, where, "the generated %s name \"%s\" is also made for %s; rename one", what, name,
				 set->where[i]);
			return false;
		}
	}
	size_t n = set->n;
	APPEND(set->names, n, sc_strdup(name));
	APPEND(set->where, set->n, sc_strdup(where));
	return true;
}

struct names {
	struct nameset tags, funcs;
};

/* Names the structs of inline objects and arrays after where they sit;
 * each struct also gets its JSON writer, write_<tag>. */
static void name_schema(struct sc_model *m, struct names *names, struct sc_schema *s, const char *base)
{
	if (s->kind != SC_OBJECT && s->kind != SC_ARRAY)
		return;
	s->cname = sc_strdup(base);
	if (claim(m, &names->tags, base, s->ptr, "struct")) {
		char *writer = sc_printf("write_%s", base);
		claim(m, &names->funcs, writer, s->ptr, "function");
		free(writer);
	}
	if (s->kind == SC_ARRAY && s->items) {
		char *n = sc_printf("%s_item", base);
		name_schema(m, names, s->items, n);
		free(n);
	}
	struct nameset members = { 0 };
	for (size_t i = 0; i < s->nprops; i++) {
		struct sc_prop *p = &s->props[i];
		char *props = ptr_key(s->ptr, "properties");
		char *pp = ptr_key(props, p->name);
		free(props);
		claim(m, &members, p->cname, pp, "member");
		if (!p->required) {
			char *has = sc_printf("has_%s", p->cname);
			claim(m, &members, has, pp, "member");
			free(has);
		}
		char *n = sc_printf("%s_%s", base, p->cname);
		name_schema(m, names, p->schema, n);
		free(n);
		free(pp);
	}
}

static void name_everything(struct sc_model *m)
{
	struct names names = { 0 };
	struct nameset *tags = &names.tags, *funcs = &names.funcs;
	for (size_t i = 0; i < m->ncomponents; i++) {
		struct sc_schema *s = m->components[i];
		name_schema(m, &names, s, s->component);
	}
	/* What the generated api.c defines or names locally beside handlers. */
	static const char *const fixed[] = {
		"route", "split_path", "parse_int64", "decode_string", "utf8_length", "hex_value",
		"answer_options", "answer_not_allowed", "answer_rejected", "serve_openapi", "openapi_json",
		"app", "INT_OK", "INT_SYNTAX", "INT_ABOVE", "INT_BELOW", "STR_OK", "STR_BAD_ESCAPE",
		"STR_BAD_UTF8", "STR_NO_MEMORY", "ctx", "in", "out", "status", "bad", "seg", "req", "m",
		"w", "o", "a", "i", "more", "chars", NULL,
	};
	for (int i = 0; fixed[i]; i++)
		claim(m, funcs, fixed[i], "the generated router", "function");
	for (size_t i = 0; i < m->nops; i++) {
		struct sc_op *op = m->ops[i];
		static const char *const per_op[] = { "%s", "run_%s", "decode_%s", "encode_%s", NULL };
		for (int k = 0; per_op[k]; k++) {
			char *f = sc_printf(per_op[k], op->id);
			claim(m, funcs, f, op->ptr, "function");
			free(f);
		}
		static const char *const op_tags[] = { "%s_in", "%s_out", NULL };
		for (int k = 0; op_tags[k]; k++) {
			char *t = sc_printf(op_tags[k], op->id);
			claim(m, tags, t, op->ptr, "struct");
			free(t);
		}
		for (size_t r = 0; r < op->nresponses; r++) {
			struct sc_schema *s = op->responses[r].schema;
			if (!s)
				continue;
			char *n = sc_printf("%s_%d", op->id, op->responses[r].status);
			name_schema(m, &names, s, n);
			free(n);
		}
	}
}

/* ---- the document ---- */

static void parse_info(struct sc_model *m, const cJSON *doc)
{
	const cJSON *info = get_object(m, doc, "", "info", true);
	if (!info)
		return;
	check_keys(m, info, "/info", info_keys);
	m->title = get_string(m, info, "/info", "title", true);
	m->version = get_string(m, info, "/info", "version", true);
	free(get_string(m, info, "/info", "summary", false));
	free(get_string(m, info, "/info", "description", false));
}

static void collect_methods(struct sc_model *m)
{
	/* GET and HEAD always: /openapi.json answers them. */
	static const char *const order[] = { "PUT", "POST", "DELETE", "PATCH" };
	char buf[64] = "GET, HEAD";
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		for (size_t k = 0; k < m->nops; k++) {
			if (strcmp(m->ops[k]->method, order[i]) == 0) {
				strcat(buf, ", ");
				strcat(buf, order[i]);
				break;
			}
		}
	}
	strcat(buf, ", OPTIONS");
	m->all_methods = sc_strdup(buf);
}

char *sc_path_allow(const struct sc_path *p)
{
	static const char *const order[] = { "GET", "PUT", "POST", "DELETE", "PATCH" };
	char buf[64] = "";
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		for (size_t k = 0; k < p->nops; k++) {
			if (strcmp(p->ops[k]->method, order[i]) == 0) {
				strcat(buf, order[i]);
				strcat(buf, strcmp(order[i], "GET") == 0 ? ", HEAD, " : ", ");
				break;
			}
		}
	}
	if (p->builtin_openapi)
		strcat(buf, "GET, HEAD, ");
	strcat(buf, "OPTIONS");
	return sc_strdup(buf);
}

/* cJSON keeps both members of a duplicated key; the document is ambiguous. */
static void check_duplicates(struct sc_model *m, const cJSON *v, const char *ptr)
{
	int i = 0;
	for (const cJSON *it = v->child; it; it = it->next, i++) {
		char *p = cJSON_IsObject(v) ? ptr_key(ptr, it->string) : ptr_index(ptr, i);
		if (cJSON_IsObject(v))
			for (const cJSON *o = v->child; o != it; o = o->next)
				if (strcmp(o->string, it->string) == 0) {
					sc_error(m, p, "duplicate key \"%s\"", it->string);
					break;
				}
		if (it->child)
			check_duplicates(m, it, p);
		free(p);
	}
}

void sc_model_load(struct sc_model *m, const char *file, const char *text, size_t len)
{
	memset(m, 0, sizeof *m);
	m->file = file;
	const char *end = NULL;
	m->doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!m->doc) {
		size_t off = end ? (size_t)(end - text) : 0, line = 1;
		for (size_t i = 0; i < off && i < len; i++)
			line += text[i] == '\n';
		char *where = sc_printf("line %zu", line);
		sc_error(m, where, "not valid JSON");
		free(where);
		return;
	}
	const cJSON *doc = m->doc;
	if (!cJSON_IsObject(doc)) {
		sc_error(m, "", "the document must be a JSON object");
		return;
	}
	check_duplicates(m, doc, "");
	if (m->errors)
		return;
	check_keys(m, doc, "", root_keys);
	char *version = get_string(m, doc, "", "openapi", true);
	if (version && strncmp(version, "3.1.", 4) != 0)
		sc_error(m, "/openapi", "OpenAPI version \"%s\" is not supported (3.1.x is)", version);
	free(version);
	parse_info(m, doc);
	parse_components(m, doc);
	const cJSON *paths = get_object(m, doc, "", "paths", true);
	if (paths)
		for (const cJSON *it = paths->child; it; it = it->next)
			parse_path(m, it->string, it);

	/* The document's own path, routed like any other. */
	struct sc_path *p = sc_xmalloc(sizeof *p);
	p->tmpl = sc_strdup("/openapi.json");
	p->ptr = sc_strdup("(built in)");
	p->builtin_openapi = true;
	parse_template(m, p);
	APPEND(m->paths, m->npaths, p);

	collect_methods(m);
	if (!m->errors)
		name_everything(m);
}
