-- a note before the query

-- name: GetItem :one
-- returns: Item
SELECT id, name::int AS name, uid, made FROM items WHERE id = $1;
