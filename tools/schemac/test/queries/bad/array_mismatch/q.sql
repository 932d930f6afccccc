-- name: GetItem :one
-- returns: Item
SELECT id, name, uid, made, scores AS tags FROM items WHERE id = $1;
