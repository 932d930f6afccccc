/* Names for a statement's parameters, inferred from the SQL as sqlc does,
 * by a small tokenizer of our own (not PostgreSQL's parser). It knows:
 *   col <op> $n and $n <op> col, op one of = <> != < <= > >= LIKE ILIKE
 *     (so WHERE col = $1 and UPDATE t SET col = $1; a qualified t.col
 *     gives col; a cast $n::type is allowed)
 *   INSERT INTO t (a, b, ...) VALUES ($1, $2, ...)   by position
 *   unnest($1, $2) AS v(a, b)                       by position
 *   LIMIT $n -> limit, OFFSET $n -> offset
 * Any other parameter is p<n>. A name used twice gets _<n> appended. */
#ifndef SCHEMAC_SQL_PARAMS_H
#define SCHEMAC_SQL_PARAMS_H

#include <stddef.h>

/* names[0..nparams): each a C identifier (malloc'd), distinct, and none
 * of the reserved words given (NULL-terminated): those get _<n> too. */
void sq_param_names(const char *sql, size_t nparams, const char *const *reserved, char **names);

#endif
