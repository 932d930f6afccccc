/* The public runtime header for apps and generated code: strings, the
 * per-request arena, the response body writer and the JSON primitives, and
 * the conventions every contract of include/ingot/ assumes (below). Nothing
 * here knows about HTTP's rules or sockets; include/ingot/http.h is the
 * request/response API that handlers use.
 *
 * Conventions. Each declaration of include/ingot/ states its contract, as
 * BearSSL's headers do: what it does, who owns each pointer and for how
 * long, when it may be called, what each result means, what happens on
 * error. Where a contract says nothing else:
 *   - pointers are borrowed for the call only, and those marked with
 *     IG_NONNULL must not be NULL; strings are NUL-terminated;
 *   - a call taking an ig_ctx runs on that exchange's core (its loop's
 *     thread), between dispatch and ig_finish;
 *   - a callback runs on the loop that started the work, never inside the
 *     call that started it unless its contract says so, and takes what it
 *     reports on first and the caller's `void *arg` last;
 *   - results in an arena live until the arena is reset (for a request:
 *     until its response has been written);
 *   - IG_MUST_USE marks results whose neglect is a bug: the call can fail
 *     and then has done nothing.
 * Memory allocation failure is never fatal: it is a NULL, an error kind,
 * or a writer's `failed` flag, as each contract says. */
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

/* The result must be looked at: the call can fail, and then has done
 * nothing (or handed back something only the caller can free). */
#define IG_MUST_USE __attribute__((warn_unused_result))
/* The listed parameters (1-based) must not be NULL: the function does not
 * check them, and the compiler warns where a caller passes a literal NULL
 * (and, in the function, where it compares one with NULL). */
#define IG_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))

/* A slice of bytes that someone else owns: ptr[0..len), not
 * NUL-terminated, valid for as long as its owner says (a request's slices
 * while its ctx is). ptr may be NULL when len is 0. */
typedef struct ig_str {
	const char *ptr;
	size_t len;
} ig_str;

/* An ig_str of a string literal (static storage), without its NUL. */
#define IG_STR(lit) ((ig_str){ (lit), sizeof(lit) - 1 })
#define IG_STR_INIT(lit) { (lit), sizeof(lit) - 1 } /* for static initializers */

/* A header field: what the HTTP codec fills (slices of the buffer it
 * parsed) and what a request or a client response hands the app, so that
 * both point at the parser's array without a conversion. The slices
 * belong to whoever handed the field over, for as long as its contract
 * says (a request's: while its ctx is valid). */
typedef struct ig_header {
	ig_str name, value; /* a parsed value has no leading or trailing OWS */
} ig_header;

/* Whether a holds exactly the blen bytes at b (case-sensitive). Pure;
 * b may be NULL when blen is 0. */
static inline bool ig_str_eq(ig_str a, const char *b, size_t blen)
{
	return a.len == blen && memcmp(a.ptr, b, blen) == 0;
}

/* The value of a hex digit (either case), or -1 when c is none: for
 * %-escapes, chunk sizes and \u escapes alike. Pure. */
static inline int ig_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	unsigned char l = (unsigned char)(c | 0x20);
	return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

/* ---- arena: bump allocation for one request, freed all at once ----
 * An arena belongs to its owner (a request's: the exchange, see
 * ig_ctx_arena) and to one thread; memory taken from it is never freed one
 * piece at a time, only all together when the owner resets the arena. */
struct ig_arena;
typedef struct ig_arena ig_arena;

/* Takes size bytes (uninitialised) from a.
 * Returns: 8-byte aligned memory, valid until a is reset; NULL when a's
 * limit is reached (a is unchanged then). On a's thread only. */
IG_MUST_USE IG_NONNULL(1) void *ig_arena_alloc(ig_arena *a, size_t size);

/* ---- wbuf: a growable byte buffer inside an arena ----
 * Bytes are ptr[0..len); ptr lives in arena (until its reset) and may move
 * when the buffer grows, so hold offsets, not pointers, across writes. A
 * write that cannot get memory sets failed and drops its bytes; every
 * later write is dropped too, so a writer checks failed once, at the end
 * (ig_finish answers 500 for a response body that failed). Zero-initialise
 * with arena set to start one; ig_body gives a response's. */
typedef struct ig_wbuf {
	char *ptr;
	size_t len;
	size_t cap;
	ig_arena *arena;
	bool failed; /* an allocation failed: the content is incomplete */
} ig_wbuf;

/* Makes room for n more bytes after len.
 * Returns: where to write them (valid until the next write to w); the
 * caller then advances len by what it wrote. NULL when memory is short:
 * failed is set and the content is unchanged. */
IG_MUST_USE IG_NONNULL(1) char *ig_wbuf_reserve(ig_wbuf *w, size_t n);

/* Appends p[0..n) (p may be NULL when n is 0); on failure, failed. */
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
/* Appends a string literal, without its NUL. */
#define ig_wbuf_lit(w, lit) ig_wbuf_put((w), (lit), sizeof(lit) - 1)

/* ---- JSON writer primitives (used by generated encoders) ----
 * Each appends one JSON value to w; on allocation failure w->failed is set
 * and nothing is appended. Any thread that owns w. */
/* s[0..n) quoted, with '"', '\\' and control characters escaped; other
 * bytes (UTF-8) as they are. s may be NULL when n is 0. */
IG_NONNULL(1) void ig_json_string(ig_wbuf *w, const char *s, size_t n);
IG_NONNULL(1) void ig_json_int(ig_wbuf *w, int64_t v);
IG_NONNULL(1) void ig_json_uint(ig_wbuf *w, uint64_t v);
/* The shortest text that reads back as v; NaN and the infinities, which
 * JSON cannot carry, as null. */
IG_NONNULL(1) void ig_json_double(ig_wbuf *w, double v);
IG_NONNULL(1) void ig_json_bool(ig_wbuf *w, bool v);

/* Decimal formatting without printf: writes v's digits (and '-') to out,
 * which must hold 20 bytes; no NUL. Returns the length written. Pure
 * apart from out; any thread. */
IG_NONNULL(1) size_t ig_fmt_u64(char *out, uint64_t v);
IG_NONNULL(1) size_t ig_fmt_i64(char *out, int64_t v);

#endif
