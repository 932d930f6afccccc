/* net/pg's rows of the settings table, its check (DATABASE_URL or the PG*
 * variables parsed into the connection's fields, the address resolved, the
 * sslrootcert read: a bad one stops the start with exit 2), and the start
 * (ig_pg_start). Not in net/cold.ld's cold block: every start reads the
 * rows and runs the check, which calls into the rest of net/pg only when
 * a database is configured. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/runtime/file.h"
#include "ingot/log.h"
#include "ingot/http.h"
#include "net/tls/backend.h"

extern char **environ;

static const struct ig_pg_settings_values pg_defaults = {
	.database_url = "",
	.pool_size = 4,
	/* 64 held 256 in flight on 4 connections: 64 requests of 20 queries
	   mostly waited (pool.c: they leave once a connection is half empty) */
	.pipelining = 256,
	.max_queued = 4096,
	.acquire_timeout_ms = 1000,
	.connect_timeout_ms = 5000,
	.query_timeout_ms = 0,
	.max_message_bytes = 1u << 20,
};

struct ig_pg_settings_values ig_pg_settings_values;
bool ig_pg_configured_flag;
struct ig_pg_global *ig_pg_global;

#define V(field) &ig_pg_settings_values.field

static const struct ig_option pg_rows[] = {
	{ "DATABASE_URL", IG_OPT_SECRET, V(database_url), 0, 0,
	  IG_HELP("postgres://user:password@host:port/db?sslmode=...; else libpq's PG* variables; none: no database") },
	{ "INGOT_PG_POOL_SIZE", IG_OPT_U32, V(pool_size), 1, PG_MAX_POOL, IG_HELP("database connections per core") },
	{ "INGOT_PG_PIPELINING", IG_OPT_U32, V(pipelining), 1, 65536, IG_HELP("queries in flight per database connection") },
	{ "INGOT_PG_MAX_QUEUED", IG_OPT_U32, V(max_queued), 1, 1 << 20,
	  IG_HELP("queries waiting for a database connection, per core") },
	{ "INGOT_PG_ACQUIRE_TIMEOUT_MS", IG_OPT_U32, V(acquire_timeout_ms), 1, 3600000,
	  IG_HELP("longest wait for a database connection before a query fails (503)") },
	{ "INGOT_PG_CONNECT_TIMEOUT_MS", IG_OPT_U32, V(connect_timeout_ms), 1, 3600000,
	  IG_HELP("database connect, TLS and authentication (connect_timeout in the URL wins)") },
	{ "INGOT_PG_QUERY_TIMEOUT_MS", IG_OPT_U32, V(query_timeout_ms), 0, 3600000,
	  IG_HELP("a query running longer is cancelled (CancelRequest) and fails; 0: none") },
	{ "INGOT_PG_MAX_MESSAGE_BYTES", IG_OPT_U32, V(max_message_bytes), 1024, 1u << 30,
	  IG_HELP("largest message (a row) taken from the database; a larger one fails its query") },
	{ "INGOT_MIGRATE_OUT_OF_ORDER", IG_OPT_BOOL, V(migrate_out_of_order), 0, 1,
	  IG_HELP("apply a pending migration numbered below the newest applied one (Flyway's outOfOrder); "
	  "else --migrate refuses it (exit 2) and a server stays not ready") },
};

static bool set_env(const char *name)
{
	const char *v = getenv(name);
	return v && v[0];
}

static const char *load_root_cert(char *err, size_t errlen)
{
	const char *path = ig_pg_global->ci.sslrootcert;
	if (!path[0] || ig_pg_global->ci.sslmode == PG_SSL_DISABLE)
		return NULL;
	size_t len = 0;
	char *pem = ig_read_file(path, 1u << 22, 0, &len, err, errlen);
	if (!pem)
		return err;
	char why[200];
	if (ig_tls_backend_init(why, sizeof why) != 0) {
		free(pem);
		snprintf(err, errlen, "sslrootcert: %s", why);
		return err;
	}
	ig_pg_global->trust = ig_tls_trust_load(pem, len, true, why, sizeof why);
	free(pem);
	if (!ig_pg_global->trust) {
		snprintf(err, errlen, "sslrootcert %s: %s", path, why);
		return err;
	}
	return NULL;
}

static const char *check_pg(char *err, size_t errlen)
{
	const char *url = ig_pg_settings_values.database_url;
	if (!url[0] && !set_env("PGHOST") && !set_env("PGDATABASE"))
		return NULL; /* no database: nothing of net/pg runs */
	char why[256];
	if (!ig_pg_global && !(ig_pg_global = calloc(1, sizeof *ig_pg_global)))
		return "out of memory";
	if (ig_pg_conninfo_parse(&ig_pg_global->ci, url, (const char *const *)environ, why, sizeof why) != PG_CONNINFO_OK) {
		snprintf(err, errlen, "DATABASE_URL: %s", why);
		return err;
	}
	const char *e = ig_pg_resolve(err, errlen);
	if (!e)
		e = load_root_cert(err, errlen);
	if (e)
		return e;
	ig_pg_configured_flag = true;
	return NULL;
}

static const struct ig_command pg_commands[] = {
	{ "migrate", IG_HELP("apply the embedded migrations (schemas/migrations) to the database in order, then exit; "
		     "opens no listener") },
};

const struct ig_settings ig_pg_settings = {
	.part = "database (PostgreSQL)", .opts = pg_rows, .count = IG_COUNTOF(pg_rows), .check = check_pg,
	.values = &ig_pg_settings_values, .defaults = &pg_defaults, .size = sizeof ig_pg_settings_values,
	.commands = pg_commands, .ncommands = IG_COUNTOF(pg_commands),
};

bool ig_pg_start(void)
{
	if (!ig_pg_configured_flag)
		return false;
	ig_pg_global->backend_id = ig_backend_register("postgresql") + 1;
	return true;
}

void ig_pg_core_start(struct ig_loop *loop, int core_count)
{
	atomic_store_explicit(&ig_pg_global->cores, (unsigned)core_count, memory_order_relaxed);
	struct pg_core *c = ig_pg_core_of(loop);
	if (c)
		ig_pg_pool_start(&c->pool);
}
