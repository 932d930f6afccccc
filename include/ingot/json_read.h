/* The project's validating JSON reader, used on the request path by the
 * generated decoders and for free-form values, and by the Lambda runtime
 * (net/lambda) for its events; it lives in kernel/ so that both the api
 * runtime and net/ sit above it. It reads straight from the
 * request body, allocates only in the request arena, and is strict where
 * general-purpose parsers are lenient: UTF-8 is validated, every escape
 * (surrogate pairs too) is decoded, duplicate keys in a free-form object
 * are an error, nesting is limited, integers outside int64 are reported,
 * never wrapped, and doubles are correctly rounded.
 *
 * Two ways to use it:
 *  - pull: generated decoders walk the document with the ig_jr_* calls
 *    below, decoding into C structs as they go;
 *  - tree: ig_jr_value() builds an ig_json_value (tagged, in the arena) for
 *    schemas without a type, {} and additionalProperties.
 * After the first error every call returns false (or NULL) and the reader
 * keeps the first error's message (a static string) and byte offset.
 * Nesting is iterative, never recursive: max_depth is policy, not a stack
 * hazard. The reader reads only [buf, buf + len); the buffer needs no NUL.
 *
 * Ownership: the reader borrows buf, which must stay valid (and unchanged)
 * while the reader and the strings and values it returns are used: an
 * unescaped string is a slice of it. Everything else it returns lives in
 * its arena. A reader is used by one thread; it holds no other resource
 * and needs no cleanup. */
#ifndef INGOT_JSON_READ_H
#define INGOT_JSON_READ_H

#include "ingot/base.h"

/* ---- the tagged value ---- */
/* Which member of an ig_json_value holds it. */
enum ig_json_type {
	IG_JSON_NULL,
	IG_JSON_BOOL,
	IG_JSON_INT,    /* an integer literal (no fraction, no exponent) within int64 */
	IG_JSON_NUMBER, /* any other number: double, correctly rounded */
	IG_JSON_STRING, /* unescaped, valid UTF-8 */
	IG_JSON_ARRAY,
	IG_JSON_OBJECT, /* members in document order, keys unique */
};

/* A value of the tree form (ig_jr_value), in the reader's arena. */
typedef struct ig_json_value ig_json_value;

/* An object's member: key (decoded) and value. */
typedef struct ig_json_member {
	ig_str key;
	ig_json_value *value;
} ig_json_member;

struct ig_json_value {
	enum ig_json_type type;
	ig_str raw; /* the value's text as written (numbers: for exact checks);
		     * the reader sets it for every type */
	union {
		bool b;
		int64_t i;
		double d;
		ig_str s;
		struct { ig_json_value **items; size_t len; } array;
		struct { ig_json_member *members; size_t len; } object;
	};
};

/* JSON Schema equality (enum, const, uniqueItems): numbers compare by
 * mathematical value (1 == 1.0), objects regardless of member order. An
 * INT and a NUMBER compare exactly (2^63 as a NUMBER equals no INT); two
 * NUMBERs compare as their correctly rounded doubles. Allocates nothing;
 * pure. A NULL is equal only to itself. */
bool ig_json_equal(const ig_json_value *a, const ig_json_value *b);
/* Number of Unicode code points in s[0..n), which must be valid UTF-8
 * (ig_utf8_valid). Pure. */
size_t ig_utf8_length(const char *s, size_t n);
/* True iff s[0..n) is UTF-8 by the reader's rules (no overlongs, no
 * surrogates, nothing above U+10FFFF). */
bool ig_utf8_valid(const char *s, size_t n);
/* The member of object (an IG_JSON_OBJECT) with this key. Returns: its
 * value, owned as object is; NULL when there is none, or object is NULL
 * or not an object. Pure. */
const ig_json_value *ig_json_get(const ig_json_value *object, const char *key, size_t key_len);

/* ---- the reader ----
 * The caller's (on its stack, usually); set up by ig_jr_init. Its fields
 * are read-only to the caller but for error and error_offset, which it
 * reads after a failure. */
typedef struct ig_json_reader {
	const char *start, *p, *end;
	ig_arena *arena;
	int depth, max_depth; /* open arrays/objects; one more than max_depth is
			       * an error, so max_depth 0 admits scalars only */
	const char *error; /* NULL while all is well; a static message */
	size_t error_offset;
} ig_json_reader;

/* What ig_jr_peek sees next. */
enum ig_json_next {
	IG_JN_ERROR,
	IG_JN_END, /* no value follows (end of input) */
	IG_JN_NULL,
	IG_JN_FALSE,
	IG_JN_TRUE,
	IG_JN_NUMBER,
	IG_JN_STRING,
	IG_JN_ARRAY,
	IG_JN_OBJECT,
};

/* Sets r up to read buf[0..len) (buf may be NULL: an empty input),
 * allocating from arena, with at most max_depth open arrays and objects.
 * Cannot fail. */
IG_NONNULL(1) void ig_jr_init(ig_json_reader *r, const char *buf, size_t len, ig_arena *arena, int max_depth);

/* What the next value is, after whitespace, without consuming it. A byte
 * that cannot start a value is IG_JN_ERROR with the error set. */
IG_NONNULL(1) enum ig_json_next ig_jr_peek(ig_json_reader *r);

/* Objects: begin consumes '{'; each next_key call consumes the separator
 * and returns true with the next key (and its ':'), or false at '}' (which
 * it consumes) or on error (check r->error). Keys are decoded like strings.
 * The reader keeps no per-level state (it tells a first member by the '{'
 * or '[' just before it), so read or skip each value before calling next. */
IG_NONNULL(1) bool ig_jr_object_begin(ig_json_reader *r);
IG_NONNULL(1, 2) bool ig_jr_object_next_key(ig_json_reader *r, ig_str *key);

/* Arrays: begin consumes '['; next returns true if an element follows (the
 * caller then reads it), false at ']' (consumed) or on error. */
IG_NONNULL(1) bool ig_jr_array_begin(ig_json_reader *r);
IG_NONNULL(1) bool ig_jr_array_next(ig_json_reader *r);

/* Scalars. Each returns true with *out set, or fails (false, error set,
 * *out untouched) when the next value has another type; callers peek
 * first when more than one type is allowed. */
IG_NONNULL(1) bool ig_jr_null(ig_json_reader *r);
IG_NONNULL(1, 2) bool ig_jr_bool(ig_json_reader *r, bool *out);
/* A string is a slice of the input when it has no escapes, else decoded
 * into the arena; either way valid UTF-8 (it may contain NUL bytes). */
IG_NONNULL(1, 2) bool ig_jr_string(ig_json_reader *r, ig_str *out);

/* Numbers. ig_jr_number reads any number into *out as a value: INT when
 * it is an integer literal within int64, else NUMBER (a double). A number
 * whose magnitude overflows a double is an error. */
IG_NONNULL(1, 2) bool ig_jr_number(ig_json_reader *r, ig_json_value *out);

/* Reads any value as a tree. Returns: the tree, in the arena; NULL on error
 * (a repeated key in an object, compared after decoding, is the error
 * "duplicate key"; so is a full arena). To skip a value, ig_jr_skip. */
IG_MUST_USE IG_NONNULL(1) ig_json_value *ig_jr_value(ig_json_reader *r);

/* Consumes and validates one value of any type without building it: the
 * same checks as ig_jr_value but for repeated keys. Allocates only for
 * nesting beyond 256 levels or a number literal of 64 bytes or more near
 * the double range's edge. */
IG_NONNULL(1) bool ig_jr_skip(ig_json_reader *r);

/* True if only whitespace remains; else sets the error. */
IG_NONNULL(1) bool ig_jr_finish(ig_json_reader *r);

/* Sets the error (if none yet) at the current position; message is kept,
 * not copied (a literal). Returns false, so that `return ig_jr_fail(...)`
 * ends a decoder. */
IG_NONNULL(1, 2) bool ig_jr_fail(ig_json_reader *r, const char *message);

/* The JSON pointer of the current position is the caller's business: the
 * generated decoders know their path; the reader reports a byte offset. */

#endif
