/* The service's entry point: the runtime's ig_main with the app that the
 * generated code exports (ig_api_app, build/gen/api.c), or with --migrate
 * the app's migrations (ig_app_migrations, build/gen/migrations.c, from
 * schemas/migrations by tools/migrations) applied instead of serving.
 * Programs that set up a core themselves (tests/harness.h) link
 * everything but this file. */
#include "operation.h"
#include "net/pg/migrate.h"

extern const struct ig_migration_set ig_app_migrations;

int main(int argc, char **argv)
{
	if (ig_migrate_requested(argc, argv))
		return ig_migrate_main(argc, argv, ig_api_app.name, &ig_app_migrations);
	return ig_main(argc, argv, &ig_api_app);
}
