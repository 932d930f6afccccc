/* Helpers over trees built by the reader (json_read.c): JSON Schema
 * equality for enum, const and uniqueItems, member lookup, and the code
 * point count behind minLength/maxLength. They never allocate. */
#include "json_read.h"

/* An integer literal equals a double only if the double is that integer
 * exactly: 2^63 as a double equals no int64, 1.5 equals no integer. */
static bool int_equals_double(int64_t i, double d)
{
	if (!(d >= -0x1p63 && d < 0x1p63))
		return false; /* out of range (or NaN): the cast below would be UB */
	int64_t t = (int64_t)d;
	return (double)t == d && t == i;
}

static bool number_equal(const ig_json_value *a, const ig_json_value *b)
{
	if (a->type == IG_JSON_INT && b->type == IG_JSON_INT)
		return a->i == b->i;
	if (a->type == IG_JSON_NUMBER && b->type == IG_JSON_NUMBER)
		return a->d == b->d; /* -0.0 == 0.0: the same number */
	return a->type == IG_JSON_INT ? int_equals_double(a->i, b->d)
				      : int_equals_double(b->i, a->d);
}

static bool is_number(enum ig_json_type t)
{
	return t == IG_JSON_INT || t == IG_JSON_NUMBER;
}

static bool str_equal(ig_str a, ig_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Keys are unique in both (the reader rejects duplicates), so with equal
 * sizes, finding each key of a in b proves the key sets equal. Members in
 * the same order are matched without a search. */
static bool object_equal(const ig_json_value *a, const ig_json_value *b)
{
	size_t n = a->object.len;
	if (n != b->object.len)
		return false;
	for (size_t i = 0; i < n; i++) {
		const ig_json_member *m = &a->object.members[i];
		const ig_json_value *other;
		if (str_equal(m->key, b->object.members[i].key))
			other = b->object.members[i].value;
		else
			other = ig_json_get(b, m->key.ptr, m->key.len);
		if (!other || !ig_json_equal(m->value, other))
			return false;
	}
	return true;
}

bool ig_json_equal(const ig_json_value *a, const ig_json_value *b)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	if (is_number(a->type) && is_number(b->type))
		return number_equal(a, b);
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case IG_JSON_NULL:
		return true;
	case IG_JSON_BOOL:
		return a->b == b->b;
	case IG_JSON_STRING:
		return str_equal(a->s, b->s);
	case IG_JSON_ARRAY:
		if (a->array.len != b->array.len)
			return false;
		for (size_t i = 0; i < a->array.len; i++)
			if (!ig_json_equal(a->array.items[i], b->array.items[i]))
				return false;
		return true;
	case IG_JSON_OBJECT:
		return object_equal(a, b);
	default:
		return false; /* numbers were handled above */
	}
}

const ig_json_value *ig_json_get(const ig_json_value *object, const char *key, size_t key_len)
{
	if (!object || object->type != IG_JSON_OBJECT)
		return NULL;
	ig_str k = { key, key_len };
	for (size_t i = 0; i < object->object.len; i++)
		if (str_equal(object->object.members[i].key, k))
			return object->object.members[i].value;
	return NULL;
}

IG_HOT size_t ig_utf8_length(const char *s, size_t n)
{
	/* Valid UTF-8: every byte but a continuation byte (10xxxxxx) starts a
	 * code point. Eight bytes at a time: a lane's top bit is set when its
	 * bit 7 is set and bit 6 clear; the multiply adds the lanes. This runs
	 * for every minLength/maxLength check on the request path. */
	size_t cont = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		uint64_t c = (w & ~(w << 1) & 0x8080808080808080ull) >> 7;
		cont += (size_t)((c * 0x0101010101010101ull) >> 56);
	}
	for (; i < n; i++)
		cont += ((unsigned char)s[i] & 0xc0) == 0x80;
	return n - cont;
}
