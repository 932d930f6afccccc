-- What the count-words subscription (app/post_stats.c) counts in each post,
-- from its post-created message: GET /posts/{id}/stats reads it. No foreign
-- key: a message may outlive its post.
CREATE TABLE post_stats (
	post_id bigint PRIMARY KEY,
	words bigint NOT NULL CHECK (words >= 0)
);
