-- The heartbeat table (schemas/migrations/004_heartbeat.sql), as
-- app/cron.c runs it.

-- name: InsertHeartbeat :exec
INSERT INTO heartbeat (tick, pid) VALUES (NULLIF($1::int8, 0), $2);

-- name: GetHeartbeat :one
SELECT count(*)::int8 AS ticks, array_agg(DISTINCT pid ORDER BY pid)::int8[] AS pids FROM heartbeat;
