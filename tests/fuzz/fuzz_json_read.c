/* libFuzzer target for net/api/json_read: the tree builder, the skipper and a
 * pull walk read each input and must agree on validity, error and offset
 * (a repeated key is the builder's error alone); a valid tree is written
 * out canonically, must equal what the pull walk wrote, and must read back
 * into an equal tree. */

/* Build and run (seed corpus in tests/fuzz/json_read/):
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=undefined -I. \
 *     tests/fuzz/fuzz_json_read.c kernel/runtime/json_read.c kernel/runtime/json_value.c \
 *     kernel/runtime/arena.c kernel/runtime/pool.c -lm -o /tmp/fuzz_json_read
 *   /tmp/fuzz_json_read -max_total_time=60 /tmp/corpus tests/fuzz/json_read */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/json_read.h"
#include "kernel/runtime/pool.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_DEPTH = 32 };

static struct ig_pool blocks;

/* ---- a canonical writer (malloc is fine here: this is the harness) ---- */

struct out {
	char *p;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->cap - o->len < n) {
		while (o->cap - o->len < n)
			o->cap = o->cap ? o->cap * 2 : 256;
		o->p = realloc(o->p, o->cap);
		if (!o->p)
			abort();
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void put_string(struct out *o, ig_str s)
{
	put(o, "\"", 1);
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		char esc[8];
		if (c < 0x20 || c == '"' || c == '\\') {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			put(o, esc, 6);
		} else {
			put(o, (const char *)&c, 1);
		}
	}
	put(o, "\"", 1);
}

static void put_number(struct out *o, const ig_json_value *v)
{
	char b[40];
	int n = v->type == IG_JSON_INT ? snprintf(b, sizeof b, "%" PRId64, v->i)
				       : snprintf(b, sizeof b, "%.17g", v->d);
	put(o, b, (size_t)n);
}

static void put_tree(struct out *o, const ig_json_value *v)
{
	switch (v->type) {
	case IG_JSON_NULL: put(o, "null", 4); break;
	case IG_JSON_BOOL: v->b ? put(o, "true", 4) : put(o, "false", 5); break;
	case IG_JSON_INT:
	case IG_JSON_NUMBER: put_number(o, v); break;
	case IG_JSON_STRING: put_string(o, v->s); break;
	case IG_JSON_ARRAY:
		put(o, "[", 1);
		for (size_t i = 0; i < v->array.len; i++) {
			if (i)
				put(o, ",", 1);
			put_tree(o, v->array.items[i]);
		}
		put(o, "]", 1);
		break;
	case IG_JSON_OBJECT:
		put(o, "{", 1);
		for (size_t i = 0; i < v->object.len; i++) {
			if (i)
				put(o, ",", 1);
			put_string(o, v->object.members[i].key);
			put(o, ":", 1);
			put_tree(o, v->object.members[i].value);
		}
		put(o, "}", 1);
		break;
	}
}

/* The same writer driven by the pull API; recursion is bounded by the
 * reader's max_depth. */
static void pull(ig_json_reader *r, struct out *o)
{
	ig_str s;
	ig_json_value n;
	bool b;
	bool first = true;
	switch (ig_jr_peek(r)) {
	case IG_JN_ERROR:
		return;
	case IG_JN_END:
		ig_jr_null(r); /* records "unexpected end of input" */
		return;
	case IG_JN_NULL:
		if (ig_jr_null(r))
			put(o, "null", 4);
		return;
	case IG_JN_TRUE:
	case IG_JN_FALSE:
		if (ig_jr_bool(r, &b))
			b ? put(o, "true", 4) : put(o, "false", 5);
		return;
	case IG_JN_NUMBER:
		if (ig_jr_number(r, &n))
			put_number(o, &n);
		return;
	case IG_JN_STRING:
		if (ig_jr_string(r, &s))
			put_string(o, s);
		return;
	case IG_JN_ARRAY:
		if (!ig_jr_array_begin(r))
			return;
		put(o, "[", 1);
		while (ig_jr_array_next(r)) {
			if (!first)
				put(o, ",", 1);
			first = false;
			pull(r, o);
		}
		put(o, "]", 1);
		return;
	case IG_JN_OBJECT:
		if (!ig_jr_object_begin(r))
			return;
		put(o, "{", 1);
		while (ig_jr_object_next_key(r, &s)) {
			if (!first)
				put(o, ",", 1);
			first = false;
			put_string(o, s);
			put(o, ":", 1);
			pull(r, o);
		}
		put(o, "}", 1);
		return;
	}
}

/* ---- the target ---- */

static bool is(const char *error, const char *message)
{
	return error && strcmp(error, message) == 0;
}

static void disagree(const char *what, const ig_json_reader *a, const ig_json_reader *b)
{
	fprintf(stderr, "%s: \"%s\" at %zu vs \"%s\" at %zu\n", what, a->error ? a->error : "ok",
		a->error_offset, b->error ? b->error : "ok", b->error_offset);
	abort();
}

/* b must report what a reported; when a saw a repeated key, b (which does
 * not look for one) is fine or stumbles later. */
static void agree(const char *what, const ig_json_reader *a, const ig_json_reader *b)
{
	if (is(a->error, "out of memory") || is(b->error, "out of memory"))
		return;
	if (is(a->error, "duplicate key")) {
		if (b->error && b->error_offset <= a->error_offset)
			disagree(what, a, b);
		return;
	}
	if (!a->error != !b->error || (a->error && (strcmp(a->error, b->error) != 0 ||
						    a->error_offset != b->error_offset)))
		disagree(what, a, b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (blocks.obj_size == 0)
		ig_pool_init(&blocks, 4096, 16, 4096);
	ig_arena arena;
	ig_arena_init(&arena, &blocks, 4 << 20);
	const char *in = (const char *)data;
	struct out tree_out = { 0 }, pull_out = { 0 };

	ig_json_reader rv, rs, rp;
	ig_jr_init(&rv, in, size, &arena, MAX_DEPTH);
	ig_json_value *v = ig_jr_value(&rv);
	if (!v != !!rv.error)
		abort(); /* NULL exactly when an error is set */
	if (!ig_jr_finish(&rv))
		v = NULL;

	ig_jr_init(&rs, in, size, &arena, MAX_DEPTH);
	ig_jr_skip(&rs);
	ig_jr_finish(&rs);
	agree("value vs skip", &rv, &rs);

	ig_jr_init(&rp, in, size, &arena, MAX_DEPTH);
	pull(&rp, &pull_out);
	ig_jr_finish(&rp);
	agree("value vs pull", &rv, &rp);
	if (rp.depth != 0 && !rp.error)
		abort();

	if (v) {
		if (!ig_json_equal(v, v))
			abort();
		put_tree(&tree_out, v);
		if (tree_out.len != pull_out.len || memcmp(tree_out.p, pull_out.p, tree_out.len) != 0) {
			fprintf(stderr, "tree wrote %.*s\npull wrote %.*s\n", (int)tree_out.len, tree_out.p,
				(int)pull_out.len, pull_out.p);
			abort();
		}
		/* Decoded strings must be valid UTF-8 and numbers must round-trip:
		 * the canonical text reads back into an equal tree. */
		ig_json_reader again;
		ig_jr_init(&again, tree_out.p, tree_out.len, &arena, MAX_DEPTH);
		ig_json_value *w = ig_jr_value(&again);
		ig_jr_finish(&again);
		if (!is(again.error, "out of memory") && (!w || !ig_json_equal(v, w) || !ig_json_equal(w, v))) {
			fprintf(stderr, "canonical form %.*s: %s at %zu\n", (int)tree_out.len, tree_out.p,
				again.error ? again.error : "not equal", again.error_offset);
			abort();
		}
	}
	free(tree_out.p);
	free(pull_out.p);
	ig_arena_reset(&arena);
	return 0;
}
