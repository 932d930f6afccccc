// Database errors stay on the server (include/ingot/pg.h, "a failed query
// as the HTTP answer"), against a real PostgreSQL (pglib's) behind the
// reference service's /posts: a taken title answers the app's own 409
// (struct ig_pg_answer) without the constraint's name; a query on a dropped
// table answers 500 with only the SQLSTATE, and the log gets exactly one
// error line for it, with the request id, the route and the whole error.
// One core, so that one thread writes every line in order: a later
// request's line fences the earlier request's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem, curlResponse, within } from './lib.mjs';
import { dbServiceForSuite } from './dbservice.mjs';

const db = dbServiceForSuite({ INGOT_THREADS: '1', INGOT_LOG_LEVEL: 'debug', INGOT_ACCESS_LOG: '1' });
const T = { timeout: 60000 };

function send(method, path, id, body) {
	const args = ['-X', method, '-H', `X-Request-Id: ${id}`];
	if (body !== undefined) args.push('-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(body));
	return curlResponse(db.srv.port, path, args);
}

// Waits for the access log's line of request id (written by ig_finish,
// after whatever the request logged before its answer), then returns every
// line about id.
async function linesOf(id) {
	await within(10000, db.srv.waitLog((l) => l.msg === 'request' && l.request_id === id), `no access line for ${id}`);
	return db.srv.logs.filter((l) => l.request_id === id);
}

test('a taken title answers the app\'s 409 and detail; the constraint, the value and the SQL stay in the log (debug)', T, async () => {
	const title = 'pg-errors unique title';
	assert.equal((await send('POST', '/posts', 'dup-1', { title, body: 'a', likes: 0 })).status, 201);
	const res = await send('POST', '/posts', 'dup-2', { title, body: 'b', likes: 0 });
	const p = assertProblem(res, 409);
	assert.equal(p.title, 'Conflict');
	assert.equal(p.detail, 'a post with this title exists');
	for (const leak of ['posts_title_key', title, 'INSERT', 'duplicate key'])
		assert.ok(!res.text.includes(leak), `${leak} in ${res.text}`);

	const lines = await linesOf('dup-2');
	assert.deepEqual(lines.filter((l) => l.level === 'error'), [], 'a 4xx is no error line');
	const [line, ...more] = lines.filter((l) => l.msg === 'database error');
	assert.equal(more.length, 0);
	assert.equal(line.level, 'debug');
	assert.equal(line.status, 409);
	assert.equal(line.route, '/posts');
	assert.equal(line.sqlstate, '23505');
	assert.equal(line.constraint, 'posts_title_key');
	assert.match(line.detail, /already exists/);
	assert.match(line.query, /^INSERT INTO posts/);
});

test('a dropped table: the client gets 500 with the SQLSTATE only; the log gets one error line with request id, route and the whole error', T, async () => {
	await db.pg.psql('DROP TABLE posts;');
	const res = await send('GET', '/posts/1', 'dropped-1');
	const p = assertProblem(res, 500);
	assert.equal(p.detail, 'database error (server 42P01)');
	assert.equal(p.request_id, 'dropped-1');
	assert.deepEqual(Object.keys(p).sort(), ['detail', 'request_id', 'status', 'title', 'type']);
	for (const leak of ['posts', 'SELECT', 'relation', 'likes', 'tags', 'WHERE', '$1'])
		assert.ok(!res.text.includes(leak), `${leak} in ${res.text}`);

	// A second failure on another route, after the first on the same core:
	// once its lines are in, so is everything the first one wrote.
	const insert = await send('POST', '/posts', 'dropped-2', { title: 't', body: 'b', likes: 0 });
	assert.equal(assertProblem(insert, 500).detail, 'database error (server 42P01)');
	assert.ok(!insert.text.includes('posts') && !insert.text.includes('INSERT'), insert.text);

	for (const [id, route, operation, query] of [['dropped-1', '/posts/{id}', 'getPost', /^SELECT id, title, body/],
		['dropped-2', '/posts', 'createPost', /^INSERT INTO posts/]]) {
		const errors = (await linesOf(id)).filter((l) => l.level === 'error');
		assert.equal(errors.length, 1, `one error line for ${id}: ${JSON.stringify(errors)}`);
		const [e] = errors;
		assert.equal(e.msg, 'database error');
		assert.equal(e.route, route);
		assert.equal(e.operation, operation);
		assert.equal(e.status, 500);
		assert.equal(e.error, 'server');
		assert.equal(e.sqlstate, '42P01');
		assert.match(e.message, /relation "posts" does not exist/);
		assert.match(e.query, query);
		assert.ok(e.query.length <= 48, e.query);
	}
	// Nothing else of the service said "error" about them, nor at all.
	assert.deepEqual(db.srv.logs.filter((l) => l.level === 'error').map((l) => l.request_id).sort(), ['dropped-1', 'dropped-2']);
});
