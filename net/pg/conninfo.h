/* Where the database is and how to log in: DATABASE_URL in libpq's URI form
 * (postgres:// or postgresql://user:password@host:port/dbname?param=...)
 * with libpq's PG* environment variables filling what the URL leaves out.
 * Parsed once at start into fixed fields (no allocation); a bad URL is an
 * error value, whose text never holds the password. */
#ifndef NET_PG_CONNINFO_H
#define NET_PG_CONNINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libpq's allow is taken as prefer (it only ever encrypts more); verify-ca
 * is refused (verify-full checks the chain and the name: use it). Over a
 * unix socket there is no TLS whatever the mode, as with libpq. */
enum pg_sslmode { PG_SSL_DISABLE, PG_SSL_PREFER, PG_SSL_REQUIRE, PG_SSL_VERIFY_FULL };

#define PG_CONNINFO_NAME_MAX 64   /* user, dbname, application_name: NAMEDATALEN */
#define PG_CONNINFO_HOST_MAX 256  /* a name, an address, or a socket directory */
#define PG_CONNINFO_PASSWORD_MAX 256
#define PG_CONNINFO_PATH_MAX 1024 /* sslrootcert */
#define PG_DEFAULT_SOCKET_DIR "/var/run/postgresql" /* Debian's libpq's default host */

/* Every string NUL-terminated; "" when absent. */
struct pg_conninfo {
	char host[PG_CONNINFO_HOST_MAX]; /* a name or an IP address (no brackets), or, when
					   unix_socket, the directory of .s.PGSQL.<port> */
	bool unix_socket;                /* host starts with '/' */
	uint16_t port;                   /* 5432 by default */
	char user[PG_CONNINFO_NAME_MAX];        /* default: PGUSER, else USER, else "postgres" */
	char password[PG_CONNINFO_PASSWORD_MAX]; /* default: PGPASSWORD, else none */
	char dbname[PG_CONNINFO_NAME_MAX];      /* default: PGDATABASE, else the user */
	enum pg_sslmode sslmode;                /* default: PGSSLMODE, else prefer */
	char sslrootcert[PG_CONNINFO_PATH_MAX]; /* PEM file of the anchors for verify-full;
						   "" means the system's (net/tls's built-in) */
	char application_name[PG_CONNINFO_NAME_MAX];
	uint32_t connect_timeout_ms;            /* connect_timeout (seconds in the URL); 0: unset */
};

enum pg_conninfo_status {
	PG_CONNINFO_OK = 0,
	PG_CONNINFO_BAD_SCHEME = -1,   /* not postgres:// or postgresql:// */
	PG_CONNINFO_BAD_SYNTAX = -2,   /* a bad %-escape, port, bracket, or value */
	PG_CONNINFO_UNKNOWN_PARAM = -3,
	PG_CONNINFO_UNSUPPORTED = -4,  /* several hosts, sslmode=verify-ca... */
	PG_CONNINFO_TOO_LONG = -5,     /* a field over its bound */
};

/* Fills ci from url (NULL or "" for none: then env alone) and env, an
 * environ-style array of "NAME=value" (NULL-terminated; NULL for none) read
 * for PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSSLMODE PGSSLROOTCERT
 * PGAPPNAME PGCONNECT_TIMEOUT (and USER). What the URL gives wins over env.
 * URL parameters: host (a socket directory when it starts with '/'), port,
 * user, password, dbname, sslmode, sslrootcert, application_name,
 * connect_timeout; any other is refused. Every part is %-decoded; an IPv6
 * address is written in brackets. On failure returns the status and writes
 * a one-line reason into err[errcap] (never the password). */
int ig_pg_conninfo_parse(struct pg_conninfo *ci, const char *url, const char *const *env, char *err, size_t errcap);

/* Whether the database is configured at all: url non-empty, or env sets
 * PGHOST or PGDATABASE. */
bool ig_pg_conninfo_configured(const char *url, const char *const *env);

/* ci as a URL for logs and errors, without the password (and with
 * "password=***" in its place when there is one); returns the length
 * (truncated to cap - 1, always NUL-terminated when cap > 0). */
size_t ig_pg_conninfo_redacted(const struct pg_conninfo *ci, char *buf, size_t cap);

/* The sslmode's name as libpq spells it. */
const char *ig_pg_sslmode_name(enum pg_sslmode mode);

#endif
