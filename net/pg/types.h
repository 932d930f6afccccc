/* The wire side of net/pg's values (struct ig_pg_value, include/ingot/pg.h):
 * a parameter's format and its bytes for a Bind, a result column's format
 * and its bytes decoded, in text or binary. Internal: apps see the values
 * through pg.h only. Decoded values live in the caller's arena. */
#ifndef NET_PG_TYPES_H
#define NET_PG_TYPES_H

#include "ingot/base.h"
#include "ingot/pg.h"
#include "net/pg/writer.h"

#include <stdbool.h>
#include <stdint.h>

/* The format a parameter goes in: 1 (binary) for bool, int2/4/8, float4/8,
 * bytea, uuid, date, timestamp, timestamptz and jsonb; 0 (text) for the
 * rest (text, varchar, numeric, json, oid 0 and any other oid: s as text). */
int16_t ig_pg_param_format(const ig_pg_value *v);

/* Writes v's length field and bytes (a Bind parameter) in the format
 * ig_pg_param_format gives; -1 and no bytes for NULL. Sets o->overflow when
 * it does not fit, and also for values that cannot be sent (an int2/int4
 * parameter out of its range, text holding a NUL): the caller fails the
 * query with IG_PG_BAD_PARAMS (check ig_pg_param_valid first to tell them
 * apart). */
void ig_pg_param_encode(struct pg_out *o, const ig_pg_value *v);
bool ig_pg_param_valid(const ig_pg_value *v);

/* The bytes ig_pg_param_encode writes for v (its length field included): to
 * size a buffer before a Bind. Only the member v's oid names is read (for
 * a uuid or an int, s is not a string). */
size_t ig_pg_param_size(const ig_pg_value *v);

/* The result format to ask for a column of that type: 1 (binary) for the
 * fixed-size types, bytea and uuid; 0 for the rest (numeric's and json's
 * text is what the API hands out anyway). */
int16_t ig_pg_result_format(uint32_t oid);

/* Decodes one column (bytes p[0..len), len -1 for NULL) of type oid sent in
 * format (0 text, 1 binary) into *out. Strings and bytes are copied into
 * the arena (the receive buffer is reused); numeric in binary is turned
 * into its text. A column of an unknown oid becomes s (its text, or in
 * binary its raw bytes) with its oid kept. false when the bytes are not a
 * value of that type (a wrong length, bad text) or the arena is full. */
bool ig_pg_value_decode(uint32_t oid, int16_t format, const char *p, int32_t len, ig_arena *arena,
		     ig_pg_value *out);

#endif
