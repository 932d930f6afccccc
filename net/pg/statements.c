/* A connection's prepared statements: the cache of those it prepared,
 * by their SQL text (struct pg_stmt), and an extended query written with
 * them: Parse when the statement is new there, Bind with the result
 * formats it remembers, Describe until its columns are known, Execute and
 * Sync. No I/O: it writes into the connection's output buffer. */
#include "internal.h"

#include <string.h>

/* SQL texts are hashed and compared on every query: eight bytes a step
 * (musl's memcmp goes byte by byte). The last n < 8 bytes in at most two
 * loads: overlapping halves (4..7 bytes) or the first, middle and last
 * byte (1..3), which is the same word for the same bytes and length. */
static uint64_t load_tail(const char *s, size_t n)
{
	if (n >= 4) {
		uint32_t lo, hi;
		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		return lo | (uint64_t)hi << 32;
	}
	if (n == 0)
		return 0;
	return (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
	       (uint64_t)(unsigned char)s[n - 1] << 16;
}

static uint64_t sql_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 1099511628211ull;
		h ^= h >> 29;
	}
	h = (h ^ load_tail(s, n)) * 1099511628211ull;
	h ^= h >> 32;
	return h ? h : 1;
}

static bool same_text(const char *a, const char *b, size_t n)
{
	for (; n >= 8; a += 8, b += 8, n -= 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	return load_tail(a, n) == load_tail(b, n);
}

/* "s<number>" into name (12 bytes: "s", up to 10 digits and a NUL). */
static void stmt_name(char name[12], uint32_t number)
{
	name[0] = 's';
	name[1 + ig_fmt_u64(name + 1, number)] = 0;
}

void ig_pg_stmts_clear(struct pg_conn *k)
{
	for (int i = 0; i < PG_STMT_SLOTS; i++) {
		k->stmts[i].hash = 0;
		k->stmts[i].gen++;
	}
	k->stmt_text_used = 0;
}

void ig_pg_stmt_drop(struct pg_conn *k, int16_t slot, uint32_t gen)
{
	if (slot >= 0 && k->stmts[slot].gen == gen && k->stmts[slot].hash) {
		k->stmts[slot].hash = 0;
		k->stmts[slot].gen++;
	}
}

/* The cache slot of sql, *fresh when it must be prepared now; -1 when it
 * cannot be cached (too long: then it goes as the unnamed statement). */
static int16_t stmt_lookup(struct pg_conn *k, const char *sql, size_t len, bool *fresh)
{
	uint64_t h = sql_hash(sql, len);
	*fresh = true;
	if (len + 1 > PG_STMT_TEXT / 4)
		return -1;
	int16_t free_slot = -1;
	for (int i = 0; i < PG_STMT_SLOTS; i++) {
		int16_t s = (int16_t)((h + (uint64_t)i) % PG_STMT_SLOTS);
		struct pg_stmt *st = &k->stmts[s];
		if (!st->hash) {
			if (free_slot < 0)
				free_slot = s;
			continue;
		}
		if (st->hash == h && st->len == len && same_text(st->sql, sql, len)) {
			*fresh = false;
			return s;
		}
	}
	if (free_slot < 0 || k->stmt_text_used + len + 1 > PG_STMT_TEXT) {
		/* Full: forget them all (the server's copies stay until the
		   connection ends; new names never collide with them). */
		ig_pg_stmts_clear(k);
		free_slot = (int16_t)(h % PG_STMT_SLOTS);
	}
	struct pg_stmt *st = &k->stmts[free_slot];
	char *copy = k->stmt_text + k->stmt_text_used;
	memcpy(copy, sql, len);
	copy[len] = 0;
	k->stmt_text_used += (uint32_t)len + 1;
	st->hash = h;
	st->sql = copy;
	st->len = (uint32_t)len;
	st->number = k->next_stmt++;
	stmt_name(st->name, st->number);
	st->described = false;
	st->known = false;
	st->ncols = 0;
	return free_slot;
}

/* A known statement's columns as q's result columns, in one block of q's
 * arena (the connection's copy may be overwritten while q is in flight):
 * what its RowDescription would have set. */
static void take_columns(struct pg_query *q, const struct pg_stmt *st)
{
	uint16_t n = st->ncols;
	q->cols = n;
	q->rows = q->cap = 0;
	q->values = NULL;
	q->names = NULL;
	if (!n)
		return;
	char *b = ig_arena_alloc(q->arena, (size_t)n * sizeof(ig_str) + st->columns_bytes);
	if (!b) {
		ig_pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
		return;
	}
	ig_str *names = (ig_str *)b;
	uint32_t *oids = (uint32_t *)(names + n);
	memcpy(oids, st->columns, st->columns_bytes);
	int16_t *formats = (int16_t *)(oids + n);
	char *text = (char *)(formats + n);
	for (uint16_t i = 0; i < n; i++) {
		size_t len = st->name_lens[i];
		names[i] = (ig_str){ text, len };
		text += len + 1;
	}
	q->names = names;
	q->oids = oids;
	q->formats = formats;
}

void ig_pg_stmt_encode(struct pg_conn *k, struct pg_query *q)
{
	bool fresh;
	int16_t slot = stmt_lookup(k, q->sql, q->sql_len, &fresh);
	struct pg_stmt *st = slot >= 0 ? &k->stmts[slot] : NULL;
	const char *name = st ? st->name : "";
	q->stmt = slot;
	q->stmt_gen = st ? st->gen : 0;
	q->parsed_here = fresh;
	if (fresh) {
		uint32_t oids[PG_MAX_PARAMS] = { 0 };
		for (uint16_t i = 0; i < q->nparams; i++)
			oids[i] = q->params[i].oid;
		ig_pg_put_parse(&k->out, name, q->sql, q->nparams, oids);
	}
	uint16_t nformats = 0;
	const int16_t *formats = NULL;
	if (st && st->described && st->ncols <= PG_STMT_FORMATS) {
		nformats = st->ncols;
		formats = st->formats;
	}
	ig_pg_put_bind(&k->out, "", name, q->nparams, q->params, nformats, formats);
	if (st && st->known)
		take_columns(q, st);
	else
		ig_pg_put_describe(&k->out, 'P', "");
	ig_pg_put_execute(&k->out, "", 0);
	ig_pg_put_sync(&k->out);
}

/* A described statement's column lengths, oids, formats and names into
 * stmt_text (struct pg_stmt's columns), when they fit (else it stays
 * unknown and keeps its Describe): st->known. */
static void stmt_keep_columns(struct pg_conn *k, struct pg_stmt *st, const struct pg_field *f, uint16_t n)
{
	if (n > PG_STMT_FORMATS)
		return;
	size_t names = 0;
	for (uint16_t i = 0; i < n; i++) {
		if (f[i].name.len > UINT16_MAX)
			return;
		names += f[i].name.len + 1;
	}
	size_t at = ((size_t)k->stmt_text_used + 3) & ~(size_t)3;
	size_t columns_at = (at + (size_t)n * sizeof(uint16_t) + 3) & ~(size_t)3;
	size_t columns_bytes = (size_t)n * (sizeof(uint32_t) + sizeof(int16_t)) + names;
	if (columns_bytes > UINT32_MAX || columns_at + columns_bytes > PG_STMT_TEXT)
		return;
	uint16_t *lens = (uint16_t *)(void *)(k->stmt_text + at);
	uint32_t *oids = (uint32_t *)(void *)(k->stmt_text + columns_at);
	int16_t *formats = (int16_t *)(oids + n);
	char *text = (char *)(formats + n);
	for (uint16_t i = 0; i < n; i++) {
		lens[i] = (uint16_t)f[i].name.len;
		oids[i] = f[i].type_oid;
		formats[i] = st->formats[i];
		memcpy(text, f[i].name.ptr, f[i].name.len);
		text[f[i].name.len] = 0;
		text += f[i].name.len + 1;
	}
	k->stmt_text_used = (uint32_t)(columns_at + columns_bytes);
	st->name_lens = lens;
	st->columns = (const char *)oids;
	st->columns_bytes = (uint32_t)columns_bytes;
	st->known = true;
}

/* q's statement, not yet described, takes the columns of q's
 * RowDescription: later executions ask for the binary form of those that
 * have one and, once known, send no Describe. */
void ig_pg_stmt_described(struct pg_conn *k, const struct pg_query *q, const struct pg_field *f, uint16_t n)
{
	if (q->stmt >= 0 && k->stmts[q->stmt].gen == q->stmt_gen && !k->stmts[q->stmt].described) {
		struct pg_stmt *st = &k->stmts[q->stmt];
		st->ncols = n;
		st->described = true;
		for (uint16_t i = 0; i < n && i < PG_STMT_FORMATS; i++)
			st->formats[i] = ig_pg_result_format(f[i].type_oid);
		stmt_keep_columns(k, st, f, n);
	}
}

/* q's statement answered NoData (an UPDATE): described, no columns, and
 * known. */
void ig_pg_stmt_no_data(struct pg_conn *k, const struct pg_query *q)
{
	if (q->stmt >= 0 && k->stmts[q->stmt].gen == q->stmt_gen && !k->stmts[q->stmt].described) {
		k->stmts[q->stmt].described = true;
		k->stmts[q->stmt].ncols = 0;
		k->stmts[q->stmt].known = true;
	}
}
