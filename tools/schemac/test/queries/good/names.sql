-- name: FindLower :many
-- A call with one parameter, as the whole value compared with a column,
-- on either side; a column inside a call compared with a parameter.
SELECT id FROM items
WHERE lower(name) = $1 AND note = lower($2) AND coalesce($3, 'x') = items.note
	AND made < date_trunc('day', $4::timestamptz) AND id = ANY($5::int8[]);

-- name: AddLower :one
INSERT INTO items (name, uid, made, meta, note)
VALUES (lower($1), $2::uuid, now(), to_jsonb($3::text), coalesce($4, 'none'))
RETURNING id;

-- name: NotWhole :many
-- Not the whole value, or two parameters in one call: p<n>.
SELECT id FROM items WHERE name = lower($1) || 'x' AND note = concat($2::text, $3::text);

-- name: Named :execrows
-- sqlc's explicit names; a name used twice is one parameter; '@x' and
-- "@y" and the operators @> and <@ are left alone.
UPDATE items SET note = sqlc.arg(new_note), made = @Made_At
WHERE (id = sqlc.narg('item_id') OR id = @item_id) AND name <> '@x'
	AND scores @> '{1}' AND scores <@ '{1,2}' AND "note" IS NOT NULL;

-- name: Mixed :many
SELECT id FROM items WHERE name = $1 AND note = @note;
