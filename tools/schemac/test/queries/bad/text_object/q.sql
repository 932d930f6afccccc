-- name: GetItem :one
-- returns: Item
SELECT id, name, uid, made, note AS spot FROM items WHERE id = $1;
