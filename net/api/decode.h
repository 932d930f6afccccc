/* What the generated body decoders (decode_<name> in api.c) call: one
 * pass from the request body's bytes into C structs with the pull reader
 * (json_read.h), in the reader's arena. A value of the wrong type is one
 * "type" violation (reported through the validation context, validate.h)
 * and is skipped, so every other violation is still reported; broken JSON
 * stops the reader (its first error is the one answered). */
#ifndef NET_API_DECODE_H
#define NET_API_DECODE_H

#include "validate.h"

/* A request body being decoded. */
struct ig_dctx {
	ig_json_reader *r;
	struct ig_vctx v; /* where violations go */
	bool check;       /* constraints too (false: x-ingot-validate: false, types only) */
};

/* What comes next; the end of the input where a value belongs is an error
 * (IG_JN_ERROR, the reader failed). */
static inline enum ig_json_next ig_next_value(struct ig_dctx *d)
{
	enum ig_json_next k = ig_jr_peek(d->r);
	if (k == IG_JN_END) {
		ig_jr_fail(d->r, "unexpected end of input");
		return IG_JN_ERROR;
	}
	return k;
}

/* The next value (of kind k) is not of the schema's type: one "type"
 * violation with message at `at`, and the value is skipped (unless the
 * JSON itself is broken there). Returns false. */
bool ig_type_error(struct ig_dctx *d, const struct ig_where *at, enum ig_json_next k, const char *message);

/* Typed reads: true with *out set, or false after a type violation
 * (message is its text) or a reader error. An integer is within int64
 * (1.0 and 1e2 are integers too; outside the range is a violation, never
 * wrapped); num keeps the literal for exact multipleOf checks. */
bool ig_read_string(struct ig_dctx *d, const struct ig_where *at, ig_str *out, const char *message);
bool ig_read_integer(struct ig_dctx *d, const struct ig_where *at, int64_t *out, ig_json_value *num,
		     const char *message);
bool ig_read_number(struct ig_dctx *d, const struct ig_where *at, double *out, ig_json_value *num,
		    const char *message);
bool ig_read_boolean(struct ig_dctx *d, const struct ig_where *at, bool *out, const char *message);

/* A null where a nullable value sits: consumed, and true. */
static inline bool ig_read_null(struct ig_dctx *d)
{
	return ig_jr_peek(d->r) == IG_JN_NULL && ig_jr_null(d->r);
}

/* A free-form value as a tree, checked by validate (NULL: any value; not
 * checked when d->check is false). NULL when the reader failed. */
ig_json_value *ig_read_value(struct ig_dctx *d, const struct ig_where *at, ig_validate_fn *validate);

/* Enters an object or array, or a type violation (false). */
bool ig_begin_object(struct ig_dctx *d, const struct ig_where *at, const char *message);
bool ig_begin_array(struct ig_dctx *d, const struct ig_where *at, const char *message);

/* Room for item len of an array of items of size bytes with *cap room:
 * items itself, or a copy twice the size (zeroed past len) in the arena,
 * *cap updated. NULL (the reader fails "out of memory") when the arena is
 * full. */
void *ig_grow_items(struct ig_dctx *d, void *items, size_t len, size_t *cap, size_t size);

/* The keys of an object that are not properties, to reject duplicates: a
 * hash set in the arena. Starts zeroed ({ NULL, 0, 0 }). */
struct ig_keyset {
	ig_str *slots;
	size_t cap, n;
};

/* Adds key; false (the reader fails "duplicate key", or "out of memory")
 * when it was there. */
bool ig_keyset_add(struct ig_dctx *d, struct ig_keyset *ks, ig_str key);

#endif
