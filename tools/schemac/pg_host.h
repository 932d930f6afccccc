/* A blocking PostgreSQL client for the build (schemac --queries): one
 * connection over a unix socket or loopback TCP, the runtime's own wire
 * builder and parser (net/pg/wire.h) and SCRAM (net/pg/auth.h), compiled
 * for the host. Simple queries and Parse+Describe; nothing is executed
 * with parameters. Errors are the server's message (and position). */
#ifndef SCHEMAC_PG_HOST_H
#define SCHEMAC_PG_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ph_conn {
	int fd;
	char *buf; /* what has been read and not yet taken */
	size_t len, cap;
	size_t taken; /* the last message's bytes, dropped at the next read */
};

/* An error: the server's message (or the client's own), its SQLSTATE
 * ("" when not the server's) and the 1-based character position in the
 * statement (0 when none). */
struct ph_error {
	char message[1024];
	char sqlstate[6];
	int position;
};

/* host: a directory (unix socket dir/.s.PGSQL.port) or an address. */
bool ph_connect(struct ph_conn *c, const char *host, const char *port, const char *user, const char *password,
		const char *db, struct ph_error *e);
void ph_close(struct ph_conn *c);

/* Runs sql (the simple protocol: several statements allowed). rows: the
 * first column of the last result's rows as text (NULL for SQL NULL),
 * malloc'd, when rows is non-NULL. */
bool ph_simple(struct ph_conn *c, const char *sql, char ***rows, size_t *nrows, struct ph_error *e);

struct ph_column {
	char *name;
	uint32_t table_oid;
	uint16_t column;
	uint32_t type_oid;
};
struct ph_describe {
	uint32_t *params;
	size_t nparams;
	struct ph_column *cols;
	size_t ncols; /* 0 and has_rows false: a statement without rows */
	bool has_rows;
};
/* Parse (unnamed statement) + Describe + Sync. */
bool ph_describe(struct ph_conn *c, const char *sql, struct ph_describe *d, struct ph_error *e);

#endif
