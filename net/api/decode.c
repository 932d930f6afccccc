/* Body decoding support for the generated decode_<name> functions
 * (decode.h): typed reads with one type error per wrong value (then
 * skipped, so decoding goes on), free-form values through their
 * validator, arrays that grow in the arena, and the set of keys that
 * rejects a duplicate. */
#include "decode.h"
#include "kernel/runtime/arena.h"

#include <string.h>

/* The next value is not of the schema's type: one error, and the value
 * is skipped (unless the JSON itself is broken there). */
bool ig_type_error(struct ig_dctx *d, const struct ig_where *at, enum ig_json_next k, const char *message)
{
	if (k != IG_JN_ERROR) {
		ig_fail(&d->v, at, "type", message);
		ig_jr_skip(d->r);
	}
	return false;
}

IG_HOT bool ig_read_string(struct ig_dctx *d, const struct ig_where *at, ig_str *out, const char *message)
{
	enum ig_json_next k = ig_next_value(d);
	if (k != IG_JN_STRING)
		return ig_type_error(d, at, k, message);
	return ig_jr_string(d->r, out);
}

/* Any number into num, or a type violation. */
static bool read_json_number(struct ig_dctx *d, const struct ig_where *at, ig_json_value *num, const char *message)
{
	enum ig_json_next k = ig_next_value(d);
	if (k != IG_JN_NUMBER)
		return ig_type_error(d, at, k, message);
	return ig_jr_number(d->r, num);
}

/* An integer within int64 (1.0 and 1e2 are integers too); num keeps the
 * literal for exact multipleOf checks. */
IG_HOT bool ig_read_integer(struct ig_dctx *d, const struct ig_where *at, int64_t *out, ig_json_value *num,
		     const char *message)
{
	if (!read_json_number(d, at, num, message))
		return false;
	if (num->type == IG_JSON_INT) {
		*out = num->i;
		return true;
	}
	if (num->d != floor(num->d)) {
		ig_fail(&d->v, at, "type", message);
		return false;
	}
	if (num->d < -0x1p63 || num->d >= 0x1p63) {
		ig_fail(&d->v, at, "type", "must be an integer within the 64-bit range");
		return false;
	}
	*out = (int64_t)num->d;
	return true;
}

bool ig_read_number(struct ig_dctx *d, const struct ig_where *at, double *out, ig_json_value *num,
		    const char *message)
{
	if (!read_json_number(d, at, num, message))
		return false;
	*out = num->type == IG_JSON_INT ? (double)num->i : num->d;
	return true;
}

bool ig_read_boolean(struct ig_dctx *d, const struct ig_where *at, bool *out, const char *message)
{
	enum ig_json_next k = ig_next_value(d);
	if (k != IG_JN_TRUE && k != IG_JN_FALSE)
		return ig_type_error(d, at, k, message);
	return ig_jr_bool(d->r, out);
}

/* A free-form value, checked by its validator (NULL: any value). */
ig_json_value *ig_read_value(struct ig_dctx *d, const struct ig_where *at, ig_validate_fn *validate)
{
	if (ig_next_value(d) == IG_JN_ERROR)
		return NULL;
	ig_json_value *v = ig_jr_value(d->r);
	if (v && validate && d->check)
		validate(v, &d->v, at);
	return v;
}

IG_HOT bool ig_begin_object(struct ig_dctx *d, const struct ig_where *at, const char *message)
{
	enum ig_json_next k = ig_next_value(d);
	if (k != IG_JN_OBJECT)
		return ig_type_error(d, at, k, message);
	return ig_jr_object_begin(d->r);
}

IG_HOT bool ig_begin_array(struct ig_dctx *d, const struct ig_where *at, const char *message)
{
	enum ig_json_next k = ig_next_value(d);
	if (k != IG_JN_ARRAY)
		return ig_type_error(d, at, k, message);
	return ig_jr_array_begin(d->r);
}

/* Room for one more item: the array doubles (zeroed) in the arena. */
IG_HOT void *ig_grow_items(struct ig_dctx *d, void *items, size_t len, size_t *cap, size_t size)
{
	if (len < *cap)
		return items;
	size_t n = *cap ? *cap * 2 : 4;
	char *p = ig_arena_alloc(d->r->arena, n * size);
	if (!p) {
		ig_jr_fail(d->r, "out of memory");
		return NULL;
	}
	if (len)
		memcpy(p, items, len * size);
	memset(p + len * size, 0, (n - len) * size);
	*cap = n;
	return p;
}


static bool keyset_insert(ig_str *slots, size_t cap, ig_str key)
{
	size_t h = (size_t)ig_bytes_hash(key.ptr, key.len) & (cap - 1);
	for (; slots[h].ptr; h = (h + 1) & (cap - 1))
		if (slots[h].len == key.len && memcmp(slots[h].ptr, key.ptr, key.len) == 0)
			return false;
	slots[h] = key;
	return true;
}

/* False (with the reader's error set) for a duplicate key. */
bool ig_keyset_add(struct ig_dctx *d, struct ig_keyset *ks, ig_str key)
{
	if (!key.ptr)
		key.ptr = "";
	if (2 * (ks->n + 1) > ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 16;
		ig_str *slots = ig_arena_alloc(d->r->arena, cap * sizeof *slots);
		if (!slots) {
			ig_jr_fail(d->r, "out of memory");
			return false;
		}
		memset(slots, 0, cap * sizeof *slots);
		for (size_t i = 0; i < ks->cap; i++)
			if (ks->slots[i].ptr)
				keyset_insert(slots, cap, ks->slots[i]);
		ks->slots = slots;
		ks->cap = cap;
	}
	if (!keyset_insert(ks->slots, ks->cap, key)) {
		ig_jr_fail(d->r, "duplicate key");
		return false;
	}
	ks->n++;
	return true;
}
