-- The posts table's statements (schemas/migrations/001_posts.sql), as
-- app/posts.c runs them. Rows are the document's Post: tags, a jsonb array
-- of strings or NULL, fills Post's optional tags (has_tags). The tags
-- parameters are the JSON text (a string whose ptr is NULL: none).

-- name: ListPosts :many
-- returns: Post
SELECT id, title, body, likes, tags FROM posts ORDER BY id LIMIT $1 OFFSET $2;

-- name: GetPost :one
-- returns: Post
SELECT id, title, body, likes, tags FROM posts WHERE id = $1;

-- name: CreatePost :one
-- returns: Post
INSERT INTO posts (title, body, likes, tags) VALUES ($1, $2, $3, $4)
RETURNING id, title, body, likes, tags;

-- name: UpdatePost :one
-- returns: Post
UPDATE posts SET title = $2, body = $3, likes = $4, tags = $5 WHERE id = $1
RETURNING id, title, body, likes, tags;

-- name: DeletePost :execrows
DELETE FROM posts WHERE id = $1;
