// Every route of the reference service through curl, byte for byte:
// status, content type, content length, exact body, Date; HEAD; the
// problem+json errors of decoding and routing; 405/OPTIONS with Allow.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, curlResponse, rawRequest, req, BODY, DATE_RE } from './lib.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { if (srv) await srv.stop(); cleanup(); });

const T = { timeout: 20000 };

function assertJson200(res, body) {
	assert.equal(res.version, '1.1');
	assert.equal(res.status, 200);
	assert.equal(res.reason, 'OK');
	assert.equal(res.headers['content-type'], 'application/json');
	assert.equal(res.headers['content-length'], String(Buffer.byteLength(body)));
	assert.match(res.headers.date ?? '', DATE_RE);
	assert.equal(res.text, body);
}

function assertProblem(res, status) {
	assert.equal(res.status, status, `status; body ${res.text}`);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	assert.equal(res.headers['content-length'], String(res.body.length));
	assert.match(res.headers.date ?? '', DATE_RE);
	const p = res.json();
	assert.equal(p.status, status);
	assert.equal(typeof p.type, 'string');
	assert.equal(typeof p.title, 'string');
	assert.equal(typeof p.detail, 'string');
	return p;
}

const routes = [
	['/health', BODY.health],
	['/json', BODY.json],
	['/compute', BODY.compute],
	['/hash', BODY.hash],
	['/blog/1', BODY.blog(1)],
	['/blog/42', BODY.blog(42)],
	['/blog/9007199254740991', BODY.blog('9007199254740991')],
	['/blog/9223372036854775807', BODY.blog('9223372036854775807')],
	['/delay/0', BODY.delay(0)],
	['/delay/20', BODY.delay(20)],
];

for (const [path, body] of routes) {
	test(`GET ${path} answers 200 application/json with the exact body, its length and a Date`, T, async () => {
		const res = await curlResponse(srv.port, path);
		assertJson200(res, body);
	});
}

test('HEAD on every route gives the GET headers (same Content-Length) and no body', T, async () => {
	for (const [path] of routes) {
		const id = ['-H', `X-Request-Id: head${path}`];
		const get = await curlResponse(srv.port, path, id);
		const head = await curlResponse(srv.port, path, id, { head: true });
		assert.equal(head.status, 200, path);
		assert.equal(head.body.length, 0, path);
		const strip = (r) => r.headerList.filter(([n]) => n !== 'date');
		assert.deepEqual(strip(head), strip(get), path);
		assert.match(head.headers.date ?? '', DATE_RE);
	}
});

test('HEAD sends no body bytes on the wire, and the next pipelined response follows directly', T, async () => {
	const { res, client } = await rawRequest(srv.port, req('HEAD', '/json') + req('GET', '/health'), { head: true });
	assert.equal(res.status, 200);
	assert.equal(res.headers['content-length'], String(BODY.json.length));
	const next = await client.response();
	assert.equal(next.text, BODY.health);
	client.destroy();
});

test('HEAD on an error (400, 404) and on a pending route (/delay) sends the head only; the next pipelined response follows', T, async () => {
	const { res, client } = await rawRequest(srv.port,
		req('HEAD', '/blog/0') + req('HEAD', '/nope') + req('HEAD', '/delay/10') + req('GET', '/health'), { head: true });
	assert.equal(res.status, 400);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	assert.ok(Number(res.headers['content-length']) > 0);
	const nf = await client.response({ head: true });
	assert.equal(nf.status, 404);
	const d = await client.response({ head: true });
	assert.equal(d.status, 200);
	assert.equal(d.headers['content-length'], String(BODY.delay(10).length));
	assert.equal((await client.response()).text, BODY.health);
	client.destroy();
});

test('GET /openapi.json serves the OpenAPI 3.1 document describing every route', T, async () => {
	const res = await curlResponse(srv.port, '/openapi.json');
	assert.equal(res.status, 200);
	assert.match(res.headers['content-type'], /^application\/(json|vnd\.oai\.openapi\+json)/);
	assert.equal(res.headers['content-length'], String(res.body.length));
	assert.match(res.headers.date ?? '', DATE_RE);
	const doc = res.json();
	assert.match(String(doc.openapi), /^3\.1/);
	for (const p of ['/health', '/json', '/compute', '/hash', '/blog/{id}', '/delay/{ms}'])
		assert.ok(doc.paths && p in doc.paths, `paths has ${p}`);
});

for (const bad of ['0', '-1', 'abc', '99999999999999999999', '9223372036854775808', '1.5', '1e3', '']) {
	test(`GET /blog/${bad} is a 400 problem+json whose errors name the path parameter id`, T, async () => {
		const res = await curlResponse(srv.port, `/blog/${bad}`);
		if (bad === '' && res.status === 404) {
			// "/blog/" has no id segment at all: not matching the route is fine.
			assertProblem(res, 404);
			return;
		}
		const p = assertProblem(res, 400);
		assert.ok(Array.isArray(p.errors) && p.errors.length >= 1, `errors array in ${res.text}`);
		assert.ok(p.errors.some((e) => e.name === 'id' || /(^|\/)id$/.test(e.pointer ?? '')),
			`an error names "id": ${res.text}`);
	});
}

for (const bad of ['-5', '60001', 'x']) {
	test(`GET /delay/${bad} is a 400 problem+json naming ms`, T, async () => {
		const res = await curlResponse(srv.port, `/delay/${bad}`);
		const p = assertProblem(res, 400);
		assert.ok(p.errors.some((e) => e.name === 'ms'), res.text);
	});
}

test('an unknown path is a 404 problem+json', T, async () => {
	for (const path of ['/nope', '/health/extra', '/blogs', '/', '/HEALTH']) {
		const res = await curlResponse(srv.port, path);
		assertProblem(res, 404);
	}
});

test('POST /health is 405 problem+json with an Allow header that lists GET', T, async () => {
	const res = await curlResponse(srv.port, '/health', ['-X', 'POST', '-d', '']);
	assertProblem(res, 405);
	assert.ok(res.headers.allow, 'Allow present');
	assert.ok(res.headers.allow.split(',').map((s) => s.trim()).includes('GET'), res.headers.allow);
});

test('DELETE /blog/1 is 405 with Allow listing GET', T, async () => {
	const res = await curlResponse(srv.port, '/blog/1', ['-X', 'DELETE']);
	assertProblem(res, 405);
	assert.ok(res.headers.allow.split(',').map((s) => s.trim()).includes('GET'), res.headers.allow);
});

test('OPTIONS /health is 204 with Allow listing GET and no body', T, async () => {
	const res = await curlResponse(srv.port, '/health', ['-X', 'OPTIONS']);
	assert.equal(res.status, 204);
	assert.ok(res.headers.allow, 'Allow present');
	assert.ok(res.headers.allow.split(',').map((s) => s.trim()).includes('GET'), res.headers.allow);
	assert.equal(res.body.length, 0);
	assert.equal(res.headers['content-length'], undefined, '204 has no Content-Length');
	assert.match(res.headers.date ?? '', DATE_RE);
});

test('OPTIONS * is 204', T, async () => {
	const res = await curlResponse(srv.port, '', ['-X', 'OPTIONS', '--request-target', '*']);
	assert.equal(res.status, 204);
	assert.equal(res.body.length, 0);
	// and on a raw socket, followed by a normal request on the same connection
	const { res: r2, client } = await rawRequest(srv.port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n' + req('GET', '/health'));
	assert.equal(r2.status, 204);
	const next = await client.response();
	assert.equal(next.text, BODY.health);
	client.destroy();
});

test('a query string does not change the route: /health?x=1 is 200', T, async () => {
	const res = await curlResponse(srv.port, '/health?x=1&y');
	assertJson200(res, BODY.health);
});
