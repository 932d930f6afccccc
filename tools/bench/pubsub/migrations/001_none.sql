-- The bench app stores nothing of its own: a migration makes the build link
-- the migrator, whose --migrate creates Pub/Sub's tables (ingot_pubsub).
SELECT 1;
