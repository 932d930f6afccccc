/* Compiles JSON Schema "pattern" regexes into C matchers at build time
 * (contract: regex.h). Pipeline: parse (ECMA-262 subset, over code points)
 * → Thompson NFA → position automaton (the NFA without empty moves) → DFA
 * by subset construction over code-point classes, minimized → table-driven
 * C. A DFA past DFA_MAX_STATES is not an error: the matcher then simulates
 * the position automaton with a bit set. Both read each byte once.
 *
 * The subset (ECMA-262 with the u flag, which JSON Schema implies; no flags):
 *   literal       any code point except ^ $ \ . * + ? ( ) [ ] { } |
 *   escapes       \t \n \v \f \r, \0 (not before a digit), \cA-\cZ \ca-\cz,
 *                 \xHH, \uHHHH (a \uD8xx\uDCxx pair is one code point),
 *                 \u{H...} up to 10FFFF, and \ before any ASCII character
 *                 that is neither a letter nor a digit (\. \\ \/ \- \^ \$ \*
 *                 \+ \? \( \) \[ \] \{ \} \| \@ ...: a superset of u-mode)
 *   .             any code point except \n \r U+2028 U+2029
 *   [...] [^...]  ranges a-z; the escapes above, \b (U+0008) and \d \D \w
 *                 \W \s \S inside; [] matches nothing, [^] anything
 *   \d \w \s      [0-9], [A-Za-z0-9_], and \t \n \v \f \r space U+00A0
 *                 U+1680 U+2000-U+200A U+2028 U+2029 U+202F U+205F U+3000
 *                 U+FEFF; \D \W \S their complements
 *   ^ $           start and end of the input (no m flag), anywhere: a^b
 *                 never matches, (^|,)x and x(,|$) work as expected
 *   groups        (x) (?:x) (?<name>x): nothing is captured, so all alike
 *   x|y           alternation, empty branches allowed
 *   quantifiers   * + ? {n} {n,} {n,m}, each also lazy (*? {n,m}? ...),
 *                 which matches the same strings; n, m <= REP_MAX
 * Rejected, with a message naming the construct: backreferences \1 \k<n>,
 * lookaround (?= (?! (?<= (?<!, word boundaries \b \B, property escapes
 * \p{..} \P{..}, flags and modifiers (?i) (?i:x), octal escapes, escapes of
 * other dialects (\A \Z \z \h ...), a lone { } or ], a quantifier on
 * nothing or on ^ $, and patterns larger than NFA_MAX_STATES once {n,m} is
 * expanded. */
#include "regex.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CP_MAX 0x10FFFFu
#define REP_MAX 1000          /* largest n or m in {n,m} */
#define NFA_MAX_STATES 10000  /* after expanding {n,m} */
#define DFA_MAX_STATES 2000   /* beyond this the matcher simulates the NFA */
#define NEST_MAX 100          /* group depth: the parser recurses */
#define SUCC_MAX 2000000      /* position automaton edges (build time and table size) */

/* ---- memory ---- */

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xcalloc(n, 1), s, n);
}

/* Makes room for one more element in a growable array. */
#define PUSH(arr, n, cap) \
	do { \
		if ((n) == (cap)) { \
			(cap) = (cap) ? 2 * (cap) : 8; \
			(arr) = xrealloc((arr), (cap) * sizeof *(arr)); \
		} \
	} while (0)

/* ---- sets of code points: sorted, disjoint, non-adjacent ranges ---- */

struct range {
	uint32_t lo, hi;
};

struct cset {
	struct range *r;
	size_t n, cap;
};

static void cset_add(struct cset *s, uint32_t lo, uint32_t hi)
{
	PUSH(s->r, s->n, s->cap);
	s->r[s->n++] = (struct range){lo, hi};
}

static void cset_add_ranges(struct cset *s, const struct range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cset_add(s, r[i].lo, r[i].hi);
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges, so equal sets have equal range lists. */
static void cset_norm(struct cset *s)
{
	if (s->n == 0)
		return;
	qsort(s->r, s->n, sizeof *s->r, range_cmp);
	size_t k = 0;
	for (size_t i = 1; i < s->n; i++) {
		if (s->r[i].lo <= s->r[k].hi + 1) {
			if (s->r[i].hi > s->r[k].hi)
				s->r[k].hi = s->r[i].hi;
		} else {
			s->r[++k] = s->r[i];
		}
	}
	s->n = k + 1;
}

/* Complement within [0, CP_MAX]; s must be normalized. */
static void cset_negate(struct cset *s)
{
	struct cset t = {0};
	uint32_t next = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->r[i].lo > next)
			cset_add(&t, next, s->r[i].lo - 1);
		next = s->r[i].hi + 1;
	}
	if (next <= CP_MAX)
		cset_add(&t, next, CP_MAX);
	free(s->r);
	*s = t;
}

static bool cset_eq(const struct cset *a, const struct cset *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->r, b->r, a->n * sizeof *a->r) == 0);
}

static const struct range R_DIGIT[] = {{'0', '9'}};
static const struct range R_WORD[] = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
static const struct range R_SPACE[] = {
	{0x09, 0x0d}, {0x20, 0x20}, {0xa0, 0xa0}, {0x1680, 0x1680}, {0x2000, 0x200a},
	{0x2028, 0x2029}, {0x202f, 0x202f}, {0x205f, 0x205f}, {0x3000, 0x3000}, {0xfeff, 0xfeff},
};
static const struct range R_LINE_END[] = {{0x0a, 0x0a}, {0x0d, 0x0d}, {0x2028, 0x2029}};

#define NRANGES(a) (sizeof(a) / sizeof *(a))

/* \d \D \w \W \s \S added to s (normalized afterwards by the caller). */
static void cset_add_escape(struct cset *s, char c)
{
	struct cset t = {0};
	switch (c | 0x20) {
	case 'd': cset_add_ranges(&t, R_DIGIT, NRANGES(R_DIGIT)); break;
	case 'w': cset_add_ranges(&t, R_WORD, NRANGES(R_WORD)); break;
	default: cset_add_ranges(&t, R_SPACE, NRANGES(R_SPACE)); break;
	}
	if (c >= 'A' && c <= 'Z')
		cset_negate(&t);
	cset_add_ranges(s, t.r, t.n);
	free(t.r);
}

/* ---- syntax tree ---- */

enum node_kind { N_SET, N_CAT, N_ALT, N_REP, N_BOL, N_EOL };

struct node {
	enum node_kind kind;
	struct cset set;      /* N_SET */
	int set_id;           /* N_SET: its set in the NFA, -1 before */
	struct node **kids;   /* N_CAT (none: the empty string), N_ALT, N_REP (one) */
	size_t nkids, capkids;
	int min, max;         /* N_REP; max < 0: unbounded */
};

struct parser {
	const unsigned char *s;
	size_t n, i;
	char *err;
	size_t errlen;
	bool failed;
	int depth;
	struct node **nodes; /* all of them, freed together */
	size_t nnodes, capnodes;
};

static void fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct parser *p, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = true;
	if (p->errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
}

static struct node *new_node(struct parser *p, enum node_kind kind)
{
	struct node *nd = xcalloc(1, sizeof *nd);
	nd->kind = kind;
	nd->set_id = -1;
	PUSH(p->nodes, p->nnodes, p->capnodes);
	p->nodes[p->nnodes++] = nd;
	return nd;
}

static void add_kid(struct node *nd, struct node *kid)
{
	PUSH(nd->kids, nd->nkids, nd->capkids);
	nd->kids[nd->nkids++] = kid;
}

static bool at_end(const struct parser *p)
{
	return p->i >= p->n;
}

static bool at(const struct parser *p, char c)
{
	return p->i < p->n && p->s[p->i] == (unsigned char)c;
}

static bool eat(struct parser *p, char c)
{
	if (!at(p, c))
		return false;
	p->i++;
	return true;
}

static bool is_digit(unsigned c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int hex_value(unsigned c)
{
	if (is_digit(c))
		return (int)(c - '0');
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (int)((c | 0x20) - 'a' + 10);
	return -1;
}

/* Decodes one UTF-8 sequence; returns its length, 0 if it is not valid
 * (overlong, surrogate, above CP_MAX, truncated). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	if (len == 0 || len > n || s[0] > 0xf4)
		return 0;
	uint32_t c = s[0] & (0x7f >> len);
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[k] & 0x3f);
	}
	static const uint32_t min_of_len[] = {0, 0, 0x80, 0x800, 0x10000};
	if (c < min_of_len[len] || c > CP_MAX || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* The literal code point at the cursor, advancing past it. */
static uint32_t next_cp(struct parser *p)
{
	uint32_t cp = 0;
	size_t len = utf8_decode(p->s + p->i, p->n - p->i, &cp);
	if (len == 0) {
		fail(p, "the pattern is not valid UTF-8");
		p->i = p->n;
		return 0;
	}
	p->i += len;
	return cp;
}

/* Exactly k hex digits at the cursor, or -1 (cursor unmoved). */
static long hex_digits(struct parser *p, int k)
{
	if (p->n - p->i < (size_t)k)
		return -1;
	long v = 0;
	for (int j = 0; j < k; j++) {
		int d = hex_value(p->s[p->i + (size_t)j]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	p->i += (size_t)k;
	return v;
}

/* After "\u": HHHH (joining a surrogate pair written as two escapes, as the
 * u flag does) or {H...}. */
static uint32_t parse_u_escape(struct parser *p)
{
	if (eat(p, '{')) {
		uint32_t v = 0;
		size_t start = p->i;
		while (!at_end(p) && hex_value(p->s[p->i]) >= 0) {
			v = v * 16 + (uint32_t)hex_value(p->s[p->i++]);
			if (v > CP_MAX) {
				fail(p, "\\u{...} above 10FFFF");
				return 0;
			}
		}
		if (p->i == start || !eat(p, '}'))
			fail(p, "\\u{ must be followed by hex digits and }");
		return v;
	}
	long v = hex_digits(p, 4);
	if (v < 0) {
		fail(p, "\\u must be followed by four hex digits or {hex}");
		return 0;
	}
	if (v >= 0xd800 && v <= 0xdbff && p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
		size_t save = p->i;
		p->i += 2;
		long lo = hex_digits(p, 4);
		if (lo >= 0xdc00 && lo <= 0xdfff)
			return 0x10000 + (((uint32_t)v - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
		p->i = save;
	}
	return (uint32_t)v;
}

/* The text of a \p{...} escape for the message, cursor just after "\p". */
static int property_len(const struct parser *p)
{
	size_t k = p->i;
	if (k < p->n && p->s[k] == '{')
		while (k < p->n && p->s[k] != '}' && k - p->i < 40)
			k++;
	return (int)(k - p->i + (k < p->n && p->s[k] == '}'));
}

enum esc { ESC_CHAR, ESC_SET, ESC_FAIL };

/* An escape, cursor just after the backslash: a code point, a set (\d ...)
 * or a failure with its message. */
static enum esc parse_escape(struct parser *p, bool in_class, uint32_t *cp, struct cset *set)
{
	if (at_end(p)) {
		fail(p, "\\ at the end of the pattern");
		return ESC_FAIL;
	}
	size_t start = p->i - 1;
	unsigned char c = p->s[p->i++];
	switch (c) {
	case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
		cset_add_escape(set, (char)c);
		return ESC_SET;
	case 't': *cp = '\t'; return ESC_CHAR;
	case 'n': *cp = '\n'; return ESC_CHAR;
	case 'v': *cp = '\v'; return ESC_CHAR;
	case 'f': *cp = '\f'; return ESC_CHAR;
	case 'r': *cp = '\r'; return ESC_CHAR;
	case 'b':
		if (in_class) {
			*cp = '\b';
			return ESC_CHAR;
		}
		fail(p, "word boundary \\b is not supported");
		return ESC_FAIL;
	case 'B':
		fail(p, in_class ? "\\B is not valid in a class" : "word boundary \\B is not supported");
		return ESC_FAIL;
	case '0':
		if (!at_end(p) && is_digit(p->s[p->i])) {
			fail(p, "octal escape \\0%c is not supported", p->s[p->i]);
			return ESC_FAIL;
		}
		*cp = 0;
		return ESC_CHAR;
	case 'c':
		if (!at_end(p) && is_alpha(p->s[p->i])) {
			*cp = p->s[p->i++] % 32;
			return ESC_CHAR;
		}
		fail(p, "\\c must be followed by a letter (\\cA-\\cZ)");
		return ESC_FAIL;
	case 'x': {
		long v = hex_digits(p, 2);
		if (v < 0) {
			fail(p, "\\x must be followed by two hex digits");
			return ESC_FAIL;
		}
		*cp = (uint32_t)v;
		return ESC_CHAR;
	}
	case 'u':
		*cp = parse_u_escape(p);
		return p->failed ? ESC_FAIL : ESC_CHAR;
	case 'k':
		fail(p, "named backreference \\k<...> is not supported");
		return ESC_FAIL;
	case 'p': case 'P':
		fail(p, "Unicode property escape \\%c%.*s is not supported", c, property_len(p), (const char *)p->s + p->i);
		return ESC_FAIL;
	}
	if (is_digit(c)) {
		while (!at_end(p) && is_digit(p->s[p->i]))
			p->i++;
		fail(p, "%s %.*s is not supported", in_class ? "octal escape" : "backreference",
		     (int)(p->i - start), (const char *)p->s + start);
		return ESC_FAIL;
	}
	if (c >= 0x20 && c < 0x7f && !is_alpha(c)) {
		*cp = c;
		return ESC_CHAR;
	}
	if (c == 'A' || c == 'Z' || c == 'z')
		fail(p, "\\%c is not ECMA-262 (use ^ or $)", c);
	else if (c < 0x80)
		fail(p, "\\%c is not an ECMA-262 escape", c);
	else
		fail(p, "\\ before a non-ASCII character is not an ECMA-262 escape");
	return ESC_FAIL;
}

/* Length of a quantifier {n}, {n,} or {n,m} at offset k, 0 if none. */
static size_t brace_len(const struct parser *p, size_t k)
{
	size_t i = k;
	if (i >= p->n || p->s[i++] != '{')
		return 0;
	size_t d = i;
	while (i < p->n && is_digit(p->s[i]))
		i++;
	if (i == d)
		return 0;
	if (i < p->n && p->s[i] == ',') {
		i++;
		while (i < p->n && is_digit(p->s[i]))
			i++;
	}
	if (i >= p->n || p->s[i] != '}')
		return 0;
	return i + 1 - k;
}

static bool at_quantifier(const struct parser *p)
{
	return at(p, '*') || at(p, '+') || at(p, '?') || brace_len(p, p->i) > 0;
}

static int parse_count(struct parser *p)
{
	size_t start = p->i;
	long v = 0;
	while (!at_end(p) && is_digit(p->s[p->i])) {
		if (v <= REP_MAX)
			v = v * 10 + (p->s[p->i] - '0');
		p->i++;
	}
	if (v > REP_MAX)
		fail(p, "repetition count %.*s is above the limit of %d", (int)(p->i - start), (const char *)p->s + start,
		     REP_MAX);
	return (int)v;
}

static struct node *parse_alt(struct parser *p);

/* A class [...] or [^...], cursor on '['. */
static struct node *parse_class(struct parser *p)
{
	struct node *nd = new_node(p, N_SET);
	p->i++;
	bool neg = eat(p, '^');
	while (!p->failed && !at(p, ']')) {
		if (at_end(p)) {
			fail(p, "missing ] after [");
			break;
		}
		size_t start = p->i;
		uint32_t lo = 0, hi = 0;
		enum esc k = eat(p, '\\') ? parse_escape(p, true, &lo, &nd->set) : (lo = next_cp(p), ESC_CHAR);
		bool range = at(p, '-') && p->i + 1 < p->n && p->s[p->i + 1] != ']';
		if (k == ESC_SET && range)
			fail(p, "a class escape cannot start a range: %.*s", (int)(p->i + 2 - start), (const char *)p->s + start);
		if (k != ESC_CHAR || p->failed)
			continue;
		if (range) {
			p->i++;
			struct cset tmp = {0};
			k = eat(p, '\\') ? parse_escape(p, true, &hi, &tmp) : (hi = next_cp(p), ESC_CHAR);
			free(tmp.r);
			if (k == ESC_SET)
				fail(p, "a class escape cannot end a range: %.*s", (int)(p->i - start), (const char *)p->s + start);
			else if (k == ESC_CHAR && hi < lo)
				fail(p, "range out of order in class: %.*s", (int)(p->i - start), (const char *)p->s + start);
		} else {
			hi = lo;
		}
		cset_add(&nd->set, lo, hi);
	}
	eat(p, ']');
	cset_norm(&nd->set);
	if (neg)
		cset_negate(&nd->set);
	return nd;
}

/* A group, cursor on '('. The result is wrapped in a sequence so that a
 * quantifier on (^) is told apart from one on a bare ^. */
static struct node *parse_group(struct parser *p)
{
	p->i++;
	if (eat(p, '?')) {
		if (eat(p, ':')) {
		} else if (at(p, '=') || at(p, '!')) {
			fail(p, "lookahead (?%c is not supported", p->s[p->i]);
		} else if (at(p, '<') && p->i + 1 < p->n && (p->s[p->i + 1] == '=' || p->s[p->i + 1] == '!')) {
			fail(p, "lookbehind (?<%c is not supported", p->s[p->i + 1]);
		} else if (eat(p, '<')) {
			size_t start = p->i;
			while (!at_end(p) && (is_alpha(p->s[p->i]) || p->s[p->i] == '_' || p->s[p->i] == '$' ||
			                      p->s[p->i] >= 0x80 || (p->i > start && is_digit(p->s[p->i]))))
				p->i++;
			if (p->i == start || !eat(p, '>'))
				fail(p, "invalid group name in (?<name>...)");
		} else if (!at_end(p) && (is_alpha(p->s[p->i]) || at(p, '-'))) {
			fail(p, "flags and modifiers (?%c...) are not supported", p->s[p->i]);
		} else {
			fail(p, "invalid group (?%.*s", at_end(p) ? 0 : 1, (const char *)p->s + p->i);
		}
	}
	struct node *cat = new_node(p, N_CAT);
	if (p->failed)
		return cat;
	if (++p->depth > NEST_MAX) {
		fail(p, "groups nested deeper than %d", NEST_MAX);
		return cat;
	}
	add_kid(cat, parse_alt(p));
	p->depth--;
	if (!p->failed && !eat(p, ')'))
		fail(p, "missing ) after (");
	return cat;
}

static struct node *parse_atom(struct parser *p)
{
	unsigned char c = p->s[p->i];
	struct node *nd;
	switch (c) {
	case '^': p->i++; return new_node(p, N_BOL);
	case '$': p->i++; return new_node(p, N_EOL);
	case '(': return parse_group(p);
	case '[': return parse_class(p);
	case '.':
		p->i++;
		nd = new_node(p, N_SET);
		cset_add_ranges(&nd->set, R_LINE_END, NRANGES(R_LINE_END));
		cset_negate(&nd->set);
		return nd;
	case '*': case '+': case '?':
		fail(p, "nothing to repeat before %c", c);
		return new_node(p, N_CAT);
	case '{': case '}': case ']':
		if (brace_len(p, p->i))
			fail(p, "nothing to repeat before %.*s", (int)brace_len(p, p->i), (const char *)p->s + p->i);
		else if (c == ']')
			fail(p, "lone ]: write \\] for the character");
		else
			fail(p, "lone %c: write \\%c for the character (a quantifier is {n}, {n,} or {n,m})", c, c);
		return new_node(p, N_CAT);
	}
	nd = new_node(p, N_SET);
	uint32_t cp = 0;
	if (eat(p, '\\')) {
		if (parse_escape(p, false, &cp, &nd->set) != ESC_CHAR)
			return nd;
	} else {
		cp = next_cp(p);
	}
	cset_add(&nd->set, cp, cp);
	return nd;
}

/* An atom and its quantifier, if any. */
static struct node *parse_term(struct parser *p)
{
	struct node *atom = parse_atom(p);
	if (p->failed || !at_quantifier(p))
		return atom;
	if (atom->kind == N_BOL || atom->kind == N_EOL) {
		fail(p, "nothing to repeat: a quantifier after %c", atom->kind == N_BOL ? '^' : '$');
		return atom;
	}
	struct node *rep = new_node(p, N_REP);
	add_kid(rep, atom);
	size_t start = p->i;
	if (eat(p, '*')) {
		rep->min = 0, rep->max = -1;
	} else if (eat(p, '+')) {
		rep->min = 1, rep->max = -1;
	} else if (eat(p, '?')) {
		rep->min = 0, rep->max = 1;
	} else {
		p->i++;
		rep->min = rep->max = parse_count(p);
		if (eat(p, ','))
			rep->max = at(p, '}') ? -1 : parse_count(p);
		p->i++;
		if (!p->failed && rep->max >= 0 && rep->max < rep->min)
			fail(p, "numbers out of order in %.*s", (int)(p->i - start), (const char *)p->s + start);
	}
	eat(p, '?'); /* lazy: matches the same strings */
	if (!p->failed && at_quantifier(p))
		fail(p, "nothing to repeat: a quantifier after %.*s", (int)(p->i - start), (const char *)p->s + start);
	return rep;
}

static struct node *parse_seq(struct parser *p)
{
	struct node *cat = new_node(p, N_CAT);
	while (!p->failed && !at_end(p) && !at(p, '|') && !at(p, ')'))
		add_kid(cat, parse_term(p));
	return cat;
}

static struct node *parse_alt(struct parser *p)
{
	struct node *first = parse_seq(p);
	if (!at(p, '|'))
		return first;
	struct node *alt = new_node(p, N_ALT);
	add_kid(alt, first);
	while (!p->failed && eat(p, '|'))
		add_kid(alt, parse_seq(p));
	return alt;
}

/* ---- Thompson NFA, built back to front: each piece is given the state it
 * continues to and returns its entry ---- */

enum st_kind { S_SET, S_SPLIT, S_BOL, S_EOL, S_MATCH };

struct nstate {
	enum st_kind kind;
	int out, out2; /* out2: S_SPLIT's second branch, or -1 */
	int set;       /* S_SET */
};

struct nfa {
	struct nstate *st;
	size_t n, cap;
	struct cset *sets;
	size_t nsets, capsets;
};

static int nfa_add(struct nfa *a, enum st_kind kind, int out, int out2, int set)
{
	PUSH(a->st, a->n, a->cap);
	a->st[a->n] = (struct nstate){kind, out, out2, set};
	return (int)a->n++;
}

static int nfa_set(struct nfa *a, const struct cset *s)
{
	for (size_t i = 0; i < a->nsets; i++)
		if (cset_eq(&a->sets[i], s))
			return (int)i;
	PUSH(a->sets, a->nsets, a->capsets);
	struct cset *d = &a->sets[a->nsets];
	*d = (struct cset){0};
	cset_add_ranges(d, s->r, s->n);
	return (int)a->nsets++;
}

/* Saturating arithmetic for the size estimate. */
static size_t sat(size_t v)
{
	return v > NFA_MAX_STATES ? NFA_MAX_STATES + 1 : v;
}

/* States build() will make for nd, capped just above NFA_MAX_STATES. */
static size_t nfa_size(const struct node *nd)
{
	size_t total = nd->kind == N_ALT ? nd->nkids : 0; /* one split per branch */
	switch (nd->kind) {
	case N_SET: case N_BOL: case N_EOL: return 1;
	case N_ALT: case N_CAT:
		for (size_t k = 0; k < nd->nkids; k++)
			total = sat(total + nfa_size(nd->kids[k]));
		return total;
	case N_REP: {
		size_t body = nfa_size(nd->kids[0]);
		size_t copies = nd->max < 0 ? (size_t)nd->min + 1 : (size_t)nd->max;
		return sat(sat(body * copies) + copies + 1);
	}
	}
	return 0;
}

static int build(struct nfa *a, struct node *nd, int next);

/* x{n,m}: n copies, then m-n nested optional ones, x(x(x)?)?, whose empty
 * moves stay short (a chain of x? would link every copy to the end). x{n,}:
 * n copies, then a loop. */
static int build_rep(struct nfa *a, struct node *nd, int next)
{
	struct node *x = nd->kids[0];
	int e = next;
	if (nd->max < 0) {
		e = nfa_add(a, S_SPLIT, -1, next, -1);
		int body = build(a, x, e);
		a->st[e].out = body;
	} else {
		for (int k = nd->min; k < nd->max; k++) {
			int body = build(a, x, e);
			e = nfa_add(a, S_SPLIT, body, next, -1);
		}
	}
	for (int k = 0; k < nd->min; k++)
		e = build(a, x, e);
	return e;
}

static int build(struct nfa *a, struct node *nd, int next)
{
	switch (nd->kind) {
	case N_SET:
		if (nd->set_id < 0)
			nd->set_id = nfa_set(a, &nd->set);
		return nfa_add(a, S_SET, next, -1, nd->set_id);
	case N_BOL: return nfa_add(a, S_BOL, next, -1, -1);
	case N_EOL: return nfa_add(a, S_EOL, next, -1, -1);
	case N_CAT:
		for (size_t k = nd->nkids; k-- > 0;)
			next = build(a, nd->kids[k], next);
		return next;
	case N_ALT: {
		int e = build(a, nd->kids[nd->nkids - 1], next);
		for (size_t k = nd->nkids - 1; k-- > 0;) {
			int branch = build(a, nd->kids[k], next);
			e = nfa_add(a, S_SPLIT, branch, e, -1);
		}
		return e;
	}
	case N_REP: return build_rep(a, nd, next);
	}
	return next;
}

/* ---- position automaton: one position per S_SET state; stepping from a
 * position on a code point of its set leads to the positions reachable
 * from its out without input. ^ and $ are resolved here: ^ only in the
 * closure of the start, $ only in the closure taken at the end. ---- */

enum { PA_MATCH = 1, PA_END = 2 }; /* a step from the position matches now / if the input ends */

struct pa {
	size_t n;
	int *set;              /* position → set id */
	int *first, *succ;     /* successors of p: succ[first[p] .. first[p + 1]) */
	size_t nsucc;
	unsigned char *flags;  /* PA_* */
	int *init;             /* positions at the start (after ^) */
	size_t ninit;
	unsigned char init_flags;
};

struct walk {
	const struct nfa *a;
	int *mark, gen, *stack;
	int *pos_of;           /* NFA state → position */
	int *out;              /* positions found */
	size_t nout;
	unsigned char flags;
};

/* The positions and match reachable from state s without input. */
static void closure(struct walk *w, int s, bool at_start, bool at_stop, unsigned char match_flag)
{
	size_t sp = 0;
	w->gen++;
	w->nout = 0;
	w->stack[sp++] = s;
	w->mark[s] = w->gen;
	while (sp > 0) {
		int si = w->stack[--sp];
		const struct nstate *q = &w->a->st[si];
		int to[2] = {-1, -1};
		switch (q->kind) {
		case S_SET: w->out[w->nout++] = w->pos_of[si]; break;
		case S_MATCH: w->flags |= match_flag; break;
		case S_SPLIT: to[0] = q->out, to[1] = q->out2; break;
		case S_BOL: to[0] = at_start ? q->out : -1; break;
		case S_EOL: to[0] = at_stop ? q->out : -1; break;
		}
		for (int k = 0; k < 2; k++)
			if (to[k] >= 0 && w->mark[to[k]] != w->gen) {
				w->mark[to[k]] = w->gen;
				w->stack[sp++] = to[k];
			}
	}
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* Successors and flags of one entry state; false past SUCC_MAX. */
static bool pa_entry(struct walk *w, int s, bool at_start, int **list, size_t *n, size_t *cap, unsigned char *flags)
{
	w->flags = 0;
	closure(w, s, at_start, true, PA_END);
	closure(w, s, at_start, false, PA_MATCH);
	*flags = w->flags;
	qsort(w->out, w->nout, sizeof *w->out, int_cmp); /* deterministic and readable */
	for (size_t k = 0; k < w->nout; k++) {
		PUSH(*list, *n, *cap);
		(*list)[(*n)++] = w->out[k];
	}
	return *n <= SUCC_MAX;
}

static bool pa_build(struct pa *pa, const struct nfa *a, int start)
{
	struct walk w = {.a = a};
	w.mark = xcalloc(a->n, sizeof *w.mark);
	w.stack = xcalloc(a->n, sizeof *w.stack);
	w.out = xcalloc(a->n, sizeof *w.out);
	w.pos_of = xcalloc(a->n, sizeof *w.pos_of);
	for (size_t s = 0; s < a->n; s++)
		w.pos_of[s] = a->st[s].kind == S_SET ? (int)pa->n++ : -1;
	pa->set = xcalloc(pa->n, sizeof *pa->set);
	pa->first = xcalloc(pa->n + 1, sizeof *pa->first);
	pa->flags = xcalloc(pa->n, sizeof *pa->flags);
	size_t cap = 0, icap = 0;
	bool ok = pa_entry(&w, start, true, &pa->init, &pa->ninit, &icap, &pa->init_flags);
	for (size_t s = 0; s < a->n && ok; s++) {
		int p = w.pos_of[s];
		if (p < 0)
			continue;
		pa->set[p] = a->st[s].set;
		pa->first[p] = (int)pa->nsucc;
		ok = pa_entry(&w, a->st[s].out, false, &pa->succ, &pa->nsucc, &cap, &pa->flags[p]);
	}
	pa->first[pa->n] = (int)pa->nsucc;
	free(w.mark);
	free(w.stack);
	free(w.out);
	free(w.pos_of);
	return ok;
}

/* Marks in mark[] the positions reachable from the sp positions on stack
 * over the edges (first, next). */
static void mark_reachable(const int *first, const int *next, int *stack, size_t sp, unsigned char *mark)
{
	while (sp > 0) {
		int p = stack[--sp];
		for (int k = first[p]; k < first[p + 1]; k++)
			if (!mark[next[k]])
				mark[next[k]] = 1, stack[sp++] = next[k];
	}
}

/* The edges of pa reversed, in the same layout. */
static void pa_reverse(const struct pa *pa, int **rfirst, int **rsucc)
{
	int *first = xcalloc(pa->n + 1, sizeof *first), *fill = xcalloc(pa->n, sizeof *fill);
	int *succ = xcalloc(pa->nsucc, sizeof *succ);
	for (size_t e = 0; e < pa->nsucc; e++)
		first[pa->succ[e] + 1]++;
	for (size_t p = 0; p < pa->n; p++)
		first[p + 1] += first[p];
	for (size_t p = 0; p < pa->n; p++)
		for (int k = pa->first[p]; k < pa->first[p + 1]; k++)
			succ[first[pa->succ[k]] + fill[pa->succ[k]]++] = (int)p;
	free(fill);
	*rfirst = first;
	*rsucc = succ;
}

/* Keeps the positions reachable from the start from which a match can
 * still be reached, renumbered in order: any other only slows the DFA down
 * and hides that no match is possible (then the set of positions is empty). */
static void pa_prune(struct pa *pa)
{
	size_t n = pa->n, sp = 0;
	unsigned char *reach = xcalloc(n, 1), *live = xcalloc(n, 1);
	int *stack = xcalloc(n + pa->ninit, sizeof *stack);
	for (size_t k = 0; k < pa->ninit; k++)
		if (!reach[pa->init[k]])
			reach[pa->init[k]] = 1, stack[sp++] = pa->init[k];
	mark_reachable(pa->first, pa->succ, stack, sp, reach);
	int *rfirst, *rsucc;
	pa_reverse(pa, &rfirst, &rsucc);
	sp = 0;
	for (size_t p = 0; p < n; p++)
		if (pa->flags[p])
			live[p] = 1, stack[sp++] = (int)p;
	mark_reachable(rfirst, rsucc, stack, sp, live);
	free(rfirst);
	free(rsucc);

	int *renum = stack;
	size_t m = 0, ns = 0, ni = 0;
	for (size_t p = 0; p < n; p++)
		renum[p] = reach[p] && live[p] ? (int)m++ : -1;
	for (size_t k = 0; k < pa->ninit; k++)
		if (renum[pa->init[k]] >= 0)
			pa->init[ni++] = renum[pa->init[k]];
	pa->ninit = ni;
	for (size_t p = 0; p < n; p++) {
		if (renum[p] < 0)
			continue;
		int from = pa->first[p], to = pa->first[p + 1], q = renum[p];
		pa->first[q] = (int)ns;
		pa->set[q] = pa->set[p];
		pa->flags[q] = pa->flags[p];
		for (int k = from; k < to; k++)
			if (renum[pa->succ[k]] >= 0)
				pa->succ[ns++] = renum[pa->succ[k]];
	}
	pa->first[m] = (int)ns;
	pa->n = m;
	pa->nsucc = ns;
	free(reach);
	free(live);
	free(stack);
}

/* ---- rows of words interned by content (hash table of ids) ---- */

struct rowset {
	size_t len;       /* words per row */
	uint32_t *rows;
	size_t n, cap;
	uint32_t *slots;  /* id + 1, 0 = empty */
	size_t nslots;
};

static uint32_t row_hash(const uint32_t *row, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t k = 0; k < len; k++)
		h = (h ^ row[k]) * 16777619u;
	return h;
}

static void rowset_rehash(struct rowset *rs)
{
	free(rs->slots);
	rs->nslots = rs->nslots ? 2 * rs->nslots : 64;
	rs->slots = xcalloc(rs->nslots, sizeof *rs->slots);
	for (size_t id = 0; id < rs->n; id++) {
		size_t h = row_hash(rs->rows + id * rs->len, rs->len) & (rs->nslots - 1);
		while (rs->slots[h])
			h = (h + 1) & (rs->nslots - 1);
		rs->slots[h] = (uint32_t)id + 1;
	}
}

/* The id of row, added if new (ids count from 0 in order of addition). */
static uint32_t rowset_add(struct rowset *rs, const uint32_t *row)
{
	if (2 * (rs->n + 1) > rs->nslots)
		rowset_rehash(rs);
	size_t h = row_hash(row, rs->len) & (rs->nslots - 1);
	for (; rs->slots[h]; h = (h + 1) & (rs->nslots - 1)) {
		uint32_t id = rs->slots[h] - 1;
		if (memcmp(rs->rows + (size_t)id * rs->len, row, rs->len * sizeof *row) == 0)
			return id;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 16;
		rs->rows = xrealloc(rs->rows, rs->cap * rs->len * sizeof *rs->rows);
	}
	memcpy(rs->rows + rs->n * rs->len, row, rs->len * sizeof *row);
	rs->slots[h] = (uint32_t)rs->n + 1;
	return (uint32_t)rs->n++;
}

static void rowset_free(struct rowset *rs)
{
	free(rs->rows);
	free(rs->slots);
}

/* ---- the compiled pattern ---- */

enum re_mode { RE_DFA, RE_NFA };

struct sc_regex {
	char *pattern;
	enum re_mode mode;

	/* Code-point classes: the code points from[i] .. from[i + 1] - 1 (the
	 * last up to CP_MAX) are in class cls[i]; rep is a code point of each
	 * class, for comments. */
	size_t nranges, nclasses;
	uint32_t *from, *cls, *rep;

	/* RE_DFA: state 0 is dead (no match possible), 1 matched, start the
	 * first; next[state * nclasses + class]; end_ok: a match if the input
	 * ends in the state. parent/via: a shortest way to each state. */
	size_t nstates, start;
	uint32_t *next, *parent, *via;
	bool *end_ok;

	/* The pruned position automaton (the tables of RE_NFA) and whether a
	 * set holds a class: in_set[set * nclasses + class]. */
	struct pa pa;
	size_t nsets;
	bool *in_set;
};

/* Splits the code points into classes the pattern never tells apart: the
 * intervals between set boundaries, grouped by which sets hold them. */
static void make_classes(struct sc_regex *re, const struct cset *sets, size_t nsets)
{
	uint32_t *cuts = NULL;
	size_t ncuts = 0, cap = 0;
	PUSH(cuts, ncuts, cap);
	cuts[ncuts++] = 0;
	for (size_t s = 0; s < nsets; s++)
		for (size_t k = 0; k < sets[s].n; k++) {
			PUSH(cuts, ncuts, cap);
			cuts[ncuts++] = sets[s].r[k].lo;
			if (sets[s].r[k].hi < CP_MAX) {
				PUSH(cuts, ncuts, cap);
				cuts[ncuts++] = sets[s].r[k].hi + 1;
			}
		}
	qsort(cuts, ncuts, sizeof *cuts, int_cmp); /* all <= CP_MAX: int order is fine */
	size_t m = 0;
	for (size_t k = 0; k < ncuts; k++)
		if (m == 0 || cuts[k] != cuts[m - 1])
			cuts[m++] = cuts[k];
	struct rowset sig = {.len = (nsets + 31) / 32 ? (nsets + 31) / 32 : 1};
	uint32_t *rows = xcalloc(m * sig.len, sizeof *rows);
	for (size_t s = 0; s < nsets; s++)
		for (size_t k = 0; k < sets[s].n; k++) {
			uint32_t *hit = bsearch(&sets[s].r[k].lo, cuts, m, sizeof *cuts, int_cmp);
			for (size_t i = (size_t)(hit - cuts); i < m && cuts[i] <= sets[s].r[k].hi; i++)
				rows[i * sig.len + s / 32] |= 1u << (s % 32);
		}
	re->nranges = m;
	re->from = cuts;
	re->cls = xcalloc(m, sizeof *re->cls);
	for (size_t i = 0; i < m; i++)
		re->cls[i] = rowset_add(&sig, rows + i * sig.len);
	re->nclasses = sig.n;
	re->nsets = nsets;
	re->in_set = xcalloc(nsets * sig.n, sizeof *re->in_set);
	for (size_t c = 0; c < sig.n; c++)
		for (size_t s = 0; s < nsets; s++)
			re->in_set[s * sig.n + c] = sig.rows[c * sig.len + s / 32] >> (s % 32) & 1;
	free(rows);
	rowset_free(&sig);
}

/* A code point of each class for comments: printable ASCII if it has one. */
static void pick_reps(struct sc_regex *re)
{
	re->rep = xcalloc(re->nclasses, sizeof *re->rep);
	bool *nice = xcalloc(re->nclasses, sizeof *nice), *seen = xcalloc(re->nclasses, sizeof *seen);
	for (size_t i = 0; i < re->nranges; i++) {
		uint32_t c = re->cls[i], lo = re->from[i];
		uint32_t hi = i + 1 < re->nranges ? re->from[i + 1] - 1 : CP_MAX;
		uint32_t printable = lo < 0x21 ? 0x21 : lo;
		if (!nice[c] && printable <= hi && printable < 0x7f) {
			re->rep[c] = printable, nice[c] = seen[c] = true;
		} else if (!seen[c]) {
			re->rep[c] = lo, seen[c] = true;
		}
	}
	free(nice);
	free(seen);
}

/* Keeps only the sets some position uses, renumbering pa->set. */
static struct cset *used_sets(struct pa *pa, const struct nfa *a, size_t *nused)
{
	int *renum = xcalloc(a->nsets, sizeof *renum);
	struct cset *used = xcalloc(a->nsets, sizeof *used);
	size_t n = 0;
	for (size_t s = 0; s < a->nsets; s++)
		renum[s] = -1;
	for (size_t p = 0; p < pa->n; p++) {
		int s = pa->set[p];
		if (renum[s] < 0) {
			renum[s] = (int)n;
			used[n++] = a->sets[s];
		}
		pa->set[p] = renum[s];
	}
	free(renum);
	*nused = n;
	return used;
}

/* ---- DFA by subset construction: a state is a set of positions plus one
 * bit for "a match if the input ends here" (bit pa->n); bit pa->n + 1 only
 * marks the row reserved for "matched" ---- */

struct subset {
	const struct sc_regex *re;
	const struct pa *pa;
	struct rowset states;
	uint32_t *next;
	size_t cap_next;
	uint32_t *row;        /* scratch */
};

/* The state after reading a code point of class c in state s. */
static uint32_t subset_step(struct subset *b, uint32_t s, uint32_t c)
{
	const struct pa *pa = b->pa;
	size_t len = b->states.len;
	memset(b->row, 0, len * sizeof *b->row);
	for (size_t p = 0; p < pa->n; p++) {
		if (!(b->states.rows[s * len + p / 32] >> (p % 32) & 1) || !b->re->in_set[pa->set[p] * b->re->nclasses + c])
			continue;
		if (pa->flags[p] & PA_MATCH)
			return 1;
		if (pa->flags[p] & PA_END)
			b->row[pa->n / 32] |= 1u << (pa->n % 32);
		for (int k = pa->first[p]; k < pa->first[p + 1]; k++)
			b->row[pa->succ[k] / 32] |= 1u << (pa->succ[k] % 32);
	}
	return rowset_add(&b->states, b->row);
}

/* Fills re->next; false when the DFA would pass DFA_MAX_STATES. State 0 is
 * the empty set (dead); 1 is a placeholder row for "matched". */
static bool subset_build(struct sc_regex *re, const struct pa *pa)
{
	struct subset b = {.re = re, .pa = pa, .states = {.len = (pa->n + 2) / 32 + 1}};
	b.row = xcalloc(b.states.len, sizeof *b.row);
	rowset_add(&b.states, b.row);
	b.row[(pa->n + 1) / 32] |= 1u << ((pa->n + 1) % 32);
	rowset_add(&b.states, b.row);
	memset(b.row, 0, b.states.len * sizeof *b.row);
	for (size_t k = 0; k < pa->ninit; k++)
		b.row[pa->init[k] / 32] |= 1u << (pa->init[k] % 32);
	if (pa->init_flags & PA_END)
		b.row[pa->n / 32] |= 1u << (pa->n % 32);
	re->start = pa->init_flags & PA_MATCH ? 1 : rowset_add(&b.states, b.row);
	bool ok = true;
	for (uint32_t s = 0; s < b.states.n && ok; s++) {
		if (b.states.n > DFA_MAX_STATES) {
			ok = false;
			break;
		}
		if ((size_t)(s + 1) * re->nclasses > b.cap_next) {
			b.cap_next = 2 * (size_t)(s + 1) * re->nclasses;
			b.next = xrealloc(b.next, b.cap_next * sizeof *b.next);
		}
		for (uint32_t c = 0; c < re->nclasses; c++)
			b.next[s * re->nclasses + c] = s < 2 ? s : subset_step(&b, s, c);
	}
	if (ok) {
		re->nstates = b.states.n;
		re->next = b.next;
		re->end_ok = xcalloc(re->nstates, sizeof *re->end_ok);
		for (size_t s = 2; s < re->nstates; s++)
			re->end_ok[s] = b.states.rows[s * b.states.len + pa->n / 32] >> (pa->n % 32) & 1;
		re->end_ok[1] = true;
	} else {
		free(b.next);
	}
	free(b.row);
	rowset_free(&b.states);
	return ok;
}

/* Moore's partition refinement. The dead state starts among the states
 * that do not accept at the end and "matched" among those that do, so a
 * state from which every input matches becomes "matched" (answer now). */
static void dfa_minimize(struct sc_regex *re)
{
	size_t n = re->nstates, nc = re->nclasses;
	uint32_t *block = xcalloc(n, sizeof *block), *row = xcalloc(nc + 1, sizeof *row);
	for (size_t s = 0; s < n; s++)
		block[s] = re->end_ok[s];
	size_t nblocks = 0;
	for (;;) {
		struct rowset rs = {.len = nc + 1};
		uint32_t *nb = xcalloc(n, sizeof *nb);
		for (size_t s = 0; s < n; s++) {
			row[0] = block[s];
			for (size_t c = 0; c < nc; c++)
				row[c + 1] = block[re->next[s * nc + c]];
			nb[s] = rowset_add(&rs, row);
		}
		size_t count = rs.n;
		rowset_free(&rs);
		free(block);
		block = nb;
		if (count == nblocks)
			break;
		nblocks = count;
	}
	/* Renumber: dead's block 0, matched's 1, the others in order of first state. */
	uint32_t *id = xcalloc(nblocks, sizeof *id), *rep = xcalloc(nblocks, sizeof *rep);
	for (size_t k = 0; k < nblocks; k++)
		id[k] = UINT32_MAX;
	id[block[0]] = 0, rep[0] = 0;
	id[block[1]] = 1, rep[1] = 1;
	uint32_t m = 2;
	for (size_t s = 2; s < n; s++)
		if (id[block[s]] == UINT32_MAX)
			rep[m] = (uint32_t)s, id[block[s]] = m++;
	uint32_t *next = xcalloc((size_t)m * nc, sizeof *next);
	bool *end_ok = xcalloc(m, sizeof *end_ok);
	for (uint32_t t = 0; t < m; t++) {
		end_ok[t] = t == 1 || (t > 1 && re->end_ok[rep[t]]);
		for (size_t c = 0; c < nc; c++)
			next[t * nc + c] = t < 2 ? t : id[block[re->next[rep[t] * nc + c]]];
	}
	re->start = id[block[re->start]];
	free(re->next);
	free(re->end_ok);
	re->next = next, re->end_ok = end_ok, re->nstates = m;
	free(block), free(row), free(id), free(rep);
}

/* Renumbers the states breadth first from the start (so the table reads in
 * the order input reaches it) and records a shortest way to each. */
static void dfa_order(struct sc_regex *re)
{
	size_t n = re->nstates, nc = re->nclasses;
	uint32_t *id = xcalloc(n, sizeof *id), *order = xcalloc(n, sizeof *order);
	for (size_t s = 0; s < n; s++)
		id[s] = UINT32_MAX;
	re->parent = xcalloc(n, sizeof *re->parent);
	re->via = xcalloc(n, sizeof *re->via);
	id[0] = 0, id[1] = 1, order[0] = 0, order[1] = 1;
	uint32_t m = 2;
	if (re->start > 1)
		order[m] = (uint32_t)re->start, id[re->start] = m++;
	for (uint32_t k = 2; k < m; k++)
		for (size_t c = 0; c < nc; c++) {
			uint32_t t = re->next[order[k] * nc + c];
			if (id[t] == UINT32_MAX) {
				re->parent[m] = k, re->via[m] = (uint32_t)c;
				order[m] = t, id[t] = m++;
			}
		}
	uint32_t *next = xcalloc((size_t)m * nc, sizeof *next);
	bool *end_ok = xcalloc(m, sizeof *end_ok);
	for (uint32_t k = 0; k < m; k++) {
		end_ok[k] = re->end_ok[order[k]];
		for (size_t c = 0; c < nc; c++)
			next[k * nc + c] = id[re->next[order[k] * nc + c]];
	}
	re->start = id[re->start];
	free(re->next), free(re->end_ok);
	re->next = next, re->end_ok = end_ok, re->nstates = m;
	free(id), free(order);
}

/* ---- compile ---- */

static void free_nodes(struct parser *p)
{
	for (size_t k = 0; k < p->nnodes; k++) {
		free(p->nodes[k]->set.r);
		free(p->nodes[k]->kids);
		free(p->nodes[k]);
	}
	free(p->nodes);
}

static void free_nfa(struct nfa *a)
{
	for (size_t s = 0; s < a->nsets; s++)
		free(a->sets[s].r);
	free(a->sets);
	free(a->st);
}

/* The NFA of the search: a loop over any code point before the pattern
 * (the implicit .*? of an unanchored match), then the pattern. */
static int build_search(struct nfa *a, struct node *root)
{
	int match = nfa_add(a, S_MATCH, -1, -1, -1);
	int entry = build(a, root, match);
	struct cset any = {0};
	cset_add(&any, 0, CP_MAX);
	int loop = nfa_add(a, S_SET, -1, -1, nfa_set(a, &any));
	free(any.r);
	int start = nfa_add(a, S_SPLIT, loop, entry, -1);
	a->st[loop].out = start;
	return start;
}

/* Pattern → position automaton → classes → DFA or NFA tables. */
static bool compile_automaton(struct sc_regex *re, struct node *root, struct parser *p)
{
	struct nfa a = {0};
	int start = build_search(&a, root);
	if (!pa_build(&re->pa, &a, start)) {
		fail(p, "pattern too complex: more than %d automaton edges", SUCC_MAX);
		free_nfa(&a);
		return false;
	}
	pa_prune(&re->pa);
	size_t nsets;
	struct cset *sets = used_sets(&re->pa, &a, &nsets);
	make_classes(re, sets, nsets);
	pick_reps(re);
	free(sets);
	free_nfa(&a);
	if (subset_build(re, &re->pa)) {
		re->mode = RE_DFA;
		dfa_minimize(re);
		dfa_order(re);
	} else {
		re->mode = RE_NFA;
	}
	return true;
}

struct sc_regex *regex_compile(const char *pattern, char *err, size_t errlen)
{
	struct parser p = {.s = (const unsigned char *)pattern, .n = strlen(pattern), .err = err, .errlen = errlen};
	if (errlen)
		err[0] = 0;
	struct node *root = parse_alt(&p);
	if (!p.failed && !at_end(&p))
		fail(&p, "unbalanced )");
	if (!p.failed && nfa_size(root) > NFA_MAX_STATES)
		fail(&p, "pattern too large once {n,m} is expanded (limit %d NFA states)", NFA_MAX_STATES);
	struct sc_regex *re = NULL;
	if (!p.failed) {
		re = xcalloc(1, sizeof *re);
		re->pattern = xstrdup(pattern);
		if (!compile_automaton(re, root, &p)) {
			regex_free(re);
			re = NULL;
		}
	}
	free_nodes(&p);
	return re;
}

void regex_free(struct sc_regex *re)
{
	if (!re)
		return;
	free(re->pattern);
	free(re->from), free(re->cls), free(re->rep);
	free(re->next), free(re->parent), free(re->via), free(re->end_ok);
	free(re->pa.set), free(re->pa.first), free(re->pa.succ), free(re->pa.flags), free(re->pa.init);
	free(re->in_set);
	free(re);
}

/* ---- emit ---- */

/* The pattern inside a comment, as regex source that means the same:
 * controls and line separators as escapes, and a '/' beside a '*' as \x2f,
 * so the comment neither ends nor nests. */
static void emit_pattern_text(struct sc_out *o, const char *pattern)
{
	const unsigned char *s = (const unsigned char *)pattern;
	for (size_t i = 0; s[i]; i++) {
		bool escaped_slash = s[i] == '\\' && s[i + 1] == '/';
		size_t slash = escaped_slash ? i + 1 : i;
		if (s[slash] == '/' && ((i > 0 && s[i - 1] == '*') || s[slash + 1] == '*')) {
			out_raw(o, "\\x2f", 4);
			i = slash;
		} else if (s[i] == '\\' && s[i + 1]) {
			out_raw(o, (const char *)s + i, 2); /* keeps \\ from pairing with what follows */
			i++;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			static const char names[] = "btnvfr"; /* \b is U+0008 only in a class */
			if (s[i] >= '\t' && s[i] <= '\r')
				out_f(o, "\\%c", names[s[i] - '\b']);
			else
				out_f(o, "\\x%02x", s[i]);
		} else if (s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) {
			out_f(o, "\\u%04x", s[i + 1]); /* C1 controls: invisible */
			i++;
		} else if (s[i] == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			out_f(o, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029); /* line breaks to some editors */
			i += 2;
		} else {
			out_raw(o, (const char *)s + i, 1);
		}
	}
}

/* One code point in a comment: printable ASCII as itself, else U+XXXX. */
static void emit_cp(struct sc_out *o, uint32_t cp)
{
	if (cp > 0x20 && cp < 0x7f && !strchr("\\?*/\"", (int)cp))
		out_f(o, "%c", (char)cp);
	else
		out_f(o, "U+%04X", (unsigned)cp);
}

/* The current indent, for lines written in pieces with out_f. */
static void indent(struct sc_out *o)
{
	for (int k = 0; k < o->indent; k++)
		out_raw(o, "\t", 1);
}

static const char *uint_type(size_t max)
{
	return max > 65535 ? "uint32_t" : max > 255 ? "uint16_t" : "uint8_t";
}

static void emit_classes(const struct sc_regex *re, struct sc_out *o)
{
	out_line(o, "/* Code-point classes (the pattern never tells apart two code points");
	out_line(o, " * of one class); a code point c >= from[i] and < from[i + 1] is in");
	out_line(o, " * class cls[i].");
	for (size_t c = 0; c < re->nclasses; c++) {
		indent(o);
		out_f(o, " *   %zu:", c);
		size_t shown = 0;
		for (size_t i = 0; i < re->nranges; i++) {
			if (re->cls[i] != c)
				continue;
			if (shown++ == 6) {
				out_f(o, " ...");
				break;
			}
			uint32_t hi = i + 1 < re->nranges ? re->from[i + 1] - 1 : CP_MAX;
			out_raw(o, " ", 1);
			emit_cp(o, re->from[i]);
			if (hi != re->from[i]) {
				out_raw(o, "-", 1);
				emit_cp(o, hi);
			}
		}
		out_raw(o, "\n", 1);
	}
	out_line(o, " */");
	indent(o);
	out_f(o, "static const uint32_t from[%zu] = {", re->nranges);
	for (size_t i = 0; i < re->nranges; i++)
		out_f(o, "%s0x%x", i ? ", " : "", (unsigned)re->from[i]);
	out_f(o, "};\n");
	indent(o);
	out_f(o, "static const %s cls[%zu] = {", uint_type(re->nclasses - 1), re->nranges);
	for (size_t i = 0; i < re->nranges; i++)
		out_f(o, "%s%u", i ? ", " : "", (unsigned)re->cls[i]);
	out_f(o, "};\n");
}

/* Reads one UTF-8 code point into c and finds its class k. */
static void emit_read_class(struct sc_out *o, const struct sc_regex *re)
{
	out_line(o, "uint32_t c = (unsigned char)s[i++];");
	out_open(o, "if (c >= 0x80) { /* UTF-8: the lead byte tells how many bytes follow */");
	out_line(o, "int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;");
	out_line(o, "c &= 0x3fu >> more;");
	out_line(o, "for (; more > 0 && i < n; more--)");
	out_line(o, "\tc = c << 6 | ((unsigned char)s[i++] & 0x3fu);");
	out_close(o, "}");
	out_line(o, "size_t lo = 0, hi = %zu; /* the last range starting at or below c */", re->nranges - 1);
	out_open(o, "while (lo < hi) {");
	out_line(o, "size_t mid = (lo + hi + 1) / 2;");
	out_line(o, "if (from[mid] <= c)");
	out_line(o, "\tlo = mid;");
	out_line(o, "else");
	out_line(o, "\thi = mid - 1;");
	out_close(o, "}");
	out_line(o, "unsigned k = cls[lo];");
}

/* A shortest input reaching state s, as comment text. */
static void emit_state_label(struct sc_out *o, const struct sc_regex *re, uint32_t s)
{
	if (s == 0) {
		out_f(o, "no match possible");
		return;
	}
	if (s == 1) {
		out_f(o, "matched");
		return;
	}
	uint32_t path[24]; /* the last code points of the way, backwards */
	size_t len = 0, total = 0;
	for (uint32_t t = s; t != re->start; t = re->parent[t], total++)
		if (len < 24)
			path[len++] = re->via[t];
	if (total == 0) {
		out_f(o, "start");
	} else {
		out_f(o, "after %s\"", total > len ? "..." : "");
		for (size_t k = len; k-- > 0;)
			emit_cp(o, re->rep[path[k]]);
		out_f(o, "\"");
	}
	if (re->end_ok[s])
		out_f(o, ", a match if the input ends");
}

static void emit_dfa(const struct sc_regex *re, struct sc_out *o)
{
	size_t n = re->nstates, nc = re->nclasses;
	const char *type = uint_type(n - 1);
	bool any_end = false;
	for (size_t s = 2; s < n; s++)
		any_end |= re->end_ok[s];
	emit_classes(re, o);
	out_line(o, "/* next[state][class]: 0 no match possible, 1 matched, %zu start. */", re->start);
	out_open(o, "static const %s next[%zu][%zu] = {", type, n, nc);
	for (uint32_t s = 0; s < n; s++) {
		indent(o);
		out_f(o, "{");
		for (size_t c = 0; c < nc; c++)
			out_f(o, "%s%u", c ? ", " : "", (unsigned)re->next[s * nc + c]);
		out_f(o, "}, /* %u: ", (unsigned)s);
		emit_state_label(o, re, s);
		out_f(o, " */\n");
	}
	out_close(o, "};");
	if (any_end) {
		indent(o);
		out_f(o, "static const bool end_ok[%zu] = {", n);
		for (size_t s = 0; s < n; s++)
			out_f(o, "%s%d", s ? ", " : "", re->end_ok[s]);
		out_f(o, "};\n");
	}
	out_line(o, "unsigned st = %zu;", re->start);
	out_line(o, "size_t i = 0;");
	out_open(o, "while (i < n && st > 1) {");
	emit_read_class(o, re);
	out_line(o, "st = next[st][k];");
	out_close(o, "}");
	out_line(o, any_end ? "return end_ok[st];" : "return st == 1;");
}

/* A table of integers, 16 a line, in the smallest type that holds them. */
static void emit_int_table(struct sc_out *o, const char *name, const int *v, size_t n)
{
	int max = 0;
	for (size_t k = 0; k < n; k++)
		max = v[k] > max ? v[k] : max;
	out_open(o, "static const %s %s[%zu] = {", uint_type((size_t)max), name, n ? n : 1);
	for (size_t k = 0; k < n; k += 16) {
		indent(o);
		for (size_t j = k; j < n && j < k + 16; j++)
			out_f(o, "%d,%s", v[j], j + 1 < n && j + 1 < k + 16 ? " " : "\n");
	}
	if (n == 0)
		out_line(o, "0,");
	out_close(o, "};");
}

static void emit_nfa(const struct sc_regex *re, struct sc_out *o)
{
	const struct pa *pa = &re->pa;
	size_t words = (pa->n + 63) / 64, nc = re->nclasses;
	emit_classes(re, o);
	out_line(o, "/* Position p steps on the classes in_set[set_of[p]] to the positions");
	out_line(o, " * succ[first[p]] .. succ[first[p + 1] - 1]; flags[p]: 1 that step");
	out_line(o, " * is a match, 2 a match if the input ends after it. */");
	emit_int_table(o, "set_of", pa->set, pa->n);
	int *flags = xcalloc(pa->n, sizeof *flags);
	for (size_t p = 0; p < pa->n; p++)
		flags[p] = pa->flags[p];
	emit_int_table(o, "flags", flags, pa->n);
	free(flags);
	emit_int_table(o, "first", pa->first, pa->n + 1);
	emit_int_table(o, "succ", pa->succ, pa->nsucc);
	out_open(o, "static const bool in_set[%zu][%zu] = {", re->nsets, nc);
	for (size_t s = 0; s < re->nsets; s++) {
		indent(o);
		out_f(o, "{");
		for (size_t c = 0; c < nc; c++)
			out_f(o, "%s%d", c ? ", " : "", re->in_set[s * nc + c]);
		out_f(o, "},\n");
	}
	out_close(o, "};");
	indent(o);
	out_f(o, "uint64_t cur[%zu] = {", words);
	uint64_t *init = xcalloc(words, sizeof *init);
	for (size_t k = 0; k < pa->ninit; k++)
		init[pa->init[k] / 64] |= (uint64_t)1 << (pa->init[k] % 64);
	for (size_t w = 0; w < words; w++)
		out_f(o, "%s0x%llxu", w ? ", " : "", (unsigned long long)init[w]);
	free(init);
	out_f(o, "}, nxt[%zu];\n", words);
	out_line(o, "bool end_ok = %s, live = true;", pa->init_flags & PA_END ? "true" : "false");
	out_line(o, "size_t i = 0;");
	out_open(o, "while (i < n && live) {");
	emit_read_class(o, re);
	out_line(o, "end_ok = live = false;");
	out_line(o, "for (size_t w = 0; w < %zu; w++)", words);
	out_line(o, "\tnxt[w] = 0;");
	out_open(o, "for (size_t w = 0; w < %zu; w++) {", words);
	out_open(o, "for (unsigned b = 0; b < 64 && cur[w] >> b; b++) { /* up to the highest bit set */");
	out_line(o, "size_t p = w * 64 + b;");
	out_line(o, "if (!(cur[w] >> b & 1) || !in_set[set_of[p]][k])");
	out_line(o, "\tcontinue;");
	out_line(o, "if (flags[p] & 1)");
	out_line(o, "\treturn true;");
	out_line(o, "end_ok |= (flags[p] & 2) != 0;");
	out_line(o, "for (size_t e = first[p]; e < first[p + 1]; e++)");
	out_line(o, "\tnxt[succ[e] / 64] |= (uint64_t)1 << (succ[e] %% 64);");
	out_close(o, "}");
	out_close(o, "}");
	out_open(o, "for (size_t w = 0; w < %zu; w++) {", words);
	out_line(o, "cur[w] = nxt[w];");
	out_line(o, "live |= cur[w] != 0;");
	out_close(o, "}");
	out_close(o, "}");
	out_line(o, "return i == n && end_ok;");
}

void regex_emit(const struct sc_regex *re, const char *fn_name, struct sc_out *o)
{
	bool trivial = re->mode == RE_DFA && re->start < 2;
	out_line(o, "/* Matches the pattern anywhere in the UTF-8 string s[0..n):");
	indent(o);
	out_f(o, " *   `");
	emit_pattern_text(o, re->pattern);
	out_f(o, "`\n");
	if (trivial) {
		out_line(o, " * %s string matches it. */", re->start ? "Every" : "No");
	} else if (re->mode == RE_DFA) {
		out_line(o, " * A DFA of %zu states over %zu code-point classes: linear, no backtracking. */",
		         re->nstates, re->nclasses);
	} else {
		out_line(o, " * NFA simulation (%zu positions as a bit set; the DFA would pass %d", re->pa.n, DFA_MAX_STATES);
		out_line(o, " * states): linear, no backtracking. */");
	}
	out_line(o, "static bool %s(const char *s, size_t n)", fn_name);
	out_open(o, "{");
	if (trivial) {
		out_line(o, "(void)s;");
		out_line(o, "(void)n;");
		out_line(o, "return %s;", re->start ? "true" : "false");
	} else if (re->mode == RE_DFA) {
		emit_dfa(re, o);
	} else {
		emit_nfa(re, o);
	}
	out_close(o, "}");
}
