/* Validation support for the generated code (validate.h): JSON pointers
 * made only when an error is reported, the failure rule of quiet and
 * reporting validations, $ref depth, exact number comparison and
 * multipleOf, and the uniqueItems sets (hashing that agrees with
 * ig_json_equal). */
#include "validate.h"
#include "kernel/runtime/arena.h"

#include <string.h>

/* The JSON pointer of at (RFC 6901) into buf; cut short if it does not fit. */
size_t ig_pointer_text(const struct ig_where *at, char *buf, size_t cap)
{
	if (!at) {
		buf[0] = 0;
		return 0;
	}
	size_t n = ig_pointer_text(at->up, buf, cap);
	char digits[24];
	const char *s = at->key;
	size_t len = at->len;
	if (!s) {
		len = ig_fmt_u64(digits, at->len);
		s = digits;
	}
	if (n + 1 < cap)
		buf[n++] = '/';
	for (size_t i = 0; i < len && n + 2 < cap; i++) {
		if (s[i] == '~' || s[i] == '/') {
			buf[n++] = '~';
			buf[n++] = s[i] == '~' ? '0' : '1';
		} else {
			buf[n++] = s[i];
		}
	}
	buf[n] = 0;
	return n;
}

/* Records a violation. Returns true when validation goes on (reporting),
 * false when it stops here (quiet). */
bool ig_fail(struct ig_vctx *x, const struct ig_where *at, const char *keyword, const char *message)
{
	x->failures++;
	if (x->quiet)
		return false;
	char pointer[512];
	ig_pointer_text(at, pointer, sizeof pointer);
	x->report(x->arg, pointer, keyword, message);
	return true;
}

/* A $ref: the only way a schema can reach itself without going deeper
 * into the value, so the only place that counts depth. */
bool ig_via_ref(ig_validate_fn *fn, const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at)
{
	if (x->depth >= 128) {
		ig_fail(x, at, "$ref", "the schema refers to itself too deeply");
		return false;
	}
	x->depth++;
	bool ok = fn(v, x, at);
	x->depth--;
	return ok;
}

/* -1, 0 or 1 as the number v is below, at or above a bound: d, held
 * exactly in i when is_int. Integers compare exactly. */
int ig_compare_number(const ig_json_value *v, double d, bool is_int, int64_t i)
{
	if (v->type == IG_JSON_INT) {
		if (is_int)
			return (v->i > i) - (v->i < i);
		if (d >= 0x1p63)
			return -1;
		if (d < -0x1p63)
			return 1;
		return v->i <= (int64_t)floor(d) ? -1 : 1; /* d has a fraction */
	}
	if (is_int && v->d >= -0x1p63 && v->d < 0x1p63) {
		double f = floor(v->d);
		int64_t fi = (int64_t)f;
		if (fi != i)
			return fi < i ? -1 : 1;
		return v->d > f ? 1 : 0;
	}
	return (v->d > d) - (v->d < d);
}

/* Whether the number written raw is a multiple of digits * 10^-scale,
 * exactly: decimal arithmetic on the literal, so 0.0075 is a multiple of
 * 0.0001, and 1e308 is tested against 0.123456789 without overflow. */
bool ig_decimal_multiple(ig_str raw, uint64_t digits, int scale)
{
	const char *p = raw.ptr, *end = raw.ptr + raw.len;
	if (p < end && *p == '-')
		p++;
	const char *first = p;
	size_t count = 0, zeros = 0; /* digit characters; trailing zeros among them */
	long exp = 0;
	bool fraction = false, nonzero = false;
	for (; p < end && ((*p >= '0' && *p <= '9') || *p == '.'); p++) {
		if (*p == '.') {
			fraction = true;
			continue;
		}
		count++;
		exp -= fraction;
		zeros = *p == '0' ? zeros + 1 : 0;
		nonzero |= *p != '0';
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool neg = ++p < end && *p == '-';
		if (p < end && (*p == '-' || *p == '+'))
			p++;
		long e = 0;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			if (e < 100000000)
				e = e * 10 + (*p - '0');
		exp += neg ? -e : e;
	}
	if (!nonzero)
		return true; /* zero is a multiple of everything */
	/* value / divisor = A * 10^k / digits, A the literal's digits */
	long k = exp + scale;
	size_t use = count;
	if (k < 0) {
		if ((long)zeros < -k)
			return false;
		use = count - (size_t)-k; /* A / 10^-k: drop that many zeros */
	}
	uint64_t rem = 0;
	for (p = first; use; p++) {
		if (*p == '.')
			continue;
		rem = (rem * 10 + (uint64_t)(*p - '0')) % digits;
		use--;
	}
	for (long i = 0; i < k && rem; i++)
		rem = rem * 10 % digits;
	return rem == 0;
}

/* ---- uniqueItems: hashing that agrees with ig_json_equal ---- */

uint64_t ig_bytes_hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

static uint64_t double_hash(double d)
{
	if (d == 0)
		return 0; /* 0 and -0 are equal */
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	return bits * 0x9e3779b97f4a7c15u;
}

static uint64_t value_hash(const ig_json_value *v)
{
	uint64_t h;
	switch (v->type) {
	case IG_JSON_BOOL:
		return v->b ? 2 : 3;
	case IG_JSON_INT:
		return double_hash((double)v->i);
	case IG_JSON_NUMBER:
		return double_hash(v->d);
	case IG_JSON_STRING:
		return ig_bytes_hash(v->s.ptr, v->s.len);
	case IG_JSON_ARRAY:
		h = 5;
		for (size_t i = 0; i < v->array.len; i++)
			h = h * 1099511628211u ^ value_hash(v->array.items[i]);
		return h;
	case IG_JSON_OBJECT:
		h = 7; /* a sum: member order does not matter */
		for (size_t i = 0; i < v->object.len; i++)
			h += ig_bytes_hash(v->object.members[i].key.ptr, v->object.members[i].key.len) * 31 +
			     value_hash(v->object.members[i].value);
		return h;
	default:
		return 1;
	}
}

typedef uint64_t item_hash_fn(const void *items, size_t i);
typedef bool item_equal_fn(const void *items, size_t i, size_t j);

/* Whether two of the n items are equal: a hash table in the arena, or
 * pairwise for a few items (or when memory is short). */
static bool has_duplicate(const void *items, size_t n, item_hash_fn *hash, item_equal_fn *equal, ig_arena *a)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	size_t *slots = n > 16 && a ? ig_arena_alloc(a, cap * sizeof *slots) : NULL;
	if (!slots) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (equal(items, i, j))
					return true;
		return false;
	}
	memset(slots, 0, cap * sizeof *slots);
	for (size_t i = 0; i < n; i++) {
		size_t h = (size_t)hash(items, i) & (cap - 1);
		for (; slots[h]; h = (h + 1) & (cap - 1))
			if (equal(items, slots[h] - 1, i))
				return true;
		slots[h] = i + 1;
	}
	return false;
}

static uint64_t value_hash_at(const void *items, size_t i)
{
	return value_hash(((ig_json_value *const *)items)[i]);
}

static bool value_equal_at(const void *items, size_t i, size_t j)
{
	ig_json_value *const *v = items;
	return ig_json_equal(v[i], v[j]);
}

bool ig_unique_values(ig_json_value *const *items, size_t n, ig_arena *a)
{
	return !has_duplicate(items, n, value_hash_at, value_equal_at, a);
}

static uint64_t string_hash_at(const void *items, size_t i)
{
	const ig_str *s = items;
	return ig_bytes_hash(s[i].ptr, s[i].len);
}

static bool string_equal_at(const void *items, size_t i, size_t j)
{
	const ig_str *s = items;
	return s[i].len == s[j].len && memcmp(s[i].ptr, s[j].ptr, s[i].len) == 0;
}

bool ig_unique_strings(const ig_str *items, size_t n, ig_arena *a)
{
	return !has_duplicate(items, n, string_hash_at, string_equal_at, a);
}

static uint64_t int_hash_at(const void *items, size_t i)
{
	return (uint64_t)((const int64_t *)items)[i] * 0x9e3779b97f4a7c15u;
}

static bool int_equal_at(const void *items, size_t i, size_t j)
{
	const int64_t *v = items;
	return v[i] == v[j];
}

bool ig_unique_ints(const int64_t *items, size_t n, ig_arena *a)
{
	return !has_duplicate(items, n, int_hash_at, int_equal_at, a);
}

static uint64_t double_hash_at(const void *items, size_t i)
{
	return double_hash(((const double *)items)[i]);
}

static bool double_equal_at(const void *items, size_t i, size_t j)
{
	const double *v = items;
	return v[i] == v[j];
}

bool ig_unique_doubles(const double *items, size_t n, ig_arena *a)
{
	return !has_duplicate(items, n, double_hash_at, double_equal_at, a);
}

bool ig_unique_bools(const bool *items, size_t n)
{
	bool seen[2] = { false, false };
	for (size_t i = 0; i < n; i++) {
		if (seen[items[i]])
			return false;
		seen[items[i]] = true;
	}
	return true;
}
