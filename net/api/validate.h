/* What the generated validators (validate_<name> in api.c, and schemac
 * --validator files) call: the location of a value, error reporting with
 * a JSON pointer made only when an error is reported, JSON Schema's number
 * comparisons and exact multipleOf, and uniqueItems. The body decoders
 * (decode.h) report through the same context. */
#ifndef NET_API_VALIDATE_H
#define NET_API_VALIDATE_H

#include "kernel/runtime/json_read.h"

#include <math.h>

/* Where a value sits: a chain of keys and indexes up to the document's
 * root, on the stack; it becomes a JSON pointer only when an error is
 * reported. NULL is the root. */
struct ig_where {
	const struct ig_where *up;
	const char *key; /* NULL: an array element, its index in len */
	size_t len;
};

/* Receives one violation: pointer is a JSON pointer (RFC 6901, "" for the
 * root), keyword the JSON Schema keyword, message a sentence for people. */
typedef void ig_report_fn(void *arg, const char *pointer, const char *keyword, const char *message);

/* One validation: where errors go, and whether they are wanted. */
struct ig_vctx {
	ig_report_fn *report;
	void *arg;
	ig_arena *arena; /* scratch memory (uniqueItems); NULL: pairwise comparison */
	bool quiet;      /* inside anyOf/oneOf/not/if: the first failure ends it, unreported */
	unsigned depth;  /* $ref nesting, against schemas that refer to themselves */
	size_t failures;
};

/* A generated validator: true when v is valid at `at`. */
typedef bool ig_validate_fn(const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at);

/* The JSON pointer of at into buf (NUL-terminated); cut short if it does
 * not fit cap. Returns its length. */
size_t ig_pointer_text(const struct ig_where *at, char *buf, size_t cap);

/* Records a violation (x->failures counts it). Returns true when
 * validation goes on (reporting), false when it stops here (quiet). */
bool ig_fail(struct ig_vctx *x, const struct ig_where *at, const char *keyword, const char *message);

/* A quiet copy of x for one branch of anyOf/oneOf/not/if: no reports, its
 * own failure count, the same arena and depth. */
static inline struct ig_vctx ig_quietly(const struct ig_vctx *x)
{
	struct ig_vctx q = *x;
	q.quiet = true;
	q.failures = 0;
	return q;
}

/* A $ref: the only way a schema can reach itself without going deeper
 * into the value, so the only place that counts depth (at most 128; past
 * it, a "$ref" failure and false). */
bool ig_via_ref(ig_validate_fn *fn, const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at);

/* JSON Schema's integer: any number with no fraction (1.0 is one). */
static inline bool ig_is_integer(const ig_json_value *v)
{
	return v->type == IG_JSON_INT || (v->type == IG_JSON_NUMBER && v->d == floor(v->d));
}

/* -1, 0 or 1 as the number v is below, at or above a bound: d, held
 * exactly in i when is_int. Integers compare exactly (no rounding through
 * double). v must be IG_JSON_INT or IG_JSON_NUMBER. */
int ig_compare_number(const ig_json_value *v, double d, bool is_int, int64_t i);

/* Whether the number written raw (JSON number syntax) is a multiple of
 * digits * 10^-scale, exactly: decimal arithmetic on the literal, so
 * 0.0075 is a multiple of 0.0001, and 1e308 is tested against 0.123456789
 * without overflow. digits > 0. */
bool ig_decimal_multiple(ig_str raw, uint64_t digits, int scale);

/* Whether v is a multiple of m, a schema's integer multipleOf (m > 0). */
static inline bool ig_int_multiple(int64_t v, int64_t m)
{
	return v % m == 0;
}

/* FNV-1a over n bytes: the hash of strings in the uniqueItems and
 * duplicate-key sets. */
uint64_t ig_bytes_hash(const char *s, size_t n);

/* uniqueItems: true when no two of the n items are equal (ig_json_equal
 * for values: 1 and 1.0 are equal, member order does not matter). With an
 * arena and more than 16 items, a hash table in it; else pairwise. */
bool ig_unique_values(ig_json_value *const *items, size_t n, ig_arena *a);
bool ig_unique_strings(const ig_str *items, size_t n, ig_arena *a);
bool ig_unique_ints(const int64_t *items, size_t n, ig_arena *a);
bool ig_unique_doubles(const double *items, size_t n, ig_arena *a);
bool ig_unique_bools(const bool *items, size_t n);

#endif
