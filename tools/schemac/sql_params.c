/* Parameter names from the SQL text (see sql_params.h). Tokens: words
 * (lowercased unless quoted), $n, operators, punctuation; strings, quoted
 * identifiers that are not plain C names, comments and numbers are opaque. */
#include "sql_params.h"
#include "alloc.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

void sq_param_names(const char *sql, size_t nparams, const char *const *reserved, char **names)
{
	struct tok *t = NULL;
	size_t nt = tokenize(sql, &t);
	for (size_t i = 0; i < nparams; i++)
		names[i] = NULL;
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
		}
	}
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
