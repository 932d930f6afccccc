// TechEmpower's test types on the reference service, checked against their
// rules with a real PostgreSQL (pglib), migrated by `service --migrate`:
// /plaintext, /db, /queries (shapes and clamping), /fortunes (the HTML,
// its escaping and its order), /updates (persisted: read back with psql),
// Server and Date on every answer; and the same service without a
// database, whose database routes answer 503 while the rest is unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, curlResponse, freePort, DATE_RE } from './lib.mjs';
import { dbServiceForSuite } from './dbservice.mjs';

const db = dbServiceForSuite();

const T = { timeout: 60000 };

// The 12 rows of TechEmpower's Postgres setup, as the migration holds them.
const FORTUNES = [
	[1, 'fortune: No such file or directory'],
	[2, "A computer scientist is someone who fixes things that aren't broken."],
	[3, 'After enough decimal places, nobody gives a damn.'],
	[4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'],
	[5, 'A computer program does what you tell it to do, not what you want it to do.'],
	[6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'],
	[7, 'Any program that runs right is obsolete.'],
	[8, 'A list is only as strong as its weakest link. — Donald Knuth'],
	[9, 'Feature: A bug with seniority.'],
	[10, 'Computers make very fast, very accurate mistakes.'],
	[11, '<script>alert("This should not be displayed in a browser alert box.");</script>'],
	[12, 'フレームワークのベンチマーク'],
];

function assertTe(res, status, type) {
	assert.equal(res.status, status, `status; body ${res.text}`);
	assert.equal(res.headers['content-type'], type);
	assert.equal(res.headers.server, 'ingot');
	assert.match(res.headers.date ?? '', DATE_RE);
	assert.equal(res.headers['content-length'], String(res.body.length));
}

function assertWorld(w) {
	assert.deepEqual(Object.keys(w), ['id', 'randomNumber'], JSON.stringify(w));
	assert.ok(Number.isInteger(w.id) && w.id >= 1 && w.id <= 10000, `id ${w.id}`);
	assert.ok(Number.isInteger(w.randomNumber) && w.randomNumber >= 1 && w.randomNumber <= 10000,
		`randomNumber ${w.randomNumber}`);
}

async function dbNumbers(ids) {
	const out = await db.pg.psql(`SELECT id || ':' || randomnumber FROM world WHERE id IN (${ids.join(',')});`);
	return new Map(out.trim().split('\n').map((l) => l.split(':').map(Number)));
}

test('the migrations made world (10,000 rows, numbers 1..10000) and fortune (12 rows)', T, async () => {
	assert.equal((await db.pg.psql('SELECT count(*), min(id), max(id) FROM world WHERE randomnumber BETWEEN 1 AND 10000;')).trim(),
		'10000|1|10000');
	const rows = (await db.pg.psql("SELECT id || E'\\t' || message FROM fortune ORDER BY id;")).trim().split('\n');
	assert.deepEqual(rows, FORTUNES.map(([id, m]) => `${id}\t${m}`));
});

test('GET /plaintext: Hello, World! as text/plain, with Server and Date', T, async () => {
	const res = await curlResponse(db.srv.port, '/plaintext');
	assertTe(res, 200, 'text/plain');
	assert.equal(res.text, 'Hello, World!');
});

test('GET /db: one World row as {"id","randomNumber"}, the row the table holds', T, async () => {
	const seen = new Set();
	for (let i = 0; i < 20; i++) {
		const res = await curlResponse(db.srv.port, '/db');
		assertTe(res, 200, 'application/json');
		const w = res.json();
		assertWorld(w);
		assert.equal((await dbNumbers([w.id])).get(w.id), w.randomNumber, `row ${w.id}`);
		seen.add(w.id);
	}
	assert.ok(seen.size > 1, 'the ids are random');
});

const CLAMP = [
	['', 1], ['?queries=', 1], ['?queries=foo', 1], ['?queries=0', 1], ['?queries=-3', 1], ['?queries=2.5', 1],
	['?queries=1', 1], ['?queries=20', 20], ['?queries=500', 500], ['?queries=501', 500],
	['?queries=99999999999999999999', 500], ['?queries=7x', 1],
];

for (const [query, n] of CLAMP) {
	test(`GET /queries${query}: an array of ${n} World rows`, T, async () => {
		const res = await curlResponse(db.srv.port, `/queries${query}`);
		assertTe(res, 200, 'application/json');
		const rows = res.json();
		assert.ok(Array.isArray(rows), res.text);
		assert.equal(rows.length, n);
		rows.forEach(assertWorld);
		if (n === 20) {
			const stored = await dbNumbers(rows.map((r) => r.id));
			for (const r of rows) assert.equal(stored.get(r.id), r.randomNumber, `row ${r.id}`);
		}
	});
}

const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
	.replace(/"/g, '&quot;').replace(/'/g, '&#39;');

test('GET /fortunes: every row and the one added at request time, sorted by message, escaped, as HTML', T, async () => {
	const res = await curlResponse(db.srv.port, '/fortunes');
	assertTe(res, 200, 'text/html; charset=utf-8');
	const all = [...FORTUNES, [0, 'Additional fortune added at request time.']]
		.sort((a, b) => Buffer.compare(Buffer.from(a[1]), Buffer.from(b[1])));
	const want = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>' +
		'<tr><th>id</th><th>message</th></tr>' +
		all.map(([id, m]) => `<tr><td>${id}</td><td>${escapeHtml(m)}</td></tr>`).join('') +
		'</table></body></html>';
	assert.equal(res.text, want);
	assert.ok(res.text.includes('&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;'));
	assert.ok(!res.text.includes('<script>'));
	assert.ok(res.text.includes('<td>12</td><td>フレームワークのベンチマーク</td>'));
	// TechEmpower's order: by the unescaped message's bytes ('<' before 'A').
	assert.deepEqual(all.slice(0, 3).map(([id]) => id), [11, 4, 5]);
	assert.deepEqual(all.slice(-2).map(([id]) => id), [1, 12]);
});

test('GET /updates?queries=20: 20 rows with new numbers, written to the table (read back with psql)', T, async () => {
	// Every number 0 first (outside 1..10000): a row the batch did not
	// write would still say 0 afterwards.
	await db.pg.psql('UPDATE world SET randomnumber = 0;');
	const res = await curlResponse(db.srv.port, '/updates?queries=20');
	assertTe(res, 200, 'application/json');
	const rows = res.json();
	assert.equal(rows.length, 20);
	rows.forEach(assertWorld);
	const byId = new Map();
	for (const r of rows) {
		if (byId.has(r.id)) assert.equal(byId.get(r.id), r.randomNumber, `row ${r.id} read twice: one number`);
		byId.set(r.id, r.randomNumber);
	}
	const stored = await dbNumbers([...byId.keys()]);
	for (const [id, n] of byId) assert.equal(stored.get(id), n, `row ${id} as answered`);
	assert.equal((await db.pg.psql('SELECT count(*) FROM world WHERE randomnumber <> 0;')).trim(), String(byId.size),
		'no other row was written');
	await db.pg.psql('UPDATE world SET randomnumber = 1 + (id * 7919) % 10000;');
});

test('concurrent /updates batches over the same rows do not deadlock: 4 rounds of 8 x 500 rows, each 200', T, async () => {
	// Batches of 500 random rows of 10,000 overlap: written in the order
	// they were read, two of them would lock rows in opposite orders and
	// one would fail with 40P01 (a 500; seen in most rounds without the sort).
	for (let round = 0; round < 4; round++) {
		const all = await Promise.all(Array.from({ length: 8 }, () => curlResponse(db.srv.port, '/updates?queries=500')));
		for (const res of all) {
			assert.equal(res.status, 200, res.text);
			assert.equal(res.json().length, 500);
		}
	}
});

test('GET /updates clamps like /queries: missing is 1, 501 is 500', T, async () => {
	for (const [query, n] of [['', 1], ['?queries=x', 1], ['?queries=501', 500]]) {
		const res = await curlResponse(db.srv.port, `/updates${query}`);
		assertTe(res, 200, 'application/json');
		assert.equal(res.json().length, n, query);
	}
});

test('without DATABASE_URL the database routes answer 503 "no database configured"; the rest is unchanged', T, async () => {
	const bare = await startServer({ DATABASE_URL: undefined, PGHOST: undefined, PGDATABASE: undefined });
	try {
		for (const path of ['/db', '/queries?queries=3', '/updates?queries=2', '/fortunes']) {
			const res = await curlResponse(bare.port, path);
			assert.equal(res.status, 503, `${path}: ${res.text}`);
			assert.equal(res.headers['content-type'], 'application/problem+json');
			assert.match(res.json().detail, /no database configured/, path);
		}
		const plain = await curlResponse(bare.port, '/plaintext');
		assert.equal(plain.status, 200);
		assert.equal(plain.text, 'Hello, World!');
		assert.equal((await curlResponse(bare.port, '/health')).status, 200);
		assert.equal((await curlResponse(bare.port, '/readyz')).status, 200, 'readiness ignores the database');
	} finally {
		await bare.stop();
	}
});

test('with the database unreachable the service starts: /readyz 503, the database routes 503 problem+json, the rest 200', T, async () => {
	const secret = 'unreachable-secret-7';
	const down = await startServer({ DATABASE_URL: db.pg.urlWith({ port: await freePort(), password: secret }) });
	try {
		assert.equal((await curlResponse(down.port, '/readyz')).status, 503);
		for (const path of ['/db', '/queries?queries=2', '/fortunes', '/updates']) {
			const res = await curlResponse(down.port, path);
			assert.equal(res.status, 503, `${path}: ${res.text}`);
			assert.equal(res.headers['content-type'], 'application/problem+json');
			assert.equal(res.headers.server, 'ingot');
			assert.ok(!res.text.includes(secret), 'no password in the answer');
		}
		assert.equal((await curlResponse(down.port, '/plaintext')).status, 200);
		assert.equal((await curlResponse(down.port, '/health')).status, 200);
		assert.ok(!down.lines.join('\n').includes(secret), 'no password in the logs');
	} finally {
		await down.stop();
	}
});
