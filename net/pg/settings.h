/* net/pg's rows of the settings table and where their parsed values live:
 * the process's start (net/start.c) parses them with every other part's,
 * then calls ig_pg_start. A program of its own (a test) parses them too. */
#ifndef NET_PG_SETTINGS_H
#define NET_PG_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/runtime/config.h"

/* DATABASE_URL, INGOT_PG_*: all zero until parsed. */
struct ig_pg_settings_values {
	const char *database_url;  /* "" : the PG* variables, else off */
	uint32_t pool_size;        /* connections per core */
	uint32_t pipelining;       /* queries in flight per connection */
	uint32_t max_queued;       /* queries waiting for a connection, per core */
	uint32_t acquire_timeout_ms;
	uint32_t connect_timeout_ms;
	uint32_t query_timeout_ms; /* 0: none */
	uint32_t max_message_bytes;
	bool migrate_out_of_order; /* a pending migration below the newest applied one is applied, not refused */
};
extern struct ig_pg_settings_values ig_pg_settings_values;
/* Its check parses DATABASE_URL (or the PG* fallback): a bad one stops
 * the start with exit 2 and a message without the password. */
extern const struct ig_settings ig_pg_settings;

/* After the parse, before the server starts: when configured, registers
 * the "postgresql" backend for /readyz and returns true; the start then
 * has ig_pg_core_start run on every core as its loop starts (net/http's
 * ig_http_core_start_hook), which opens that core's pool. Without a database
 * false, and nothing of net/pg runs. */
struct ig_loop;
bool ig_pg_start(void);
void ig_pg_core_start(struct ig_loop *loop, int core_count);

/* Set before the start (the program's main sets it to net/pg/migrate.c's
 * ig_migrate_serve_check when the app has migrations) to check the schema
 * at the first connection: it then says when the backend is up
 * (ig_backend_set_up). NULL: up at the first connection. An upcall: the
 * pool knows nothing of migrations. */
struct ig_pg_pool;
extern void (*ig_pg_schema_check)(struct ig_pg_pool *p, int backend);

#endif
