// The stored posts (/posts, /posts/{id}) against a real PostgreSQL
// (pglib), migrated by `service --migrate`: create, read, list, replace and
// delete, read back with psql; 404 for a missing row, 409 for a title that
// is taken, tags both ways; a body that breaks PostInput is a 400 and
// never reaches the database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, curl, curlResponse } from './lib.mjs';
import { dbServiceForSuite, waitReady } from './dbservice.mjs';

const db = dbServiceForSuite();
const T = { timeout: 60000 };

function send(method, path, body) {
	const args = ['-X', method];
	if (body !== undefined)
		args.push('-H', 'Content-Type: application/json', '--data-binary', typeof body === 'string' ? body : JSON.stringify(body));
	return curlResponse(db.srv.port, path, args);
}

function assertProblem(res, status) {
	assert.equal(res.status, status, `status; body ${res.text}`);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	const p = res.json();
	assert.equal(p.status, status);
	return p;
}

const psqlRow = async (id) => (await db.pg.psql(
	`SELECT title || '|' || body || '|' || likes || '|' || coalesce(tags::text, 'NULL') FROM posts WHERE id = ${id};`)).trim();

test('POST /posts stores the post: 201, Location /posts/<id>, the row in the table', T, async () => {
	const input = { title: 'first "post" — ünïcode', body: 'line 1\nline 2 <b>&', likes: 3, tags: ['a', 'b "q"', 'ç'] };
	const res = await send('POST', '/posts', input);
	assert.equal(res.status, 201, res.text);
	assert.equal(res.headers['content-type'], 'application/json');
	const post = res.json();
	assert.ok(Number.isInteger(post.id) && post.id >= 1);
	assert.equal(res.headers.location, `/posts/${post.id}`);
	assert.deepEqual(post, { id: post.id, ...input });
	assert.equal(await psqlRow(post.id), `${input.title}|${input.body}|3|["a", "b \\"q\\"", "ç"]`);

	const got = await curlResponse(db.srv.port, `/posts/${post.id}`);
	assert.equal(got.status, 200);
	assert.deepEqual(got.json(), post);
});

test('a post without tags has no "tags" member and a NULL column', T, async () => {
	const res = await send('POST', '/posts', { title: 'no tags', body: '', likes: 0 });
	assert.equal(res.status, 201, res.text);
	const post = res.json();
	assert.deepEqual(post, { id: post.id, title: 'no tags', body: '', likes: 0 });
	assert.equal(await psqlRow(post.id), 'no tags||0|NULL');
	const empty = await send('POST', '/posts', { title: 'empty tags', body: 'x', likes: 1, tags: [] });
	assert.equal(empty.status, 201, empty.text);
	assert.deepEqual(empty.json().tags, []);
});

test('a second post with a title already taken is a 409 problem+json, and nothing is stored', T, async () => {
	const before = (await db.pg.psql('SELECT count(*) FROM posts;')).trim();
	const res = await send('POST', '/posts', { title: 'no tags', body: 'again', likes: 1 });
	const p = assertProblem(res, 409);
	assert.match(JSON.stringify(p), /posts_title_key|unique|exists/i);
	assert.equal((await db.pg.psql('SELECT count(*) FROM posts;')).trim(), before);
});

test('PUT /posts/{id} replaces the post (200, read back), 409 for another post\'s title, 404 for a missing id', T, async () => {
	const a = (await send('POST', '/posts', { title: 'to replace', body: 'old', likes: 1, tags: ['x'] })).json();
	const res = await send('PUT', `/posts/${a.id}`, { title: 'replaced', body: 'new', likes: 9 });
	assert.equal(res.status, 200, res.text);
	assert.deepEqual(res.json(), { id: a.id, title: 'replaced', body: 'new', likes: 9 });
	assert.equal(await psqlRow(a.id), 'replaced|new|9|NULL');
	assertProblem(await send('PUT', `/posts/${a.id}`, { title: 'no tags', body: 'b', likes: 0 }), 409);
	assert.equal(await psqlRow(a.id), 'replaced|new|9|NULL', 'unchanged by the refused replace');
	assertProblem(await send('PUT', '/posts/987654321', { title: 'ghost', body: 'b', likes: 0 }), 404);
	assert.equal((await db.pg.psql("SELECT count(*) FROM posts WHERE title = 'ghost';")).trim(), '0');
});

test('DELETE /posts/{id}: 204, then the row is gone (404 for GET and a second DELETE)', T, async () => {
	const a = (await send('POST', '/posts', { title: 'to delete', body: 'b', likes: 0 })).json();
	const res = await send('DELETE', `/posts/${a.id}`);
	assert.equal(res.status, 204, res.text);
	assert.equal(res.body.length, 0);
	assert.equal((await db.pg.psql(`SELECT count(*) FROM posts WHERE id = ${a.id};`)).trim(), '0');
	assertProblem(await curlResponse(db.srv.port, `/posts/${a.id}`), 404);
	assertProblem(await send('DELETE', `/posts/${a.id}`), 404);
});

test('GET /posts?limit=&offset= pages through the table in id order (a PostList)', T, async () => {
	const ids = (await db.pg.psql('SELECT id FROM posts ORDER BY id;')).trim().split('\n').map(Number);
	assert.ok(ids.length >= 3, `posts so far: ${ids}`);
	const page = await curlResponse(db.srv.port, '/posts?limit=2&offset=1');
	assert.equal(page.status, 200, page.text);
	const list = page.json();
	assert.equal(list.limit, 2);
	assert.equal(list.offset, 1);
	assert.deepEqual(list.posts.map((p) => p.id), ids.slice(1, 3));
	const all = (await curlResponse(db.srv.port, '/posts')).json();
	assert.equal(all.limit, 20);
	assert.deepEqual(all.posts.map((p) => p.id), ids.slice(0, 20));
	const past = (await curlResponse(db.srv.port, `/posts?offset=${ids.length}`)).json();
	assert.deepEqual(past.posts, []);
	assertProblem(await curlResponse(db.srv.port, '/posts?limit=0'), 400);
});

test('a body that breaks PostInput is a 400 naming the field, and nothing reaches the table', T, async () => {
	const before = (await db.pg.psql('SELECT count(*) FROM posts;')).trim();
	for (const body of [{ title: '', body: 'b', likes: 0 }, { title: 't', body: 'b', likes: -1 }, { title: 't', likes: 0 },
		'{"title": "t", "body": "b", "likes": 0', { title: 't', body: 'b', likes: 0, tags: Array(11).fill('x') }]) {
		const p = assertProblem(await send('POST', '/posts', body), 400);
		assert.ok(Array.isArray(p.errors) && p.errors.length >= 1, JSON.stringify(p));
	}
	assert.equal((await db.pg.psql('SELECT count(*) FROM posts;')).trim(), before);
	const r = await curl(['-sS', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${db.srv.port}/posts/0`]);
	assert.equal(r.stdout.toString(), '400', 'id 0 breaks minimum 1');
});

test('over the unix socket (DATABASE_URL ?host=<directory>) the same rows are served', T, async () => {
	const viaSocket = await startServer({ DATABASE_URL: db.pg.socketUrl });
	try {
		await waitReady(viaSocket);
		const tcp = (await curlResponse(db.srv.port, '/posts?limit=100')).json();
		const sock = await curlResponse(viaSocket.port, '/posts?limit=100');
		assert.equal(sock.status, 200, sock.text);
		assert.ok(tcp.posts.length >= 3);
		assert.deepEqual(sock.json(), tcp);
	} finally {
		await viaSocket.stop();
	}
});
