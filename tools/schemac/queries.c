/* schemac --queries: applies the app's migrations to a throwaway database
 * on the build's PostgreSQL (PGHOST/PGPORT/PGUSER/PGPASSWORD/PGDATABASE,
 * set by tools/make/queries from tools/pg-local), prepares and describes
 * every annotated query there, infers the parameters' names, checks a
 * query's columns against its `-- returns:` schema, and writes queries.h
 * and queries.c. Every problem is "FILE:LINE: message"; nothing is written
 * unless all compile, and the database is dropped either way. */
#include "queries.h"
#include "pg_host.h"
#include "sql_params.h"
#include "kernel/runtime/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

static const struct qtype types[] = {
	{ 16, "bool", "bool", QT_BOOL, "ig_pg_bool", SC_BOOLEAN, SC_FMT_NONE, 0 },
	{ 21, "int2", "int16_t", QT_INT, "ig_pg_int2", SC_INTEGER, SC_FMT_NONE, 0 },
	{ 23, "int4", "int32_t", QT_INT, "ig_pg_int4", SC_INTEGER, SC_FMT_NONE, 0 },
	{ 20, "int8", "int64_t", QT_INT, "ig_pg_int8", SC_INTEGER, SC_FMT_NONE, 0 },
	{ 700, "float4", "float", QT_FLOAT, "ig_pg_float4", SC_NUMBER, SC_FMT_NONE, 0 },
	{ 701, "float8", "double", QT_FLOAT, "ig_pg_float8", SC_NUMBER, SC_FMT_NONE, 0 },
	{ 1700, "numeric", "ig_str", QT_STR, "ig_pg_numeric", SC_STRING, SC_FMT_NONE, 0 },
	{ 25, "text", "ig_str", QT_STR, "ig_pg_text", SC_STRING, SC_FMT_NONE, 0 },
	{ 1043, "varchar", "ig_str", QT_STR, "ig_pg_varchar", SC_STRING, SC_FMT_NONE, 0 },
	{ 17, "bytea", "ig_str", QT_STR, "ig_pg_bytea", SC_STRING, SC_FMT_NONE, 0 },
	{ 114, "json", "ig_str", QT_STR, "ig_pg_json", SC_STRING, SC_FMT_NONE, 0 },
	{ 3802, "jsonb", "ig_str", QT_STR, "ig_pg_jsonb", SC_STRING, SC_FMT_NONE, 0 },
	{ 2950, "uuid", "ig_str", QT_TEXTOF, NULL, SC_STRING, SC_FMT_UUID, 0 },
	{ 1082, "date", "ig_str", QT_TEXTOF, NULL, SC_STRING, SC_FMT_DATE, 0 },
	{ 1114, "timestamp", "ig_str", QT_TEXTOF, NULL, SC_STRING, SC_FMT_DATE_TIME, 0 },
	{ 1184, "timestamptz", "ig_str", QT_TEXTOF, NULL, SC_STRING, SC_FMT_DATE_TIME, 0 },
	/* One-dimensional arrays (a column's declared dimensions are not
	 * checked: PostgreSQL does not enforce them either; the decoder
	 * refuses a value of more than one). Their structs are declared in
	 * queries.h, named after the element's C type. */
	{ 1000, "bool[]", "struct db_array_bool", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 16 },
	{ 1005, "int2[]", "struct db_array_int16", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 21 },
	{ 1007, "int4[]", "struct db_array_int32", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 23 },
	{ 1016, "int8[]", "struct db_array_int64", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 20 },
	{ 1021, "float4[]", "struct db_array_float", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 700 },
	{ 1022, "float8[]", "struct db_array_double", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 701 },
	{ 1231, "numeric[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 1700 },
	{ 1009, "text[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 25 },
	{ 1015, "varchar[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 1043 },
	{ 1001, "bytea[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 17 },
	{ 199, "json[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 114 },
	{ 3807, "jsonb[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 3802 },
	{ 2951, "uuid[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 2950 },
	{ 1182, "date[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 1082 },
	{ 1115, "timestamp[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 1114 },
	{ 1185, "timestamptz[]", "struct db_array_str", QT_ARRAY, NULL, SC_ARRAY, SC_FMT_NONE, 1184 },
};

const struct qtype *qt_find(uint32_t oid)
{
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (types[i].oid == oid)
			return &types[i];
	return NULL;
}

bool qt_is_json(const struct qtype *t)
{
	return t->oid == 114 || t->oid == 3802;
}

bool qt_json_fits(const struct sc_schema *s)
{
	const struct sc_schema *r = sc_resolve(s);
	if (r->kind == SC_VALUE)
		return true;
	if (r->kind != SC_ARRAY || !r->items || slot_is_value(r->items, false))
		return false;
	const struct sc_schema *i = sc_resolve(r->items);
	return (i->kind == SC_STRING && i->format == SC_FMT_NONE) || i->kind == SC_INTEGER || i->kind == SC_NUMBER ||
	       i->kind == SC_BOOLEAN;
}

/* Words a parameter may not be named: the linear function's own. */
static const char *const reserved[] = { "ctx", "err", "row", "rows", "p", "res", "arena", "out", NULL };

static unsigned errors;

static void error_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	errors++;
}

/* An error's character position (1-based) in q's SQL, as q's file line. */
static int error_line(const struct sq_query *q, int position)
{
	if (position <= 0)
		return q->line;
	size_t at = 0;
	for (int chars = 1; q->sql[at] && chars < position; at++)
		if (((unsigned char)q->sql[at + 1] & 0xC0) != 0x80)
			chars++;
	return sq_line_at(q, at);
}

static char *env(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return sc_strdup(v && *v ? v : dflt);
}

static bool apply_migrations(struct ph_conn *c, const char *dir)
{
	char **names;
	size_t n;
	if (sq_list_sql(dir, &names, &n) != 0) {
		if (errno == ENOENT)
			return true; /* no migrations: queries over the catalog only */
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		errors++;
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		char *text = ig_read_file(names[i], (size_t)1 << 28, 0, &len, NULL, 0);
		struct ph_error e;
		if (!text) {
			fprintf(stderr, "%s: %s\n", names[i], strerror(errno));
			errors++;
			return false;
		}
		if (!ph_simple(c, text, NULL, NULL, &e)) {
			int line = 1;
			for (int at = 0, ch = 1; text[at] && ch < e.position; at++) {
				line += text[at] == '\n';
				ch += ((unsigned char)text[at + 1] & 0xC0) != 0x80;
			}
			error_at(names[i], line, "the migration fails: %s", e.message);
			return false;
		}
		free(text);
	}
	return true;
}

/* One value of a catalog query, or NULL. */
static char *catalog(struct ph_conn *c, const char *sql)
{
	char **rows = NULL;
	size_t n = 0;
	struct ph_error e;
	if (!ph_simple(c, sql, &rows, &n, &e) || n == 0)
		return NULL;
	return rows[0];
}

static char *type_name(struct ph_conn *c, uint32_t oid)
{
	char *sql = sc_printf("SELECT format_type(%u, NULL)", oid);
	char *v = catalog(c, sql);
	free(sql);
	return v ? v : sc_printf("oid %u", oid);
}

static void describe(struct ph_conn *c, struct qinfo *qi)
{
	struct sq_query *q = qi->q;
	struct ph_describe d;
	struct ph_error e;
	char **named;
	size_t nnamed;
	char *sql = sq_named_params(q->sql, &named, &nnamed);
	free(q->sql);
	q->sql = sql; /* prepared, and emitted, with $N in place of names */
	if (!ph_describe(c, q->sql, &d, &e)) {
		error_at(q->file, error_line(q, e.position), "query %s: %s", q->name, e.message);
		return;
	}
	qi->nparams = d.nparams;
	qi->pnames = sc_xmalloc(sizeof *qi->pnames * (d.nparams + 1));
	qi->ptypes = sc_xmalloc(sizeof *qi->ptypes * (d.nparams + 1));
	for (size_t i = 0; i < d.nparams; i++)
		qi->pnames[i] = i < nnamed && named[i] ? named[i] : NULL;
	sq_param_names(q->sql, d.nparams, reserved, qi->pnames);
	for (size_t i = 0; i < d.nparams; i++) { /* a C keyword gets a '_' */
		char *name = sc_member_name(qi->pnames[i]);
		free(qi->pnames[i]);
		qi->pnames[i] = name;
	}
	for (size_t i = 0; i < d.nparams; i++) {
		qi->ptypes[i] = qt_find(d.params[i]);
		if (!qi->ptypes[i])
			error_at(q->file, q->line, "query %s: parameter $%zu (%s) has type %s, which generated code does not map",
				 q->name, i + 1, qi->pnames[i], type_name(c, d.params[i]));
	}
	qi->has_rows = d.has_rows;
	qi->ncols = d.ncols;
	qi->cols = sc_xmalloc(sizeof *qi->cols * (d.ncols + 1));
	for (size_t i = 0; i < d.ncols; i++) {
		struct qcol *col = &qi->cols[i];
		col->name = d.cols[i].name;
		col->cname = sc_member_name(col->name);
		col->type = qt_find(d.cols[i].type_oid);
		if (!col->type)
			error_at(q->file, q->line, "query %s: column \"%s\" has type %s, which generated code does not map",
				 q->name, col->name, type_name(c, d.cols[i].type_oid));
		for (size_t j = 0; j < i; j++)
			if (strcmp(qi->cols[j].cname, col->cname) == 0)
				error_at(q->file, q->line, "query %s: two columns are named \"%s\" (name one with AS)", q->name,
					 col->name);
		col->nullable = true;
		if (d.cols[i].table_oid && d.cols[i].column > 0) {
			char *sql = sc_printf("SELECT attnotnull FROM pg_attribute WHERE attrelid = %u AND attnum = %u",
					      d.cols[i].table_oid, d.cols[i].column);
			char *v = catalog(c, sql);
			col->nullable = !(v && strcmp(v, "t") == 0);
			free(sql);
		}
	}
	if (!d.has_rows && (q->kind == SQ_ONE || q->kind == SQ_MANY))
		error_at(q->file, q->line, "query %s is :%s but returns no rows (RETURNING ...?)", q->name,
			 q->kind == SQ_ONE ? "one" : "many");
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
	default: return "free-form";
	}
}

static const char *format_name(enum sc_format f)
{
	switch (f) {
	case SC_FMT_DATE_TIME: return "date-time";
	case SC_FMT_DATE: return "date";
	case SC_FMT_UUID: return "uuid";
	case SC_FMT_EMAIL: return "email";
	case SC_FMT_URI: return "uri";
	default: return "";
	}
}

/* Does a column of type t fill a property of schema s? NULL when it does,
 * else why not. */
static char *disagreement(const struct qtype *t, const struct sc_schema *s)
{
	const struct sc_schema *r = sc_resolve(s);
	if (qt_is_json(t) && (qt_json_fits(s) || json_struct_slot(s)))
		return NULL;
	if (r->kind != t->kind)
		return sc_printf("is %s, the property is %s", t->sql, kind_name(r->kind));
	if (t->array_of) {
		const struct qtype *e = qt_find(t->array_of);
		const struct sc_schema *items = r->items ? sc_resolve(r->items) : NULL;
		if (!items || slot_is_value(r->items, false) || items->kind != e->kind || (items->kind == SC_STRING && items->format != SC_FMT_NONE &&
							  items->format != e->format))
			return sc_printf("is %s, the property's items are %s%s%s", t->sql,
					 items ? kind_name(items->kind) : "anything", items && items->format ? " of format " : "",
					 items && items->format ? format_name(items->format) : "");
		return NULL;
	}
	if (r->kind == SC_STRING && r->format != SC_FMT_NONE && r->format != t->format)
		return sc_printf("is %s, the property is a string of format %s", t->sql, format_name(r->format));
	return NULL;
}

static void check_returns(struct sc_model *m, struct qinfo *qi)
{
	struct sq_query *q = qi->q;
	const struct sc_schema *s = NULL;
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->component, q->returns) == 0)
			s = sc_resolve(m->components[i]);
	if (!s) {
		error_at(q->file, q->line, "query %s returns %s, which is not a schema of components/schemas", q->name,
			 q->returns);
		return;
	}
	if (s->kind != SC_OBJECT || !s->cname) {
		error_at(q->file, q->line, "query %s returns %s, which is not a typed object schema", q->name, q->returns);
		return;
	}
	qi->returns = s;
	for (size_t i = 0; i < qi->ncols; i++) {
		struct qcol *col = &qi->cols[i];
		for (size_t j = 0; j < s->nprops; j++)
			if (strcmp(s->props[j].name, col->name) == 0)
				col->prop = &s->props[j];
		if (!col->prop) {
			error_at(q->file, q->line, "query %s: column \"%s\" is no property of %s", q->name, col->name,
				 q->returns);
			continue;
		}
		if (!col->type)
			continue;
		char *why = disagreement(col->type, col->prop->schema);
		if (why) {
			error_at(q->file, q->line, "query %s: column \"%s\" does not agree with %s.%s: it %s", q->name,
				 col->name, q->returns, col->prop->name, why);
			free(why);
		}
		if (col->nullable && col->prop->required && !prop_null_flag(col->prop))
			error_at(q->file, q->line,
				 "query %s: column \"%s\" may be NULL, but %s requires %s (a NOT NULL column, or COALESCE)",
				 q->name, col->name, q->returns, col->prop->name);
	}
	for (size_t j = 0; j < s->nrequired; j++) {
		bool found = false;
		for (size_t i = 0; i < qi->ncols; i++)
			found = found || strcmp(qi->cols[i].name, s->required[j]) == 0;
		if (!found)
			error_at(q->file, q->line, "query %s: %s requires \"%s\", which the query does not return", q->name,
				 q->returns, s->required[j]);
	}
}

static int write_out(const char *dir, const char *name, const struct sc_out *o)
{
	char *path = sc_printf("%s/%s", dir, name), *tmp = sc_printf("%s/.%s.tmp", dir, name);
	FILE *f = fopen(tmp, "wb");
	int rc = -1;
	if (f) {
		bool ok = fwrite(o->buf, 1, o->len, f) == o->len;
		ok = fclose(f) == 0 && ok;
		if (ok && rename(tmp, path) == 0)
			rc = 0;
	}
	if (rc)
		fprintf(stderr, "schemac: %s: %s\n", path, strerror(errno));
	free(path);
	free(tmp);
	return rc;
}

/* Drops the throwaway databases of runs that ended before dropping theirs
 * (interrupted: their process is gone), by the pid in the name. */
static void drop_stale(struct ph_conn *admin)
{
	char **rows = NULL;
	size_t n = 0;
	struct ph_error e;
	if (!ph_simple(admin, "SELECT datname FROM pg_database WHERE datname ~ '^schemac_[0-9]+_[0-9a-f]{12}$'", &rows,
		       &n, &e))
		return;
	for (size_t i = 0; i < n; i++) {
		long pid = rows[i] ? strtol(rows[i] + 8, NULL, 10) : 0;
		if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			char *sql = sc_printf("DROP DATABASE IF EXISTS %s", rows[i]);
			ph_simple(admin, sql, NULL, NULL, &e);
			free(sql);
		}
		free(rows[i]);
	}
	free(rows);
}

int queries_main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: schemac --queries <document> <queries dir> <migrations dir> <outdir>\n");
		return 2;
	}
	const char *doc = argv[2], *qdir = argv[3], *mdir = argv[4], *outdir = argv[5];
	size_t len = 0;
	char *text = ig_read_file(doc, (size_t)1 << 30, 0, &len, NULL, 0);
	if (!text) {
		fprintf(stderr, "schemac: %s: %s\n", doc, strerror(errno));
		return 1;
	}
	struct sc_model m;
	sc_model_load(&m, doc, text, len);
	if (m.errors)
		return 1;
	struct sq_query *qs = NULL;
	size_t nq = 0;
	errors = sq_read_dir(qdir, &qs, &nq);
	if (errors)
		return 1;

	char *host = env("PGHOST", "/run/postgresql"), *port = env("PGPORT", "5432"), *user = env("PGUSER", "postgres");
	char *password = env("PGPASSWORD", ""), *admin_db = env("PGDATABASE", user);
	struct ph_conn admin, c;
	struct ph_error e;
	if (!ph_connect(&admin, host, port, user, password, admin_db, &e)) {
		fprintf(stderr, "schemac: the build's PostgreSQL (%s, port %s): %s\n", host, port, e.message);
		return 1;
	}
	drop_stale(&admin);
	uint8_t rnd[6];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return 1;
	char *db = sc_printf("schemac_%d_%02x%02x%02x%02x%02x%02x", (int)getpid(), rnd[0], rnd[1], rnd[2], rnd[3],
			     rnd[4], rnd[5]);
	char *sql = sc_printf("CREATE DATABASE %s", db);
	if (!ph_simple(&admin, sql, NULL, NULL, &e)) {
		fprintf(stderr, "schemac: %s: %s\n", sql, e.message);
		return 1;
	}
	struct qinfo *qi = sc_xmalloc(sizeof *qi * (nq + 1));
	if (!ph_connect(&c, host, port, user, password, db, &e)) {
		fprintf(stderr, "schemac: database %s: %s\n", db, e.message);
		errors++;
	} else {
		if (apply_migrations(&c, mdir))
			for (size_t i = 0; i < nq; i++) {
				qi[i].q = &qs[i];
				describe(&c, &qi[i]);
				if (qs[i].returns)
					check_returns(&m, &qi[i]);
			}
		ph_close(&c);
	}
	sql = sc_printf("DROP DATABASE IF EXISTS %s", db);
	if (!ph_simple(&admin, sql, NULL, NULL, &e))
		fprintf(stderr, "schemac: %s: %s (drop it by hand)\n", sql, e.message);
	ph_close(&admin);
	if (errors) {
		fprintf(stderr, "schemac: %s: %u error%s, nothing written\n", qdir, errors, errors == 1 ? "" : "s");
		return 1;
	}
	struct sc_out h = { 0 }, cc = { 0 };
	emit_queries(qi, nq, &h, &cc);
	return write_out(outdir, "queries.h", &h) || write_out(outdir, "queries.c", &cc) ? 1 : 0;
}
