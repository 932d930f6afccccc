-- Handlers' runs of the ordered and limited topics, in the order they
-- began (id), with how many runs of the key (or subscription) were in
-- flight then, counted in inflight.
CREATE TABLE inflight (name text PRIMARY KEY, n integer NOT NULL);
CREATE TABLE ordered_runs (id bigserial PRIMARY KEY, key text NOT NULL, seq bigint NOT NULL, inflight integer NOT NULL,
			   pid integer NOT NULL);
