/* The PostgreSQL provider's schema: the runtime's own tables, created by
 * `service --migrate` after the app's migrations (ig_migration_set's
 * runtime_sql), idempotent, so every run may apply it. */
#ifndef NET_PUBSUB_PG_PROVIDER_H
#define NET_PUBSUB_PG_PROVIDER_H

/* Messages (one row per publish: topic, payload, attributes) and
 * deliveries (one row per message and subscription: attempts, when it is
 * next visible, its state), in the schema ingot_pubsub. */
extern const char ig_pubsub_pg_schema[] __attribute__((weak));

#endif
