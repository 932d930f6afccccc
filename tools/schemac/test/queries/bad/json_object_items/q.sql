-- name: GetItem :one
-- returns: Item
SELECT id, name, uid, made, meta AS parts FROM items WHERE id = $1;
