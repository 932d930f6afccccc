/* The values of the PostgreSQL client's public API (net/pg/pg.h includes
 * this): what a parameter holds and what a result column decodes to, for
 * the types the client knows, and their conversion to and from the wire in
 * text or binary format. Decoded values live in the caller's arena. */
#ifndef NET_PG_TYPES_H
#define NET_PG_TYPES_H

#include "kernel/runtime/ingot.h"
#include "net/pg/wire.h"

#include <stdbool.h>
#include <stdint.h>

/* The built-in type oids (pg_type.dat); they never change. */
enum {
	IG_PG_BOOL = 16,
	IG_PG_BYTEA = 17,
	IG_PG_INT8 = 20,
	IG_PG_INT2 = 21,
	IG_PG_INT4 = 23,
	IG_PG_TEXT = 25,
	IG_PG_JSON = 114,
	IG_PG_FLOAT4 = 700,
	IG_PG_FLOAT8 = 701,
	IG_PG_UNKNOWN = 705,
	IG_PG_VARCHAR = 1043,
	IG_PG_DATE = 1082,
	IG_PG_TIMESTAMP = 1114,
	IG_PG_TIMESTAMPTZ = 1184,
	IG_PG_NUMERIC = 1700,
	IG_PG_UUID = 2950,
	IG_PG_JSONB = 3802,
};

/* date and timestamp's infinities, as the server stores them. */
#define IG_PG_DATE_INFINITY INT32_MAX
#define IG_PG_DATE_NEG_INFINITY INT32_MIN
#define IG_PG_TS_INFINITY INT64_MAX
#define IG_PG_TS_NEG_INFINITY INT64_MIN

/* One value. oid says which member holds it:
 *   bool                      b
 *   int2, int4, int8          i
 *   float4, float8            f
 *   text, varchar, numeric, json, jsonb, and any other oid    s (its text)
 *   bytea                     s (the raw bytes, not hex)
 *   uuid                      uuid (16 bytes, in order)
 *   date                      date (days from 2000-01-01)
 *   timestamp, timestamptz    ts (microseconds from 2000-01-01 00:00:00;
 *                             UTC for timestamptz)
 * null: SQL NULL (then no member counts). A parameter with oid 0 is sent as
 * text in s with its type left to the server to infer. */
typedef struct ig_pg_value {
	uint32_t oid;
	bool null;
	union {
		bool b;
		int64_t i;
		double f;
		ig_str s;
		uint8_t uuid[16];
		int32_t date;
		int64_t ts;
	};
} ig_pg_value;

/* Parameter constructors. */
static inline ig_pg_value ig_pg_null(uint32_t oid) { return (ig_pg_value){ .oid = oid, .null = true }; }
static inline ig_pg_value ig_pg_bool(bool v) { return (ig_pg_value){ .oid = IG_PG_BOOL, .b = v }; }
static inline ig_pg_value ig_pg_int2(int16_t v) { return (ig_pg_value){ .oid = IG_PG_INT2, .i = v }; }
static inline ig_pg_value ig_pg_int4(int32_t v) { return (ig_pg_value){ .oid = IG_PG_INT4, .i = v }; }
static inline ig_pg_value ig_pg_int8(int64_t v) { return (ig_pg_value){ .oid = IG_PG_INT8, .i = v }; }
static inline ig_pg_value ig_pg_float4(float v) { return (ig_pg_value){ .oid = IG_PG_FLOAT4, .f = v }; }
static inline ig_pg_value ig_pg_float8(double v) { return (ig_pg_value){ .oid = IG_PG_FLOAT8, .f = v }; }
static inline ig_pg_value ig_pg_text(ig_str s) { return (ig_pg_value){ .oid = IG_PG_TEXT, .s = s }; }
static inline ig_pg_value ig_pg_varchar(ig_str s) { return (ig_pg_value){ .oid = IG_PG_VARCHAR, .s = s }; }
static inline ig_pg_value ig_pg_numeric(ig_str text) { return (ig_pg_value){ .oid = IG_PG_NUMERIC, .s = text }; }
static inline ig_pg_value ig_pg_json(ig_str text) { return (ig_pg_value){ .oid = IG_PG_JSON, .s = text }; }
static inline ig_pg_value ig_pg_jsonb(ig_str text) { return (ig_pg_value){ .oid = IG_PG_JSONB, .s = text }; }
static inline ig_pg_value ig_pg_bytea(ig_str bytes) { return (ig_pg_value){ .oid = IG_PG_BYTEA, .s = bytes }; }
static inline ig_pg_value ig_pg_date(int32_t days) { return (ig_pg_value){ .oid = IG_PG_DATE, .date = days }; }
static inline ig_pg_value ig_pg_timestamp(int64_t us) { return (ig_pg_value){ .oid = IG_PG_TIMESTAMP, .ts = us }; }
static inline ig_pg_value ig_pg_timestamptz(int64_t us) { return (ig_pg_value){ .oid = IG_PG_TIMESTAMPTZ, .ts = us }; }
static inline ig_pg_value ig_pg_uuid(const uint8_t u[16])
{
	ig_pg_value v = { .oid = IG_PG_UUID };
	memcpy(v.uuid, u, 16);
	return v;
}
/* A value in PostgreSQL's text syntax, its type inferred by the server. */
static inline ig_pg_value ig_pg_untyped(ig_str text) { return (ig_pg_value){ .oid = 0, .s = text }; }

/* The format a parameter goes in: 1 (binary) for bool, int2/4/8, float4/8,
 * bytea, uuid, date, timestamp, timestamptz and jsonb; 0 (text) for the
 * rest (text, varchar, numeric, json, oid 0 and any other oid: s as text). */
int16_t pg_param_format(const ig_pg_value *v);

/* Writes v's length field and bytes (a Bind parameter) in the format
 * pg_param_format gives; -1 and no bytes for NULL. Sets o->overflow when
 * it does not fit, and also for values that cannot be sent (an int2/int4
 * parameter out of its range, text holding a NUL): the caller fails the
 * query with IG_PG_BAD_PARAMS (check pg_param_valid first to tell them
 * apart). */
void pg_param_encode(struct pg_out *o, const ig_pg_value *v);
bool pg_param_valid(const ig_pg_value *v);

/* The bytes pg_param_encode writes for v (its length field included): to
 * size a buffer before a Bind. Only the member v's oid names is read (for
 * a uuid or an int, s is not a string). */
size_t pg_param_size(const ig_pg_value *v);

/* The result format to ask for a column of that type: 1 (binary) for the
 * fixed-size types, bytea and uuid; 0 for the rest (numeric's and json's
 * text is what the API hands out anyway). */
int16_t pg_result_format(uint32_t oid);

/* Decodes one column (bytes p[0..len), len -1 for NULL) of type oid sent in
 * format (0 text, 1 binary) into *out. Strings and bytes are copied into
 * the arena (the receive buffer is reused); numeric in binary is turned
 * into its text. A column of an unknown oid becomes s (its text, or in
 * binary its raw bytes) with its oid kept. false when the bytes are not a
 * value of that type (a wrong length, bad text) or the arena is full. */
bool pg_value_decode(uint32_t oid, int16_t format, const char *p, int32_t len, ig_arena *arena,
		     ig_pg_value *out);

/* Calendar helpers for dates and timestamps (proleptic Gregorian, UTC):
 * days from 2000-01-01 to y-m-d, and back. */
int32_t ig_pg_date_from_ymd(int32_t y, unsigned m, unsigned d);
void ig_pg_date_to_ymd(int32_t days, int32_t *y, unsigned *m, unsigned *d);

#endif
