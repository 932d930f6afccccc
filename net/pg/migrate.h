/* `service --migrate`: the app's SQL migrations (schemas/migrations/
 * NNN_name.sql, embedded at build time by tools/migrations into a table of
 * struct ig_migration) applied in order to the configured database. The
 * program's main() hands the table over; net/pg knows nothing generated. */
#ifndef NET_PG_MIGRATE_H
#define NET_PG_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct ig_pg_pool;

/* One file: NNN (its version, unique, ascending in the table), the name
 * without ".sql" ("001_posts"), and its text. */
struct ig_migration {
	unsigned version;
	const char *name;
	const char *sql;
};

struct ig_migration_set {
	const struct ig_migration *list;
	size_t count;
};

/* Whether argv asks for --migrate (anywhere after argv[0]). Inline: every
 * start asks, and migrate.c sits in the cold block (net/cold.ld) that a
 * server's start must not touch. */
static inline bool ig_migrate_requested(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--migrate") == 0)
			return true;
	return false;
}

/* Runs the migrations and returns the exit code: 0 when every one is
 * applied (a second run applies nothing and changes no row), 1 when the
 * database failed (unreachable, a migration's error: that migration is
 * rolled back, none after it runs), 2 for bad settings (DATABASE_URL,
 * INGOT_PG_*: the only settings it reads) or no database configured.
 * Opens no listener. On one session, first of all, it takes a
 * PostgreSQL advisory lock, so that concurrent runs apply each migration
 * once and all exit 0; then it creates the record table ingot_migrations
 * (version, name, checksum: the SHA-256 of the file's bytes, applied_at)
 * in the connection's default schema if missing, or adds the checksum
 * column to one from before checksums, and checks the records against the
 * embedded files: an applied migration whose file changed, or whose name
 * differs under the same version, a recorded version missing among the
 * files (below the newest file: a newer one is a later release's, and is
 * let be), or a pending one numbered below the newest applied (unless
 * INGOT_MIGRATE_OUT_OF_ORDER) stops the run with exit 2 and one error line
 * naming the recorded and the local file, before anything is applied. A
 * record without a checksum (a table from before them) gets the current
 * file's. Then it applies each migration not recorded in its own
 * transaction, with its record. One JSON log line per migration applied,
 * and one at the end. */
int ig_migrate_main(int argc, char **argv, const char *name, const struct ig_migration_set *set);

/* The runtime's own migration, run by ig_migrate_main after the record
 * table and before the app's files, every time (so it must be idempotent:
 * CREATE ... IF NOT EXISTS): the cron claims table when the document has
 * jobs. Set before ig_migrate_main (net/api/main.c); NULL: none. */
extern const char *ig_migrate_runtime_sql;

/* The serving process's check, the same as --migrate's without writing:
 * set before the start (net/api/main.c) to the embedded migrations;
 * NULL or empty, no check. Read by ig_migrate_serve_check. */
extern const struct ig_migration_set *ig_migrate_expected;
/* Run once per process, by net/pg's pool at its first connection (through
 * ig_pg_schema_check, on that pool's loop): reads ingot_migrations and
 * calls ig_backend_set_up(backend, true) unless the records disagree with
 * ig_migrate_expected, which logs one error line and leaves /readyz at
 * 503. No table yet (nothing migrated) or pending migrations: a warning,
 * and ready, as before the check. */
void ig_migrate_serve_check(struct ig_pg_pool *pool, int backend);

#endif
