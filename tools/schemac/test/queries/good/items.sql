-- name: GetItem :one
-- returns: Item
SELECT id, name, uid, made, note, tags, scores, meta, ratios, parts, spot FROM items WHERE id = $1;

-- name: ListItems :many
-- returns: Item
SELECT id, name, uid, made, note, tags, scores, meta, ratios, parts, spot FROM items WHERE name LIKE $1 ORDER BY id LIMIT $2 OFFSET $3;

-- name: AddItem :one
INSERT INTO items (name, uid, made, note, tags, scores, meta, ratios, parts, spot)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING id;

-- name: Rename :execrows
UPDATE items SET name = $2 WHERE id = $1;

-- name: Forget :exec
DELETE FROM items WHERE made < $1;

-- name: MadeBetween :many
-- returns: Item
SELECT id, name, uid, made, note, tags, scores, meta, ratios, parts, spot FROM items
WHERE made >= $1 AND made < $2 AND $3::text <> items.name AND id > $4::int8 + 0
ORDER BY id;

-- name: SetNotes :execrows
UPDATE items SET note = v.n FROM unnest($1::int8[], $2::text[]) AS v(id, n) WHERE items.id = v.id;

-- name: Tricky :many
-- Strings, comments and quoted names hide what looks like comparisons.
SELECT id FROM items
WHERE name <> 'x = $2' /* made = $2 */ AND "note" = $1 -- uid = $2
	AND uid = $2;
