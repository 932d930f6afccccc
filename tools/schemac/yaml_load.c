/* YAML 1.2 in, cJSON out (yaml_load.h). libyaml builds the node graph (aliases
 * point at their anchor's node) but resolves no types: the core schema is
 * applied here, and so are the refusals of what JSON cannot hold. */
#include "yaml_load.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define MAX_DEPTH 1000

struct conv {
	const char *file;
	struct sc_yaml_positions *pos; /* grown by doubling: a row per node */
	unsigned *errors;
	yaml_document_t *doc;
	bool *open;  /* per node: being converted (an alias to it is a cycle) */
	size_t nodes; /* converted so far, aliases expanded */
};

bool sc_is_yaml_file(const char *file)
{
	const char *dot = strrchr(file, '.');
	return dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0);
}

static void error_at(struct conv *cv, yaml_mark_t mark, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(struct conv *cv, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = sc_vprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "schemac: %s:%zu:%zu: %s\n", cv->file, mark.line + 1, mark.column + 1, msg);
	free(msg);
	(*cv->errors)++;
}

static void add_pos(struct conv *cv, const char *ptr, yaml_mark_t mark)
{
	struct sc_yaml_positions *pos = cv->pos;
	if (pos->n == pos->cap) {
		pos->cap = pos->cap ? 2 * pos->cap : 256;
		pos->at = sc_xrealloc(pos->at, pos->cap * sizeof *pos->at);
	}
	pos->at[pos->n++] = (struct sc_pos){ sc_strdup(ptr), mark.line + 1, mark.column + 1 };
}

static bool any_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* All of s[from..] is digits of the base (at least one). */
static bool digits(const char *s, const char *set)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr(set, *s))
			return false;
	return true;
}

/* YAML 1.2.2 core schema, 10.3.2: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static bool is_float(const char *s)
{
	s += *s == '-' || *s == '+';
	size_t ints = strspn(s, "0123456789");
	s += ints;
	if (*s == '.') {
		s++;
		size_t frac = strspn(s, "0123456789");
		if (!ints && !frac)
			return false;
		s += frac;
	} else if (!ints) {
		return false;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		s += *s == '-' || *s == '+';
		if (!digits(s, "0123456789"))
			return false;
		return true;
	}
	return !*s;
}

/* A plain scalar by the core schema; NULL (with an error) for what JSON cannot hold. */
static cJSON *plain_scalar(struct conv *cv, const yaml_node_t *n, const char *s)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
	static const char *const trues[] = { "true", "True", "TRUE", NULL };
	static const char *const falses[] = { "false", "False", "FALSE", NULL };
	static const char *const infs[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
					    "-.INF", ".nan", ".NaN", ".NAN", NULL };
	if (any_of(s, nulls))
		return cJSON_CreateNull();
	if (any_of(s, trues))
		return cJSON_CreateTrue();
	if (any_of(s, falses))
		return cJSON_CreateFalse();
	if (any_of(s, infs)) {
		error_at(cv, n->start_mark, "%s is a float JSON cannot hold (quote it for a string)", s);
		return NULL;
	}
	bool octal = s[0] == '0' && s[1] == 'o' && digits(s + 2, "01234567");
	if (octal || (s[0] == '0' && s[1] == 'x' && digits(s + 2, "0123456789abcdefABCDEF"))) {
		errno = 0;
		unsigned long long u = strtoull(s + 2, NULL, octal ? 8 : 16);
		if (errno == ERANGE) {
			error_at(cv, n->start_mark, "%s does not fit in 64 bits", s);
			return NULL;
		}
		return cJSON_CreateNumber((double)u);
	}
	/* Decimal integers are floats' subset: strtod reads both as JSON's parser does. */
	if (is_float(s)) {
		double d = strtod(s, NULL);
		if (!isfinite(d)) {
			error_at(cv, n->start_mark, "%s is out of a double's range", s);
			return NULL;
		}
		return cJSON_CreateNumber(d);
	}
	return cJSON_CreateString(s);
}

/* Only the tags libyaml gives untagged nodes: a node's type is the core
 * schema's to say, and JSON has no place for a tag. (An explicit "!!str"
 * or "!" looks the same as none to libyaml's loader: it passes and a plain
 * scalar under it still resolves by the core schema.) */
static bool check_tag(struct conv *cv, const yaml_node_t *n)
{
	const char *tag = (const char *)n->tag, *want = n->type == YAML_SCALAR_NODE ? YAML_DEFAULT_SCALAR_TAG
							   : n->type == YAML_SEQUENCE_NODE ? YAML_DEFAULT_SEQUENCE_TAG
											 : YAML_DEFAULT_MAPPING_TAG;
	if (tag && strcmp(tag, want) != 0) {
		error_at(cv, n->start_mark, "tag \"%s\" is not supported (JSON has no tags)", tag);
		return false;
	}
	return true;
}

static cJSON *convert(struct conv *cv, int id, const char *ptr, yaml_mark_t at, unsigned depth);

/* A key's text: a scalar of any style, kept as written. */
static const char *key_text(struct conv *cv, const yaml_node_t *k)
{
	if (k->type != YAML_SCALAR_NODE) {
		error_at(cv, k->start_mark, "a key must be a scalar (JSON keys are strings)");
		return NULL;
	}
	if (!check_tag(cv, k))
		return NULL;
	const char *s = (const char *)k->data.scalar.value;
	if (strlen(s) != k->data.scalar.length) {
		error_at(cv, k->start_mark, "U+0000 in a key is not supported");
		return NULL;
	}
	return s;
}

static cJSON *mapping(struct conv *cv, const yaml_node_t *n, const char *ptr, unsigned depth)
{
	cJSON *obj = cJSON_CreateObject();
	bool ok = true;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(cv->doc, p->key);
		const char *key = key_text(cv, k);
		if (!key) {
			ok = false;
			continue;
		}
		const cJSON *dup = cJSON_GetObjectItemCaseSensitive(obj, key);
		if (dup) {
			error_at(cv, k->start_mark, "duplicate key \"%s\"", key);
			ok = false;
			continue;
		}
		char *kp = sc_ptr_key(ptr, key);
		cJSON *v = convert(cv, p->value, kp, k->start_mark, depth + 1);
		free(kp);
		if (!v) {
			ok = false;
			continue;
		}
		cJSON_AddItemToObject(obj, key, v);
	}
	if (!ok) {
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

static cJSON *sequence(struct conv *cv, const yaml_node_t *n, const char *ptr, unsigned depth)
{
	cJSON *arr = cJSON_CreateArray();
	bool ok = true;
	int i = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++, i++) {
		char *ip = sc_ptr_index(ptr, i);
		cJSON *v = convert(cv, *it, ip, yaml_document_get_node(cv->doc, *it)->start_mark, depth + 1);
		free(ip);
		if (v)
			cJSON_AddItemToArray(arr, v);
		ok = ok && v;
	}
	if (!ok) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

/* Node id at ptr; at is where the pointer's member was written (a mapping
 * member's key, else the node itself), the position errors at ptr name. */
static cJSON *convert(struct conv *cv, int id, const char *ptr, yaml_mark_t at, unsigned depth)
{
	const yaml_node_t *n = yaml_document_get_node(cv->doc, id);
	if (cv->open[id]) {
		error_at(cv, n->start_mark, "an alias inside this node refers to the node itself (a cycle)");
		return NULL;
	}
	if (++cv->nodes > SC_YAML_MAX_NODES) {
		if (cv->nodes == SC_YAML_MAX_NODES + 1)
			error_at(cv, n->start_mark, "the document expands to more than %d nodes (aliases of aliases?)",
				 SC_YAML_MAX_NODES);
		return NULL;
	}
	if (depth > MAX_DEPTH) {
		error_at(cv, n->start_mark, "nested more than %d levels deep", MAX_DEPTH);
		return NULL;
	}
	if (!check_tag(cv, n))
		return NULL;
	add_pos(cv, ptr, at);
	cJSON *v = NULL;
	cv->open[id] = true;
	if (n->type == YAML_MAPPING_NODE) {
		v = mapping(cv, n, ptr, depth);
	} else if (n->type == YAML_SEQUENCE_NODE) {
		v = sequence(cv, n, ptr, depth);
	} else {
		const char *s = (const char *)n->data.scalar.value;
		if (strlen(s) != n->data.scalar.length)
			error_at(cv, n->start_mark, "U+0000 in a string is not supported");
		else if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			v = plain_scalar(cv, n, s);
		else
			v = cJSON_CreateString(s);
	}
	cv->open[id] = false;
	return v;
}

cJSON *sc_yaml_parse(const char *file, const char *text, size_t len, struct sc_yaml_positions *pos,
		     unsigned *errors)
{
	yaml_parser_t parser;
	yaml_document_t doc, next;
	struct conv cv = { file, pos, errors, &doc, NULL, 0 };
	unsigned errors_before = *errors;
	if (!yaml_parser_initialize(&parser)) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	cJSON *out = NULL;
	if (!yaml_parser_load(&parser, &doc)) {
		error_at(&cv, parser.problem_mark, "not valid YAML: %s%s%s", parser.problem ? parser.problem : "?",
			 parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return NULL;
	}
	const yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		error_at(&cv, parser.mark, "the file holds no YAML document");
	} else if (!yaml_parser_load(&parser, &next)) {
		error_at(&cv, parser.problem_mark, "not valid YAML: %s%s%s", parser.problem ? parser.problem : "?",
			 parser.context ? " " : "", parser.context ? parser.context : "");
	} else {
		if (yaml_document_get_root_node(&next))
			error_at(&cv, yaml_document_get_root_node(&next)->start_mark,
				 "a second YAML document (the file must hold one)");
		yaml_document_delete(&next);
		if (*errors == errors_before) {
			size_t nn = (size_t)(doc.nodes.top - doc.nodes.start);
			cv.open = sc_xmalloc(nn + 1); /* node ids start at 1 */
			out = convert(&cv, 1, "", root->start_mark, 0);
			free(cv.open);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (*errors != errors_before) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

bool sc_yaml_where(const struct sc_yaml_positions *pos, const char *ptr, unsigned long *line, unsigned long *col)
{
	if (!pos->n || !ptr || (*ptr && *ptr != '/'))
		return false;
	size_t n = strlen(ptr);
	for (;;) {
		for (size_t i = 0; i < pos->n; i++)
			if (strlen(pos->at[i].ptr) == n && strncmp(pos->at[i].ptr, ptr, n) == 0) {
				*line = pos->at[i].line;
				*col = pos->at[i].col;
				return true;
			}
		if (!n)
			return false;
		while (n && ptr[n - 1] != '/')
			n--;
		n -= n > 0; /* the '/' itself */
	}
}
