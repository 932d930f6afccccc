/* `service --migrate` (migrate.h): its own loop, core 0's pool, one held
 * connection and a chain of callbacks, one statement at a time: lock,
 * record table, what is recorded (checked against the files), checksums
 * for records from before them, then per migration BEGIN, its file, its
 * record, COMMIT. The first failure ends the run (exit 1); the server rolls
 * a failed migration back when the connection closes. Also the serving
 * process's read-only check of the same records. Cold (net/cold.ld). */
#include "kernel/process/exit_codes.h"
#include "migrate.h"

#include "kernel/runtime/arena.h"
#include "kernel/runtime/config.h"
#include "ingot/log.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "ingot/pg.h"
#include "net/pg/settings.h"
#include "ingot/http.h"

#include <bearssl_hash.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Any fixed key: the runs of every copy of this service agree on it. */
#define MIGRATE_LOCK_SQL "SELECT pg_advisory_lock(7305385466125217321)"
#define MIGRATE_UNLOCK_SQL "SELECT pg_advisory_unlock(7305385466125217321)"
/* A table from before checksums gains the column in place (its rows get
   theirs in adopt_next); the ALTER is a no-op on a current one. */
#define MIGRATE_TABLE_SQL                                                                                    \
	"CREATE TABLE IF NOT EXISTS ingot_migrations (version integer PRIMARY KEY, name text NOT NULL, "      \
	"checksum text, applied_at timestamptz NOT NULL DEFAULT now()); "                                     \
	"ALTER TABLE ingot_migrations ADD COLUMN IF NOT EXISTS checksum text"
#define MIGRATE_RECORDS_SQL "SELECT version, name, coalesce(checksum, '') FROM ingot_migrations ORDER BY version"
#define MIGRATE_RECORD_SQL "INSERT INTO ingot_migrations (version, name, checksum) VALUES ($1, $2, $3)"
#define MIGRATE_ADOPT_SQL "UPDATE ingot_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL"
/* Versions are NNN: three digits. */
#define MIGRATE_MAX_VERSION 999

struct migrate_run {
	struct ig_loop loop;
	ig_arena arena;
	struct ig_pool blocks;
	const struct ig_migration_set *set;
	ig_pg_tx *tx;
	size_t next;                        /* the migration being applied, or the next to look at */
	bool recorded[MIGRATE_MAX_VERSION + 1];
	bool adopt[MIGRATE_MAX_VERSION + 1]; /* recorded without a checksum: gets the file's */
	unsigned adopt_next;
	char checksum[65];
	unsigned applied;
	int exit_code;
};

const struct ig_migration_set *ig_migrate_expected;

/* The SHA-256 of the file's bytes (the embedded text is the file as it
   is: tools/migrations/embed refuses a NUL), in hex. */
static void migration_checksum(const struct ig_migration *m, char hex[65])
{
	br_sha256_context h;
	unsigned char d[32];
	br_sha256_init(&h);
	br_sha256_update(&h, m->sql, strlen(m->sql));
	br_sha256_out(&h, d);
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = "0123456789abcdef"[d[i] >> 4];
		hex[2 * i + 1] = "0123456789abcdef"[d[i] & 15];
	}
	hex[64] = '\0';
}

enum mismatch { MATCH, CHANGED, RENAMED, MISSING, OUT_OF_ORDER };

/* What the records (version, name, checksum or '' : MIGRATE_RECORDS_SQL's
   rows, in version order) say against the files: the first disagreement,
   with the record's row (*row) and the file (*file) it concerns (-1 and
   NULL where there is none). Pending files and records newer than every
   file are no disagreement. adopt, when not NULL, gets the versions
   recorded without a checksum. */
static enum mismatch migrate_compare(const struct ig_migration_set *set, const ig_pg_result *res, bool out_of_order,
				     bool *adopt, uint32_t *row, const struct ig_migration **file)
{
	unsigned newest_recorded = 0, newest_file = set->count ? set->list[set->count - 1].version : 0;
	bool recorded[MIGRATE_MAX_VERSION + 1] = { false };
	*row = UINT32_MAX;
	*file = NULL;
	for (uint32_t i = 0; i < res->rows; i++) {
		const ig_pg_value *v = ig_pg_at(res, i, 0), *name = ig_pg_at(res, i, 1), *sum = ig_pg_at(res, i, 2);
		if (v->null || v->i < 0 || v->i > MIGRATE_MAX_VERSION)
			continue;
		unsigned version = (unsigned)v->i;
		recorded[version] = true;
		newest_recorded = version > newest_recorded ? version : newest_recorded;
		const struct ig_migration *m = NULL;
		for (size_t k = 0; k < set->count && !m; k++)
			if (set->list[k].version == version)
				m = &set->list[k];
		*row = i;
		if (!m) {
			if (version < newest_file)
				return MISSING;
			continue; /* a later release's: rolling back to this one still starts */
		}
		*file = m;
		if (name->s.len != strlen(m->name) || memcmp(name->s.ptr, m->name, name->s.len) != 0)
			return RENAMED;
		if (!sum->s.len) {
			if (adopt)
				adopt[version] = true;
			continue;
		}
		char hex[65];
		migration_checksum(m, hex);
		if (sum->s.len != 64 || memcmp(sum->s.ptr, hex, 64) != 0)
			return CHANGED;
	}
	*row = UINT32_MAX;
	*file = NULL;
	for (size_t k = 0; k < set->count && !out_of_order; k++)
		if (!recorded[set->list[k].version] && set->list[k].version < newest_recorded) {
			*file = &set->list[k];
			for (uint32_t i = 0; i < res->rows; i++)
				if (!ig_pg_at(res, i, 0)->null && ig_pg_at(res, i, 0)->i == (int64_t)newest_recorded)
					*row = i;
			return OUT_OF_ORDER;
		}
	return MATCH;
}

/* The one error line of a disagreement: the recorded file and the local
   one by name (NNN_name.sql), their checksums where they differ. */
static void migrate_log_mismatch(enum mismatch what, const ig_pg_result *res, uint32_t row,
				 const struct ig_migration *file)
{
	static const char *const msgs[] = {
		[CHANGED] = "an applied migration's file changed: a migration is never edited once applied, "
			    "add a new one (or restore the file)",
		[RENAMED] = "an applied migration has another name under the same version: "
			    "this database was migrated by other files (another app's?)",
		[MISSING] = "an applied migration is not among this binary's files: "
			    "this database was migrated by other files (another app's?)",
		[OUT_OF_ORDER] = "a pending migration is numbered below the newest applied one: renumber it above, "
				 "or set INGOT_MIGRATE_OUT_OF_ORDER=true to apply it anyway",
	};
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_ERROR, msgs[what]))
		return;
	char buf[300];
	if (row != UINT32_MAX) {
		const ig_pg_value *name = ig_pg_at(res, row, 1), *sum = ig_pg_at(res, row, 2);
		int n = snprintf(buf, sizeof buf, "%.*s.sql", (int)(name->s.len < 250 ? name->s.len : 250), name->s.ptr);
		ig_log_str(&l, "recorded", buf, (size_t)n);
		if (what == CHANGED)
			ig_log_str(&l, "recorded_sha256", sum->s.ptr, sum->s.len);
	}
	if (file) {
		int n = snprintf(buf, sizeof buf, "%s.sql", file->name);
		ig_log_str(&l, "local", buf, (size_t)n);
		if (what == CHANGED) {
			char hex[65];
			migration_checksum(file, hex);
			ig_log_cstr(&l, "local_sha256", hex);
		}
	}
	ig_log_end(&l);
}

static void migrate_log_error(const char *what, const struct ig_migration *m, const ig_pg_error *err)
{
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_ERROR, what))
		return;
	if (m)
		ig_log_cstr(&l, "migration", m->name);
	ig_log_cstr(&l, "error", ig_pg_error_name(err->kind));
	ig_log_cstr(&l, "sqlstate", err->sqlstate);
	ig_log_str(&l, "message", err->message.ptr, err->message.len);
	if (err->detail.len)
		ig_log_str(&l, "detail", err->detail.ptr, err->detail.len);
	ig_log_end(&l);
}

static void migrate_stop(struct migrate_run *r, int code)
{
	r->exit_code = code;
	if (r->tx)
		ig_pg_release(r->tx);
	r->tx = NULL;
	r->loop.running = false;
}

/* The end of a run that went well: the lock given back, the summary. */
static void unlocked(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	(void)err; /* the session's end gives the lock back anyway */
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "migrations done")) {
		ig_log_int(&l, "applied", r->applied);
		ig_log_int(&l, "known", (int64_t)r->set->count);
		ig_log_end(&l);
	}
	migrate_stop(r, IG_EXIT_OK);
}

static void apply_next(struct migrate_run *r);

/* Each step of one migration: a failure ends the run. */
static bool step_failed(struct migrate_run *r, const ig_pg_error *err, const char *what)
{
	if (!err)
		return false;
	migrate_log_error(what, &r->set->list[r->next], err);
	migrate_stop(r, IG_EXIT_FAILURE); /* released inside the transaction: the connection closes, the server rolls back */
	return true;
}

static void committed(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (step_failed(r, err, "migration failed to commit"))
		return;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "migration applied")) {
		ig_log_cstr(&l, "migration", r->set->list[r->next].name);
		ig_log_end(&l);
	}
	r->applied++;
	r->next++;
	apply_next(r);
}

static void recorded(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (!step_failed(r, err, "migration failed to be recorded"))
		ig_pg_tx_simple(r->tx, "COMMIT", committed, r);
}

static void ran(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (step_failed(r, err, "migration failed"))
		return;
	const struct ig_migration *m = &r->set->list[r->next];
	migration_checksum(m, r->checksum);
	ig_pg_value params[3] = { ig_pg_int4((int32_t)m->version), ig_pg_text((ig_str){ m->name, strlen(m->name) }),
				  ig_pg_text((ig_str){ r->checksum, 64 }) };
	ig_pg_tx_query(r->tx, MIGRATE_RECORD_SQL, params, 3, recorded, r);
}

static void begun(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (!step_failed(r, err, "migration failed to begin"))
		ig_pg_tx_simple(r->tx, r->set->list[r->next].sql, ran, r);
}

/* The next migration not recorded, in its own transaction; the lock
 * given back once none is left. */
static void apply_next(struct migrate_run *r)
{
	while (r->next < r->set->count && r->recorded[r->set->list[r->next].version])
		r->next++;
	if (r->next == r->set->count) {
		ig_pg_tx_simple(r->tx, MIGRATE_UNLOCK_SQL, unlocked, r);
		return;
	}
	ig_pg_tx_simple(r->tx, "BEGIN", begun, r);
}

static bool run_failed(struct migrate_run *r, const ig_pg_error *err, const char *what)
{
	if (!err)
		return false;
	migrate_log_error(what, NULL, err);
	migrate_stop(r, IG_EXIT_FAILURE);
	return true;
}

static void adopt_next(struct migrate_run *r);

static void adopted(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (run_failed(r, err, "migrations: a checksum could not be recorded"))
		return;
	struct ig_logline l;
	const struct ig_migration *m = &r->set->list[r->adopt_next];
	if (ig_log_begin(&l, IG_LOG_INFO, "migration checksum recorded (a record from before checksums)")) {
		ig_log_cstr(&l, "migration", m->name);
		ig_log_cstr(&l, "sha256", r->checksum);
		ig_log_end(&l);
	}
	r->adopt_next++;
	adopt_next(r);
}

/* Records from before checksums take the current file's, one at a time
   (its name was checked): from then on a change is seen. */
static void adopt_next(struct migrate_run *r)
{
	while (r->adopt_next < r->set->count && !r->adopt[r->set->list[r->adopt_next].version])
		r->adopt_next++;
	if (r->adopt_next == r->set->count) {
		apply_next(r);
		return;
	}
	const struct ig_migration *m = &r->set->list[r->adopt_next];
	migration_checksum(m, r->checksum);
	ig_pg_value params[2] = { ig_pg_int4((int32_t)m->version), ig_pg_text((ig_str){ r->checksum, 64 }) };
	ig_pg_tx_query(r->tx, MIGRATE_ADOPT_SQL, params, 2, adopted, r);
}

static bool migrate_out_of_order(void)
{
	return ig_pg_settings_values.migrate_out_of_order;
}

static void versions_read(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	if (run_failed(r, err, "migrations: the record table could not be read"))
		return;
	uint32_t row;
	const struct ig_migration *file;
	enum mismatch what = migrate_compare(r->set, res, migrate_out_of_order(), r->adopt, &row, &file);
	if (what != MATCH) {
		migrate_log_mismatch(what, res, row, file);
		migrate_stop(r, IG_EXIT_CONFIG);
		return;
	}
	for (uint32_t i = 0; i < res->rows; i++) {
		const ig_pg_value *v = ig_pg_at(res, i, 0);
		if (!v->null && v->i >= 0 && v->i <= MIGRATE_MAX_VERSION)
			r->recorded[v->i] = true;
	}
	adopt_next(r);
}

const char *ig_migrate_runtime_sql;

static void runtime_ready(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (!run_failed(r, err, "migrations: the runtime's own tables could not be made"))
		ig_pg_tx_query(r->tx, MIGRATE_RECORDS_SQL, NULL, 0, versions_read, r);
}

static void table_ready(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (run_failed(r, err, "migrations: the record table could not be made"))
		return;
	if (ig_migrate_runtime_sql)
		ig_pg_tx_simple(r->tx, ig_migrate_runtime_sql, runtime_ready, r);
	else
		ig_pg_tx_query(r->tx, MIGRATE_RECORDS_SQL, NULL, 0, versions_read, r);
}

static void locked(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (!run_failed(r, err, "migrations: the advisory lock was not taken"))
		ig_pg_tx_simple(r->tx, MIGRATE_TABLE_SQL, table_ready, r);
}

/* The advisory lock comes before anything else, the record table included:
 * a concurrent run waits here until this one is done. */
static void held(ig_pg_tx *tx, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	if (run_failed(r, err, "migrations: no connection to the database"))
		return;
	r->tx = tx;
	ig_pg_tx_simple(tx, MIGRATE_LOCK_SQL, locked, r);
}

__attribute__((cold)) int ig_migrate_main(int argc, char **argv, const char *name, const struct ig_migration_set *set)
{
	/* --migrate out, the rest parsed as the database's settings only. */
	int n = 0;
	for (int i = 0; i < argc; i++)
		if (i == 0 || strcmp(argv[i], "--migrate") != 0)
			argv[n++] = argv[i];
	argv[n] = NULL;
	const struct ig_settings *const parts[] = { &ig_pg_settings };
	const struct ig_config_args args = { .argc = n, .argv = argv, .name = name, .version = "" };
	switch (ig_config_parse(parts, IG_COUNTOF(parts), &args)) {
	case IG_CONFIG_OK: break;
	case IG_CONFIG_EXIT: return IG_EXIT_OK;
	case IG_CONFIG_ERROR: return IG_EXIT_CONFIG;
	}
	if (!ig_pg_configured()) {
		fprintf(stderr, "ingot: --migrate: no database configured (set DATABASE_URL, or PGHOST / PGDATABASE)\n");
		return IG_EXIT_CONFIG;
	}
	for (size_t i = 0; i < set->count; i++) {
		if (set->list[i].version > MIGRATE_MAX_VERSION || (i && set->list[i].version <= set->list[i - 1].version)) {
			fprintf(stderr, "ingot: --migrate: the embedded migrations are out of order at %s\n", set->list[i].name);
			return IG_EXIT_CONFIG;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	/* On this stack, which lives as long as the run: in .bss it would sit
	   beside the server's hot variables and cost an idle server a page. */
	struct migrate_run run = { .set = set, .exit_code = IG_EXIT_FAILURE }, *r = &run;
	if (ig_loop_init(&r->loop, 0) != 0) {
		fprintf(stderr, "ingot: --migrate: cannot make a loop\n");
		return IG_EXIT_FAILURE;
	}
	ig_pool_init(&r->blocks, 16 * 1024, 16, 1u << 16);
	ig_arena_init(&r->arena, &r->blocks, 64u << 20);
	struct ig_pg_pool *pool = ig_pg_core_pool(&r->loop);
	if (!pool) {
		fprintf(stderr, "ingot: --migrate: out of memory\n");
		return IG_EXIT_FAILURE;
	}
	ig_pg_pool_hold(pool, &r->arena, held, r);
	ig_loop_run(&r->loop);
	return r->exit_code;
}

/* The serving process's check: its own arena (the pool's scratch is
   reset under it) of 16 KiB blocks taken one at a time, a block for a few
   dozen records, given back to its pool once the check is done. */
struct serve_check {
	struct ig_pool blocks;
	ig_arena arena;
	int backend;
};

static void serve_checked(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct serve_check *c = arg;
	if (err && strcmp(err->sqlstate, "42P01") == 0) {
		ig_log_msg(IG_LOG_WARN, "migrations: no ingot_migrations table: this database was not migrated "
					"(service --migrate)");
	} else if (err) {
		/* Not a disagreement: the schema could not be read (a lost
		   connection, a permission). Serving as before the check. */
		migrate_log_error("migrations: the record table could not be read; not checked", NULL, err);
	} else {
		uint32_t row;
		const struct ig_migration *file;
		enum mismatch what = migrate_compare(ig_migrate_expected, res, migrate_out_of_order(), NULL, &row, &file);
		if (what != MATCH) {
			migrate_log_mismatch(what, res, row, file);
			ig_arena_reset(&c->arena);
			return; /* /readyz stays 503 for this process's life: the schema is not the one it was built for */
		}
		size_t known = 0; /* files with a record: the rest are pending */
		for (uint32_t i = 0; i < res->rows; i++)
			for (size_t k = 0; k < ig_migrate_expected->count; k++)
				known += !ig_pg_at(res, i, 0)->null &&
					 ig_pg_at(res, i, 0)->i == (int64_t)ig_migrate_expected->list[k].version;
		if (known < ig_migrate_expected->count)
			ig_log_msg(IG_LOG_WARN, "migrations: some are pending (service --migrate)");
	}
	ig_arena_reset(&c->arena);
	ig_backend_set_up(c->backend, true);
}

__attribute__((cold)) void ig_migrate_serve_check(struct ig_pg_pool *pool, int backend)
{
	static atomic_bool started;
	if (!ig_migrate_expected || !ig_migrate_expected->count) {
		ig_backend_set_up(backend, true);
		return;
	}
	if (atomic_exchange(&started, true))
		return; /* the first pool to connect checks for the process */
	/* Static, not malloc'd: the check is the process's for its life, and a
	   heap object only a callback's argument points to looks leaked. */
	static struct serve_check check;
	struct serve_check *c = &check;
	c->backend = backend;
	ig_pool_init(&c->blocks, 16 * 1024, 1, 1u << 10);
	ig_arena_init(&c->arena, &c->blocks, 1u << 20);
	ig_pg_pool_query(pool, &c->arena, MIGRATE_RECORDS_SQL, NULL, 0, serve_checked, c);
}
