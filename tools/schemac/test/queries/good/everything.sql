-- name: PutEverything :exec
INSERT INTO everything (k, b, i2, i4, i8, f4, f8, n, t, vc, by, u, d, ts, tz, j, jb)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17);

-- name: GetEverything :one
SELECT k, b, i2, i4, i8, f4, f8, n, t, vc, by, u, d, ts, tz, j, jb FROM everything WHERE k = $1;

-- name: Counted :one
SELECT count(*) AS total, max(k) AS top FROM everything;
