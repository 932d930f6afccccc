/* Reads the OpenAPI document (cJSON tree) into the model of model.h and
 * checks it: paths, operations, parameters, request bodies, responses and
 * names (schemas themselves are schema.c's). Every key of every object is
 * understood, an annotation, or an error naming the keyword and its JSON
 * pointer: what schemac cannot compile fails the build, never silently. */
#include "model.h"
#include "libc_names.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- errors ---- */

void sc_error(struct sc_model *m, const char *ptr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = sc_vprintf(fmt, ap);
	va_end(ap);
	/* A component used in several places is compiled at each: its
	   problems are still one message each. */
	char *key = sc_printf("%s\n%s", ptr ? ptr : "", msg);
	for (size_t i = 0; i < m->nprinted; i++) {
		if (strcmp(m->printed[i], key) == 0) {
			free(key);
			free(msg);
			return;
		}
	}
	SC_APPEND(m->printed, m->nprinted, key);
	unsigned long line, col;
	if (sc_yaml_where(&m->pos, ptr, &line, &col))
		fprintf(stderr, "schemac: %s:%lu:%lu: %s: %s\n", m->file, line, col, *ptr ? ptr : "/", msg);
	else
		fprintf(stderr, "schemac: %s: %s: %s\n", m->file, ptr && *ptr ? ptr : "/", msg);
	free(msg);
	m->errors++;
}

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
bool sc_is_global_ident(const char *s)
{
	return is_ident(s) && !is_keyword(s) && s[0] != '_' && strncmp(s, "ig_", 3) != 0 &&
	       strncmp(s, "IG_", 3) != 0;
}

static int libc_name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct sc_libc_name *)elem)->name);
}

/* The header (as #include names it) through which the generated api.h
 * already declares s, or NULL: a handler cannot take such a name, since
 * its prototype would clash in api.h itself. */
static const char *libc_header(const char *s)
{
	const struct sc_libc_name *n = bsearch(s, sc_libc_names, sc_libc_nnames, sizeof sc_libc_names[0], libc_name_cmp);
	return n ? n->header : NULL;
}

const char *sc_libc_header(const char *s)
{
	return libc_header(s);
}

/* A struct member name for a JSON key: other characters become '_'. */
char *sc_member_name(const char *key)
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


/* ---- keyword tables ---- */

#define UNSUPPORTED "(not supported by schemac)"

static const struct sc_keyword root_keys[] = {
	{ "openapi", NULL }, { "info", NULL }, { "paths", NULL }, { "components", NULL },
	{ "servers", NULL }, { "tags", NULL }, { "externalDocs", NULL },
	{ "jsonSchemaDialect", "(only the OpenAPI 3.1 base dialect is understood)" },
	{ "security", NULL },
	{ "webhooks", "(webhooks are not served)" },
	{ NULL, NULL },
};

static const struct sc_keyword info_keys[] = {
	{ "title", NULL }, { "version", NULL }, { "summary", NULL }, { "description", NULL },
	{ "termsOfService", NULL }, { "contact", NULL }, { "license", NULL }, { NULL, NULL },
};

static const struct sc_keyword components_keys[] = {
	{ "schemas", NULL },
	{ "responses", NULL }, { "parameters", NULL }, { "examples", NULL }, { "requestBodies", NULL },
	{ "headers", NULL },
	{ "securitySchemes", NULL },
	{ "links", "(links are not supported)" },
	{ "callbacks", "(callbacks are not supported)" },
	{ "pathItems", "(coming later; write the path item inline)" },
	{ NULL, NULL },
};

static const struct sc_keyword path_item_keys[] = {
	{ "summary", NULL }, { "description", NULL }, { "parameters", NULL },
	{ "get", NULL }, { "put", NULL }, { "post", NULL }, { "delete", NULL }, { "patch", NULL },
	{ "head", "(HEAD is answered by the GET operation)" },
	{ "options", "(OPTIONS is answered by the router)" },
	{ "trace", "(TRACE is not served)" },
	{ "servers", "(per-path servers are not supported)" },
	{ "$ref", "(coming later; write the path item inline)" },
	{ NULL, NULL },
};

static const struct sc_keyword operation_keys[] = {
	{ "operationId", NULL }, { "summary", NULL }, { "description", NULL }, { "tags", NULL },
	{ "parameters", NULL }, { "responses", NULL }, { "deprecated", NULL }, { "externalDocs", NULL },
	{ "requestBody", NULL },
	{ "callbacks", "(callbacks are not supported)" },
	{ "security", NULL },
	{ "x-ingot-websocket", NULL },
	{ "x-ingot-stream-body", NULL },
	{ "servers", "(per-operation servers are not supported)" },
	{ NULL, NULL },
};

static const struct sc_keyword parameter_keys[] = {
	{ "name", NULL }, { "in", NULL }, { "required", NULL }, { "schema", NULL },
	{ "description", NULL }, { "deprecated", NULL }, { "example", NULL }, { "examples", NULL },
	{ "style", NULL }, { "explode", NULL }, { "allowReserved", NULL }, { "allowEmptyValue", NULL },
	{ "content", "(parameters with a media type are " UNSUPPORTED "; use schema)" },
	{ NULL, NULL },
};

static const struct sc_keyword request_body_keys[] = {
	{ "description", NULL }, { "content", NULL }, { "required", NULL },
	{ NULL, NULL },
};

static const struct sc_keyword response_keys[] = {
	{ "description", NULL }, { "content", NULL }, { "headers", NULL },
	{ "links", "(links are not supported)" },
	{ NULL, NULL },
};

static const struct sc_keyword header_keys[] = {
	{ "description", NULL }, { "required", NULL }, { "schema", NULL }, { "deprecated", NULL },
	{ "example", NULL }, { "examples", NULL }, { "style", NULL }, { "explode", NULL },
	{ "content", "(headers with a media type are " UNSUPPORTED "; use schema)" },
	{ NULL, NULL },
};

static const struct sc_keyword media_keys[] = {
	{ "schema", NULL }, { "example", NULL }, { "examples", NULL },
	{ "encoding", "(encoding is for multipart and form bodies, which are " UNSUPPORTED ")" },
	{ NULL, NULL },
};

struct sc_schema *sc_component_ref(struct sc_model *m, const cJSON *j, const char *ptr, const char *what)
{
	static const char prefix[] = "#/components/schemas/";
	const cJSON *ref = sc_get(j, "$ref");
	if (!cJSON_IsObject(j) || !cJSON_IsString(ref) || cJSON_GetArraySize(j) != 1 ||
	    strncmp(ref->valuestring, prefix, sizeof prefix - 1) != 0) {
		sc_error(m, ptr, "%s must be {\"$ref\": \"#/components/schemas/<Name>\"}", what);
		return NULL;
	}
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->component, ref->valuestring + sizeof prefix - 1) == 0)
			return m->components[i];
	sc_error(m, ptr, "\"$ref\" to \"%s\": there is no \"%s\" in components/schemas", ref->valuestring,
		 ref->valuestring + sizeof prefix - 1);
	return NULL;
}

/* Checks every key of obj against a table; x- extensions are allowed. */
void sc_check_keys(struct sc_model *m, const cJSON *obj, const char *ptr, const struct sc_keyword *table)
{
	for (const cJSON *it = obj->child; it; it = it->next) {
		if (strncmp(it->string, "x-", 2) == 0)
			continue;
		const struct sc_keyword *k = table;
		while (k->name && strcmp(k->name, it->string) != 0)
			k++;
		char *p = sc_ptr_key(ptr, it->string);
		if (!k->name)
			sc_error(m, p, "unknown keyword \"%s\"", it->string);
		else if (k->hint)
			sc_error(m, p, "unsupported keyword \"%s\" %s", it->string, k->hint);
		free(p);
	}
}

const cJSON *sc_get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A member that must be an object when present; NULL (and an error when
 * required) otherwise. */
static const cJSON *get_object(struct sc_model *m, const cJSON *obj, const char *ptr, const char *key, bool required)
{
	const cJSON *v = sc_get(obj, key);
	if (!v) {
		if (required)
			sc_error(m, ptr, "missing \"%s\"", key);
		return NULL;
	}
	if (!cJSON_IsObject(v)) {
		char *p = sc_ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be an object", key);
		free(p);
		return NULL;
	}
	return v;
}

char *sc_get_string(struct sc_model *m, const cJSON *obj, const char *ptr, const char *key, bool required)
{
	const cJSON *v = sc_get(obj, key);
	if (!v) {
		if (required)
			sc_error(m, ptr, "missing \"%s\"", key);
		return NULL;
	}
	if (!cJSON_IsString(v)) {
		char *p = sc_ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be a string", key);
		free(p);
		return NULL;
	}
	return sc_strdup(v->valuestring);
}

/* true, false, or absent (def); anything else is an error. */
static bool get_bool(struct sc_model *m, const cJSON *obj, const char *ptr, const char *key, bool def)
{
	const cJSON *v = sc_get(obj, key);
	if (!v)
		return def;
	if (!cJSON_IsBool(v)) {
		char *p = sc_ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be true or false", key);
		free(p);
		return def;
	}
	return cJSON_IsTrue(v);
}

/* ---- components ---- */

/* The problem+json body the runtime answers with (net/http/response.c,
 * ig_respond_errors), as components/schemas/Problem: a document may refer
 * to it without defining it, and then gets this one, in the served
 * document too. */
static const char problem_schema[] =
	"{\"type\":\"object\",\"description\":\"A problem (RFC 9457) as the runtime answers it\","
	"\"required\":[\"type\",\"title\",\"status\"],\"properties\":{"
	"\"type\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},"
	"\"status\":{\"type\":\"integer\",\"minimum\":100,\"maximum\":599},"
	"\"detail\":{\"type\":\"string\"},\"request_id\":{\"type\":\"string\"},"
	"\"errors\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"keyword\",\"message\"],"
	"\"properties\":{\"in\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"},"
	"\"pointer\":{\"type\":\"string\"},\"keyword\":{\"type\":\"string\"},"
	"\"message\":{\"type\":\"string\"}}}}}}";
#define PROBLEM_REF "#/components/schemas/Problem"

static bool refers_to_problem(const cJSON *v)
{
	for (const cJSON *it = v->child; it; it = it->next) {
		if (it->string && strcmp(it->string, "$ref") == 0 && cJSON_IsString(it) &&
		    strcmp(it->valuestring, PROBLEM_REF) == 0)
			return true;
		if (it->child && refers_to_problem(it))
			return true;
	}
	return false;
}

/* Adds the runtime's Problem to components/schemas when the document
 * refers to it and has no schema of that name. */
static void provide_problem(struct sc_model *m, cJSON *doc)
{
	cJSON *comp = cJSON_GetObjectItemCaseSensitive(doc, "components");
	cJSON *schemas = comp ? cJSON_GetObjectItemCaseSensitive(comp, "schemas") : NULL;
	if ((comp && !cJSON_IsObject(comp)) || (schemas && !cJSON_IsObject(schemas)) ||
	    (schemas && sc_get(schemas, "Problem")) || !refers_to_problem(doc))
		return;
	if (!comp)
		comp = cJSON_AddObjectToObject(doc, "components");
	if (!schemas)
		schemas = cJSON_AddObjectToObject(comp, "schemas");
	cJSON *p = cJSON_Parse(problem_schema);
	if (!comp || !schemas || !p || !cJSON_AddItemToObject(schemas, "Problem", p)) {
		sc_error(m, "/components/schemas/Problem", "out of memory");
		return;
	}
	m->problem_provided = true;
}

/* The object j stands for: itself, or what its "$ref" names under
 * components/<kind> (a Reference Object, followed through further ones).
 * *at is set to the pointer of the object returned (a new string). NULL
 * after one error naming the reference. */
static const cJSON *deref(struct sc_model *m, const cJSON *j, const char *ptr, const char *kind, char **at)
{
	static const struct sc_keyword ref_keys[] = {
		{ "$ref", NULL }, { "summary", NULL }, { "description", NULL }, { NULL, NULL },
	};
	char *here = sc_strdup(ptr);
	for (int steps = 0; cJSON_IsObject(j) && sc_get(j, "$ref"); steps++) {
		const cJSON *ref = sc_get(j, "$ref");
		char *pr = sc_ptr_key(here, "$ref");
		char *prefix = sc_printf("#/components/%s/", kind);
		const cJSON *t = NULL;
		char *tp = NULL;
		sc_check_keys(m, j, here, ref_keys);
		if (!cJSON_IsString(ref)) {
			sc_error(m, pr, "\"$ref\" must be a string");
		} else if (strncmp(ref->valuestring, prefix, strlen(prefix)) != 0 ||
			   strchr(ref->valuestring + strlen(prefix), '/') || !ref->valuestring[strlen(prefix)]) {
			sc_error(m, pr, "\"$ref\" to \"%s\": it must name one of components/%s (\"%s<name>\")",
				 ref->valuestring, kind, prefix);
		} else if (steps == 16) {
			sc_error(m, pr, "\"$ref\" to \"%s\": the chain of references loops", ref->valuestring);
		} else {
			tp = sc_ref_pointer(ref->valuestring);
			t = sc_lookup(m->doc, tp);
			if (!t)
				sc_error(m, pr, "\"$ref\" to \"%s\": there is no \"%s\" in components/%s",
					 ref->valuestring, ref->valuestring + strlen(prefix), kind);
		}
		free(pr);
		free(prefix);
		free(here);
		here = tp;
		j = t;
		if (!t) {
			free(tp);
			*at = NULL;
			return NULL;
		}
	}
	*at = here;
	return j;
}

static void parse_components(struct sc_model *m, const cJSON *doc)
{
	const cJSON *comp = get_object(m, doc, "", "components", false);
	if (!comp)
		return;
	sc_check_keys(m, comp, "/components", components_keys);
	/* These are compiled where a $ref uses them (deref), each problem
	   reported once at the component. */
	static const char *const kinds[] = { "parameters", "responses", "requestBodies", "headers", NULL };
	for (int k = 0; kinds[k]; k++)
		get_object(m, comp, "/components", kinds[k], false);
	const cJSON *schemas = get_object(m, comp, "/components", "schemas", false);
	if (!schemas)
		return;
	for (const cJSON *it = schemas->child; it; it = it->next) {
		char *ptr = sc_ptr_key("/components/schemas", it->string);
		if (!sc_is_global_ident(it->string))
			sc_error(m, ptr, "a schema name must be a C identifier (not a keyword, not starting "
					 "with \"ig_\" or \"_\"): it names the struct");
		struct sc_schema *s = sc_parse_schema(m, it, ptr);
		s->component = sc_strdup(it->string);
		if (m->problem_provided && strcmp(it->string, "Problem") == 0)
			m->problem_schema = s;
		SC_APPEND(m->components, m->ncomponents, s);
		free(ptr);
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
		SC_APPEND(p->segs, p->nsegs, sg);
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

static const char *const location_names[] = { "path", "query", "header" };

/* A parameter's schema: one scalar type, or (in the query) an array of one. */
static void check_param_schema(struct sc_model *m, const struct sc_param *p, const char *ps)
{
	const struct sc_schema *r = sc_resolve(p->schema);
	if (!r)
		return;
	const char *where = location_names[p->in];
	bool scalar = r->kind == SC_STRING || r->kind == SC_INTEGER || r->kind == SC_NUMBER || r->kind == SC_BOOLEAN;
	if (r->kind == SC_ARRAY) {
		const struct sc_schema *it = r->items ? sc_resolve(r->items) : NULL;
		if (p->in != SC_IN_QUERY)
			sc_error(m, ps, "%s parameters of type array are not supported (query parameters are)", where);
		else if (!it || it->nullable ||
			 !(it->kind == SC_STRING || it->kind == SC_INTEGER || it->kind == SC_NUMBER ||
			   it->kind == SC_BOOLEAN))
			sc_error(m, ps, "the items of an array parameter must have one scalar type (string, integer, "
					"number or boolean)");
		return;
	}
	if (!scalar)
		sc_error(m, ps, "a %s parameter's schema must have one scalar type (string, integer, number or "
				"boolean)%s, and only the keywords of that type", where,
			 p->in == SC_IN_QUERY ? " or be an array of one" : "");
	else if (r->nullable)
		sc_error(m, ps, "a parameter cannot be null");
}

static void parse_style(struct sc_model *m, struct sc_param *prm, const cJSON *j, const char *ptr)
{
	static const char *const styles[] = { "simple", "form", "simple" };
	char *style = sc_get_string(m, j, ptr, "style", false);
	if (style && strcmp(style, styles[prm->in]) != 0) {
		char *p = sc_ptr_key(ptr, "style");
		sc_error(m, p, "style \"%s\" is not supported for %s parameters (\"%s\" is)", style,
			 location_names[prm->in], styles[prm->in]);
		free(p);
	}
	free(style);
	prm->explode = get_bool(m, j, ptr, "explode", prm->in == SC_IN_QUERY);
	get_bool(m, j, ptr, "allowReserved", false);
	get_bool(m, j, ptr, "allowEmptyValue", false);
}

static void parse_parameter(struct sc_model *m, struct sc_op *op, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a parameter must be an object");
		return;
	}
	sc_check_keys(m, j, ptr, parameter_keys);
	free(sc_get_string(m, j, ptr, "description", false));
	char *name = sc_get_string(m, j, ptr, "name", true);
	char *in = sc_get_string(m, j, ptr, "in", true);
	const cJSON *sj = sc_get(j, "schema");
	if (!name || !in) {
		op->param_failed = true;
		return;
	}
	char *pin = sc_ptr_key(ptr, "in");
	struct sc_param prm = { .name = name, .cname = sc_member_name(name), .ptr = sc_strdup(ptr) };
	bool ok = true;
	if (strcmp(in, "path") == 0)
		prm.in = SC_IN_PATH;
	else if (strcmp(in, "query") == 0)
		prm.in = SC_IN_QUERY;
	else if (strcmp(in, "header") == 0)
		prm.in = SC_IN_HEADER;
	else if (strcmp(in, "cookie") == 0)
		ok = false, sc_error(m, pin, "unsupported parameter location \"cookie\" (cookies are not supported)");
	else
		ok = false, sc_error(m, pin, "unknown parameter location \"%s\"", in);
	free(pin);
	free(in);
	if (!ok)
		return;

	prm.required = get_bool(m, j, ptr, "required", false);
	if (prm.in == SC_IN_PATH && !prm.required)
		sc_error(m, ptr, "a path parameter must have \"required\": true");
	if (prm.in == SC_IN_HEADER) {
		static const char *const ignored[] = { "accept", "content-type", "authorization", NULL };
		for (int i = 0; ignored[i]; i++)
			if (strcasecmp(name, ignored[i]) == 0)
				sc_error(m, ptr, "a header parameter named \"%s\" is ignored by OpenAPI (the request "
						 "body and security schemes describe it)", name);
	}
	parse_style(m, &prm, j, ptr);
	if (!sj) {
		sc_error(m, ptr, "missing \"schema\"");
		return;
	}
	char *ps = sc_ptr_key(ptr, "schema");
	prm.schema = sc_parse_schema(m, sj, ps);
	free(ps);

	/* An operation's parameter replaces the path item's one of that name
	   and location. */
	for (size_t i = 0; i < op->nparams; i++) {
		bool same = op->params[i].in == prm.in &&
			    (prm.in == SC_IN_HEADER ? strcasecmp(op->params[i].name, name) == 0
						    : strcmp(op->params[i].name, name) == 0);
		if (same) {
			op->params[i] = prm;
			return;
		}
	}
	SC_APPEND(op->params, op->nparams, prm);
}

static void parse_parameters(struct sc_model *m, struct sc_op *op, const cJSON *list, const char *ptr)
{
	if (!list)
		return;
	char *p = sc_ptr_key(ptr, "parameters");
	if (!cJSON_IsArray(list)) {
		sc_error(m, p, "\"parameters\" must be an array");
		free(p);
		return;
	}
	size_t before = op->nparams;
	int i = 0;
	for (const cJSON *le = list->child; le; le = le->next, i++) {
		char *pl = sc_ptr_index(p, i), *pi = NULL;
		const cJSON *e = deref(m, le, pl, "parameters", &pi);
		free(pl);
		if (!e) {
			op->param_failed = true;
			continue;
		}
		const cJSON *name = sc_get(e, "name"), *in = sc_get(e, "in");
		if (cJSON_IsString(name) && cJSON_IsString(in)) {
			/* Twice in one list is a document error; an operation's
			   parameter replacing its path item's is not. */
			for (size_t k = before; k < op->nparams; k++)
				if (strcmp(op->params[k].name, name->valuestring) == 0 &&
				    strcmp(location_names[op->params[k].in], in->valuestring) == 0)
					sc_error(m, pi, "parameter \"%s\" is listed twice", name->valuestring);
		}
		parse_parameter(m, op, e, pi);
		free(pi);
	}
	free(p);
}

/* A media type the encoder can send as text: text/plain or text/html,
 * parameters allowed ("text/html; charset=utf-8"). */
static bool is_text_media(const char *type)
{
	size_t n = strcspn(type, "; \t");
	return (n == 10 && strncasecmp(type, "text/plain", n) == 0) || (n == 9 && strncasecmp(type, "text/html", n) == 0);
}

/* A response of bytes: application/octet-stream, sent as text is (whole,
 * from an ig_str) or streamed by its handler (include/ingot/body.h). */
static bool is_binary_media(const char *type)
{
	size_t n = strcspn(type, "; \t");
	return n == 24 && strncasecmp(type, "application/octet-stream", n) == 0;
}

/* A text body's schema, when there is one, only says it is a string (a
 * binary one's, a string of format binary): nothing about it is
 * validated. */
void sc_check_text_schema(struct sc_model *m, const cJSON *media, const char *pm, bool binary)
{
	const cJSON *sj = sc_get(media, "schema");
	if (!sj)
		return;
	char *ps = sc_ptr_key(pm, "schema");
	const cJSON *type = cJSON_IsObject(sj) ? sc_get(sj, "type") : NULL;
	const cJSON *format = cJSON_IsObject(sj) ? sc_get(sj, "format") : NULL;
	bool ok = cJSON_IsString(type) && strcmp(type->valuestring, "string") == 0 &&
		  cJSON_GetArraySize(sj) == 1 + (binary && format);
	if (binary && format && (!cJSON_IsString(format) || strcmp(format->valuestring, "binary") != 0))
		ok = false;
	if (!ok)
		sc_error(m, ps, binary ? "a binary body's schema can only be {\"type\": \"string\", \"format\": \"binary\"}"
				       : "a text body's schema can only be {\"type\": \"string\"}");
	free(ps);
}

/* The application/json schema of a content map (request or response);
 * for a response (r not NULL), a text/plain, text/html or
 * application/octet-stream media type instead, whose name goes to r->text_type, or application/problem+json
 * (r->problem or r->problem_type). */
static struct sc_schema *parse_content(struct sc_model *m, const cJSON *content, const char *ptr, int status,
				       struct sc_response *r)
{
	struct sc_schema *schema = NULL;
	char *pc = sc_ptr_key(ptr, "content");
	bool seen = false;
	for (const cJSON *it = content->child; it; it = it->next) {
		char *pm = sc_ptr_key(pc, it->string);
		bool binary = r && is_binary_media(it->string);
		bool text = r && (is_text_media(it->string) || binary);
		bool problem = r && strcasecmp(it->string, "application/problem+json") == 0;
		bool stream = r && sc_is_event_stream(it->string);
		if (strcmp(it->string, "application/json") != 0 && !text && !problem && !stream) {
			sc_error(m, pm, "media type \"%s\" is not supported yet (application/json is%s)", it->string,
				 r ? ", and application/problem+json, text/plain, text/html, application/octet-stream "
				     "or text/event-stream for a response"
				   : "; a request body of bytes is streamed: declare x-ingot-stream-body on the operation");
		} else if (!cJSON_IsObject(it)) {
			sc_error(m, pm, "a media type must be an object");
		} else if (status == 204 || status == 304) {
			sc_error(m, pm, "a %d response has no body", status);
		} else if (seen) {
			sc_error(m, pm, "a response has one media type here (the handler fills one body)");
		} else if (problem) {
			sc_check_keys(m, it, pm, media_keys);
			const cJSON *sj = sc_get(it, "schema");
			char *ps = sc_ptr_key(pm, "schema");
			/* No schema, or the one schemac provides: the runtime's own
			   problem; any other is the app's, encoded from the out struct. */
			if (sj)
				schema = sc_parse_schema(m, sj, ps);
			r->problem = !sj || (cJSON_IsObject(sj) && cJSON_GetArraySize(sj) == 1 && m->problem_schema &&
					     cJSON_IsString(sc_get(sj, "$ref")) &&
					     strcmp(sc_get(sj, "$ref")->valuestring, PROBLEM_REF) == 0);
			r->problem_type = !r->problem;
			free(ps);
		} else if (stream) {
			r->event = sc_parse_event_stream(m, it, pm, r->key_kind == SC_RESP_STATUS ? status : 0);
			const char *key = sc_get(it, "itemSchema") ? "itemSchema" : "x-ingot-event";
			r->event_ptr = sc_ptr_key(pm, key);
		} else if (text) {
			sc_check_keys(m, it, pm, media_keys);
			sc_check_text_schema(m, it, pm, binary);
			r->text_type = sc_strdup(it->string);
		} else {
			sc_check_keys(m, it, pm, media_keys);
			const cJSON *sj = sc_get(it, "schema");
			char *ps = sc_ptr_key(pm, "schema");
			if (!sj)
				sc_error(m, pm, "missing \"schema\" (the %s is generated from it)",
					 status ? "encoder" : "decoder");
			else
				schema = sc_parse_schema(m, sj, ps);
			free(ps);
		}
		seen |= cJSON_IsObject(it);
		free(pm);
	}
	free(pc);
	return schema;
}

static void parse_request_body(struct sc_model *m, struct sc_op *op, const cJSON *ref, const char *ptr)
{
	if (!ref)
		return;
	char *pr = sc_ptr_key(ptr, "requestBody"), *p = NULL;
	const cJSON *j = deref(m, ref, pr, "requestBodies", &p);
	free(pr);
	if (!j)
		return;
	op->body_ptr = sc_strdup(p);
	if (!cJSON_IsObject(j)) {
		sc_error(m, p, "a request body must be an object");
	} else {
		sc_check_keys(m, j, p, request_body_keys);
		free(sc_get_string(m, j, p, "description", false));
		op->body_required = get_bool(m, j, p, "required", false);
		const cJSON *content = get_object(m, j, p, "content", true);
		if (content && op->stream_body_ptr)
			sc_parse_stream_content(m, op, content, p);
		else if (content)
			op->body = parse_content(m, content, p, 0, NULL);
		if (content && !op->body && !op->stream_body_ptr)
			sc_error(m, p, "a request body needs an application/json schema");
		if (strcmp(op->method, "GET") == 0 || strcmp(op->method, "DELETE") == 0)
			sc_error(m, p, "a %s request has no body here (its meaning is undefined in HTTP)", op->method);
	}
	free(p);
}

static void parse_response_headers(struct sc_model *m, struct sc_response *r, const cJSON *j, const char *ptr)
{
	const cJSON *headers = get_object(m, j, ptr, "headers", false);
	if (!headers)
		return;
	char *ph = sc_ptr_key(ptr, "headers");
	for (const cJSON *hr = headers->child; hr; hr = hr->next) {
		char *pr = sc_ptr_key(ph, hr->string), *p = NULL;
		const cJSON *it = deref(m, hr, pr, "headers", &p);
		free(pr);
		if (!it) {
			continue;
		} else if (!cJSON_IsObject(it)) {
			sc_error(m, p, "a header must be an object");
		} else {
			sc_check_keys(m, it, p, header_keys);
			free(sc_get_string(m, it, p, "description", false));
			struct sc_header h = { .name = sc_strdup(hr->string), .ptr = sc_strdup(p) };
			h.required = get_bool(m, it, p, "required", false);
			const cJSON *sj = sc_get(it, "schema");
			char *ps = sc_ptr_key(p, "schema");
			if (sj)
				h.schema = sc_parse_schema(m, sj, ps);
			else
				sc_error(m, p, "missing \"schema\"");
			free(ps);
			if (strcasecmp(hr->string, "content-type") == 0)
				sc_error(m, p, "Content-Type is described by \"content\", not as a header");
			SC_APPEND(r->headers, r->nheaders, h);
		}
		free(p);
	}
	free(ph);
}

static void parse_response(struct sc_model *m, struct sc_op *op, const char *code, const cJSON *ref,
			   const char *at)
{
	struct sc_response r = { .key = sc_strdup(code) };
	bool digits = strlen(code) == 3 && code[0] >= '1' && code[0] <= '5';
	if (digits && code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9') {
		r.status = atoi(code);
	} else if (digits && strcmp(code + 1, "XX") == 0) {
		r.key_kind = SC_RESP_RANGE;
		r.status = code[0] - '0';
	} else if (strcmp(code, "default") == 0) {
		r.key_kind = SC_RESP_DEFAULT;
	} else {
		sc_error(m, at, "\"%s\" is not an HTTP status code, a range such as \"4XX\" or \"default\"", code);
		return;
	}
	if (r.status == 1 || (r.key_kind == SC_RESP_STATUS && r.status < 200)) {
		sc_error(m, at, "1xx responses are not supported");
		return;
	}
	char *ptr = NULL;
	const cJSON *j = deref(m, ref, at, "responses", &ptr);
	if (!j)
		return;
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a response must be an object");
		free(ptr);
		return;
	}
	sc_check_keys(m, j, ptr, response_keys);
	free(sc_get_string(m, j, ptr, "description", true));
	r.ptr = ptr;
	const cJSON *content = get_object(m, j, ptr, "content", false);
	if (content)
		r.schema = parse_content(m, content, ptr, r.key_kind == SC_RESP_STATUS ? r.status : 0, &r);
	parse_response_headers(m, &r, j, ptr);
	SC_APPEND(op->responses, op->nresponses, r);
}

static void parse_operation(struct sc_model *m, struct sc_path *path, const char *method, const cJSON *j,
			    const cJSON *path_params, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "an operation must be an object");
		return;
	}
	sc_check_keys(m, j, ptr, operation_keys);
	struct sc_op *op = sc_xmalloc(sizeof *op);
	op->method = upper(method);
	op->path = path;
	op->ptr = sc_strdup(ptr);
	op->security_json = sc_get(j, "security");
	op->summary = sc_get_string(m, j, ptr, "summary", false);
	free(sc_get_string(m, j, ptr, "description", false));
	op->validate = get_bool(m, j, ptr, "x-ingot-validate", true);
	if (get_bool(m, j, ptr, "x-ingot-access-token-query", false))
		op->query_token_ptr = sc_ptr_key(ptr, "x-ingot-access-token-query");
	op->id = sc_get_string(m, j, ptr, "operationId", true);
	const cJSON *limit = sc_get(j, "x-ingot-rate-limit");
	if (!limit)
		op->rate_limit = m->rate_global;
	else if (!cJSON_IsFalse(limit)) {
		char *p = sc_ptr_key(ptr, "x-ingot-rate-limit");
		op->rate_limit = sc_parse_rate_limit(m, limit, p, op->id ? op->id : "operation");
		free(p);
	}
	const cJSON *hooks = sc_get(j, "x-ingot-hooks");
	if (hooks) {
		char *p = sc_ptr_key(ptr, "x-ingot-hooks");
		sc_parse_hooks(m, hooks, p, &op->hooks);
		free(p);
	}
	const cJSON *ws = sc_get(j, "x-ingot-websocket");
	if (ws) {
		char *p = sc_ptr_key(ptr, "x-ingot-websocket");
		sc_parse_websocket(m, op, ws, p);
		free(p);
	}
	const cJSON *stream_body = sc_get(j, "x-ingot-stream-body");
	if (stream_body) {
		char *p = sc_ptr_key(ptr, "x-ingot-stream-body");
		sc_parse_stream_body(m, op, stream_body, p);
		free(p);
	}
	if (!op->id)
		op->id = sc_strdup("missing_operationId");
	else if (!sc_is_global_ident(op->id)) {
		char *p = sc_ptr_key(ptr, "operationId");
		sc_error(m, p, "operationId \"%s\" must be a C identifier (not a keyword, not starting with \"ig_\" "
			       "or \"_\"): it names the handler", op->id);
		free(p);
	} else if (libc_header(op->id)) {
		char *p = sc_ptr_key(ptr, "operationId");
		sc_error(m, p, "operationId \"%s\" is a name of the C library (<%s>), which the generated api.h "
			       "includes: a handler of that name would not compile; choose another", op->id,
			 libc_header(op->id));
		free(p);
	}
	for (size_t i = 0; i < m->nops; i++) {
		if (strcmp(m->ops[i]->id, op->id) == 0) {
			char *p = sc_ptr_key(ptr, "operationId");
			sc_error(m, p, "operationId \"%s\" is used twice (also at %s)", op->id, m->ops[i]->ptr);
			free(p);
		}
	}

	parse_parameters(m, op, path_params, path->ptr);
	parse_parameters(m, op, sc_get(j, "parameters"), ptr);

	/* Every {name} has its parameter and every path parameter its {name}. */
	for (size_t s = 0; s < path->nsegs; s++) {
		if (!path->segs[s].param)
			continue;
		size_t k = 0;
		while (k < op->nparams &&
		       !(op->params[k].in == SC_IN_PATH && strcmp(op->params[k].name, path->segs[s].text) == 0))
			k++;
		if (k == op->nparams && !op->param_failed) /* a parameter that failed was reported */
			sc_error(m, ptr, "path parameter {%s} is not declared in \"parameters\"", path->segs[s].text);
		else if (k < op->nparams)
			op->params[k].segment = s;
	}
	for (size_t k = 0; k < op->nparams; k++) {
		if (op->params[k].in != SC_IN_PATH)
			continue;
		size_t s = 0;
		while (s < path->nsegs && !(path->segs[s].param && strcmp(path->segs[s].text, op->params[k].name) == 0))
			s++;
		if (s == path->nsegs)
			sc_error(m, op->params[k].ptr, "path parameter \"%s\" is not in the path %s", op->params[k].name,
				 path->tmpl);
	}

	parse_request_body(m, op, sc_get(j, "requestBody"), ptr);
	if (op->stream_body_ptr && !op->body_ptr)
		sc_error(m, op->stream_body_ptr, "x-ingot-stream-body needs a requestBody, of bytes "
						 "(application/octet-stream, for one), to stream");

	const cJSON *responses = get_object(m, j, ptr, "responses", true);
	char *pr = sc_ptr_key(ptr, "responses");
	if (responses) {
		if (!responses->child)
			sc_error(m, pr, "an operation needs at least one response");
		for (const cJSON *it = responses->child; it; it = it->next) {
			char *p = sc_ptr_key(pr, it->string);
			parse_response(m, op, it->string, it, p);
			free(p);
		}
	}
	free(pr);
	SC_APPEND(path->ops, path->nops, op);
	SC_APPEND(m->ops, m->nops, op);
}

static void parse_path(struct sc_model *m, const char *tmpl, const cJSON *j)
{
	struct sc_path *p = sc_xmalloc(sizeof *p);
	p->tmpl = sc_strdup(tmpl);
	p->ptr = sc_ptr_key("/paths", tmpl);
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
	sc_check_keys(m, j, p->ptr, path_item_keys);
	free(sc_get_string(m, j, p->ptr, "summary", false));
	free(sc_get_string(m, j, p->ptr, "description", false));
	const cJSON *params = sc_get(j, "parameters");
	for (size_t i = 0; i < NMETHODS; i++) {
		const cJSON *op = sc_get(j, methods[i]);
		if (op) {
			char *po = sc_ptr_key(p->ptr, methods[i]);
			parse_operation(m, p, methods[i], op, params, po);
			free(po);
		}
	}
	if (!p->nops)
		sc_error(m, p->ptr, "a path needs at least one operation");
	p->index = m->npaths;
	SC_APPEND(m->paths, m->npaths, p);
}

/* Checks that need every schema's kind, after sc_finish_schemas. */
static void check_operations(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++) {
		struct sc_op *op = m->ops[i];
		for (size_t k = 0; k < op->nparams; k++) {
			char *ps = sc_ptr_key(op->params[k].ptr, "schema");
			check_param_schema(m, &op->params[k], ps);
			free(ps);
		}
	}
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
	SC_APPEND(set->names, n, sc_strdup(name));
	SC_APPEND(set->where, set->n, sc_strdup(where));
	return true;
}

struct names {
	struct sc_model *m;
	struct nameset tags, funcs;
};

/* The functions a schema may get, after its name. */
static const char *const per_schema[] = {
	"validate_%s", "decode_%s", "write_%s", "member_%s", "match_%s", "keys_%s", NULL,
};

static void name_schema(struct names *names, struct sc_schema *s, const char *base);

static void name_child(struct names *names, struct sc_schema *s, const char *base, const char *suffix)
{
	if (!s)
		return;
	char *n = sc_printf("%s_%s", base, suffix);
	name_schema(names, s, n);
	free(n);
}

static void name_list(struct names *names, struct sc_schema **list, size_t n, const char *base, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		char *suffix = sc_printf("%s%zu", what, i);
		name_child(names, list[i], base, suffix);
		free(suffix);
	}
}

/* Names every schema after where it sits: a component by its name, the
 * rest by their parent's name and the place under it (Post_title,
 * Post_tags_item, Pet_oneOf0, ...). Typed objects and arrays get a struct
 * of that name. */
static void name_schema(struct names *names, struct sc_schema *s, const char *base)
{
	struct sc_model *m = names->m;
	if (s->name)
		return;
	s->name = sc_strdup(base);
	for (int k = 0; per_schema[k]; k++) {
		char *f = sc_printf(per_schema[k], base);
		claim(m, &names->funcs, f, s->ptr, "function");
		free(f);
	}
	if (s->kind == SC_OBJECT || s->kind == SC_ARRAY) {
		s->cname = sc_strdup(base);
		claim(m, &names->tags, base, s->ptr, "struct");
	}
	struct nameset members = { 0 };
	for (size_t i = 0; i < s->nprops; i++) {
		struct sc_prop *p = &s->props[i];
		char *props = sc_ptr_key(s->ptr, "properties");
		char *pp = sc_ptr_key(props, p->name);
		free(props);
		if (s->kind == SC_OBJECT) {
			const struct sc_schema *r = sc_resolve(p->schema);
			claim(m, &members, p->cname, pp, "member");
			if (!p->required && !sc_default(p->schema)) {
				char *has = sc_printf("has_%s", p->cname);
				claim(m, &members, has, pp, "member");
				free(has);
			}
			if (r && r->nullable) {
				char *null = sc_printf("null_%s", p->cname);
				claim(m, &members, null, pp, "member");
				free(null);
			}
		}
		/* Two keys may make one C name ("a-b", "a_b"): the later one of a
		   free-form object is named by its index (a typed one fails above). */
		bool clash = false;
		for (size_t k = 0; k < i; k++)
			clash |= strcmp(s->props[k].cname, p->cname) == 0;
		char *suffix = clash ? sc_printf("prop%zu", i) : sc_strdup(p->cname);
		name_child(names, p->schema, base, suffix);
		free(suffix);
		free(pp);
	}
	if (s->kind == SC_OBJECT && s->additional == SC_AP_SCHEMA)
		claim(m, &members, "additional", s->ptr, "member");
	if (s->kind == SC_OBJECT && !s->nprops)
		claim(m, &members, "unused", s->ptr, "member");
	for (size_t i = 0; i < members.n; i++) {
		free(members.names[i]);
		free(members.where[i]);
	}
	free(members.names);
	free(members.where);

	name_child(names, s->items, base, "item");
	name_list(names, s->prefix_items, s->nprefix_items, base, "item");
	name_child(names, s->additional_schema, base, "additional");
	for (size_t i = 0; i < s->npattern_props; i++) {
		char *suffix = sc_printf("pattern%zu", i);
		name_child(names, s->pattern_props[i].schema, base, suffix);
		free(suffix);
		s->pattern_props[i].fn = sc_printf("keys_%s_pattern%zu", base, i);
	}
	name_child(names, s->property_names, base, "names");
	name_child(names, s->contains, base, "contains");
	for (size_t i = 0; i < s->ndep_schemas; i++) {
		char *suffix = sc_printf("dep%zu", i);
		name_child(names, s->dep_schemas[i].schema, base, suffix);
		free(suffix);
	}
	name_list(names, s->all_of, s->nall_of, base, "allOf");
	name_list(names, s->any_of, s->nany_of, base, "anyOf");
	name_list(names, s->one_of, s->none_of, base, "oneOf");
	name_child(names, s->not_schema, base, "not");
	name_child(names, s->if_schema, base, "if");
	name_child(names, s->then_schema, base, "then");
	name_child(names, s->else_schema, base, "else");
	for (size_t i = 0; i < s->ndefs; i++) {
		/* A def whose key is an identifier keeps it in its name. */
		const char *key = strrchr(s->defs[i]->ptr, '/') + 1;
		char *suffix = sc_is_global_ident(key) && !strchr(key, '~') ? sc_printf("def_%s", key) : sc_printf("def%zu", i);
		name_child(names, s->defs[i], base, suffix);
		free(suffix);
	}
	if (s->regex)
		s->pattern_fn = sc_printf("match_%s", base);
}

/* Claims every name the generated code makes from the document, so that
 * two never clash. Its fixed names (ig_route, ig_operation_<id>, the
 * handlers' symbols ig_op_<id>, ...) and the runtime's all start with ig_,
 * which no operationId or schema name may (sc_is_global_ident). */
static void name_everything(struct sc_model *m, const char *root_name)
{
	struct names names = { .m = m };
	struct nameset *tags = &names.tags, *funcs = &names.funcs;
	if (m->root)
		name_schema(&names, m->root, root_name);
	for (size_t i = 0; i < m->ncomponents; i++) {
		struct sc_schema *s = m->components[i];
		name_schema(&names, s, s->component);
	}
	for (size_t i = 0; i < m->nops; i++) {
		struct sc_op *op = m->ops[i];
		static const char *const per_op[] = {
			"%s", "decode_%s", "encode_%s", NULL,
		};
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
		struct nameset members = { 0 };
		for (size_t k = 0; k < op->nparams; k++) {
			struct sc_param *p = &op->params[k];
			claim(m, &members, p->cname, p->ptr, "member of the in struct");
			if (!p->required && !sc_default(p->schema)) {
				char *has = sc_printf("has_%s", p->cname);
				claim(m, &members, has, p->ptr, "member of the in struct");
				free(has);
			}
			name_child(&names, p->schema, op->id, p->cname);
		}
		if (op->body) {
			claim(m, &members, "body", op->body_ptr, "member of the in struct");
			if (!op->body_required)
				claim(m, &members, "has_body", op->body_ptr, "member of the in struct");
			name_child(&names, op->body, op->id, "body");
		}
		for (size_t r = 0; r < op->nresponses; r++) {
			for (size_t h = 0; h < op->responses[r].nheaders; h++) {
				char *suffix = sc_printf("%s_header%zu", op->responses[r].key, h);
				name_child(&names, op->responses[r].headers[h].schema, op->id, suffix);
				free(suffix);
			}
			struct sc_schema *s = op->responses[r].schema;
			if (!s)
				continue;
			name_child(&names, s, op->id, op->responses[r].key);
		}
	}
	/* Schemas reached only by a $ref to an odd place. */
	for (size_t i = 0; i < m->nnodes; i++) {
		if (m->nodes[i]->name)
			continue;
		char *n = sc_printf("%s_node%zu", root_name ? root_name : "schema", i);
		name_schema(&names, m->nodes[i], n);
		free(n);
	}
}

/* ---- the document ---- */

static void parse_info(struct sc_model *m, const cJSON *doc)
{
	const cJSON *info = get_object(m, doc, "", "info", true);
	if (!info)
		return;
	sc_check_keys(m, info, "/info", info_keys);
	m->title = sc_get_string(m, info, "/info", "title", true);
	m->version = sc_get_string(m, info, "/info", "version", true);
	free(sc_get_string(m, info, "/info", "summary", false));
	free(sc_get_string(m, info, "/info", "description", false));
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
		char *p = cJSON_IsObject(v) ? sc_ptr_key(ptr, it->string) : sc_ptr_index(ptr, i);
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

/* cJSON ends strings at U+0000: a document holding "\u0000" in a string
 * would compile to the wrong value, so it is refused. */
static void check_nul_escapes(struct sc_model *m, const char *text, size_t len)
{
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '"') {
			in_string = !in_string;
		} else if (in_string && text[i] == '\\') {
			if (i + 5 < len && text[i + 1] == 'u' && memcmp(text + i + 2, "0000", 4) == 0) {
				size_t line = 1;
				for (size_t k = 0; k < i; k++)
					line += text[k] == '\n';
				char *where = sc_printf("line %zu", line);
				sc_error(m, where, "\"\\u0000\" in a string is not supported");
				free(where);
				return;
			}
			i++;
		}
	}
}

/* Parses the text into m->doc, as YAML when the file's name says so (the
 * same cJSON value either way); false (with an error) if it does not parse. */
static bool parse_json(struct sc_model *m, const char *text, size_t len)
{
	if (sc_is_yaml_file(m->file)) {
		m->doc = sc_yaml_parse(m->file, text, len, &m->pos, &m->errors);
		return m->doc != NULL;
	}
	const char *end = NULL;
	m->doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!m->doc) {
		size_t off = end ? (size_t)(end - text) : 0, line = 1;
		for (size_t i = 0; i < off && i < len; i++)
			line += text[i] == '\n';
		char *where = sc_printf("line %zu", line);
		sc_error(m, where, "not valid JSON");
		free(where);
		return false;
	}
	check_nul_escapes(m, text, len);
	if (cJSON_IsObject(m->doc) || cJSON_IsArray(m->doc))
		check_duplicates(m, m->doc, "");
	return !m->errors;
}

void sc_model_load(struct sc_model *m, const char *file, const char *text, size_t len)
{
	memset(m, 0, sizeof *m);
	m->file = file;
	if (!parse_json(m, text, len))
		return;
	const cJSON *doc = m->doc;
	if (!cJSON_IsObject(doc)) {
		sc_error(m, "", "the document must be a JSON object");
		return;
	}
	sc_check_keys(m, doc, "", root_keys);
	char *version = sc_get_string(m, doc, "", "openapi", true);
	if (version && strncmp(version, "3.1.", 4) != 0 && strncmp(version, "3.2.", 4) != 0)
		sc_error(m, "/openapi", "OpenAPI version \"%s\" is not supported (3.1.x and 3.2.x are)", version);
	free(version);
	parse_info(m, doc);
	sc_parse_cors(m, doc);
	if (sc_get(doc, "x-ingot-rate-limit"))
		m->rate_global = sc_parse_rate_limit(m, sc_get(doc, "x-ingot-rate-limit"), "/x-ingot-rate-limit", "global");
	if (sc_get(doc, "x-ingot-hooks"))
		sc_parse_hooks(m, sc_get(doc, "x-ingot-hooks"), "/x-ingot-hooks", &m->hooks);
	provide_problem(m, m->doc);
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
	p->index = m->npaths;
	SC_APPEND(m->paths, m->npaths, p);

	collect_methods(m);
	sc_parse_cron(m, doc);
	sc_parse_pubsub(m, doc);
	sc_parse_security(m, doc);
	sc_check_hooks(m);
	sc_finish_schemas(m);
	if (!m->errors)
		sc_check_principal(m);
	if (!m->errors)
		sc_check_pubsub(m);
	if (!m->errors)
		sc_check_events(m);
	if (!m->errors)
		sc_check_websockets(m);
	if (!m->errors)
		sc_check_query_tokens(m);
	if (!m->errors)
		check_operations(m);
	if (!m->errors)
		name_everything(m, NULL);
}

void sc_model_load_schema(struct sc_model *m, const char *file, const char *text, size_t len, const char *name)
{
	memset(m, 0, sizeof *m);
	m->file = file;
	m->standalone = true;
	m->title = sc_strdup("JSON Schema");
	m->version = sc_strdup(name);
	if (!sc_is_global_ident(name)) {
		sc_error(m, "", "the validator's name \"%s\" must be a C identifier", name);
		return;
	}
	if (!parse_json(m, text, len))
		return;
	m->root = sc_parse_schema(m, m->doc, "");
	sc_finish_schemas(m);
	if (!m->errors)
		name_everything(m, name);
}
