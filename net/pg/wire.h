/* PostgreSQL's frontend/backend protocol v3, as bytes: a builder for the
 * messages the client sends and a parser for those the server sends, which
 * are untrusted. No I/O, no allocation, no state but the caller's, so the
 * parser runs alone under a fuzzer (tests/fuzz/fuzz_pg.c). All integers on
 * the wire are big-endian. */
#ifndef NET_PG_WIRE_H
#define NET_PG_WIRE_H

#include "ingot/base.h"
#include "net/pg/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ig_pg_value; /* include/ingot/pg.h */

/* ---- the builder ----
 * Messages written through writer.h's struct pg_out: each is one frame, so
 * one that does not fit is taken back whole and overflow says so. */

/* Whole messages. Names (statements, portals) are C strings, "" for the
 * unnamed one. A string that holds a NUL cannot be sent: callers pass C
 * strings, so it cannot happen. */

/* StartupMessage, protocol 3.0: user, database, and application_name when
 * app_name is non-NULL and non-empty. Also client_encoding=UTF8 and
 * DateStyle=ISO (types.c reads dates in the ISO style) and TimeZone=UTC
 * (timestamptz text is then always "+00"). */
void ig_pg_put_startup(struct pg_out *o, const char *user, const char *db, const char *app_name);
void ig_pg_put_ssl_request(struct pg_out *o);                       /* answered by one byte 'S' or 'N' */
void ig_pg_put_cancel(struct pg_out *o, uint32_t pid, uint32_t key); /* on a new connection */
void ig_pg_put_password(struct pg_out *o, const char *s);           /* cleartext or md5 ('p') */
void ig_pg_put_sasl_initial(struct pg_out *o, const char *mech, const void *data, size_t len);
void ig_pg_put_sasl_response(struct pg_out *o, const void *data, size_t len);
/* Parse: oids[nparams] the parameters' types (0 lets the server infer it;
 * such a parameter must be sent in text format). */
void ig_pg_put_parse(struct pg_out *o, const char *stmt_name, const char *sql, uint16_t nparams,
		  const uint32_t *oids);
/* Bind: each parameter in the format ig_pg_param_format gives for it (one
 * format code per parameter), encoded by ig_pg_param_encode (types.h); a value
 * that cannot be encoded (an unknown oid in binary...) sets overflow, see
 * ig_pg_param_encode. formats: nresult_formats result format codes (0 text, 1
 * binary): 0 of them means all text, 1 applies to every column. */
void ig_pg_put_bind(struct pg_out *o, const char *portal, const char *stmt, uint16_t nparams,
		 const struct ig_pg_value *params, uint16_t nresult_formats, const int16_t *formats);
void ig_pg_put_describe(struct pg_out *o, char what, const char *name); /* what: 'S' or 'P' */
void ig_pg_put_close(struct pg_out *o, char what, const char *name);    /* what: 'S' or 'P' */
void ig_pg_put_execute(struct pg_out *o, const char *portal, uint32_t max_rows); /* 0: all rows */
void ig_pg_put_sync(struct pg_out *o);
void ig_pg_put_flush(struct pg_out *o);
void ig_pg_put_query(struct pg_out *o, const char *sql); /* simple query: may hold several statements */
void ig_pg_put_terminate(struct pg_out *o);

/* ---- the parser ---- */

/* Backend message types (the first byte). */
enum {
	PG_MSG_AUTH = 'R',
	PG_MSG_BACKEND_KEY = 'K',
	PG_MSG_BIND_COMPLETE = '2',
	PG_MSG_CLOSE_COMPLETE = '3',
	PG_MSG_COMMAND_COMPLETE = 'C',
	PG_MSG_DATA_ROW = 'D',
	PG_MSG_EMPTY_QUERY = 'I',
	PG_MSG_ERROR = 'E',
	PG_MSG_NEGOTIATE_VERSION = 'v',
	PG_MSG_NO_DATA = 'n',
	PG_MSG_NOTICE = 'N',
	PG_MSG_NOTIFICATION = 'A',
	PG_MSG_PARAMETER_DESCRIPTION = 't',
	PG_MSG_PARAMETER_STATUS = 'S',
	PG_MSG_PARSE_COMPLETE = '1',
	PG_MSG_PORTAL_SUSPENDED = 's',
	PG_MSG_READY = 'Z',
	PG_MSG_ROW_DESCRIPTION = 'T',
	/* COPY is not supported: 'G', 'H', 'W', 'd', 'c' are protocol errors. */
};

/* One backend message: its type and its body (after the length field). */
struct pg_msg {
	char type;
	const char *body;
	uint32_t len;
};

#define PG_PARSE_MALFORMED (-1)
#define PG_PARSE_INCOMPLETE (-2)

/* Frames the message at the start of buf[0..len): returns the bytes it
 * takes (> 0) and fills m (body points into buf); PG_PARSE_MALFORMED when
 * its length field is below 4 or the whole message (1 + length) is over
 * max_len (the caller's limit: a row over it fails the query); and
 * PG_PARSE_INCOMPLETE when buf holds less than the whole message (len < 5
 * included). Reads nothing outside buf. */
int ig_pg_parse_message(const char *buf, size_t len, size_t max_len, struct pg_msg *m);

/* The decoders below each take one framed message of their type and return
 * false when the body is malformed (a field that runs past the body, a
 * count that does not match, bytes left over). Slices point into m's body;
 * nothing outside it is read. */

/* Authentication request ('R'). */
enum pg_auth_code {
	PG_AUTH_OK = 0,
	PG_AUTH_CLEARTEXT = 3,
	PG_AUTH_MD5 = 5,
	PG_AUTH_SASL = 10,          /* data: the mechanisms, each NUL-terminated, then a NUL */
	PG_AUTH_SASL_CONTINUE = 11, /* data: the server-first-message */
	PG_AUTH_SASL_FINAL = 12,    /* data: the server-final-message */
};
struct pg_auth {
	uint32_t code;       /* enum pg_auth_code, or another (unsupported) value */
	uint8_t salt[4];     /* for PG_AUTH_MD5 */
	const char *data;    /* for the SASL codes */
	uint32_t data_len;
	bool scram_sha256;   /* PG_AUTH_SASL: SCRAM-SHA-256 is among the mechanisms */
};
bool ig_pg_read_auth(const struct pg_msg *m, struct pg_auth *a);

bool ig_pg_read_backend_key(const struct pg_msg *m, uint32_t *pid, uint32_t *key);
bool ig_pg_read_parameter_status(const struct pg_msg *m, ig_str *name, ig_str *value);
/* ReadyForQuery: *tx_status 'I' idle, 'T' in a transaction, 'E' in a failed one. */
bool ig_pg_read_ready(const struct pg_msg *m, char *tx_status);

/* RowDescription: *n gets the field count; fields[0..min(n, max)) are
 * filled; false when malformed or when n > max (then *n still says n, so
 * the caller can tell "too many columns" from garbage). */
struct pg_field {
	ig_str name;
	uint32_t table_oid;
	uint16_t column;
	uint32_t type_oid;
	int16_t type_len;
	int32_t type_mod;
	int16_t format; /* 0 text, 1 binary */
};
bool ig_pg_read_row_description(const struct pg_msg *m, struct pg_field *fields, uint16_t max, uint16_t *n);

/* DataRow: as RowDescription, each column's bytes or NULL (len -1). */
struct pg_col {
	const char *ptr; /* NULL for SQL NULL */
	int32_t len;     /* -1 for SQL NULL */
};
bool ig_pg_read_data_row(const struct pg_msg *m, struct pg_col *cols, uint16_t max, uint16_t *n);

/* CommandComplete: the tag ("SELECT 3", "INSERT 0 1", "BEGIN"...) and the
 * row count its last word gives for INSERT, UPDATE, DELETE, SELECT, MERGE,
 * MOVE, FETCH and COPY (0 for the others). */
bool ig_pg_read_command_complete(const struct pg_msg *m, ig_str *tag, uint64_t *rows);

/* ErrorResponse and NoticeResponse: the fields it has; those it lacks are
 * empty ({NULL, 0}). sqlstate is NUL-terminated ("" when the server sent
 * none or one that is not 5 characters). */
struct pg_error_fields {
	ig_str severity; /* 'V' (not localised) when sent, else 'S' */
	char sqlstate[6];
	ig_str message, detail, hint, constraint, schema, table, column, position;
};
bool ig_pg_read_error(const struct pg_msg *m, struct pg_error_fields *e);

bool ig_pg_read_notification(const struct pg_msg *m, uint32_t *pid, ig_str *channel, ig_str *payload);

/* ParameterDescription: as RowDescription, the parameters' type oids. */
bool ig_pg_read_parameter_description(const struct pg_msg *m, uint32_t *oids, uint16_t max, uint16_t *n);

/* The messages with an empty body ('1', '2', '3', 'n', 'I', 's'): false
 * when it is not empty. */
bool ig_pg_read_empty(const struct pg_msg *m);

#endif
