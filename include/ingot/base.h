/* The public runtime header for apps and generated code: strings, the
 * per-request arena, the response body writer and the JSON primitives.
 * Nothing here knows about HTTP's rules or sockets; see include/ingot/http.h
 * for the request/response API that handlers use. */
#ifndef INGOT_BASE_H
#define INGOT_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#define ig_likely(x) __builtin_expect(!!(x), 1)
#define ig_unlikely(x) __builtin_expect(!!(x), 0)
#define IG_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))
/* On every request's path, and never run by the start or an idle loop.
 * GCC puts such functions in .text.hot, which net/cold.ld gathers into a
 * block of its own: contiguous, so the request path's code stays in the
 * instruction cache instead of sharing its sets with code spread over the
 * binary (callgrind's 32 KiB L1i model: POST /blog took 37 misses per
 * request spread out, 0.1 to 14 grouped, by what else runs), and apart,
 * so an idle process has none of it resident (tests/integration/process
 * checks both halves of that). Mark a function that every request, or
 * every request of a common kind, runs; never one of the start, the loop
 * itself, a timer tick, the logger, a scrape or an error. */
#define IG_HOT __attribute__((hot))

/* A slice of bytes that someone else owns. */
typedef struct ig_str {
	const char *ptr;
	size_t len;
} ig_str;

#define IG_STR(lit) ((ig_str){ (lit), sizeof(lit) - 1 })
#define IG_STR_INIT(lit) { (lit), sizeof(lit) - 1 } /* for static initializers */

/* A header field: what the HTTP codec fills (slices of the buffer it
 * parsed) and what a request or a client response hands the app, so that
 * both point at the parser's array without a conversion. */
typedef struct ig_header {
	ig_str name, value; /* a parsed value has no leading or trailing OWS */
} ig_header;

static inline bool ig_str_eq(ig_str a, const char *b, size_t blen)
{
	return a.len == blen && memcmp(a.ptr, b, blen) == 0;
}

/* The value of a hex digit (either case), or -1: for %-escapes, chunk
 * sizes and \u escapes alike. */
static inline int ig_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	unsigned char l = (unsigned char)(c | 0x20);
	return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

/* ---- arena: bump allocation for one request, freed all at once ---- */
struct ig_arena;
typedef struct ig_arena ig_arena;

/* Returns 8-byte aligned memory, or NULL when the arena's limit is reached. */
void *ig_arena_alloc(ig_arena *a, size_t size);

/* ---- wbuf: a growable byte buffer inside an arena ---- */
typedef struct ig_wbuf {
	char *ptr;
	size_t len;
	size_t cap;
	ig_arena *arena;
	bool failed; /* an allocation failed: the content is incomplete */
} ig_wbuf;

/* Makes room for n more bytes; returns a pointer to them or NULL (and sets
 * failed). Callers then advance len by what they wrote. */
char *ig_wbuf_reserve(ig_wbuf *w, size_t n);

static inline void ig_wbuf_put(ig_wbuf *w, const void *p, size_t n)
{
	if (n == 0)
		return; /* w->ptr may still be NULL: NULL + 0 is undefined */
	char *d = (w->cap - w->len >= n) ? w->ptr + w->len : ig_wbuf_reserve(w, n);
	if (d) {
		memcpy(d, p, n);
		w->len += n;
	}
}
#define ig_wbuf_lit(w, lit) ig_wbuf_put((w), (lit), sizeof(lit) - 1)

/* ---- JSON writer primitives (used by generated encoders) ---- */
void ig_json_string(ig_wbuf *w, const char *s, size_t n); /* quoted, escaped */
void ig_json_int(ig_wbuf *w, int64_t v);
void ig_json_uint(ig_wbuf *w, uint64_t v);
void ig_json_double(ig_wbuf *w, double v); /* shortest round-trip; NaN/Inf as null */
void ig_json_bool(ig_wbuf *w, bool v);

/* Decimal formatting without printf; returns the length written to out
 * (at most 20 bytes for u64, 20 for i64). */
size_t ig_fmt_u64(char *out, uint64_t v);
size_t ig_fmt_i64(char *out, int64_t v);

#endif
