-- TechEmpower's World table: 10,000 rows, each a random number from 1 to
-- 10,000 (the db, queries and updates tests read and write it).
CREATE TABLE world (
	id integer NOT NULL PRIMARY KEY,
	randomnumber integer NOT NULL DEFAULT 0
);
INSERT INTO world (id, randomnumber)
SELECT n, 1 + floor(random() * 10000)::integer % 10000 FROM generate_series(1, 10000) AS n;
