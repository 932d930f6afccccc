-- name: One :one
SELECT 1 AS one;
