/* PostgreSQL protocol v3 messages as bytes (see wire.h): the frontend
 * messages, each one frame of writer.h's (a fixed buffer that flags
 * overflow instead of growing); the backend decoders bound every read by
 * the message body, whose bytes come from the network. */
#include "net/pg/wire.h"

#include "net/pg/types.h"

#include <string.h>

/* ---- the builder ---- */

#define PG_PROTOCOL_3_0 196608u      /* 3 << 16 */
#define PG_SSL_REQUEST_CODE 80877103u /* 1234 << 16 | 5679 */
#define PG_CANCEL_REQUEST_CODE 80877102u

static void put_param(struct pg_out *o, const char *name, const char *value)
{
	ig_pg_out_cstr(o, name);
	ig_pg_out_cstr(o, value);
}

void ig_pg_put_startup(struct pg_out *o, const char *user, const char *db, const char *app_name)
{
	ig_pg_out_begin(o, 0);
	ig_pg_out_u32(o, PG_PROTOCOL_3_0);
	put_param(o, "user", user);
	if (db && *db)
		put_param(o, "database", db);
	if (app_name && *app_name)
		put_param(o, "application_name", app_name);
	put_param(o, "client_encoding", "UTF8");
	put_param(o, "DateStyle", "ISO");
	put_param(o, "TimeZone", "UTC");
	ig_pg_out_u8(o, 0);
	ig_pg_out_end(o);
}

void ig_pg_put_ssl_request(struct pg_out *o)
{
	ig_pg_out_begin(o, 0);
	ig_pg_out_u32(o, PG_SSL_REQUEST_CODE);
	ig_pg_out_end(o);
}

void ig_pg_put_cancel(struct pg_out *o, uint32_t pid, uint32_t key)
{
	ig_pg_out_begin(o, 0);
	ig_pg_out_u32(o, PG_CANCEL_REQUEST_CODE);
	ig_pg_out_u32(o, pid);
	ig_pg_out_u32(o, key);
	ig_pg_out_end(o);
}

void ig_pg_put_password(struct pg_out *o, const char *s)
{
	ig_pg_out_begin(o, 'p');
	ig_pg_out_cstr(o, s);
	ig_pg_out_end(o);
}

void ig_pg_put_sasl_initial(struct pg_out *o, const char *mech, const void *data, size_t len)
{
	ig_pg_out_begin(o, 'p');
	ig_pg_out_cstr(o, mech);
	ig_pg_out_u32(o, (uint32_t)len);
	ig_pg_out_bytes(o, data, len);
	ig_pg_out_end(o);
}

void ig_pg_put_sasl_response(struct pg_out *o, const void *data, size_t len)
{
	ig_pg_out_begin(o, 'p');
	ig_pg_out_bytes(o, data, len);
	ig_pg_out_end(o);
}

void ig_pg_put_parse(struct pg_out *o, const char *stmt_name, const char *sql, uint16_t nparams,
		  const uint32_t *oids)
{
	ig_pg_out_begin(o, 'P');
	ig_pg_out_cstr(o, stmt_name);
	ig_pg_out_cstr(o, sql);
	ig_pg_out_u16(o, nparams);
	for (uint16_t i = 0; i < nparams; i++)
		ig_pg_out_u32(o, oids ? oids[i] : 0);
	ig_pg_out_end(o);
}

void ig_pg_put_bind(struct pg_out *o, const char *portal, const char *stmt, uint16_t nparams,
		 const struct ig_pg_value *params, uint16_t nresult_formats, const int16_t *formats)
{
	ig_pg_out_begin(o, 'B');
	ig_pg_out_cstr(o, portal);
	ig_pg_out_cstr(o, stmt);
	ig_pg_out_u16(o, nparams);
	for (uint16_t i = 0; i < nparams; i++)
		ig_pg_out_u16(o, (uint16_t)ig_pg_param_format(&params[i]));
	ig_pg_out_u16(o, nparams);
	for (uint16_t i = 0; i < nparams; i++)
		ig_pg_param_encode(o, &params[i]);
	ig_pg_out_u16(o, nresult_formats);
	for (uint16_t i = 0; i < nresult_formats; i++)
		ig_pg_out_u16(o, (uint16_t)formats[i]);
	ig_pg_out_end(o);
}

static void put_named(struct pg_out *o, char type, char what, const char *name)
{
	ig_pg_out_begin(o, type);
	ig_pg_out_u8(o, (uint8_t)what);
	ig_pg_out_cstr(o, name);
	ig_pg_out_end(o);
}

void ig_pg_put_describe(struct pg_out *o, char what, const char *name)
{
	put_named(o, 'D', what, name);
}

void ig_pg_put_close(struct pg_out *o, char what, const char *name)
{
	put_named(o, 'C', what, name);
}

void ig_pg_put_execute(struct pg_out *o, const char *portal, uint32_t max_rows)
{
	ig_pg_out_begin(o, 'E');
	ig_pg_out_cstr(o, portal);
	ig_pg_out_u32(o, max_rows);
	ig_pg_out_end(o);
}

static void put_empty(struct pg_out *o, char type)
{
	ig_pg_out_begin(o, type);
	ig_pg_out_end(o);
}

void ig_pg_put_sync(struct pg_out *o)
{
	put_empty(o, 'S');
}

void ig_pg_put_flush(struct pg_out *o)
{
	put_empty(o, 'H');
}

void ig_pg_put_terminate(struct pg_out *o)
{
	put_empty(o, 'X');
}

void ig_pg_put_query(struct pg_out *o, const char *sql)
{
	ig_pg_out_begin(o, 'Q');
	ig_pg_out_cstr(o, sql);
	ig_pg_out_end(o);
}

/* ---- the parser ---- */

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

int ig_pg_parse_message(const char *buf, size_t len, size_t max_len, struct pg_msg *m)
{
	if (len < 5)
		return PG_PARSE_INCOMPLETE;
	uint32_t n = be32(buf + 1);
	if (n < 4 || (uint64_t)n + 1 > max_len || n > (uint32_t)INT32_MAX - 1)
		return PG_PARSE_MALFORMED;
	if (len - 1 < n)
		return PG_PARSE_INCOMPLETE;
	m->type = buf[0];
	m->body = buf + 5;
	m->len = n - 4;
	return (int)n + 1;
}

/* A cursor over one body: every read checks what is left and, once one
 * fails, every later one fails too, so a decoder checks ok once at the end. */
struct rd {
	const char *p, *end;
	bool ok;
};

static struct rd rd_of(const struct pg_msg *m)
{
	return (struct rd){ m->body, m->body + m->len, true };
}

static bool rd_has(struct rd *r, size_t n)
{
	if (r->ok && (size_t)(r->end - r->p) >= n)
		return true;
	r->ok = false;
	return false;
}

static uint32_t rd_u32(struct rd *r)
{
	if (!rd_has(r, 4))
		return 0;
	uint32_t v = be32(r->p);
	r->p += 4;
	return v;
}

static uint16_t rd_u16(struct rd *r)
{
	if (!rd_has(r, 2))
		return 0;
	const unsigned char *u = (const unsigned char *)r->p;
	r->p += 2;
	return (uint16_t)(u[0] << 8 | u[1]);
}

static uint8_t rd_u8(struct rd *r)
{
	if (!rd_has(r, 1))
		return 0;
	return (uint8_t)*r->p++;
}

/* A NUL-terminated string inside the body, as a slice without its NUL. */
static ig_str rd_cstr(struct rd *r)
{
	if (!r->ok || r->p == r->end) {
		r->ok = false;
		return (ig_str){ 0 };
	}
	const char *nul = memchr(r->p, 0, (size_t)(r->end - r->p));
	if (!nul) {
		r->ok = false;
		return (ig_str){ 0 };
	}
	ig_str s = { r->p, (size_t)(nul - r->p) };
	r->p = nul + 1;
	return s;
}

/* The whole body read, nothing left over. */
static bool rd_done(const struct rd *r)
{
	return r->ok && r->p == r->end;
}

bool ig_pg_read_empty(const struct pg_msg *m)
{
	return m->len == 0;
}

bool ig_pg_read_auth(const struct pg_msg *m, struct pg_auth *a)
{
	struct rd r = rd_of(m);
	*a = (struct pg_auth){ .code = rd_u32(&r) };
	if (!r.ok)
		return false;
	switch (a->code) {
	case PG_AUTH_OK:
	case PG_AUTH_CLEARTEXT:
		return rd_done(&r);
	case PG_AUTH_MD5:
		if (!rd_has(&r, 4))
			return false;
		memcpy(a->salt, r.p, 4);
		r.p += 4;
		return rd_done(&r);
	case PG_AUTH_SASL:
		a->data = r.p;
		a->data_len = (uint32_t)(r.end - r.p);
		for (;;) {
			ig_str mech = rd_cstr(&r);
			if (!r.ok)
				return false;
			if (mech.len == 0)
				return rd_done(&r);
			if (ig_str_eq(mech, "SCRAM-SHA-256", 13))
				a->scram_sha256 = true;
		}
	case PG_AUTH_SASL_CONTINUE:
	case PG_AUTH_SASL_FINAL:
		a->data = r.p;
		a->data_len = (uint32_t)(r.end - r.p);
		return true;
	default:
		return true; /* a valid message asking for what the client does not do */
	}
}

bool ig_pg_read_backend_key(const struct pg_msg *m, uint32_t *pid, uint32_t *key)
{
	struct rd r = rd_of(m);
	*pid = rd_u32(&r);
	*key = rd_u32(&r);
	return rd_done(&r);
}

bool ig_pg_read_parameter_status(const struct pg_msg *m, ig_str *name, ig_str *value)
{
	struct rd r = rd_of(m);
	*name = rd_cstr(&r);
	*value = rd_cstr(&r);
	return rd_done(&r);
}

bool ig_pg_read_ready(const struct pg_msg *m, char *tx_status)
{
	struct rd r = rd_of(m);
	char s = (char)rd_u8(&r);
	if (!rd_done(&r) || (s != 'I' && s != 'T' && s != 'E'))
		return false;
	*tx_status = s;
	return true;
}

bool ig_pg_read_row_description(const struct pg_msg *m, struct pg_field *fields, uint16_t max, uint16_t *n)
{
	struct rd r = rd_of(m);
	*n = rd_u16(&r);
	if (!r.ok || *n > max)
		return false;
	for (uint16_t i = 0; i < *n; i++) {
		struct pg_field *f = &fields[i];
		f->name = rd_cstr(&r);
		f->table_oid = rd_u32(&r);
		f->column = rd_u16(&r);
		f->type_oid = rd_u32(&r);
		f->type_len = (int16_t)rd_u16(&r);
		f->type_mod = (int32_t)rd_u32(&r);
		f->format = (int16_t)rd_u16(&r);
		if (!r.ok || (f->format != 0 && f->format != 1))
			return false;
	}
	return rd_done(&r);
}

bool ig_pg_read_data_row(const struct pg_msg *m, struct pg_col *cols, uint16_t max, uint16_t *n)
{
	struct rd r = rd_of(m);
	*n = rd_u16(&r);
	if (!r.ok || *n > max)
		return false;
	for (uint16_t i = 0; i < *n; i++) {
		int32_t len = (int32_t)rd_u32(&r);
		if (!r.ok || len < -1)
			return false;
		if (len == -1) {
			cols[i] = (struct pg_col){ NULL, -1 };
			continue;
		}
		if (!rd_has(&r, (size_t)len))
			return false;
		cols[i] = (struct pg_col){ r.p, len };
		r.p += len;
	}
	return rd_done(&r);
}

/* Whether a tag's first word is one of those that count rows: by length
 * first, as every query's CommandComplete asks. */
static bool tag_counts_rows(const char *w, size_t n)
{
	switch (n) {
	case 4: return !memcmp(w, "MOVE", 4) || !memcmp(w, "COPY", 4);
	case 5: return !memcmp(w, "MERGE", 5) || !memcmp(w, "FETCH", 5);
	case 6:
		return !memcmp(w, "SELECT", 6) || !memcmp(w, "INSERT", 6) || !memcmp(w, "UPDATE", 6) ||
		       !memcmp(w, "DELETE", 6);
	default: return false;
	}
}

/* The decimal at the end of a tag, if its first word counts rows. */
static uint64_t tag_rows(ig_str tag)
{
	size_t word = 0;
	while (word < tag.len && tag.ptr[word] != ' ')
		word++;
	if (!tag_counts_rows(tag.ptr, word))
		return 0;
	size_t start = tag.len;
	while (start > word && tag.ptr[start - 1] >= '0' && tag.ptr[start - 1] <= '9')
		start--;
	uint64_t v = 0;
	for (size_t i = start; i < tag.len; i++) {
		unsigned d = (unsigned)(tag.ptr[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		v = v * 10 + d;
	}
	return v;
}

bool ig_pg_read_command_complete(const struct pg_msg *m, ig_str *tag, uint64_t *rows)
{
	struct rd r = rd_of(m);
	*tag = rd_cstr(&r);
	if (!rd_done(&r))
		return false;
	*rows = tag_rows(*tag);
	return true;
}

bool ig_pg_read_error(const struct pg_msg *m, struct pg_error_fields *e)
{
	*e = (struct pg_error_fields){ 0 };
	struct rd r = rd_of(m);
	ig_str localized = { 0 };
	for (;;) {
		char code = (char)rd_u8(&r);
		if (!r.ok)
			return false;
		if (code == 0)
			break;
		ig_str v = rd_cstr(&r);
		if (!r.ok)
			return false;
		switch (code) {
		case 'S': localized = v; break;
		case 'V': e->severity = v; break;
		case 'C':
			if (v.len == 5) {
				memcpy(e->sqlstate, v.ptr, 5);
				e->sqlstate[5] = 0;
			}
			break;
		case 'M': e->message = v; break;
		case 'D': e->detail = v; break;
		case 'H': e->hint = v; break;
		case 'n': e->constraint = v; break;
		case 's': e->schema = v; break;
		case 't': e->table = v; break;
		case 'c': e->column = v; break;
		case 'P': e->position = v; break;
		default: break; /* fields added later are skipped, as the protocol asks */
		}
	}
	if (!e->severity.ptr)
		e->severity = localized;
	return rd_done(&r);
}

bool ig_pg_read_notification(const struct pg_msg *m, uint32_t *pid, ig_str *channel, ig_str *payload)
{
	struct rd r = rd_of(m);
	*pid = rd_u32(&r);
	*channel = rd_cstr(&r);
	*payload = rd_cstr(&r);
	return rd_done(&r);
}

bool ig_pg_read_parameter_description(const struct pg_msg *m, uint32_t *oids, uint16_t max, uint16_t *n)
{
	struct rd r = rd_of(m);
	*n = rd_u16(&r);
	if (!r.ok || *n > max)
		return false;
	for (uint16_t i = 0; i < *n; i++)
		oids[i] = rd_u32(&r);
	return rd_done(&r);
}
