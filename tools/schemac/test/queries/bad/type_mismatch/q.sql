-- name: Recent :many
SELECT id FROM items
WHERE made = 5;
