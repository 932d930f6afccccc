-- post_stats (schemas/migrations/004_post_stats.sql), as app/post_stats.c
-- runs it: the count-words subscription writes a post's count (a second
-- delivery of the same message writes the same row), GET
-- /posts/{id}/stats reads it.

-- name: SavePostStats :exec
INSERT INTO post_stats (post_id, words) VALUES ($1, $2)
ON CONFLICT (post_id) DO UPDATE SET words = EXCLUDED.words;

-- name: GetPostStats :one
-- returns: PostStats
SELECT post_id AS id, words FROM post_stats WHERE post_id = $1;
