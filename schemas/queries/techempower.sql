-- TechEmpower's tables (schemas/migrations/002_world.sql, 003_fortune.sql),
-- as app/techempower.c runs them. A World row is the document's World:
-- the alias gives the column the property's name.

-- name: GetWorld :one
-- returns: World
SELECT id, randomnumber AS "randomNumber" FROM world WHERE id = $1;

-- name: UpdateWorlds :exec
UPDATE world SET randomnumber = v.r
FROM unnest($1::int4[], $2::int4[]) AS v(id, r) WHERE world.id = v.id;

-- name: ListFortunes :many
SELECT id, message FROM fortune;
