/* The schema compiler's model: the OpenAPI document parsed into paths,
 * operations, parameters, responses and a tree of schema nodes, checked and
 * named, with no C text in it. The emitters (emit_*.c) read only this model;
 * cJSON stays inside model.c (and the embedding of the document). */
#ifndef SCHEMAC_MODEL_H
#define SCHEMAC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

enum sc_kind {
	SC_REF,     /* a $ref to a components/schemas entry: see target */
	SC_STRING,
	SC_INTEGER,
	SC_NUMBER,
	SC_BOOLEAN,
	SC_OBJECT,
	SC_ARRAY,
};

/* A numeric bound (minimum, maximum, exclusiveMinimum, exclusiveMaximum). */
struct sc_bound {
	bool set;
	int64_t i;   /* the value, for integer schemas */
	double d;    /* the value, for number schemas */
	char *text;  /* the value as written in messages ("1", "60000") */
};

struct sc_schema;

struct sc_prop {
	char *name;   /* the JSON key */
	char *cname;  /* the C member name */
	bool required;
	struct sc_schema *schema;
};

struct sc_schema {
	enum sc_kind kind;
	char *ptr;          /* JSON pointer of its definition, for messages */
	char *component;    /* its name under components/schemas, or NULL */
	char *cname;        /* struct name (objects and arrays only) */
	char *doc;          /* title or description, for a comment; may be NULL */
	struct sc_schema *target; /* SC_REF only */

	struct sc_prop *props; /* SC_OBJECT, in document order */
	size_t nprops;
	struct sc_schema *items; /* SC_ARRAY */

	struct sc_bound minimum, maximum, exclusive_minimum, exclusive_maximum;
	bool has_min_length, has_max_length;
	uint64_t min_length, max_length; /* in code points */

	cJSON *enum_values; /* the "enum" array, or NULL */

	/* Emitter state. */
	int type_mark;      /* emit_types: 0 new, 1 being emitted, 2 emitted, 3 declared */
	bool encoder_used;  /* emit_encode: some response reaches it */
	bool writer_listed; /* emit_encode: in the list of writers */
};

enum sc_param_in { SC_IN_PATH };

struct sc_param {
	char *name;   /* as in the document and in error reports */
	char *cname;  /* the member of the in struct */
	enum sc_param_in in;
	struct sc_schema *schema;
	size_t segment; /* SC_IN_PATH: index of its path segment */
	char *ptr;
};

struct sc_response {
	int status;
	struct sc_schema *schema; /* application/json schema, or NULL */
	char *ptr;
};

struct sc_path;

struct sc_op {
	char *id;         /* operationId: the handler's name */
	const char *method; /* "GET", "POST", ...; HEAD and OPTIONS are implied */
	struct sc_path *path;
	char *summary;
	struct sc_param *params;
	size_t nparams;
	struct sc_response *responses;
	size_t nresponses;
	char *ptr;
};

struct sc_segment {
	char *text;  /* literal text, or the parameter name */
	bool param;
};

struct sc_path {
	char *tmpl; /* "/blog/{id}" */
	struct sc_segment *segs;
	size_t nsegs;
	struct sc_op **ops; /* in the order of the methods table */
	size_t nops;
	bool builtin_openapi; /* the path serving the document itself */
	char *ptr;
};

struct sc_model {
	const char *file;
	cJSON *doc;
	char *title, *version;

	struct sc_schema **components; /* components/schemas, document order */
	size_t ncomponents;
	struct sc_path **paths;
	size_t npaths;
	struct sc_op **ops; /* every operation, document order */
	size_t nops;

	/* Every method some path answers, as an Allow value for "OPTIONS *". */
	char *all_methods;

	unsigned errors;
};

/* Parses and checks the document. Problems are printed as
 * "schemac: <file>: <json pointer>: <message>" and counted in m->errors;
 * the model is only usable when that count is zero. */
void sc_model_load(struct sc_model *m, const char *file, const char *text, size_t len);

/* Follows $ref links to the schema that says what a value is. */
const struct sc_schema *sc_resolve(const struct sc_schema *s);

/* The Allow value for one path ("GET, HEAD, OPTIONS"). */
char *sc_path_allow(const struct sc_path *p);

/* Small helpers shared with the emitters. */
void *sc_xmalloc(size_t n);
char *sc_strdup(const char *s);
char *sc_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sc_error(struct sc_model *m, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
