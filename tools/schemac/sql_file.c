/* Splits the annotated query files into queries (see sql_file.h): the
 * annotation lines are read here; the SQL between them is kept as written
 * (for PostgreSQL to parse) with its first line's number, so that an
 * error's position in a statement maps back to the file's line. */
#include "sql_file.h"
#include "alloc.h"
#include "kernel/runtime/file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_ident(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* "-- key: value" (any spacing): the value trimmed, or NULL. */
static char *annotation(const char *line, size_t len, const char *key)
{
	size_t i = 0;
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	if (len - i < 2 || line[i] != '-' || line[i + 1] != '-')
		return NULL;
	i += 2;
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	size_t kl = strlen(key);
	if (len - i < kl + 1 || strncmp(line + i, key, kl) != 0 || line[i + kl] != ':')
		return NULL;
	i += kl + 1;
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	while (len > i && isspace((unsigned char)line[len - 1]))
		len--;
	char *v = sc_xmalloc(len - i + 1);
	memcpy(v, line + i, len - i);
	return v;
}

/* The query's SQL: trims blank lines and whole-line comments at both ends
 * (the annotations' neighbours) and a final ';'. */
static void finish(struct sq_query *q, const char *text, size_t begin, size_t end, int line)
{
	for (;;) { /* leading blank or comment lines */
		size_t e = begin;
		while (e < end && text[e] != '\n')
			e++;
		size_t i = begin;
		while (i < e && isspace((unsigned char)text[i]))
			i++;
		if (i < e && !(e - i >= 2 && text[i] == '-' && text[i + 1] == '-'))
			break;
		if (e >= end) {
			begin = end;
			break;
		}
		begin = e + 1;
		line++;
	}
	while (end > begin && (isspace((unsigned char)text[end - 1]) || text[end - 1] == ';'))
		end--;
	q->sql = sc_xmalloc(end - begin + 1);
	memcpy(q->sql, text + begin, end - begin);
	q->sql_line = line;
}

static unsigned read_file(const char *path, struct sq_query **qs, size_t *n)
{
	size_t len = 0;
	char *text = ig_read_file(path, (size_t)1 << 26, 0, &len, NULL, 0);
	if (!text) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	unsigned errors = 0;
	struct sq_query *cur = NULL;
	size_t body = 0;
	int line = 1, body_line = 1;
	for (size_t at = 0; at < len; line++) {
		size_t e = at;
		while (e < len && text[e] != '\n')
			e++;
		char *name = annotation(text + at, e - at, "name");
		char *ret = name ? NULL : annotation(text + at, e - at, "returns");
		if (name) {
			if (cur)
				finish(cur, text, body, at, body_line);
			struct sq_query q = { .file = path, .line = line };
			char *sp = name;
			while (*sp && !isspace((unsigned char)*sp))
				sp++;
			char *kind = sp;
			while (isspace((unsigned char)*kind))
				kind++;
			*sp = 0;
			q.name = name;
			if (strcmp(kind, ":one") == 0)
				q.kind = SQ_ONE;
			else if (strcmp(kind, ":many") == 0)
				q.kind = SQ_MANY;
			else if (strcmp(kind, ":exec") == 0)
				q.kind = SQ_EXEC;
			else if (strcmp(kind, ":execrows") == 0)
				q.kind = SQ_EXECROWS;
			else {
				fprintf(stderr, "%s:%d: query %s: the kind must be :one, :many, :exec or :execrows, not \"%s\"\n",
					path, line, name, kind);
				errors++;
			}
			if (!is_ident(name)) {
				fprintf(stderr, "%s:%d: query name \"%s\" is not a C identifier\n", path, line, name);
				errors++;
			} else if (strncmp(name, "array_", 6) == 0) {
				fprintf(stderr, "%s:%d: query name \"%s\": db_array_* are the generated array types\n", path,
					line, name);
				errors++;
			}
			SC_APPEND(*qs, *n, q);
			cur = &(*qs)[*n - 1];
			body = e < len ? e + 1 : e;
			body_line = line + 1;
		} else if (ret) {
			if (!cur || cur->returns || !is_ident(ret)) {
				fprintf(stderr, "%s:%d: \"-- returns: %s\" must follow a \"-- name:\" line, once, and name a component schema\n",
					path, line, ret);
				errors++;
			} else {
				cur->returns = ret;
			}
		} else if (!cur) {
			size_t i = at;
			while (i < e && isspace((unsigned char)text[i]))
				i++;
			if (i < e && !(e - i >= 2 && text[i] == '-' && text[i + 1] == '-')) {
				fprintf(stderr, "%s:%d: SQL before the first \"-- name: Name :kind\" line\n", path, line);
				errors++;
				free(text);
				return errors;
			}
		}
		at = e < len ? e + 1 : e;
	}
	if (cur)
		finish(cur, text, body, len, body_line);
	if (cur && !cur->sql[0]) {
		fprintf(stderr, "%s:%d: query %s has no SQL\n", path, cur->line, cur->name);
		errors++;
	}
	free(text);
	return errors;
}

int sq_list_sql(const char *dir, char ***paths, size_t *n)
{
	*paths = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l > 4 && strcmp(e->d_name + l - 4, ".sql") == 0 && e->d_name[0] != '.')
			SC_APPEND(*paths, *n, sc_printf("%s/%s", dir, e->d_name));
	}
	closedir(d);
	qsort(*paths, *n, sizeof **paths, by_name);
	return 0;
}

unsigned sq_read_dir(const char *dir, struct sq_query **qs, size_t *n)
{
	char **names;
	size_t nn;
	if (sq_list_sql(dir, &names, &nn) != 0) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 1;
	}
	unsigned errors = 0;
	for (size_t i = 0; i < nn; i++)
		errors += read_file(names[i], qs, n);
	for (size_t i = 0; i < *n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp((*qs)[i].name, (*qs)[j].name) == 0) {
				fprintf(stderr, "%s:%d: query %s is already defined at %s:%d\n", (*qs)[i].file,
					(*qs)[i].line, (*qs)[i].name, (*qs)[j].file, (*qs)[j].line);
				errors++;
			}
	return errors;
}

int sq_line_at(const struct sq_query *q, size_t offset)
{
	int line = q->sql_line;
	for (size_t i = 0; i < offset && q->sql[i]; i++)
		if (q->sql[i] == '\n')
			line++;
	return line;
}
