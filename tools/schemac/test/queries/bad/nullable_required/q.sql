-- name: GetItem :one
-- returns: Item
SELECT items.id, note AS name, uid, made FROM items WHERE id = $1;
