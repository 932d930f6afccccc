/* `service --migrate` (migrate.h): its own loop, core 0's pool, one held
 * connection and a chain of callbacks, one statement at a time: lock,
 * record table, what is recorded, then per migration BEGIN, its file, its
 * record, COMMIT. The first failure ends the run (exit 1); the server rolls
 * a failed migration back when the connection closes. Cold (net/cold.ld). */
#include "kernel/process/exit_codes.h"
#include "migrate.h"

#include "kernel/runtime/arena.h"
#include "kernel/runtime/config.h"
#include "ingot/log.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "ingot/pg.h"
#include "net/pg/settings.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* Any fixed key: the runs of every copy of this service agree on it. */
#define MIGRATE_LOCK_SQL "SELECT pg_advisory_lock(7305385466125217321)"
#define MIGRATE_UNLOCK_SQL "SELECT pg_advisory_unlock(7305385466125217321)"
#define MIGRATE_TABLE_SQL                                                                                    \
	"CREATE TABLE IF NOT EXISTS ingot_migrations (version integer PRIMARY KEY, name text NOT NULL, "      \
	"applied_at timestamptz NOT NULL DEFAULT now())"
#define MIGRATE_VERSIONS_SQL "SELECT version FROM ingot_migrations"
#define MIGRATE_RECORD_SQL "INSERT INTO ingot_migrations (version, name) VALUES ($1, $2)"
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
	unsigned applied;
	int exit_code;
};

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
	ig_pg_value params[2] = { ig_pg_int4((int32_t)m->version), ig_pg_text((ig_str){ m->name, strlen(m->name) }) };
	ig_pg_tx_query(r->tx, MIGRATE_RECORD_SQL, params, 2, recorded, r);
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

static void versions_read(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	if (run_failed(r, err, "migrations: the record table could not be read"))
		return;
	for (uint32_t i = 0; i < res->rows; i++) {
		const ig_pg_value *v = ig_pg_at(res, i, 0);
		if (!v->null && v->i >= 0 && v->i <= MIGRATE_MAX_VERSION)
			r->recorded[v->i] = true;
	}
	apply_next(r);
}

static void table_ready(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct migrate_run *r = arg;
	(void)res;
	if (!run_failed(r, err, "migrations: the record table could not be made"))
		ig_pg_tx_query(r->tx, MIGRATE_VERSIONS_SQL, NULL, 0, versions_read, r);
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
