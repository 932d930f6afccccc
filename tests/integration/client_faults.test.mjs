// The outbound client when upstreams misbehave or fail: hostile responses
// from a raw-socket upstream, retries (503, a reset connection, Retry-After,
// the retry limit), connect, header and body timeouts, redirects and their
// limit. Each through the fetch tool (tests/client/fetch.c) and, where the
// service's routes can show it, through GET /proxy/json. A bad response
// fails only its own request, with an error that names it; the next
// request gets a new connection and its exact body, and the service keeps
// serving.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startServer, cleanup, curlResponse, BODY } from './lib.mjs';
import { Upstream, serviceRoutes, failFirst, hostile, blackhole, startNginx, runFetch, fetchBin, stopAll } from './upstreams.mjs';

after(async () => { await stopAll(); cleanup(); });

const T = { timeout: 30000 };

function needFetch() {
	assert.ok(fs.existsSync(fetchBin()), `${fetchBin()} is not built (tests/client/fetch.c; INGOT_FETCH_BIN overrides)`);
}

// Each hostile reply, the error it must give and what its message must say.
const HOSTILE = [
	['both Content-Length and chunked', hostile.clAndChunked, 'protocol', /Transfer-Encoding and Content-Length|Content-Length and Transfer-Encoding/i],
	['a bad chunk size', hostile.badChunkSize, 'protocol', /chunk/i],
	['a 20 KB response head', hostile.hugeHead, 'too_large', /too large/i],
	['a close in mid-body', hostile.closeMidBody, 'reset', /closed|reset/i],
	['a status line that is not HTTP', hostile.garbage, 'protocol', /HTTP/],
];

for (const [what, reply, error, message] of HOSTILE) {
	test(`fetch: ${what} fails that request only ("${error}"); the next gets its exact body on a new connection`, T, async () => {
		needFetch();
		const up = await Upstream.start({ ...serviceRoutes, '/bad': reply });
		const r = await runFetch(['--body', `${up.origin}/bad`, `${up.origin}/json`]);
		assert.equal(r.code, 1, 'one request failed');
		const [bad, good] = r.results;
		assert.equal(bad.error, error, JSON.stringify(bad));
		assert.match(bad.message, message);
		assert.equal(bad.status, undefined);
		assert.equal(good.status, 200, JSON.stringify(good));
		assert.equal(good.body, BODY.json);
		assert.equal(up.connections, 2, 'the bad connection was closed, not reused');
		assert.equal(r.summary.connections, 2);
		await up.close();
	});
}

test('fetch: a response nobody asked for (after a complete one) is never taken for the next request', T, async () => {
	needFetch();
	const up = await Upstream.start({ ...serviceRoutes, '/twice': hostile.unsolicited });
	const r = await runFetch(['--body', `${up.origin}/twice`, `${up.origin}/json`]);
	assert.equal(r.code, 0, r.stdout);
	for (const x of r.results) {
		assert.equal(x.status, 200);
		assert.equal(x.body, BODY.json, 'not the unsolicited {"evil":true}');
	}
	assert.equal(up.connections, 2, 'the connection that spoke out of turn was dropped');
	await up.close();
});

test('GET /proxy/json: each hostile upstream reply is a 502 naming the error; the next call succeeds and the service keeps serving', T, async () => {
	const next = [];
	const up = await Upstream.start({ ...serviceRoutes, '/json': (req) => (next.shift() || serviceRoutes['/json'])(req) });
	const srv = await startServer({ UPSTREAM: up.origin }, { threads: '1' });
	for (const [what, reply, error, message] of HOSTILE) {
		next.push(reply);
		const bad = await curlResponse(srv.port, '/proxy/json');
		assert.equal(bad.status, 502, what);
		assert.equal(bad.headers['content-type'], 'application/problem+json');
		assert.equal(bad.json().error, error, `${what}: ${bad.text}`);
		assert.match(bad.json().detail, message);
		const good = await curlResponse(srv.port, '/proxy/json');
		assert.equal(good.status, 200, `${what}: the call after it`);
		assert.equal(good.text, BODY.json);
	}
	next.push(hostile.unsolicited);
	for (let i = 0; i < 2; i++) {
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 200);
		assert.equal(r.text, BODY.json, 'never the unsolicited response');
	}
	assert.equal((await curlResponse(srv.port, '/health')).text, BODY.health);
	assert.equal(srv.exit, null, 'the service is still running');
	await srv.stop();
	await up.close();
});

// ---- retries (fetch --retry N: the retry interceptor) ----

const unavailable = (headers = {}) => () => ({ status: 503, body: '{"busy":true}', headers });
const ok = () => ({ status: 200, body: BODY.json });

test('retry: two 503s, then the body; retries counted, three attempts made', T, async () => {
	needFetch();
	const up = await Upstream.start({ '/flaky': failFirst(2, unavailable(), ok) });
	const r = await runFetch(['--body', '--retry', '3', `${up.origin}/flaky`]);
	assert.equal(r.code, 0, r.stdout);
	assert.equal(r.results[0].status, 200);
	assert.equal(r.results[0].body, BODY.json);
	assert.equal(r.results[0].retries, 2);
	assert.equal(up.hits['/flaky'], 3);
	await up.close();
});

test('retry: Retry-After: 1 is waited for before the next attempt', T, async () => {
	needFetch();
	const up = await Upstream.start({ '/later': failFirst(1, unavailable({ 'Retry-After': '1' }), ok) });
	const r = await runFetch(['--body', '--retry', '2', `${up.origin}/later`]);
	assert.equal(r.results[0].status, 200, r.stdout);
	assert.equal(r.results[0].retries, 1);
	const [first, second] = up.requests;
	const waitedMs = Number(second.at - first.at) / 1e6;
	// Without Retry-After the first backoff is at most 100 ms (full jitter).
	assert.ok(waitedMs >= 900, `the retry came ${waitedMs.toFixed(0)} ms after the 503 with Retry-After: 1`);
	await up.close();
});

test('retry: a connection reset before the response is retried on a new connection', T, async () => {
	needFetch();
	const up = await Upstream.start({ '/reset': failFirst(1, () => ({ reset: true }), ok) });
	const r = await runFetch(['--body', '--retry', '2', `${up.origin}/reset`]);
	assert.equal(r.code, 0, r.stdout);
	assert.equal(r.results[0].body, BODY.json);
	assert.equal(r.results[0].retries, 1);
	assert.equal(up.connections, 2);
	// Without the interceptor the reset is the answer.
	const up2 = await Upstream.start({ '/reset': failFirst(1, () => ({ reset: true }), ok) });
	const once = await runFetch([`${up2.origin}/reset`]);
	assert.equal(once.results[0].error, 'reset', JSON.stringify(once.results[0]));
	await up.close();
	await up2.close();
});

test('retry: the limit is reached and the last 503 is the answer; a POST is not retried', T, async () => {
	needFetch();
	const up = await Upstream.start({ '/down': unavailable() });
	const r = await runFetch(['--retry', '2', `${up.origin}/down`]);
	assert.equal(r.results[0].status, 503, r.stdout);
	assert.equal(r.results[0].retries, 2);
	assert.equal(up.hits['/down'], 3, 'the first attempt and two retries');
	const post = await runFetch(['--retry', '2', '--method', 'POST', '--data', '{}', `${up.origin}/down`]);
	assert.equal(post.results[0].status, 503);
	assert.equal(post.results[0].retries, 0);
	assert.equal(up.hits['/down'], 4, 'one attempt: POST is not idempotent');
	await up.close();
});

test('retry against nginx: its 503 with Retry-After is retried up to the limit', T, async () => {
	needFetch();
	const nginx = await startNginx();
	const r = await runFetch(['--retry', '1', `${nginx.origin}/unavailable`]);
	assert.equal(r.results[0].status, 503, r.stdout);
	assert.equal(r.results[0].retries, 1);
	assert.deepEqual((await nginx.untilLog(2)).map((e) => [e.uri, e.status]), [['/unavailable', 503], ['/unavailable', 503]]);
	await nginx.close();
});

// ---- timeouts ----

test('connect timeout: an address whose connect never completes fails with "connect_timeout"', T, async () => {
	needFetch();
	const hole = await blackhole();
	const r = await runFetch(['--timeout-connect', '200', `${hole.origin}/json`]);
	assert.equal(r.results[0].error, 'connect_timeout', JSON.stringify(r.results[0]));
	assert.match(r.results[0].message, /timed out/);
	const srv = await startServer({ UPSTREAM: hole.origin, INGOT_CLIENT_CONNECT_TIMEOUT_MS: '200' }, { threads: '1' });
	const p = await curlResponse(srv.port, '/proxy/json');
	assert.equal(p.status, 504);
	assert.equal(p.json().title, 'Gateway Timeout');
	assert.equal(p.json().error, 'connect_timeout');
	await srv.stop();
	await hole.close();
});

test('headers timeout: an upstream that never answers fails with "headers_timeout"; the next call gets a new connection', T, async () => {
	needFetch();
	const next = [];
	const up = await Upstream.start({ ...serviceRoutes, '/json': (req) => (next.shift() || serviceRoutes['/json'])(req),
		'/silent': () => ({ stall: true }) });
	const r = await runFetch(['--timeout-headers', '200', '--body', `${up.origin}/silent`, `${up.origin}/json`]);
	assert.equal(r.results[0].error, 'headers_timeout', JSON.stringify(r.results[0]));
	assert.equal(r.results[1].body, BODY.json);
	assert.equal(up.connections, 2);
	const srv = await startServer({ UPSTREAM: up.origin, INGOT_CLIENT_HEADERS_TIMEOUT_MS: '200' }, { threads: '1' });
	next.push(() => ({ stall: true }));
	const p = await curlResponse(srv.port, '/proxy/json');
	assert.equal(p.status, 504);
	assert.equal(p.json().error, 'headers_timeout');
	assert.equal((await curlResponse(srv.port, '/proxy/json')).text, BODY.json);
	await srv.stop();
	await up.close();
});

test('body timeout: a body that stalls fails with "body_timeout"', T, async () => {
	needFetch();
	const next = [];
	const up = await Upstream.start({ ...serviceRoutes, '/json': (req) => (next.shift() || serviceRoutes['/json'])(req),
		'/slow': hostile.stallMidBody });
	const r = await runFetch(['--timeout-body', '200', `${up.origin}/slow`]);
	assert.equal(r.results[0].error, 'body_timeout', JSON.stringify(r.results[0]));
	const srv = await startServer({ UPSTREAM: up.origin, INGOT_CLIENT_BODY_TIMEOUT_MS: '200' }, { threads: '1' });
	next.push(hostile.stallMidBody);
	const p = await curlResponse(srv.port, '/proxy/json');
	assert.equal(p.status, 504);
	assert.equal(p.json().error, 'body_timeout');
	assert.equal((await curlResponse(srv.port, '/proxy/json')).text, BODY.json);
	await srv.stop();
	await up.close();
});

// ---- redirects (fetch --redirect N: the redirect interceptor) ----

const redirectRoutes = {
	...serviceRoutes,
	'/hop': (req) => {
		const n = Number(req.query.get('n'));
		return n > 0 ? { status: 302, headers: { Location: `/hop?n=${n - 1}` } } : { status: 200, body: BODY.json };
	},
};

test('redirects: a chain of 3 is followed to the body; the 302 itself without the interceptor', T, async () => {
	needFetch();
	const up = await Upstream.start(redirectRoutes);
	const r = await runFetch(['--body', '--redirect', '5', `${up.origin}/hop?n=3`]);
	assert.equal(r.results[0].status, 200, r.stdout);
	assert.equal(r.results[0].body, BODY.json);
	assert.equal(r.results[0].redirects, 3);
	assert.deepEqual(up.requests.map((q) => q.target), ['/hop?n=3', '/hop?n=2', '/hop?n=1', '/hop?n=0']);
	const plain = await runFetch([`${up.origin}/hop?n=1`]);
	assert.equal(plain.results[0].status, 302);
	await up.close();
});

test('redirects: one more than the limit fails with "redirect_limit"', T, async () => {
	needFetch();
	const up = await Upstream.start(redirectRoutes);
	const r = await runFetch(['--redirect', '2', `${up.origin}/hop?n=3`]);
	assert.equal(r.results[0].error, 'redirect_limit', JSON.stringify(r.results[0]));
	assert.equal(up.hits['/hop'], 3, 'the first request and two redirects');
	await up.close();
});

test('redirects: across origins, without the credentials', T, async () => {
	needFetch();
	const target = await Upstream.start(serviceRoutes);
	const up = await Upstream.start({ '/away': () => ({ status: 307, headers: { Location: `${target.origin}/json` } }) });
	const r = await runFetch(['--body', '--redirect', '1', '--header', 'Authorization: Bearer secret',
		'--header', 'X-Trace: 1', `${up.origin}/away`]);
	assert.equal(r.results[0].body, BODY.json, r.stdout);
	assert.equal(up.requests[0].headers.authorization, 'Bearer secret');
	assert.equal(target.requests[0].headers.authorization, undefined, 'credentials stay with their origin');
	assert.equal(target.requests[0].headers['x-trace'], '1');
	await up.close();
	await target.close();
});

test('redirects against nginx: its 302 chain is followed to the file', T, async () => {
	needFetch();
	const nginx = await startNginx();
	const r = await runFetch(['--body', '--redirect', '5', `${nginx.origin}/redirect/3`]);
	assert.equal(r.results[0].status, 200, r.stdout);
	assert.equal(r.results[0].body, BODY.json);
	assert.equal(r.results[0].redirects, 3);
	assert.deepEqual((await nginx.untilLog(4)).map((e) => e.uri), ['/redirect/3', '/redirect/2', '/redirect/1', '/redirect/0']);
	assert.equal(nginx.connections(), 1, 'every hop on the same kept-alive connection');
	await nginx.close();
});
