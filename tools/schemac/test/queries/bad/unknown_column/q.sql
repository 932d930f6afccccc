-- name: GetItem :one
SELECT id,
	colour
FROM items WHERE id = $1;
