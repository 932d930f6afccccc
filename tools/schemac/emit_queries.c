/* queries.h and queries.c from the described queries (queries.h): per
 * query its SQL, a row struct (or the `-- returns:` schema's struct), a
 * parameter builder, a one-row decoder and the linear function that runs
 * it with ig_pg_run. The builder and decoder stand alone, so callback-style
 * code (ig_pg_query) can use them too. */
#include "queries.h"

#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = { "one", "many", "exec", "execrows" };

static char *row_type(const struct qinfo *qi)
{
	return qi->returns ? sc_printf("struct %s", qi->returns->cname) : sc_printf("struct db_%s_row", qi->q->name);
}

/* "int64_t id, ig_str title" (with a leading ", " when first_comma). */
static char *param_list(const struct qinfo *qi, bool first_comma)
{
	char *s = sc_strdup("");
	for (size_t i = 0; i < qi->nparams; i++) {
		char *n = sc_printf("%s%s%s %s", s, i || first_comma ? ", " : "", qi->ptypes[i]->ctype, qi->pnames[i]);
		free(s);
		s = n;
	}
	return s;
}

static char *arg_list(const struct qinfo *qi)
{
	char *s = sc_strdup("");
	for (size_t i = 0; i < qi->nparams; i++) {
		char *n = sc_printf("%s, %s", s, qi->pnames[i]);
		free(s);
		s = n;
	}
	return s;
}

/* A C string literal of s, one source line per SQL line. */
static void emit_literal(struct sc_out *c, const char *s)
{
	out_f(c, "\t\"");
	for (; *s; s++) {
		if (*s == '\n') {
			out_f(c, "\\n\"\n\t\"");
		} else if (*s == '"' || *s == '\\') {
			out_f(c, "\\%c", *s);
		} else if ((unsigned char)*s < 0x20) {
			out_f(c, "\\%03o", (unsigned char)*s);
		} else {
			out_raw(c, s, 1);
		}
	}
	out_f(c, "\"");
}

static void emit_row_struct(struct sc_out *h, const struct qinfo *qi)
{
	out_open(h, "struct db_%s_row {", qi->q->name);
	for (size_t i = 0; i < qi->ncols; i++) {
		const struct qcol *col = &qi->cols[i];
		if (col->nullable)
			out_line(h, "bool has_%s; /* false: NULL */", col->cname);
		out_line(h, "%s %s; /* %s */", col->type->ctype, col->cname, col->type->sql);
	}
	out_close(h, "};");
}

/* The C type a value of t takes in the member: the schema's with returns
 * (items: the array's element), else the query's own. */
static char *member_type(const struct qtype *t, const struct sc_schema *schema)
{
	return schema ? c_type(schema) : sc_strdup(t->ctype);
}

/* target = the scalar value v (a const ig_pg_value *, as ptr; its members
 * as field, "v->" or "items[j].") as C type ctype; a text-of value may
 * fail (return false). */
static void emit_scalar(struct sc_out *c, const struct qtype *t, const char *ctype, const char *target, const char *ptr,
			const char *field)
{
	char *cast = strcmp(ctype, "ig_str") && strcmp(ctype, "bool") ? sc_printf("(%s)", ctype) : sc_strdup("");
	switch (t->held) {
	case QT_BOOL: out_line(c, "%s = %sb;", target, field); break;
	case QT_INT: out_line(c, "%s = %s%si;", target, cast, field); break;
	case QT_FLOAT: out_line(c, "%s = %s%sf;", target, cast, field); break;
	case QT_STR: out_line(c, "%s = %ss;", target, field); break;
	case QT_TEXTOF:
		out_line(c, "if (!ig_pg_value_text(%s, arena, &%s))", ptr, target);
		out_line(c, "\treturn false;");
		break;
	case QT_ARRAY: break;
	}
	free(cast);
}

static void emit_array_decode(struct sc_out *c, const struct qtype *t, const struct sc_schema *schema, const char *m)
{
	const struct qtype *e = qt_find(t->array_of);
	const struct sc_schema *items = schema ? sc_resolve(schema)->items : NULL;
	char *et = member_type(e, items);
	if (!items) { /* the query's own struct: the element's C type */
		free(et);
		et = sc_strdup(e->ctype);
	}
	out_open(c, "{");
	out_line(c, "ig_pg_value *items;");
	out_line(c, "size_t n;");
	out_line(c, "if (!ig_pg_array_decode(v, %u, arena, &items, &n))", e->oid);
	out_line(c, "\treturn false;");
	out_line(c, "%s *a = n ? ig_arena_alloc(arena, sizeof *a * n) : NULL;", et);
	out_line(c, "if (n && !a)");
	out_line(c, "\treturn false;");
	out_open(c, "for (size_t j = 0; j < n; j++) {");
	out_line(c, "if (items[j].null)");
	out_line(c, "\treturn false; /* a NULL element has no C value here */");
	emit_scalar(c, e, et, "a[j]", "&items[j]", "items[j].");
	out_close(c, "}");
	out_line(c, "out->%s.items = a;", m);
	out_line(c, "out->%s.len = n;", m);
	out_close(c, "}");
	free(et);
}

/* A json(b) column into a free-form property (the tree) or an array of
 * scalars (qt_json_fits). */
static void emit_json_decode(struct sc_out *c, const struct sc_schema *schema, const char *m)
{
	const struct sc_schema *r = sc_resolve(schema);
	out_line(c, "const ig_json_value *ig_tree = ig_q_json(v->s, arena);");
	if (r->kind == SC_VALUE) {
		out_line(c, "if (!ig_tree)");
		out_line(c, "\treturn false;");
		out_line(c, "out->%s = ig_tree;", m);
		return;
	}
	const struct sc_schema *items = sc_resolve(r->items);
	char *et = c_type(r->items);
	out_line(c, "if (!ig_tree || ig_tree->type != IG_JSON_ARRAY)");
	out_line(c, "\treturn false;");
	out_line(c, "size_t n = ig_tree->array.len;");
	out_line(c, "%s *a = n ? ig_arena_alloc(arena, sizeof *a * n) : NULL;", et);
	out_line(c, "if (n && !a)");
	out_line(c, "\treturn false;");
	out_open(c, "for (size_t j = 0; j < n; j++) {");
	out_line(c, "const ig_json_value *e = ig_tree->array.items[j];");
	switch (items->kind) {
	case SC_STRING:
		out_line(c, "if (e->type != IG_JSON_STRING)");
		out_line(c, "\treturn false;");
		out_line(c, "a[j] = e->s;");
		break;
	case SC_INTEGER:
		out_line(c, "if (e->type != IG_JSON_INT)");
		out_line(c, "\treturn false;");
		out_line(c, "a[j] = e->i;");
		break;
	case SC_NUMBER:
		out_line(c, "if (e->type != IG_JSON_INT && e->type != IG_JSON_NUMBER)");
		out_line(c, "\treturn false;");
		out_line(c, "a[j] = e->type == IG_JSON_INT ? (double)e->i : e->d;");
		break;
	default:
		out_line(c, "if (e->type != IG_JSON_BOOL)");
		out_line(c, "\treturn false;");
		out_line(c, "a[j] = e->b;");
		break;
	}
	out_close(c, "}");
	out_line(c, "out->%s.items = a;", m);
	out_line(c, "out->%s.len = n;", m);
	free(et);
}

/* A json(b) column into a typed object or array of objects: the decoder
 * api.c has for request bodies, behind ig_json_decode_<name>. */
static bool col_json_struct(const struct qcol *col)
{
	return col->prop && qt_is_json(col->type) && json_struct_slot(col->prop->schema);
}

static bool col_json_tree(const struct qcol *col)
{
	return col->prop && qt_is_json(col->type) && !col_json_struct(col) &&
	       sc_resolve(col->prop->schema)->kind != SC_STRING;
}

static void emit_column_decode(struct sc_out *c, const struct qcol *col, size_t i)
{
	const char *m = col->cname;
	bool has = col->prop ? prop_has_flag(col->prop) : col->nullable;
	bool null_flag = col->prop && prop_null_flag(col->prop);
	out_line(c, "v = ig_pg_at(res, row, %zu);", i);
	out_line(c, "if (v->oid != %u)", col->type->oid);
	out_line(c, "\treturn false;");
	if (col->nullable && (null_flag || !has)) {
		out_open(c, "if (v->null) {");
		if (null_flag)
			out_line(c, "out->null_%s = true;", m);
		else
			out_line(c, "return false; /* the schema requires it */");
		out_close(c, "} else {");
		c->indent++;
	} else if (col->nullable) {
		out_open(c, "if (!v->null) {");
	} else {
		out_line(c, "if (v->null)");
		out_line(c, "\treturn false;");
	}
	if (has)
		out_line(c, "out->has_%s = true;", m);
	if (col_json_struct(col)) {
		const struct sc_schema *r = sc_resolve(col->prop->schema);
		if (r->nullable)
			out_line(c, "if (!ig_json_decode_%s(v->s, arena, &out->%s, &out->null_%s))", r->name, m, m);
		else
			out_line(c, "if (!ig_json_decode_%s(v->s, arena, &out->%s))", r->name, m);
		out_line(c, "\treturn false; /* not JSON, or it does not fit the schema */");
	} else if (col_json_tree(col)) {
		out_open(c, "{");
		emit_json_decode(c, col->prop->schema, m);
		out_close(c, "}");
	} else if (col->type->held == QT_ARRAY) {
		emit_array_decode(c, col->type, col->prop ? col->prop->schema : NULL, m);
	} else {
		char *t = member_type(col->type, col->prop ? col->prop->schema : NULL);
		char *target = sc_printf("out->%s", m);
		emit_scalar(c, col->type, t, target, "v", "v->");
		free(t);
		free(target);
	}
	if (col->nullable)
		out_close(c, "}");
}

/* Does the parameter builder need an arena (array parameters)? */
static bool params_use_arena(const struct qinfo *qi)
{
	for (size_t i = 0; i < qi->nparams; i++)
		if (qi->ptypes[i]->held == QT_ARRAY)
			return true;
	return false;
}

/* ig_e[0..len): an array parameter's elements as values, for ig_pg_array_text. */
static void emit_array_values(struct sc_out *c, const struct qtype *e, const char *pn)
{
	out_line(c, "ig_pg_value *ig_e = %s.len ? ig_arena_alloc(arena, sizeof *ig_e * %s.len) : NULL;", pn, pn);
	out_line(c, "if (%s.len && !ig_e)", pn);
	out_line(c, "\treturn false;");
	out_line(c, "for (size_t ig_j = 0; ig_j < %s.len; ig_j++)", pn);
	switch (e->held) {
	case QT_BOOL: out_line(c, "\tig_e[ig_j] = ig_pg_bool(%s.items[ig_j]);", pn); break;
	case QT_FLOAT: out_line(c, "\tig_e[ig_j] = ig_pg_float8(%s.items[ig_j]);", pn); break;
	case QT_STR:
		out_line(c, "\tig_e[ig_j] = %s.items[ig_j].ptr ? %s(%s.items[ig_j]) : ig_pg_null(%u);", pn,
			 e->held == QT_STR && e->oid == 17 ? "ig_pg_bytea" : "ig_pg_text", pn, e->oid);
		break;
	default:
		out_line(c, "\tig_e[ig_j] = %s.items[ig_j].ptr ? ig_pg_text(%s.items[ig_j]) : ig_pg_null(%u);", pn, pn, e->oid);
		break;
	}
}

/* p[i] = an array parameter's literal. */
static void emit_array_param(struct sc_out *c, const struct qtype *t, size_t i, const char *pn)
{
	const struct qtype *e = qt_find(t->array_of);
	out_open(c, "if (!%s.items) {", pn);
	out_line(c, "p[%zu] = ig_pg_null(0);", i);
	out_close(c, "} else {");
	c->indent++;
	if (e->held == QT_INT) { /* written straight from the integers */
		out_line(c, "ig_str ig_text;");
		out_line(c, "if (!ig_pg_array_text_int%d(%s.items, %s.len, arena, &ig_text))",
			 e->oid == 21 ? 16 : e->oid == 23 ? 32 : 64, pn, pn);
	} else {
		emit_array_values(c, e, pn);
		out_line(c, "ig_str ig_text;");
		out_line(c, "if (!ig_pg_array_text(ig_e, %s.len, arena, &ig_text))", pn);
	}
	out_line(c, "\treturn false;");
	out_line(c, "p[%zu] = ig_pg_untyped(ig_text); /* %s: an array literal */", i, t->sql);
	out_close(c, "}");
}

static void emit_query(struct sc_out *h, struct sc_out *c, const struct qinfo *qi)
{
	const struct sq_query *q = qi->q;
	const char *n = q->name;
	char *row = row_type(qi), *params = param_list(qi, true), *args = arg_list(qi);
	size_t np = qi->nparams;
	bool rows = q->kind == SQ_ONE || q->kind == SQ_MANY;

	out_line(h, "/* ---- %s :%s (%s:%d)%s%s ---- */", n, kinds[q->kind], q->file, q->line,
		 q->returns ? ", rows are " : "", q->returns ? q->returns : "");
	out_blank(h);
	out_line(h, "extern const char db_%s_sql[];", n);
	out_line(h, "enum { db_%s_nparams = %zu };", n, np);
	if (rows && !qi->returns)
		emit_row_struct(h, qi);

	/* the SQL */
	out_line(c, "/* ---- %s :%s (%s:%d) ---- */", n, kinds[q->kind], q->file, q->line);
	out_blank(c);
	out_line(c, "const char db_%s_sql[] =", n);
	emit_literal(c, q->sql);
	out_line(c, ";");
	out_blank(c);

	/* the parameters */
	bool arena = params_use_arena(qi);
	if (np) {
		char *plist = param_list(qi, false);
		out_line(h, "/* Fills p[0..db_%s_nparams): strings are pointed to, not copied; a string", n);
		out_line(h, " * whose ptr is NULL is SQL NULL%s. */",
			 arena ? ", so is an array whose items is NULL; array literals go into\n * arena (false: it is full)" : "");
		out_line(h, "%s db_%s_params(ig_pg_value *p, %s%s);", arena ? "bool" : "void", n, arena ? "ig_arena *arena, " : "",
			 plist);
		out_open(c, "%s db_%s_params(ig_pg_value *p, %s%s)", arena ? "bool" : "void", n, arena ? "ig_arena *arena, " : "",
			 plist);
		c->indent--;
		out_open(c, "{");
		for (size_t i = 0; i < np; i++) {
			const struct qtype *t = qi->ptypes[i];
			const char *pn = qi->pnames[i];
			if (t->held == QT_ARRAY)
				emit_array_param(c, t, i, pn);
			else if (t->held == QT_TEXTOF)
				out_line(c, "p[%zu] = %s.ptr ? ig_pg_untyped(%s) : ig_pg_null(0); /* %s: its text */", i, pn,
					 pn, t->sql);
			else if (t->held == QT_STR)
				out_line(c, "p[%zu] = %s.ptr ? %s(%s) : ig_pg_null(%u);", i, pn, t->param, pn, t->oid);
			else
				out_line(c, "p[%zu] = %s(%s);", i, t->param, pn);
		}
		if (arena)
			out_line(c, "return true;");
		out_close(c, "}");
		out_blank(c);
		free(plist);
	}

	/* the decoder */
	if (rows) {
		out_line(h, "/* Row `row` of res into *out; strings point into res (and arena). false when the columns");
		out_line(h, " * are not those the build described (the database's schema differs) or arena is full. */");
		out_line(h, "bool db_%s_decode(const ig_pg_result *res, uint32_t row, ig_arena *arena, %s *out);", n, row);
		out_open(c, "bool db_%s_decode(const ig_pg_result *res, uint32_t row, ig_arena *arena, %s *out)", n, row);
		c->indent--;
		out_open(c, "{");
		bool uses_arena = false;
		for (size_t i = 0; i < qi->ncols; i++)
			uses_arena = uses_arena || qi->cols[i].type->held == QT_TEXTOF || qi->cols[i].type->held == QT_ARRAY ||
				     col_json_tree(&qi->cols[i]) || col_json_struct(&qi->cols[i]);
		if (!uses_arena)
			out_line(c, "(void)arena;");
		out_line(c, "if (res->cols != %zu || row >= res->rows)", qi->ncols);
		out_line(c, "\treturn false;");
		out_line(c, "*out = (%s){ 0 };", row);
		out_line(c, "const ig_pg_value *v;");
		for (size_t i = 0; i < qi->ncols; i++)
			emit_column_decode(c, &qi->cols[i], i);
		out_line(c, "return true;");
		out_close(c, "}");
		out_blank(c);
	}

	/* the linear call */
	const char *ret = q->kind == SQ_ONE || q->kind == SQ_EXEC ? "int" : "int64_t";
	char *tail = q->kind == SQ_ONE ? sc_printf(", %s *row", row) : q->kind == SQ_MANY ? sc_printf(", %s **rows", row)
											     : sc_strdup("");
	switch (q->kind) {
	case SQ_ONE: out_line(h, "/* Returns 1 with *row filled, 0 when there is no row, -1 with *err. */"); break;
	case SQ_MANY: out_line(h, "/* Returns the count of rows, *rows in ctx's arena; -1 with *err. */"); break;
	case SQ_EXEC: out_line(h, "/* Returns 0, or -1 with *err. */"); break;
	case SQ_EXECROWS: out_line(h, "/* Returns the count of rows affected, or -1 with *err. */"); break;
	}
	out_line(h, "%s db_%s(ig_ctx *ctx%s%s, ig_pg_error *err);", ret, n, params, tail);
	out_blank(h);
	out_open(c, "%s db_%s(ig_ctx *ctx%s%s, ig_pg_error *err)", ret, n, params, tail);
	c->indent--;
	out_open(c, "{");
	if (np) {
		out_line(c, "ig_pg_value p[db_%s_nparams];", n);
		if (arena) {
			out_line(c, "if (!db_%s_params(p, ig_ctx_arena(ctx)%s))", n, args);
			out_line(c, "\treturn ig_q_full(err);");
		} else {
			out_line(c, "db_%s_params(p%s);", n, args);
		}
	}
	out_line(c, "const ig_pg_result *res = ig_pg_run(ctx, db_%s_sql, %s, db_%s_nparams, err);", n, np ? "p" : "NULL",
		 n);
	out_line(c, "if (!res)");
	out_line(c, "\treturn -1;");
	switch (q->kind) {
	case SQ_ONE:
		out_line(c, "if (res->rows == 0)");
		out_line(c, "\treturn 0;");
		out_line(c, "if (!db_%s_decode(res, 0, ig_ctx_arena(ctx), row))", n);
		out_line(c, "\treturn ig_q_mismatch(err, db_%s_sql, sizeof db_%s_sql - 1);", n, n);
		out_line(c, "return 1;");
		break;
	case SQ_MANY:
		out_line(c, "%s *out = res->rows ? ig_arena_alloc(ig_ctx_arena(ctx), sizeof *out * res->rows) : NULL;", row);
		out_line(c, "if (res->rows && !out)");
		out_line(c, "\treturn ig_q_full(err);");
		out_line(c, "for (uint32_t ig_i = 0; ig_i < res->rows; ig_i++)");
		out_line(c, "\tif (!db_%s_decode(res, ig_i, ig_ctx_arena(ctx), &out[ig_i]))", n);
		out_line(c, "\t\treturn ig_q_mismatch(err, db_%s_sql, sizeof db_%s_sql - 1);", n, n);
		out_line(c, "*rows = out;");
		out_line(c, "return res->rows;");
		break;
	case SQ_EXEC: out_line(c, "return 0;"); break;
	case SQ_EXECROWS: out_line(c, "return (int64_t)res->affected;"); break;
	}
	out_close(c, "}");
	out_blank(c);
	free(row);
	free(params);
	free(args);
	free(tail);
}

static bool returns_rows(const struct qinfo *qi)
{
	return qi->q->kind == SQ_ONE || qi->q->kind == SQ_MANY;
}

static bool decodes_json(const struct qinfo *qi)
{
	for (size_t j = 0; j < qi->ncols; j++)
		if (col_json_tree(&qi->cols[j]))
			return true;
	return false;
}

/* Takes memory from ctx's arena: the rows of :many, array parameters. */
static bool allocates(const struct qinfo *qi)
{
	return qi->q->kind == SQ_MANY || params_use_arena(qi);
}

static bool any(const struct qinfo *qs, size_t n, bool (*pred)(const struct qinfo *))
{
	for (size_t i = 0; i < n; i++)
		if (pred(&qs[i]))
			return true;
	return false;
}

/* A static helper's head, its body's indent open. */
static void emit_helper(struct sc_out *c, const char *signature)
{
	out_line(c, "%s", signature);
	out_open(c, "{");
}

/* struct db_array_<type> for each array type a query's own row or
 * parameters use, as schemac's arrays: items and len. */
static void emit_array_types(const struct qinfo *qs, size_t n, struct sc_out *h)
{
	static const char *const names[] = { "struct db_array_bool", "struct db_array_int16", "struct db_array_int32",
					     "struct db_array_int64", "struct db_array_float", "struct db_array_double",
					     "struct db_array_str" };
	static const char *const elems[] = { "bool", "int16_t", "int32_t", "int64_t", "float", "double", "ig_str" };
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		bool used = false;
		for (size_t i = 0; i < n && !used; i++) {
			for (size_t j = 0; j < qs[i].nparams; j++)
				used = used || strcmp(qs[i].ptypes[j]->ctype, names[k]) == 0;
			for (size_t j = 0; j < qs[i].ncols && !qs[i].returns; j++)
				used = used || strcmp(qs[i].cols[j].type->ctype, names[k]) == 0;
		}
		if (!used)
			continue;
		out_open(h, "%s {", names[k]);
		out_line(h, "const %s *items;", elems[k]);
		out_line(h, "size_t len;");
		out_close(h, "};");
		out_blank(h);
	}
}

void emit_queries(const struct qinfo *qs, size_t n, struct sc_out *h, struct sc_out *c)
{
	bool api = false;
	for (size_t i = 0; i < n; i++)
		api = api || qs[i].returns;
	out_line(h, "/* Generated by schemac --queries: do not edit. The app's queries as typed C:");
	out_line(h, " * per query db_<name>_sql, its parameter builder db_<name>_params, its row");
	out_line(h, " * decoder db_<name>_decode and the linear call db_<name> (ig_pg_run). Every");
	out_line(h, " * name starts with db_ so that no query takes an operationId's, the runtime's");
	out_line(h, " * (ig_) or the C library's. A nullable column has a has_<name> flag. */");
	out_line(h, "#ifndef INGOT_GEN_QUERIES_H");
	out_line(h, "#define INGOT_GEN_QUERIES_H");
	out_blank(h);
	out_line(h, "#include \"ingot/pg.h\"");
	if (api)
		out_line(h, "#include \"api.h\"");
	out_blank(h);
	out_line(c, "/* Generated by schemac --queries: do not edit (see queries.h). */");
	out_line(c, "#include \"queries.h\"");
	out_line(c, "#include \"ingot/json_read.h\"");
	out_blank(c);
	if (any(qs, n, returns_rows)) {
		out_line(c, "/* A row that does not fit: its columns are not the described ones (the");
		out_line(c, " * database's schema is not the migrations' the build saw), or a JSON value");
		out_line(c, " * is not what the row's type holds. */");
		emit_helper(c, "static int ig_q_mismatch(ig_pg_error *err, const char *sql, size_t len)");
		out_line(c, "*err = (ig_pg_error){ .kind = IG_PG_ROW_MISMATCH,");
		out_line(c, "\t.message = IG_STR(\"a row does not fit the query's row type\"), .query = { sql, len } };");
		out_line(c, "return -1;");
		out_close(c, "}");
		out_blank(c);
	}
	if (any(qs, n, decodes_json)) {
		out_line(c, "/* A json(b) column's text as a tree in arena; NULL when it is not JSON. */");
		emit_helper(c, "static const ig_json_value *ig_q_json(ig_str text, ig_arena *arena)");
		out_line(c, "ig_json_reader r;");
		out_line(c, "ig_jr_init(&r, text.ptr, text.len, arena, 64);");
		out_line(c, "ig_json_value *v = ig_jr_value(&r);");
		out_line(c, "return v && ig_jr_finish(&r) ? v : NULL;");
		out_close(c, "}");
		out_blank(c);
	}
	if (any(qs, n, allocates)) {
		emit_helper(c, "static int ig_q_full(ig_pg_error *err)");
		out_line(c, "*err = (ig_pg_error){ .kind = IG_PG_TOO_LARGE, .message = IG_STR(\"the arena is full\") };");
		out_line(c, "return -1;");
		out_close(c, "}");
		out_blank(c);
	}
	emit_array_types(qs, n, h);
	for (size_t i = 0; i < n; i++)
		emit_query(h, c, &qs[i]);
	out_line(h, "#endif");
}
