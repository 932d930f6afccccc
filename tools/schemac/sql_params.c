/* Parameter names from the SQL text (see sql_params.h). Tokens: words
 * (lowercased unless quoted), $n, operators, punctuation; strings, quoted
 * identifiers that are not plain C names, comments and numbers are opaque. */
#include "sql_params.h"
#include "alloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum tk { TK_WORD, TK_PARAM, TK_OP, TK_PUNCT, TK_OTHER };

struct tok {
	enum tk kind;
	char *text; /* TK_WORD: lowercased or as quoted; TK_OP/TK_PUNCT: the chars */
	long n;     /* TK_PARAM */
};

static void add(struct tok **t, size_t *n, enum tk kind, const char *s, size_t len, long num)
{
	char *text = sc_xmalloc(len + 1);
	memcpy(text, s, len);
	struct tok k = { kind, text, num };
	SC_APPEND(*t, *n, k);
}

static size_t tokenize(const char *s, struct tok **out)
{
	size_t n = 0;
	for (size_t i = 0; s[i];) {
		unsigned char c = (unsigned char)s[i];
		if (isspace(c)) {
			i++;
		} else if (c == '-' && s[i + 1] == '-') {
			while (s[i] && s[i] != '\n')
				i++;
		} else if (c == '/' && s[i + 1] == '*') {
			i += 2;
			while (s[i] && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i += s[i] ? 2 : 0;
		} else if (c == '\'') { /* a string; '' inside */
			for (i++; s[i]; i++)
				if (s[i] == '\'' && s[i + 1] != '\'')
					break;
				else if (s[i] == '\'')
					i++;
			i += s[i] ? 1 : 0;
			add(out, &n, TK_OTHER, "'", 1, 0);
		} else if (c == '"') {
			size_t b = ++i;
			while (s[i] && s[i] != '"')
				i++;
			add(out, &n, TK_WORD, s + b, i - b, 0);
			i += s[i] ? 1 : 0;
		} else if (c == '$' && isdigit((unsigned char)s[i + 1])) {
			char *e;
			long v = strtol(s + i + 1, &e, 10);
			add(out, &n, TK_PARAM, s + i, (size_t)(e - (s + i)), v);
			i = (size_t)(e - s);
		} else if (isalpha(c) || c == '_') {
			size_t b = i;
			while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '$')
				i++;
			add(out, &n, TK_WORD, s + b, i - b, 0);
			for (char *p = (*out)[n - 1].text; *p; p++)
				*p = (char)tolower((unsigned char)*p);
		} else if (isdigit(c)) {
			while (isalnum((unsigned char)s[i]) || s[i] == '.')
				i++;
			add(out, &n, TK_OTHER, "0", 1, 0);
		} else if (strchr("(),;.[]", c)) {
			add(out, &n, TK_PUNCT, s + i, 1, 0);
			i++;
		} else {
			size_t b = i;
			while (s[i] && strchr("+-*/<>=~!@#%^&|`?:", s[i]))
				i++;
			if (i == b)
				i++;
			add(out, &n, TK_OP, s + b, i - b, 0);
		}
	}
	return n;
}

static bool comparison(const struct tok *t)
{
	static const char *const ops[] = { "=", "<>", "!=", "<", "<=", ">", ">=", NULL };
	if (t->kind == TK_WORD)
		return strcmp(t->text, "like") == 0 || strcmp(t->text, "ilike") == 0;
	if (t->kind != TK_OP)
		return false;
	for (int i = 0; ops[i]; i++)
		if (strcmp(t->text, ops[i]) == 0)
			return true;
	return false;
}

static bool keyword(const struct tok *t, const char *w)
{
	return t->kind == TK_WORD && strcmp(t->text, w) == 0;
}

static bool punct(const struct tok *t, char c)
{
	return t->kind == TK_PUNCT && t->text[0] == c;
}

/* SQL's words that end an operand: "WHERE x = $1" must not name $1 "where". */
static bool reserved_sql(const char *w)
{
	static const char *const words[] = { "where", "and", "or", "not", "set", "on", "select", "from", "values",
					     "then", "when", "else", "case", "is", "null", "in", "as", NULL };
	for (int i = 0; words[i]; i++)
		if (strcmp(w, words[i]) == 0)
			return true;
	return false;
}

static bool c_ident(const char *s)
{
	if (!*s || (!isalpha((unsigned char)*s) && *s != '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static void name(char **names, size_t nparams, long n, const char *w)
{
	if (n >= 1 && (size_t)n <= nparams && !names[n - 1] && c_ident(w) && !reserved_sql(w))
		names[n - 1] = sc_strdup(w);
}

static bool cast_op(const struct tok *t)
{
	return t->kind == TK_OP && strcmp(t->text, "::") == 0;
}

/* The index of the ')' closing the '(' at open, or 0 when there is none. */
static size_t closing(const struct tok *t, size_t nt, size_t open)
{
	int depth = 0;
	for (size_t j = open; j < nt; j++)
		if (punct(&t[j], '('))
			depth++;
		else if (punct(&t[j], ')') && --depth == 0)
			return j;
	return 0;
}

/* Past any casts at j: ::type, ::type(n), ::type[]. */
static size_t past_casts(const struct tok *t, size_t nt, size_t j)
{
	while (j + 1 < nt && cast_op(&t[j]) && t[j + 1].kind == TK_WORD) {
		j += 2;
		while (j < nt && t[j].kind == TK_WORD) /* double precision, character varying */
			j++;
		if (j < nt && punct(&t[j], '(') && closing(t, nt, j))
			j = closing(t, nt, j) + 1;
		while (j + 1 < nt && punct(&t[j], '[') && punct(&t[j + 1], ']'))
			j += 2;
	}
	return j;
}

/* The one parameter between from and to (exclusive), which may appear
 * more than once; 0 when there is none or several. */
static long sole_param(const struct tok *t, size_t from, size_t to)
{
	long p = 0;
	for (size_t j = from + 1; j < to; j++)
		if (t[j].kind == TK_PARAM) {
			if (p && p != t[j].n)
				return 0;
			p = t[j].n;
		}
	return p;
}

/* Whether a value ends at j: the statement's end, a word (AND, WHERE,
 * RETURNING ...) or , ) ; but no operator that continues it. */
static bool value_ends(const struct tok *t, size_t nt, size_t j)
{
	return j >= nt || (t[j].kind == TK_WORD && !comparison(&t[j])) || punct(&t[j], ',') || punct(&t[j], ')') ||
	       punct(&t[j], ';');
}

/* A function call that is a whole value compared with a column, with one
 * parameter among its arguments: col <op> f(..$n..) and f(..$n..) <op>
 * col name $n after col (lower($1), coalesce($2, x), to_jsonb($4)); and
 * f(col) <op> $n names $n after col (lower(email) = $1). */
static void call_names(const struct tok *t, size_t nt, size_t nparams, char **names)
{
	for (size_t w = 0; w + 1 < nt; w++) {
		if (t[w].kind != TK_WORD || !punct(&t[w + 1], '(') || reserved_sql(t[w].text))
			continue;
		size_t close = closing(t, nt, w + 1);
		if (!close)
			continue;
		long p = sole_param(t, w + 1, close);
		size_t after = past_casts(t, nt, close + 1);
		bool starts = w == 0 || t[w - 1].kind != TK_OP || comparison(&t[w - 1]);
		if (p && w >= 2 && comparison(&t[w - 1]) && t[w - 2].kind == TK_WORD && value_ends(t, nt, after))
			name(names, nparams, p, t[w - 2].text);
		if (p && starts && (w == 0 || !punct(&t[w - 1], '.')) && after + 1 < nt && comparison(&t[after]) &&
		    t[after + 1].kind == TK_WORD && !punct(&t[after + 2 < nt ? after + 2 : after], '(')) {
			size_t k = after + 1;
			while (k + 2 < nt && punct(&t[k + 1], '.') && t[k + 2].kind == TK_WORD)
				k += 2;
			if (value_ends(t, nt, past_casts(t, nt, k + 1)))
				name(names, nparams, p, t[k].text);
		}
		/* f(col) <op> $n, col maybe t.col */
		size_t c = close - 1;
		bool one_col = c > w + 1 && t[c].kind == TK_WORD &&
			       (c == w + 2 || (c == w + 4 && t[w + 2].kind == TK_WORD && punct(&t[w + 3], '.')));
		if (one_col && starts && after + 1 < nt && comparison(&t[after]) && t[after + 1].kind == TK_PARAM &&
		    value_ends(t, nt, past_casts(t, nt, after + 2)))
			name(names, nparams, t[after + 1].n, t[c].text);
	}
}

void sq_param_names(const char *sql, size_t nparams, const char *const *reserved, char **names)
{
	struct tok *t = NULL;
	size_t nt = tokenize(sql, &t);
	for (size_t i = 0; i < nt; i++) {
		if (t[i].kind != TK_PARAM)
			continue;
		/* col <op> $n: col may be t.col */
		if (i >= 2 && comparison(&t[i - 1]) && t[i - 2].kind == TK_WORD)
			name(names, nparams, t[i].n, t[i - 2].text);
		/* $n[::type] <op> col */
		size_t j = i + 1;
		if (j + 1 < nt && t[j].kind == TK_OP && strcmp(t[j].text, "::") == 0)
			j += 2;
		if (j + 1 < nt && comparison(&t[j]) && t[j + 1].kind == TK_WORD) {
			size_t k = j + 1;
			while (k + 2 < nt && punct(&t[k + 1], '.') && t[k + 2].kind == TK_WORD)
				k += 2;
			name(names, nparams, t[i].n, t[k].text);
		}
		if (i >= 1 && keyword(&t[i - 1], "limit"))
			name(names, nparams, t[i].n, "limit");
		if (i >= 1 && keyword(&t[i - 1], "offset"))
			name(names, nparams, t[i].n, "offset");
	}
	/* INSERT INTO t (cols) VALUES (exprs): the i-th column names the i-th
	 * value when that value is a bare $n. */
	for (size_t i = 0; i + 2 < nt; i++) {
		if (!keyword(&t[i], "insert") || !keyword(&t[i + 1], "into"))
			continue;
		size_t j = i + 2;
		while (j < nt && !punct(&t[j], '(') && !keyword(&t[j], "values"))
			j++;
		if (j >= nt || !punct(&t[j], '('))
			continue;
		const char *cols[256];
		size_t nc = 0;
		for (j++; j < nt && !punct(&t[j], ')'); j++)
			if (t[j].kind == TK_WORD && nc < 256)
				cols[nc++] = t[j].text;
		if (j + 2 >= nt || !keyword(&t[j + 1], "values") || !punct(&t[j + 2], '('))
			continue;
		size_t col = 0;
		int depth = 0;
		for (j += 3; j < nt && col < nc; j++) {
			if (punct(&t[j], '('))
				depth++;
			else if (punct(&t[j], ')') && depth-- == 0)
				break;
			else if (depth == 0 && punct(&t[j], ','))
				col++;
			else if (depth == 0 && t[j].kind == TK_PARAM && (punct(&t[j - 1], '(') || punct(&t[j - 1], ',')))
				name(names, nparams, t[j].n, cols[col]);
			else if (depth == 0 && t[j].kind == TK_WORD && j + 1 < nt && punct(&t[j + 1], '(') &&
				 (punct(&t[j - 1], '(') || punct(&t[j - 1], ','))) {
				/* the whole value is f(..$n..) (a cast allowed) */
				size_t close = closing(t, nt, j + 1), after = close ? past_casts(t, nt, close + 1) : 0;
				long p = close ? sole_param(t, j + 1, close) : 0;
				if (p && after < nt && (punct(&t[after], ',') || punct(&t[after], ')')))
					name(names, nparams, p, cols[col]);
				if (close)
					j = close;
			}
		}
	}
	call_names(t, nt, nparams, names);
	/* unnest($1, $2) AS v(a, b): the i-th alias column names the i-th
	 * argument when that argument is a bare $n (a cast allowed). */
	for (size_t i = 0; i + 1 < nt; i++) {
		if (!keyword(&t[i], "unnest") || !punct(&t[i + 1], '('))
			continue;
		long args[256];
		size_t na = 0;
		int depth = 0;
		bool bare = true;
		long param = 0;
		size_t j = i + 2;
		for (; j < nt; j++) {
			if (punct(&t[j], '(')) {
				depth++;
			} else if (punct(&t[j], ')') && depth > 0) {
				depth--;
			} else if (depth == 0 && (punct(&t[j], ',') || punct(&t[j], ')'))) {
				if (na < 256)
					args[na++] = bare ? param : 0;
				bare = true;
				param = 0;
				if (punct(&t[j], ')'))
					break;
			} else if (depth == 0 && t[j].kind == TK_PARAM && !param && (punct(&t[j - 1], '(') || punct(&t[j - 1], ','))) {
				param = t[j].n;
			} else if (depth == 0 && !(t[j].kind == TK_OP && strcmp(t[j].text, "::") == 0) &&
				   !(j >= 1 && t[j - 1].kind == TK_OP && strcmp(t[j - 1].text, "::") == 0) &&
				   !punct(&t[j], '[') && !punct(&t[j], ']')) {
				bare = false; /* more than $n::type[] */
			}
		}
		if (j + 3 >= nt)
			continue;
		j++;
		if (keyword(&t[j], "as"))
			j++;
		if (j + 1 >= nt || t[j].kind != TK_WORD || !punct(&t[j + 1], '('))
			continue;
		size_t col = 0;
		for (j += 2; j < nt && !punct(&t[j], ')'); j++)
			if (t[j].kind == TK_WORD && col < na && args[col++])
				name(names, nparams, args[col - 1], t[j].text);
	}
	for (size_t i = 0; i < nparams; i++) {
		bool clash = !names[i];
		for (size_t j = 0; !clash && j < i; j++)
			clash = strcmp(names[i], names[j]) == 0;
		for (size_t j = 0; !clash && reserved[j]; j++)
			clash = strcmp(names[i], reserved[j]) == 0;
		if (clash) {
			char *v = names[i] ? sc_printf("%s_%zu", names[i], i + 1) : sc_printf("p%zu", i + 1);
			free(names[i]);
			names[i] = v;
		}
	}
	for (size_t i = 0; i < nt; i++)
		free(t[i].text);
	free(t);
}

/* ---- sqlc's named parameters ---- */

/* Past a string, quoted name, comment or dollar-quoted text at s[i], or i. */
static size_t past_opaque(const char *s, size_t i)
{
	if (s[i] == '-' && s[i + 1] == '-') {
		while (s[i] && s[i] != '\n')
			i++;
	} else if (s[i] == '/' && s[i + 1] == '*') {
		for (i += 2; s[i] && !(s[i] == '*' && s[i + 1] == '/'); i++)
			;
		i += s[i] ? 2 : 0;
	} else if (s[i] == '\'' || s[i] == '"') {
		char q = s[i];
		for (i++; s[i]; i++)
			if (s[i] == q && s[i + 1] == q)
				i++;
			else if (s[i] == q)
				break;
		i += s[i] ? 1 : 0;
	} else if (s[i] == '$' && (s[i + 1] == '$' || isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_')) {
		size_t e = i + 1; /* $tag$ ... $tag$ */
		while (isalnum((unsigned char)s[e]) || s[e] == '_')
			e++;
		if (s[e] != '$')
			return i;
		size_t tag = e + 1 - i;
		const char *end;
		for (end = s + e + 1; *end && strncmp(end, s + i, tag) != 0; end++)
			;
		i = *end ? (size_t)(end - s) + tag : (size_t)(end - s);
	}
	return i;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* sqlc.arg(name) or sqlc.narg(name) at s[i] (name bare or quoted): its end
 * and the name's bounds, or 0. */
static size_t sqlc_arg(const char *s, size_t i, size_t *nb, size_t *ne)
{
	if ((i && (word_char(s[i - 1]) || s[i - 1] == '.')) || strncasecmp(s + i, "sqlc.", 5) != 0)
		return 0;
	size_t j = i + 5;
	if (strncasecmp(s + j, "arg", 3) == 0)
		j += 3;
	else if (strncasecmp(s + j, "narg", 4) == 0)
		j += 4;
	else
		return 0;
	while (s[j] == ' ' || s[j] == '\t')
		j++;
	if (s[j++] != '(')
		return 0;
	while (s[j] == ' ' || s[j] == '\t')
		j++;
	char q = s[j] == '\'' || s[j] == '"' ? s[j++] : 0;
	*nb = j;
	while (word_char(s[j]))
		j++;
	*ne = j;
	if (*ne == *nb || (q && s[j++] != q))
		return 0;
	while (s[j] == ' ' || s[j] == '\t')
		j++;
	return s[j] == ')' ? j + 1 : 0;
}

static void put(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap)
		*out = sc_xrealloc(*out, *cap = (*len + n + 1) * 2);
	memcpy(*out + *len, s, n);
	*len += n;
}

char *sq_named_params(const char *sql, char ***names, size_t *n)
{
	long top = 0; /* the statement's own $n: named ones come after */
	for (size_t i = 0; sql[i];) {
		size_t e = past_opaque(sql, i);
		if (e != i) {
			i = e;
		} else if (sql[i] == '$' && isdigit((unsigned char)sql[i + 1])) {
			long v = strtol(sql + i + 1, NULL, 10);
			top = v > top ? v : top;
			i++;
		} else {
			i++;
		}
	}
	char **seen = NULL;
	size_t nseen = 0, cap = strlen(sql) + 1, len = 0;
	char *out = sc_xmalloc(cap);
	for (size_t i = 0; sql[i];) {
		size_t e = past_opaque(sql, i), nb = 0, ne = 0, end = 0;
		if (e != i) {
			put(&out, &len, &cap, sql + i, e - i);
			i = e;
			continue;
		}
		if ((end = sqlc_arg(sql, i, &nb, &ne)) == 0 && sql[i] == '@' &&
		    (isalpha((unsigned char)sql[i + 1]) || sql[i + 1] == '_') &&
		    (i == 0 || !strchr("+-*/<>=~!@#%^&|`?", sql[i - 1]))) {
			nb = i + 1; /* @name; "@ x" and "a <@ b" are operators */
			for (ne = nb; word_char(sql[ne]); ne++)
				;
			end = ne;
		}
		if (!end) {
			put(&out, &len, &cap, sql + i++, 1);
			continue;
		}
		char *w = sc_xmalloc(ne - nb + 1);
		memcpy(w, sql + nb, ne - nb);
		w[ne - nb] = 0;
		for (char *p = w; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		size_t k = 0;
		while (k < nseen && strcmp(seen[k], w) != 0)
			k++;
		if (k == nseen)
			SC_APPEND(seen, nseen, w);
		else
			free(w);
		char num[24];
		int nl = snprintf(num, sizeof num, "$%ld", top + 1 + (long)k);
		put(&out, &len, &cap, num, (size_t)nl);
		i = end;
	}
	out[len] = 0;
	*n = nseen ? (size_t)top + nseen : 0;
	*names = sc_xmalloc(sizeof **names * (*n + 1));
	for (size_t i = 0; i < *n; i++)
		(*names)[i] = i < (size_t)top ? NULL : seen[i - (size_t)top];
	free(seen);
	return out;
}
