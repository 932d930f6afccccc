// CORS through the real binary and curl: preflights allowed and refused
// (origin, method), exact origins, * and https://*.example.com patterns,
// credentials, exposed headers and max-age; the runtime's own 400, 404 and
// 405 and the connection's 413 carry the headers; with no CORS setting nothing changes (OPTIONS:
// 204 + Allow, no Access-Control-* header, no Vary); a bad origin stops
// the start with exit 2.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, curlResponse, runBinary } from './lib.mjs';

after(() => cleanup());
const T = { timeout: 30000 };

const preflight = (origin, method, more = []) =>
	['-X', 'OPTIONS', '-H', `Origin: ${origin}`, '-H', `Access-Control-Request-Method: ${method}`, ...more];

function assertNoCors(res) {
	for (const h of Object.keys(res.headers))
		assert.ok(!h.startsWith('access-control-'), `unexpected ${h}: ${res.headers[h]}`);
}

test('CORS is off by default: OPTIONS is 204 + Allow, no CORS header and no Vary on any answer', T, async () => {
	const srv = await startServer();
	try {
		let res = await curlResponse(srv.port, '/blog', preflight('http://a.test', 'POST'));
		assert.equal(res.status, 204);
		assert.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS');
		assertNoCors(res);
		assert.equal(res.headers.vary, undefined);
		res = await curlResponse(srv.port, '/health', ['-H', 'Origin: http://a.test']);
		assert.equal(res.status, 200);
		assertNoCors(res);
		assert.equal(res.headers.vary, undefined);
	} finally { await srv.stop(); }
});

test('exact origins and patterns: preflights allowed and refused, the answers and the runtime errors carry the headers', T, async () => {
	const srv = await startServer({
		INGOT_CORS_ORIGINS: 'http://app.test:8080, https://*.example.com',
		INGOT_CORS_MAX_AGE: '600', INGOT_CORS_EXPOSE_HEADERS: 'X-Request-Id',
	});
	try {
		// An allowed preflight: the path's methods, its header parameters.
		let res = await curlResponse(srv.port, '/validate', preflight('http://app.test:8080', 'POST',
			['-H', 'Access-Control-Request-Headers: content-type, x-foo']));
		assert.equal(res.status, 204);
		assert.equal(res.headers['access-control-allow-origin'], 'http://app.test:8080');
		assert.equal(res.headers['access-control-allow-methods'], 'POST, OPTIONS');
		assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, Authorization, x-foo');
		assert.equal(res.headers['access-control-max-age'], '600');
		assert.equal(res.headers['access-control-allow-credentials'], undefined);
		assert.equal(res.headers.vary, 'Origin');
		res = await curlResponse(srv.port, '/blog', preflight('http://app.test:8080', 'POST'));
		assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, POST, OPTIONS');
		assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, Authorization');

		// A pattern: one or more labels where its * is, nothing else.
		for (const o of ['https://a.example.com', 'https://a.b.example.com', 'HTTPS://A.Example.com']) {
			res = await curlResponse(srv.port, '/blog', preflight(o, 'GET'));
			assert.equal(res.headers['access-control-allow-origin'], o, o);
		}
		// Refused: another origin, port or scheme, a bare domain, a look-alike, a method the path lacks.
		for (const [o, m] of [['http://evil.test', 'GET'], ['http://app.test', 'GET'], ['https://app.test:8080', 'GET'],
			['https://example.com', 'GET'], ['https://a.example.com.evil.test', 'GET'], ['https://aexample.com', 'GET'],
			['http://a.example.com', 'GET'], ['null', 'GET'], ['http://app.test:8080', 'DELETE']]) {
			res = await curlResponse(srv.port, '/blog', preflight(o, m));
			assert.equal(res.status, 204, `${o} ${m}`);
			assert.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS');
			assertNoCors(res);
		}

		// Actual requests: the handler's answer and the runtime's own errors.
		const origin = ['-H', 'Origin: https://x.example.com'];
		for (const [target, extra, status] of [['/health', [], 200], ['/nope', [], 404], ['/health', ['-X', 'DELETE'], 405],
			['/blog/0', [], 400], ['/validate', ['-X', 'POST', '-H', 'Content-Type: application/json', '-d', '{'], 400]]) {
			res = await curlResponse(srv.port, target, [...origin, ...extra]);
			assert.equal(res.status, status, `${target} ${res.text}`);
			assert.equal(res.headers['access-control-allow-origin'], 'https://x.example.com', target);
			assert.equal(res.headers['access-control-expose-headers'], 'X-Request-Id', target);
			assert.equal(res.headers.vary, 'Origin', target);
		}
		// A refused origin gets the answer without CORS headers (the browser hides it).
		res = await curlResponse(srv.port, '/health', ['-H', 'Origin: http://evil.test']);
		assert.equal(res.status, 200);
		assertNoCors(res);
		assert.equal(res.headers.vary, 'Origin');
		// OPTIONS without a preflight's fields stays 204 + Allow.
		res = await curlResponse(srv.port, '/health', ['-X', 'OPTIONS']);
		assert.equal(res.status, 204);
		assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
		assertNoCors(res);
	} finally { await srv.stop(); }
});

test('* answers * without credentials; with credentials the origin is echoed with Allow-Credentials', T, async () => {
	let srv = await startServer({ INGOT_CORS_ORIGINS: '*' });
	try {
		let res = await curlResponse(srv.port, '/health', ['-H', 'Origin: http://any.test']);
		assert.equal(res.headers['access-control-allow-origin'], '*');
		assert.equal(res.headers['access-control-allow-credentials'], undefined);
		res = await curlResponse(srv.port, '/json', preflight('http://any.test', 'GET'));
		assert.equal(res.headers['access-control-allow-origin'], '*');
		assert.equal(res.headers['access-control-max-age'], undefined);
	} finally { await srv.stop(); }
	srv = await startServer({ INGOT_CORS_ORIGINS: '*', INGOT_CORS_CREDENTIALS: 'true' });
	try {
		let res = await curlResponse(srv.port, '/health', ['-H', 'Origin: http://any.test']);
		assert.equal(res.headers['access-control-allow-origin'], 'http://any.test');
		assert.equal(res.headers['access-control-allow-credentials'], 'true');
		res = await curlResponse(srv.port, '/nope', preflight('http://any.test', 'GET'));
		assert.equal(res.status, 404); // no route: no preflight answer
		assertNoCors(res);
		res = await curlResponse(srv.port, '/json', preflight('http://any.test', 'GET'));
		assert.equal(res.headers['access-control-allow-origin'], 'http://any.test');
		assert.equal(res.headers['access-control-allow-credentials'], 'true');
	} finally { await srv.stop(); }
});

test("the connection's own errors (413 for a body over INGOT_MAX_BODY) carry the headers too", T, async () => {
	const srv = await startServer({ INGOT_CORS_ORIGINS: 'http://a.test', INGOT_CORS_CREDENTIALS: 'yes',
		INGOT_CORS_EXPOSE_HEADERS: 'X-Request-Id', INGOT_MAX_BODY: '10' });
	try {
		const big = ['-H', 'Content-Type: application/json', '-d', '{"title":"more than ten bytes"}'];
		let res = await curlResponse(srv.port, '/blog', ['-H', 'Origin: http://a.test', ...big]);
		assert.equal(res.status, 413);
		assert.equal(res.headers['access-control-allow-origin'], 'http://a.test');
		assert.equal(res.headers['access-control-allow-credentials'], 'true');
		assert.equal(res.headers['access-control-expose-headers'], 'X-Request-Id');
		assert.equal(res.headers.vary, 'Origin');
		res = await curlResponse(srv.port, '/blog', ['-H', 'Origin: http://b.test', ...big]);
		assert.equal(res.status, 413);
		assertNoCors(res);
	} finally { await srv.stop(); }
});

test('a malformed INGOT_CORS_ORIGINS stops the start with exit 2 naming it', T, async () => {
	for (const bad of ['app.test', 'https://a.test/', 'https://a.*.example.com', 'https://*example.com']) {
		const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_CORS_ORIGINS: bad });
		assert.equal(r.code, 2, `${bad}: ${r.stdout}${r.stderr}`);
		assert.match(r.stdout + r.stderr, /INGOT_CORS_ORIGINS/, bad);
	}
});
