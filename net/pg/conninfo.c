/* DATABASE_URL and libpq's PG* variables into a pg_conninfo (see
 * conninfo.h). Runs once at start; every error names the part that is
 * wrong but never echoes the password. */
#include "net/pg/conninfo.h"

#include "ingot/base.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errcap, int status, const char *fmt, ...)
{
	if (errcap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errcap, fmt, ap);
		va_end(ap);
	}
	return status;
}

static const char *env_get(const char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* The %-decoding of s[0..n) into dst[cap] (NUL-terminated); false on a
 * bad escape, an encoded NUL, or when it does not fit (*too_long). */
static bool decode_into(char *dst, size_t cap, const char *s, size_t n, bool *too_long)
{
	size_t o = 0;
	*too_long = false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			if (n - i < 3)
				return false;
			int h = ig_hex_digit(s[i + 1]), l = ig_hex_digit(s[i + 2]);
			if (h < 0 || l < 0 || (h | l) == 0)
				return false;
			c = (char)(h << 4 | l);
			i += 2;
		}
		if (o + 1 >= cap) {
			*too_long = true;
			return false;
		}
		dst[o++] = c;
	}
	dst[o] = 0;
	return true;
}

static bool copy_into(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n >= cap)
		return false;
	memcpy(dst, s, n + 1);
	return true;
}

/* A decimal in 1..max (0..max when zero_ok). */
static bool parse_uint(const char *s, uint32_t max, bool zero_ok, uint32_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > max)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > max || (v == 0 && !zero_ok))
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_sslmode(const char *s, enum pg_sslmode *mode, bool *verify_ca)
{
	*verify_ca = false;
	if (strcmp(s, "disable") == 0)
		*mode = PG_SSL_DISABLE;
	else if (strcmp(s, "allow") == 0 || strcmp(s, "prefer") == 0)
		*mode = PG_SSL_PREFER;
	else if (strcmp(s, "require") == 0)
		*mode = PG_SSL_REQUIRE;
	else if (strcmp(s, "verify-full") == 0)
		*mode = PG_SSL_VERIFY_FULL;
	else if (strcmp(s, "verify-ca") == 0)
		*verify_ca = true;
	else
		return false;
	return !*verify_ca;
}

const char *ig_pg_sslmode_name(enum pg_sslmode mode)
{
	switch (mode) {
	case PG_SSL_DISABLE: return "disable";
	case PG_SSL_PREFER: return "prefer";
	case PG_SSL_REQUIRE: return "require";
	case PG_SSL_VERIFY_FULL: return "verify-full";
	}
	return "?";
}

/* The settings by their libpq names and PG* variables; the strings are
 * copied into the field at offset (of size bytes), the others parsed. */
enum field { F_HOST, F_PORT, F_USER, F_PASSWORD, F_DBNAME, F_SSLMODE, F_SSLROOTCERT, F_APP, F_TIMEOUT, F_COUNT };
#define STR_FIELD(m) offsetof(struct pg_conninfo, m), sizeof((struct pg_conninfo *)0)->m
static const struct {
	const char *key, *var;
	size_t offset, size;
} fields[F_COUNT] = {
	[F_HOST] = { "host", "PGHOST", STR_FIELD(host) },
	[F_PORT] = { "port", "PGPORT", 0, 0 },
	[F_USER] = { "user", "PGUSER", STR_FIELD(user) },
	[F_PASSWORD] = { "password", "PGPASSWORD", STR_FIELD(password) },
	[F_DBNAME] = { "dbname", "PGDATABASE", STR_FIELD(dbname) },
	[F_SSLMODE] = { "sslmode", "PGSSLMODE", 0, 0 },
	[F_SSLROOTCERT] = { "sslrootcert", "PGSSLROOTCERT", STR_FIELD(sslrootcert) },
	[F_APP] = { "application_name", "PGAPPNAME", STR_FIELD(application_name) },
	[F_TIMEOUT] = { "connect_timeout", "PGCONNECT_TIMEOUT", 0, 0 },
};

/* One setting by its libpq name (value already decoded); given[] records
 * it, so that the environment and the defaults do not overwrite it. */
static int set_field(struct pg_conninfo *ci, bool *given, const char *key, const char *value, char *err,
		     size_t errcap)
{
	size_t f = 0;
	while (f < F_COUNT && strcmp(fields[f].key, key) != 0)
		f++;
	if (f == F_COUNT)
		return fail(err, errcap, PG_CONNINFO_UNKNOWN_PARAM, "unknown parameter \"%.32s\"", key);
	uint32_t n;
	bool verify_ca;
	switch ((enum field)f) {
	case F_HOST:
		if (strchr(value, ','))
			return fail(err, errcap, PG_CONNINFO_UNSUPPORTED, "several hosts are not supported");
		break;
	case F_PORT:
		if (!parse_uint(value, 65535, false, &n))
			return fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "bad port \"%.16s\"", value);
		ci->port = (uint16_t)n;
		break;
	case F_SSLMODE:
		if (!parse_sslmode(value, &ci->sslmode, &verify_ca))
			return verify_ca ? fail(err, errcap, PG_CONNINFO_UNSUPPORTED,
						"sslmode=verify-ca is not supported: use verify-full")
					 : fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "bad sslmode \"%.16s\"", value);
		break;
	case F_TIMEOUT:
		if (!parse_uint(value, 4000000, true, &n))
			return fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "bad connect_timeout \"%.16s\"", value);
		ci->connect_timeout_ms = n * 1000;
		break;
	default:
		break;
	}
	if (fields[f].size && !copy_into((char *)ci + fields[f].offset, fields[f].size, value))
		return fail(err, errcap, PG_CONNINFO_TOO_LONG, "%s too long", key);
	given[f] = true;
	return PG_CONNINFO_OK;
}

/* A %-decoded part of the URL into a field; what names the part (never
 * its text: it may be the password). */
static int set_decoded(struct pg_conninfo *ci, bool *given, const char *key, const char *s, size_t n,
		       char *err, size_t errcap)
{
	char buf[PG_CONNINFO_PATH_MAX];
	bool too_long;
	if (!decode_into(buf, sizeof buf, s, n, &too_long))
		return too_long ? fail(err, errcap, PG_CONNINFO_TOO_LONG, "%s too long", key)
				: fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "bad %%-escape in %s", key);
	return set_field(ci, given, key, buf, err, errcap);
}

/* scheme://[user[:password]@][host][:port][/dbname][?key=value&...] */
static int parse_url(struct pg_conninfo *ci, bool *given, const char *url, char *err, size_t errcap)
{
	const char *p;
	if (strncmp(url, "postgresql://", 13) == 0)
		p = url + 13;
	else if (strncmp(url, "postgres://", 11) == 0)
		p = url + 11;
	else
		return fail(err, errcap, PG_CONNINFO_BAD_SCHEME, "the URL must start with postgres:// or postgresql://");
	size_t auth_len = strcspn(p, "/?");
	const char *auth_end = p + auth_len;
	const char *at = NULL;
	for (const char *q = p; q < auth_end; q++)
		if (*q == '@')
			at = q;
	int st;
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		const char *user_end = colon ? colon : at;
		if (user_end > p && (st = set_decoded(ci, given, "user", p, (size_t)(user_end - p), err, errcap)))
			return st;
		if (colon && (st = set_decoded(ci, given, "password", colon + 1, (size_t)(at - colon - 1), err, errcap)))
			return st;
		p = at + 1;
	}
	/* host[:port], or [v6][:port] */
	const char *host = p, *host_end, *port = NULL;
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(auth_end - p));
		if (!close)
			return fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "unclosed [ in the host");
		host = p + 1;
		host_end = close;
		if (close + 1 < auth_end && close[1] != ':')
			return fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "text after ] in the host");
		if (close + 1 < auth_end)
			port = close + 2;
	} else {
		host_end = memchr(p, ':', (size_t)(auth_end - p));
		if (host_end)
			port = host_end + 1;
		else
			host_end = auth_end;
	}
	if (memchr(host, ',', (size_t)(auth_end - host)))
		return fail(err, errcap, PG_CONNINFO_UNSUPPORTED, "several hosts are not supported");
	if (host_end > host && (st = set_decoded(ci, given, "host", host, (size_t)(host_end - host), err, errcap)))
		return st;
	if (port && (st = set_decoded(ci, given, "port", port, (size_t)(auth_end - port), err, errcap)))
		return st;
	p = auth_end;
	if (*p == '/') {
		p++;
		size_t n = strcspn(p, "?");
		if (n && (st = set_decoded(ci, given, "dbname", p, n, err, errcap)))
			return st;
		p += n;
	}
	if (*p == '?')
		p++;
	while (*p) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		if (!eq)
			return fail(err, errcap, PG_CONNINFO_BAD_SYNTAX, "a parameter without '='");
		char key[32];
		bool too_long;
		if (!decode_into(key, sizeof key, p, (size_t)(eq - p), &too_long))
			return fail(err, errcap, PG_CONNINFO_UNKNOWN_PARAM, "unknown or malformed parameter name");
		if ((st = set_decoded(ci, given, key, eq + 1, (size_t)(p + n - eq - 1), err, errcap)))
			return st;
		p += n;
		if (*p == '&')
			p++;
	}
	return PG_CONNINFO_OK;
}

int ig_pg_conninfo_parse(struct pg_conninfo *ci, const char *url, const char *const *env, char *err, size_t errcap)
{
	*ci = (struct pg_conninfo){ 0 };
	if (errcap)
		err[0] = 0;
	bool given[F_COUNT] = { 0 };
	int st;
	if (url && *url && (st = parse_url(ci, given, url, err, errcap)))
		return st;
	for (size_t f = 0; f < F_COUNT; f++) {
		const char *v = env_get(env, fields[f].var);
		if (given[f] || !v || !*v)
			continue;
		if ((st = set_field(ci, given, fields[f].key, v, err, errcap))) {
			size_t len = strlen(err);
			if (errcap > len)
				snprintf(err + len, errcap - len, " (from %s)", fields[f].var);
			return st;
		}
	}
	if (!given[F_HOST])
		copy_into(ci->host, sizeof ci->host, PG_DEFAULT_SOCKET_DIR);
	if (!given[F_PORT])
		ci->port = 5432;
	if (!given[F_USER]) {
		const char *os_user = env_get(env, "USER");
		if (!os_user || !*os_user || !copy_into(ci->user, sizeof ci->user, os_user))
			copy_into(ci->user, sizeof ci->user, "postgres");
	}
	if (!given[F_DBNAME])
		copy_into(ci->dbname, sizeof ci->dbname, ci->user);
	if (!given[F_SSLMODE])
		ci->sslmode = PG_SSL_PREFER;
	ci->unix_socket = ci->host[0] == '/';
	return PG_CONNINFO_OK;
}

bool ig_pg_conninfo_configured(const char *url, const char *const *env)
{
	const char *host = env_get(env, "PGHOST"), *db = env_get(env, "PGDATABASE");
	return (url && *url) || (host && *host) || (db && *db);
}

size_t ig_pg_conninfo_redacted(const struct pg_conninfo *ci, char *buf, size_t cap)
{
	bool v6 = strchr(ci->host, ':') != NULL;
	int n;
	if (ci->unix_socket)
		n = snprintf(buf, cap, "postgresql://%s%s@/%s?host=%s&port=%u&sslmode=%s%s%s", ci->user,
			     ci->password[0] ? ":***" : "", ci->dbname, ci->host, ci->port, ig_pg_sslmode_name(ci->sslmode),
			     ci->application_name[0] ? "&application_name=" : "", ci->application_name);
	else
		n = snprintf(buf, cap, "postgresql://%s%s@%s%s%s:%u/%s?sslmode=%s%s%s", ci->user,
			     ci->password[0] ? ":***" : "", v6 ? "[" : "", ci->host, v6 ? "]" : "", ci->port, ci->dbname,
			     ig_pg_sslmode_name(ci->sslmode), ci->application_name[0] ? "&application_name=" : "",
			     ci->application_name);
	if (n < 0)
		n = 0;
	return cap == 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}
