-- name: PutArrays :exec
INSERT INTO arrays (k, b, i2, i4, i8, f4, f8, n, t, vc, by, u, d, ts, tz, j, jb)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17);

-- name: GetArrays :one
SELECT k, b, i2, i4, i8, f4, f8, n, t, vc, by, u, d, ts, tz, j, jb FROM arrays WHERE k = $1;
