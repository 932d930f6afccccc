/* The service's entry point: the runtime's ig_main with the app that the
 * generated code exports (ig_api_app, build/gen/api.c), or with --migrate
 * the app's migrations (ig_app_migrations, build/gen/migrations.c, from
 * schemas/migrations by tools/migrations) applied instead of serving.
 * Programs that set up a core themselves (tests/harness.h) link
 * everything but this file. */
#include "operation.h"
#include "net/cron/jobs.h"
#include "net/pg/migrate.h"
#include "net/pubsub/pg_provider.h"
#include "net/pubsub/topics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct ig_migration_set ig_app_migrations;
/* Weak: net/pg is linked only when the app uses the database (its queries,
 * or its migrations: the Makefile's link asks for this when there are
 * any). Without it there is nothing to migrate. */
int ig_migrate_main(int argc, char **argv, const char *name, const struct ig_migration_set *set)
	__attribute__((weak));
void ig_migrate_serve_check(struct ig_pg_pool *pool, int backend) __attribute__((weak));
extern const struct ig_migration_set *ig_migrate_expected __attribute__((weak));
extern void (*ig_pg_schema_check)(struct ig_pg_pool *p, int backend) __attribute__((weak));
extern const char *ig_migrate_runtime_sql __attribute__((weak));

/* a and b (either NULL) as one string of statements; NULL when neither. */
static const char *runtime_sql(const char *a, const char *b)
{
	if (!a || !b)
		return a ? a : b;
	size_t n = strlen(a) + strlen(b) + 3;
	char *both = malloc(n);
	if (!both)
		return NULL;
	snprintf(both, n, "%s; %s", a, b);
	return both;
}

int main(int argc, char **argv)
{
	if (ig_migrate_requested(argc, argv)) {
		int rc = ig_check_env(&ig_api_app);
		if (rc != 0)
			return rc;
		if (ig_migrate_main && &ig_migrate_runtime_sql) {
			/* The runtime's own tables: cron's claims when the document
			   has jobs, Pub/Sub's when it declares topics; both
			   idempotent, run as one simple query. */
			const char *cron = &ig_api_cron ? ig_api_cron.ops->migration_sql : NULL;
			const char *pubsub = &ig_api_pubsub && ig_pubsub_pg_schema ? ig_pubsub_pg_schema : NULL;
			ig_migrate_runtime_sql = runtime_sql(cron, pubsub);
		}
		if (ig_migrate_main)
			return ig_migrate_main(argc, argv, ig_api_app.name, &ig_app_migrations);
		fprintf(stderr, "%s: nothing to migrate (no database client)\n",
			ig_api_app.name);
		return 0;
	}
	/* The server checks its schema at the first connection: addresses
	   only here, migrate.c's code and the set's data (cold rodata: a read
	   at the start faulted in 52 KiB of it) stay untouched until then
	   (net/cold.ld); the check skips an empty set. */
	if (ig_migrate_serve_check && &ig_migrate_expected && &ig_pg_schema_check) {
		ig_migrate_expected = &ig_app_migrations;
		ig_pg_schema_check = ig_migrate_serve_check;
	}
	return ig_main(argc, argv, &ig_api_app);
}
