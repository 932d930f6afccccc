/* The PostgreSQL provider's schema: the runtime's own tables, created by
 * `service --migrate` (net/api/main.c hands it to ig_migrate_runtime_sql,
 * with cron's), idempotent, so every run may apply it. */
#ifndef NET_PUBSUB_PG_PROVIDER_H
#define NET_PUBSUB_PG_PROVIDER_H

/* Messages (one row per publish: topic, payload, attributes) and
 * deliveries (one row per message and subscription: attempts, when it is
 * next visible, its state), in the schema ingot_pubsub. */
extern const char ig_pubsub_pg_schema[] __attribute__((weak));

#endif
