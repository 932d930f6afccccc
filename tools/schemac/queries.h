/* schemac --queries: the described queries (annotated SQL checked against
 * the app's migrations on a throwaway database) and the PostgreSQL types
 * generated code maps; queries.c fills it, emit_queries.c writes the C. */
#ifndef SCHEMAC_QUERIES_H
#define SCHEMAC_QUERIES_H

#include "emit.h"
#include "sql_file.h"

#include <stdbool.h>
#include <stdint.h>

/* How a PostgreSQL type is held: its C type, the member of ig_pg_value a
 * decoded column has, and how a parameter is made. */
enum qt_held {
	QT_BOOL,   /* v->b */
	QT_INT,    /* v->i */
	QT_FLOAT,  /* v->f */
	QT_STR,    /* v->s: text, varchar, numeric, json(b), bytea */
	QT_TEXTOF, /* uuid, date, timestamp(tz): its text via ig_pg_value_text */
	QT_ARRAY,  /* a one-dimensional array of array_of: ig_pg_array_decode */
};
struct qtype {
	uint32_t oid;
	const char *sql;    /* its name in messages */
	const char *ctype;  /* the row's and the parameter's C type */
	enum qt_held held;
	const char *param;  /* the constructor: ig_pg_int8 ...; NULL: text the server reads (oid 0) */
	enum sc_kind kind;  /* the schema type it agrees with */
	enum sc_format format; /* SC_FMT_NONE: any string */
	uint32_t array_of;  /* an array type's element oid, else 0 */
};
/* NULL when the type is not mapped. */
const struct qtype *qt_find(uint32_t oid);
/* json or jsonb: besides a string (its text), such a column fills a
 * free-form property (the parsed tree) or an array of strings, integers,
 * numbers or booleans (the JSON array's elements), per qt_json_fits; and
 * a typed object or array of objects through api.c's decoder
 * (json_struct_slot, emit.h). */
bool qt_is_json(const struct qtype *t);
bool qt_json_fits(const struct sc_schema *s);

struct qcol {
	char *name;   /* as the server names it */
	char *cname;  /* the member */
	const struct qtype *type;
	bool nullable;
	const struct sc_prop *prop; /* with returns: the property it fills */
};

struct qinfo {
	struct sq_query *q;
	size_t nparams;
	char **pnames;
	const struct qtype **ptypes;
	struct qcol *cols;
	size_t ncols;
	bool has_rows;
	const struct sc_schema *returns; /* the component schema, or NULL */
};

/* Writes queries.h and queries.c of qs into h and c. */
void emit_queries(const struct qinfo *qs, size_t n, struct sc_out *h, struct sc_out *c);

/* schemac --queries DOCUMENT QUERIES_DIR MIGRATIONS_DIR OUTDIR */
int queries_main(int argc, char **argv);

#endif
