-- The posts table's statements (schemas/migrations/001_posts.sql), as
-- app/posts.c runs them. tags is jsonb (an array of strings, or NULL), so
-- the rows are their own structs, not Post: its tags is an array.

-- name: ListPosts :many
SELECT id, title, body, likes, tags FROM posts ORDER BY id LIMIT $1 OFFSET $2;

-- name: GetPost :one
SELECT id, title, body, likes, tags FROM posts WHERE id = $1;

-- name: CreatePost :one
INSERT INTO posts (title, body, likes, tags) VALUES ($1, $2, $3, $4)
RETURNING id, title, body, likes, tags;

-- name: UpdatePost :one
UPDATE posts SET title = $2, body = $3, likes = $4, tags = $5 WHERE id = $1
RETURNING id, title, body, likes, tags;

-- name: DeletePost :execrows
DELETE FROM posts WHERE id = $1;
