// The reference service's validated routes through the real binary: request
// bodies, query and header parameters decoded and checked by the generated
// code, problem+json errors naming every violation (pointer or parameter,
// keyword, message), 415 and malformed JSON, x-ingot-validate: false, and
// the blog API (POST/PUT /blog, GET /blog). Runs against INGOT_BIN (the
// ASan build checks every response against its schema).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, rawRequest, req } from '../integration/lib.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { if (srv) await srv.stop(); cleanup(); });

const T = { timeout: 20000 };
const JSON_CT = 'Content-Type: application/json';

async function send(method, target, { headers = [], body = '' } = {}) {
	const { res, client } = await rawRequest(srv.port, req(method, target, { headers, body }));
	client.destroy();
	return res;
}

function post(target, body, headers = [JSON_CT]) {
	return send('POST', target, { headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

function problem(res, status) {
	assert.equal(res.status, status, res.text);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	const p = res.json();
	assert.equal(p.status, status);
	return p;
}

const post1 = { title: 'Hello', body: 'World', likes: 3, tags: ['a', 'b'] };

test('POST /blog answers 201 with the post and its Location; ids are unique', T, async () => {
	const ids = new Set();
	for (let i = 0; i < 6; i++) {
		const res = await post('/blog', post1);
		assert.equal(res.status, 201, res.text);
		const p = res.json();
		assert.deepEqual({ ...p, id: 0 }, { ...post1, id: 0 });
		assert.ok(Number.isInteger(p.id) && p.id >= 1);
		assert.equal(res.headers.location, `/blog/${p.id}`);
		assert.ok(!ids.has(p.id), `id ${p.id} given twice`);
		ids.add(p.id);
	}
	const res = await post('/blog', { title: 't', body: '', likes: 0 });
	assert.equal(res.text.includes('"tags"'), false, 'no tags: none written');
});

test('PUT /blog/{id} answers 200 with the post; GET /blog pages synthetic posts', T, async () => {
	let res = await send('PUT', '/blog/7', { headers: [JSON_CT], body: JSON.stringify(post1) });
	assert.equal(res.status, 200, res.text);
	assert.deepEqual(res.json(), { id: 7, ...post1 });
	res = await send('GET', '/blog');
	const all = res.json();
	assert.deepEqual([all.limit, all.offset, all.posts.length], [20, 0, 20]);
	assert.deepEqual(all.posts.map((p) => p.id), Array.from({ length: 20 }, (_, i) => i + 1));
	res = await send('GET', '/blog?limit=2&offset=5');
	assert.equal(res.text, '{"posts":[{"id":6,"title":"post 6","body":"This is post 6.","likes":0},' +
		'{"id":7,"title":"post 7","body":"This is post 7.","likes":0}],"limit":2,"offset":5}');
	res = await send('GET', '/blog?offset=9223372036854775806&limit=5');
	assert.equal(res.json().posts.length, 1, 'ids end at INT64_MAX');
});

test('GET /blog with bad parameters is 400 naming each (in, name, keyword, message)', T, async () => {
	const p = problem(await send('GET', '/blog?limit=0&offset=-1'), 400);
	assert.deepEqual(p.errors, [
		{ in: 'query', name: 'limit', keyword: 'minimum', message: 'must be >= 1' },
		{ in: 'query', name: 'offset', keyword: 'minimum', message: 'must be >= 0' },
	]);
	const q = problem(await send('GET', '/blog?limit=101&limit=2&offset=x'), 400);
	assert.deepEqual(q.errors.map((e) => [e.name, e.keyword]), [['limit', 'maximum'], ['limit', 'type'], ['offset', 'type']]);
});

test('a body that breaks the schema is 400 with one error per violation, by JSON pointer', T, async () => {
	const p = problem(await post('/blog', { title: '', body: 5, likes: -1, tags: ['a', 1] }), 400);
	assert.deepEqual(p.errors, [
		{ pointer: '/title', keyword: 'minLength', message: 'must be at least 1 character' },
		{ pointer: '/body', keyword: 'type', message: 'must be a string' },
		{ pointer: '/likes', keyword: 'minimum', message: 'must be >= 0' },
		{ pointer: '/tags/1', keyword: 'type', message: 'must be a string' },
	]);
	const long = problem(await post('/blog', { title: 'x'.repeat(201), body: '', likes: 0, tags: Array(11).fill('t') }), 400);
	assert.deepEqual(long.errors.map((e) => [e.pointer, e.keyword, e.message]), [
		['/title', 'maxLength', 'must be at most 200 characters'],
		['/tags', 'maxItems', 'must have at most 10 items'],
	]);
	const missing = problem(await post('/blog', {}), 400);
	assert.deepEqual(missing.errors.map((e) => [e.pointer, e.keyword]), [['/title', 'required'], ['/body', 'required'], ['/likes', 'required']]);
	// 200 characters of 2 bytes each are 200 characters.
	const wide = await post('/blog', { title: 'é'.repeat(200), body: '', likes: 0 });
	assert.equal(wide.status, 201, wide.text);
});

test('numbers are exact: an integer beyond int64 is rejected, never wrapped; 1.0 is an integer', T, async () => {
	let p = problem(await post('/blog', '{"title":"t","body":"b","likes":9223372036854775808}'), 400);
	assert.deepEqual(p.errors.map((e) => [e.pointer, e.keyword]), [['/likes', 'type']]);
	p = problem(await post('/blog', '{"title":"t","body":"b","likes":1.5}'), 400);
	assert.deepEqual(p.errors.map((e) => [e.pointer, e.keyword]), [['/likes', 'type']]);
	const res = await post('/blog', '{"title":"t","body":"b","likes":2.0e1}');
	assert.equal(res.json().likes, 20);
});

test('malformed JSON is one "json" error with the reader\'s message and byte offset', T, async () => {
	const cases = [
		['{"title": "x", ', /^unexpected end of input at byte \d+$/],
		['{"title":"a","title":"b","body":"","likes":0}', /^duplicate key at byte \d+$/],
		['{"title":"a","body":"","likes":0,"x":1,"x":2}', /^duplicate key at byte \d+$/],
		['{"title":"a\\ud800","body":"","likes":0}', /surrogate/],
		[Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('latin1'), /UTF-8/],
		['{"title":"a","body":"","likes":0} {}', /^unexpected data after the value at byte 34$/],
		[`{"title":"a","body":"","likes":0,"deep":${'['.repeat(100)}${']'.repeat(100)}}`, /nesting too deep/],
	];
	for (const [body, re] of cases) {
		const { res, client } = await rawRequest(srv.port, Buffer.concat([
			Buffer.from(`POST /blog HTTP/1.1\r\nHost: x\r\n${JSON_CT}\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n\r\n`),
			Buffer.from(body, 'latin1')]));
		client.destroy();
		const p = problem(res, 400);
		assert.equal(p.errors.length, 1, res.text);
		assert.equal(p.errors[0].keyword, 'json');
		assert.equal(p.errors[0].pointer, '');
		assert.match(p.errors[0].message, re);
	}
});

test('a body that is not application/json is 415; parameters and case do not matter', T, async () => {
	for (const ct of ['text/plain', 'application/jsonx', 'application/json; charset=latin1', null]) {
		const res = await post('/blog', post1, ct ? [`Content-Type: ${ct}`] : []);
		problem(res, 415);
	}
	for (const ct of ['Application/JSON', 'application/json; charset=UTF-8', 'application/json ; charset="utf-8"']) {
		const res = await post('/blog', post1, [`Content-Type: ${ct}`]);
		assert.equal(res.status, 201, `${ct}: ${res.text}`);
	}
});

test('a missing required body is 400', T, async () => {
	const p = problem(await send('POST', '/blog', { headers: [JSON_CT] }), 400);
	assert.deepEqual(p.errors, [{ pointer: '', keyword: 'required', message: 'a JSON body is required' }]);
});

const good = {
	name: 'Ann', nickname: null, ref: 'abc', status: 'active', scores: [1, 2, 3],
	address: { street: 'Main', city: 'X', zip: '12345' }, active: true,
};

test('POST /validate decodes query, header and body and echoes them', T, async () => {
	let res = await post('/validate?page=3&tags=a&tags=b', good, [JSON_CT, 'X-Foo: bar']);
	assert.equal(res.status, 200, res.text);
	assert.deepEqual(res.json(), { page: 3, tags: ['a', 'b'], foo: 'bar', body: good });
	const other = { ...good, nickname: 'nick', ref: 12, scores: [] };
	res = await post('/validate', other, [JSON_CT, 'x-foo: y']);
	assert.deepEqual(res.json(), { page: 1, tags: [], foo: 'y', body: other });
	res = await post('/validate?tags=%C3%A9t%C3%A9&tags=a+b', good, [JSON_CT, 'x-foo: y']);
	assert.deepEqual(res.json().tags, ['été', 'a b']);
});

test('POST /validate names every broken rule, parameters and body alike', T, async () => {
	const bad = {
		name: '', nickname: 5, ref: 1.5, status: 'bad', scores: [101, -1, 'x'],
		address: { street: '', zip: '1234a', extra: 1 }, active: 'yes', more: 1,
	};
	const p = problem(await post('/validate?page=0&tags=', bad), 400);
	assert.deepEqual(p.errors.map((e) => e.in ? `${e.in}:${e.name}:${e.keyword}` : `${e.pointer}:${e.keyword}`), [
		'query:page:minimum', 'query:tags:minLength', 'header:x-foo:required',
		'/name:minLength', '/nickname:type', '/ref:type', '/status:enum', '/scores/0:maximum', '/scores/1:minimum',
		'/scores/2:type', '/address/street:minLength', '/address/zip:pattern', '/address/extra:additionalProperties',
		'/address/city:required', '/active:type', '/more:additionalProperties',
	]);
});

test('at most 20 errors are reported', T, async () => {
	const p = problem(await post('/validate', { ...good, scores: Array(25).fill(-5) }, [JSON_CT, 'x-foo: y']), 400);
	assert.equal(p.errors.length, 20);
});

test('POST /novalidate (x-ingot-validate: false) decodes types but checks no constraint', T, async () => {
	const loose = {
		name: '', nickname: null, ref: { any: [1] }, status: 'bad', scores: [101],
		address: { street: '', zip: '1234a', extra: 1 }, active: true, more: 1,
	};
	let res = await post('/novalidate?page=0', loose, [JSON_CT, 'x-foo: ']);
	assert.equal(res.status, 200, res.text);
	const out = res.json();
	assert.deepEqual([out.page, out.foo, out.body.name, out.body.status, out.body.ref], [0, '', '', 'bad', { any: [1] }]);
	// Types are still decoded: a string where an integer belongs is an error.
	const p = problem(await post('/novalidate?page=x', { ...good, scores: ['1'] }, [JSON_CT, 'x-foo: y']), 400);
	assert.deepEqual(p.errors.map((e) => e.name ?? e.pointer), ['page', '/scores/0']);
	res = await post('/novalidate', good, [JSON_CT, 'x-foo: y']);
	assert.equal(res.status, 200);
});

test('GET /openapi.json lists the new operations', T, async () => {
	const doc = (await send('GET', '/openapi.json')).json();
	for (const [path, method] of [['/blog', 'get'], ['/blog', 'post'], ['/blog/{id}', 'put'],
		['/validate', 'post'], ['/novalidate', 'post']])
		assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
	assert.equal(doc.paths['/novalidate'].post['x-ingot-validate'], false);
});

test('POST /blog: a body exactly at INGOT_MAX_BODY is decoded (201), one byte more is 413 and closes', T, async () => {
	const limit = 4096;
	const small = await startServer({ INGOT_MAX_BODY: String(limit) });
	try {
		const skeleton = JSON.stringify({ title: 't', body: '', likes: 0 });
		const at = JSON.stringify({ title: 't', body: 'x'.repeat(limit - skeleton.length), likes: 0 });
		assert.equal(at.length, limit);
		let { res, client } = await rawRequest(small.port, req('POST', '/blog', { headers: [JSON_CT], body: at }));
		client.destroy();
		assert.equal(res.status, 201, res.text);
		assert.equal(res.json().body.length, limit - skeleton.length);
		const over = at.replace('"likes"', ' "likes"');
		assert.equal(over.length, limit + 1);
		({ res, client } = await rawRequest(small.port, req('POST', '/blog', { headers: [JSON_CT], body: over })));
		client.destroy();
		problem(res, 413);
		assert.equal(res.headers.connection, 'close');
	} finally {
		await small.stop();
	}
});

test('POST /blog: a large body (beyond the read buffer) arrives whole and is validated', T, async () => {
	const body = JSON.stringify({ title: 'big', body: 'y'.repeat(200000), likes: 1 });
	const res = await post('/blog', body);
	assert.equal(res.status, 201, res.text.slice(0, 200));
	assert.equal(res.json().body.length, 200000);
	const bad = JSON.stringify({ title: 'x'.repeat(201), body: 'y'.repeat(200000), likes: -1 });
	const p = problem(await post('/blog', bad), 400);
	assert.deepEqual(p.errors.map((e) => [e.pointer, e.keyword]).sort(), [['/likes', 'minimum'], ['/title', 'maxLength']]);
});
