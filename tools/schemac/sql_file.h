/* The annotated query files (queries/NAME.sql, sqlc's annotations): each
 * query starts at a `-- name: Name :one|:many|:exec|:execrows` line,
 * optionally followed by `-- returns: Schema`, and runs to the next name
 * line. Only text: nothing here knows PostgreSQL or C. */
#ifndef SCHEMAC_SQL_FILE_H
#define SCHEMAC_SQL_FILE_H

#include <stddef.h>

enum sq_kind { SQ_ONE, SQ_MANY, SQ_EXEC, SQ_EXECROWS };

struct sq_query {
	char *name;       /* as annotated: a C identifier */
	enum sq_kind kind;
	char *returns;    /* a component schema's name, or NULL */
	char *sql;        /* the statement, comments and blank edges trimmed */
	const char *file; /* as given, for messages */
	int line;         /* the `-- name:` line */
	int sql_line;     /* the line where sql starts */
};

/* Reads every *.sql of dir, in name order, appending to *qs (*n of them).
 * Problems are printed as "FILE:LINE: message"; returns their count. */
unsigned sq_read_dir(const char *dir, struct sq_query **qs, size_t *n);

/* The paths of dir's *.sql files (not hidden), sorted by name, malloc'd;
 * -1 with errno when dir cannot be read. */
int sq_list_sql(const char *dir, char ***paths, size_t *n);

/* The line of sql's byte offset (0-based) within q's file. */
int sq_line_at(const struct sq_query *q, size_t offset);

#endif
