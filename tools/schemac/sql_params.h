/* Names for a statement's parameters, inferred from the SQL as sqlc does,
 * by a small tokenizer of our own (not PostgreSQL's parser). It knows:
 *   col <op> $n and $n <op> col, op one of = <> != < <= > >= LIKE ILIKE
 *     (so WHERE col = $1 and UPDATE t SET col = $1; a qualified t.col
 *     gives col; a cast $n::type is allowed)
 *   INSERT INTO t (a, b, ...) VALUES ($1, $2, ...)   by position
 *   unnest($1, $2) AS v(a, b)                       by position
 *   LIMIT $n -> limit, OFFSET $n -> offset
 *   a function call with one parameter that is the whole value compared
 *     with or inserted into a column: col = lower($1), VALUES (to_jsonb($4)),
 *     coalesce($2, x) = col; and lower(col) = $1
 *   sqlc.arg(name), sqlc.narg(name), @name (sq_named_params)
 * Any other parameter is p<n>. A name used twice gets _<n> appended. */
#ifndef SCHEMAC_SQL_PARAMS_H
#define SCHEMAC_SQL_PARAMS_H

#include <stddef.h>

/* names[0..nparams): each a C identifier (malloc'd), distinct, and none
 * of the reserved words given (NULL-terminated): those get _<n> too. An
 * entry set on entry (sq_named_params' names) is kept; the others must be
 * NULL. */
void sq_param_names(const char *sql, size_t nparams, const char *const *reserved, char **names);

/* sqlc's explicit names: sqlc.arg(name), sqlc.narg(name) (name bare or
 * quoted) and @name (not "@ x", "<@", "@>": operators) become $N, one N per
 * distinct name (lowercased), numbered after the statement's own $n;
 * strings, quoted names, comments and dollar-quoted text are left alone.
 * Returns the SQL to prepare (malloc'd; lines kept, so messages' lines
 * hold) and names[0..*n): the name of each $N that was named, else NULL. */
char *sq_named_params(const char *sql, char ***names, size_t *n);

#endif
