// A real HTTP client library against the server: undici (Node's own fetch
// engine) with pipelining, and undici.request for every route.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Pool, Client, request } from 'undici';
import { startServer, cleanup, BODY } from './lib.mjs';

let srv, origin;
before(async () => {
	srv = await startServer();
	origin = `http://${srv.host}:${srv.port}`;
});
after(async () => { if (srv) await srv.stop(); cleanup(); });

const T = { timeout: 30000 };

function pick(i) {
	switch (i % 3) {
	case 0: return ['/health', BODY.health];
	case 1: return ['/json', BODY.json];
	default: return [`/blog/${i + 1}`, BODY.blog(i + 1)];
	}
}

test('undici Pool with pipelining 10: 200 requests over /health, /json, /blog/N all get correct bodies', T, async () => {
	const pool = new Pool(origin, { connections: 2, pipelining: 10 });
	try {
		const results = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
			const [path, body] = pick(i);
			const res = await pool.request({ path, method: 'GET' });
			const text = await res.body.text();
			return { i, path, status: res.statusCode, ct: res.headers['content-type'], text, body };
		}));
		for (const r of results) {
			assert.equal(r.status, 200, r.path);
			assert.equal(r.ct, 'application/json', r.path);
			assert.equal(r.text, r.body, r.path);
		}
	} finally {
		await pool.close();
	}
});

test('undici Client with pipelining 10 on one connection: 200 requests including pending /delay ones keep their bodies', T, async () => {
	const client = new Client(origin, { pipelining: 10 });
	try {
		const results = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
			const [path, body] = i % 25 === 0 ? [`/delay/${i % 50}`, BODY.delay(i % 50)] : pick(i);
			const res = await client.request({ path, method: 'GET' });
			return { path, status: res.statusCode, text: await res.body.text(), body };
		}));
		for (const r of results) {
			assert.equal(r.status, 200, r.path);
			assert.equal(r.text, r.body, r.path);
		}
	} finally {
		await client.close();
	}
});

const routes = [
	['/health', BODY.health],
	['/json', BODY.json],
	['/compute', BODY.compute],
	['/hash', BODY.hash],
	['/blog/77', BODY.blog(77)],
	['/delay/5', BODY.delay(5)],
];

for (const [path, body] of routes) {
	test(`undici.request GET ${path} answers 200 with the exact JSON body`, T, async () => {
		const res = await request(origin + path);
		assert.equal(res.statusCode, 200);
		assert.equal(res.headers['content-type'], 'application/json');
		assert.equal(res.headers['content-length'], String(Buffer.byteLength(body)));
		assert.ok(res.headers.date);
		assert.equal(await res.body.text(), body);
	});
}

test('undici.request GET /openapi.json parses as an OpenAPI 3.1 document', T, async () => {
	const res = await request(`${origin}/openapi.json`);
	assert.equal(res.statusCode, 200);
	const doc = await res.body.json();
	assert.match(String(doc.openapi), /^3\.1/);
});

test('undici.request error routes: 400 for /blog/0, 404 for an unknown path, 405 with Allow for POST', T, async () => {
	let res = await request(`${origin}/blog/0`);
	assert.equal(res.statusCode, 400);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	const p = await res.body.json();
	assert.equal(p.status, 400);
	assert.ok(p.errors.some((e) => e.name === 'id'));

	res = await request(`${origin}/missing`);
	assert.equal(res.statusCode, 404);
	assert.equal((await res.body.json()).status, 404);

	res = await request(`${origin}/json`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
	assert.equal(res.statusCode, 405);
	assert.match(res.headers.allow, /\bGET\b/);
	await res.body.dump();
});

test('fetch (undici) GET /json returns the widget object', T, async () => {
	const { fetch } = await import('undici');
	const res = await fetch(`${origin}/json`);
	assert.equal(res.status, 200);
	assert.deepEqual(await res.json(), JSON.parse(BODY.json));
});
