-- One row per handler run: which subscription, which message, which process.
CREATE TABLE runs (sub text NOT NULL, n bigint NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT now());
