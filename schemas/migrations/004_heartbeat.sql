-- The heartbeat cron job's rows (app/cron.c): one per tick run, with the
-- tick (Unix seconds; NULL for a POST without Ingot-Cron-Tick) and the process that
-- ran it. No unique key on tick: a tick run twice must show, not fail.
CREATE TABLE heartbeat (
	id bigserial PRIMARY KEY,
	tick bigint,
	pid integer NOT NULL
);
