// The outbound client end to end, against real upstreams: the reference
// service's GET /proxy/json and GET /fanout, and the fetch tool
// (tests/client/fetch.c) built on the same client. Upstreams: the service
// itself, nginx, and a scriptable HTTP/1.1 upstream on raw sockets
// (upstreams.mjs). Bodies are compared byte for byte; keep-alive reuse is
// counted at the upstream (nginx's $connection, the raw upstream's
// accepts); pipelining is proved by an upstream that answers nothing until
// ten requests are in on one connection.
// Faults (hostile responses, retries, timeouts, redirects) are in
// client_faults.test.mjs; HTTPS and DNS in client_tls.test.mjs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, cleanup, curlResponse, RawClient, req, BODY } from './lib.mjs';
import { Upstream, serviceRoutes, gateRoute, startNginx, runFetch, fetchBin, stopAll } from './upstreams.mjs';

after(async () => { await stopAll(); cleanup(); });

const T = { timeout: 30000 };
const sha256 = (b) => createHash('sha256').update(b).digest('hex');

function needFetch() {
	assert.ok(fs.existsSync(fetchBin()), `${fetchBin()} is not built (tests/client/fetch.c; INGOT_FETCH_BIN overrides)`);
}

/** n requests, one after another, on one kept-alive connection to port. */
async function sequential(port, target, n) {
	const c = await RawClient.connect(port);
	const out = [];
	for (let i = 0; i < n; i++) {
		await c.write(req('GET', target));
		out.push(await c.response());
	}
	c.destroy();
	return out;
}

// ---- the service's outbound routes ----

test('GET /proxy/json without UPSTREAM calls the service itself and answers its /json body exactly', T, async () => {
	const srv = await startServer({ INGOT_ACCESS_LOG: 'true' }, { threads: '1' });
	const r = await curlResponse(srv.port, '/proxy/json');
	assert.equal(r.status, 200);
	assert.equal(r.text, BODY.json);
	assert.equal(r.headers['content-type'], 'application/json');
	// The inner call reached the same process on its own port.
	await srv.waitLog((l) => l.msg === 'request' && l.route === '/json' && l.status === 200);
	await srv.waitLog((l) => l.msg === 'request' && l.route === '/proxy/json' && l.status === 200);
	await srv.stop();
});

test('pipelined inbound requests whose handlers call out leave in request order, behind and before ready ones', T, async () => {
	// /proxy/json and /fanout are pending on an upstream call (the service
	// itself) while /health and /json are ready at once: order must hold.
	const srv = await startServer({}, { threads: '1' });
	const c = await RawClient.connect(srv.port);
	const list = ['/proxy/json', '/health', '/fanout?n=3', '/json', '/proxy/json', '/health'];
	await c.write(list.map((t) => req('GET', t)).join(''));
	const r = await c.responses(list.length);
	assert.deepEqual(r.map((x) => x.status), [200, 200, 200, 200, 200, 200]);
	assert.equal(r[0].text, BODY.json);
	assert.equal(r[1].text, BODY.health);
	const fan = JSON.parse(r[2].text);
	assert.equal(fan.requested, 3);
	assert.equal(fan.succeeded, 3);
	assert.equal(r[3].text, BODY.json);
	assert.equal(r[4].text, BODY.json);
	assert.equal(r[5].text, BODY.health);
	c.destroy();
	await srv.stop();
});

test('GET /proxy/json through nginx: the body exactly; 50 calls share one kept-alive upstream connection', T, async () => {
	const nginx = await startNginx();
	const srv = await startServer({ UPSTREAM: nginx.origin }, { threads: '1' });
	const got = await sequential(srv.port, '/proxy/json', 50);
	for (const r of got) {
		assert.equal(r.status, 200);
		assert.equal(r.text, BODY.json);
		assert.equal(r.headers['content-type'], 'application/json');
	}
	const log = await nginx.untilLog(50);
	assert.ok(log.every((e) => e.uri === '/json' && e.status === 200));
	assert.equal(nginx.connections(), 1, `one upstream connection for 50 calls: ${JSON.stringify(log.slice(0, 5))}`);
	assert.deepEqual(log.map((e) => e.n), Array.from({ length: 50 }, (_, i) => i + 1), "nginx's $connection_requests");
	await srv.stop();
	await nginx.close();
});

test('GET /fanout?n=10 through nginx: 10 concurrent calls succeed over at most INGOT_CLIENT_CONNECTIONS connections, kept for the next fan-out', T, async () => {
	const nginx = await startNginx();
	const srv = await startServer({ UPSTREAM: nginx.origin, INGOT_CLIENT_CONNECTIONS: '4' }, { threads: '1' });
	const first = await curlResponse(srv.port, '/fanout?n=10');
	assert.equal(first.status, 200);
	const body = first.json();
	assert.deepEqual(Object.keys(body), ['requested', 'succeeded', 'slowest_ms']);
	assert.equal(body.requested, 10);
	assert.equal(body.succeeded, 10);
	assert.ok(typeof body.slowest_ms === 'number' && body.slowest_ms >= 0, first.text);
	const second = (await curlResponse(srv.port, '/fanout?n=10')).json();
	assert.equal(second.succeeded, 10);
	const log = await nginx.untilLog(20);
	assert.ok(log.every((e) => e.uri === '/health' && e.status === 200));
	const conns = nginx.connections();
	assert.ok(conns >= 1 && conns <= 4, `${conns} upstream connections for 20 calls with a pool of 4: kept and reused`);
	// The default is 10.
	assert.equal((await curlResponse(srv.port, '/fanout')).json().requested, 10);
	await srv.stop();
	await nginx.close();
});

test('GET /fanout with INGOT_CLIENT_PIPELINING=10 and one connection: the upstream sees all 10 calls on one connection before it answers', T, async () => {
	const up = await Upstream.start({ ...serviceRoutes, '/health': gateRoute(10) });
	const srv = await startServer({ UPSTREAM: up.origin, INGOT_CLIENT_CONNECTIONS: '1', INGOT_CLIENT_PIPELINING: '10' },
		{ threads: '1' });
	const r = await curlResponse(srv.port, '/fanout?n=10');
	assert.equal(r.status, 200);
	assert.equal(r.json().succeeded, 10, r.text);
	assert.equal(up.connections, 1);
	assert.equal(up.conns[0].requests.length, 10);
	await srv.stop();
	await up.close();
});

test('GET /fanout?n= outside 1..100 is a 400 that names the parameter, before any call', T, async () => {
	const up = await Upstream.start(serviceRoutes);
	const srv = await startServer({ UPSTREAM: up.origin }, { threads: '1' });
	for (const n of ['0', '101', 'ten', '-1']) {
		const r = await curlResponse(srv.port, `/fanout?n=${n}`);
		assert.equal(r.status, 400, `n=${n}`);
		assert.equal(r.headers['content-type'], 'application/problem+json');
		assert.equal(r.json().errors[0].name, 'n', r.text);
	}
	assert.equal((await curlResponse(srv.port, '/fanout?n=100')).json().succeeded, 100);
	assert.equal(up.hits['/health'], 100, 'only the valid request called out');
	await srv.stop();
	await up.close();
});

test('GET /proxy/json with the upstream down: a 502 problem naming "connect"; the service keeps serving and recovers', T, async () => {
	// A port that was listening a moment ago: nothing is there now.
	const gone = await Upstream.start(serviceRoutes);
	const port = gone.port;
	await gone.close();
	const srv = await startServer({ UPSTREAM: `http://127.0.0.1:${port}` }, { threads: '1' });
	const r = await curlResponse(srv.port, '/proxy/json');
	assert.equal(r.status, 502);
	assert.equal(r.headers['content-type'], 'application/problem+json');
	const p = r.json();
	assert.equal(p.status, 502);
	assert.equal(p.title, 'Bad Gateway');
	assert.equal(p.error, 'connect');
	assert.match(p.detail, /refused/i);
	assert.equal((await curlResponse(srv.port, '/health')).text, BODY.health);
	assert.equal((await curlResponse(srv.port, '/fanout?n=5')).json().succeeded, 0);
	await srv.stop();
});

test('GET /proxy/json: an upstream status other than 200 is a 502 problem with upstream_status', T, async () => {
	const up = await Upstream.start({ '/json': () => ({ status: 404, body: '{"nope":1}' }) });
	const srv = await startServer({ UPSTREAM: `${up.origin}/` }, { threads: '1' });
	const r = await curlResponse(srv.port, '/proxy/json');
	assert.equal(r.status, 502);
	assert.deepEqual({ error: r.json().error, upstream_status: r.json().upstream_status }, { error: 'status', upstream_status: 404 });
	assert.equal(up.requests[0].target, '/json', 'a trailing slash in UPSTREAM is dropped');
	await srv.stop();
	await up.close();
});

test('GET /proxy/json on several cores, many clients at once: every body exact', T, async () => {
	const nginx = await startNginx();
	const srv = await startServer({ UPSTREAM: nginx.origin }, { threads: '2' });
	const all = await Promise.all(Array.from({ length: 8 }, () => sequential(srv.port, '/proxy/json', 25)));
	for (const r of all.flat()) {
		assert.equal(r.status, 200);
		assert.equal(r.text, BODY.json);
	}
	assert.equal((await nginx.untilLog(200)).length, 200);
	await srv.stop();
	await nginx.close();
});

// ---- the fetch tool against real servers ----

test('fetch against the service: bodies exact, 30 requests over one connection', T, async () => {
	needFetch();
	const srv = await startServer({}, { threads: '1' });
	const base = `http://127.0.0.1:${srv.port}`;
	const r = await runFetch(['--body', '--count', '10', '--connections', '1', `${base}/json`, `${base}/health`, `${base}/blog/7`]);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	const want = { '/json': BODY.json, '/health': BODY.health, '/blog/7': BODY.blog(7) };
	assert.equal(r.results.length, 30);
	for (const x of r.results) {
		assert.equal(x.status, 200, JSON.stringify(x));
		assert.equal(x.body, want[new URL(x.url).pathname], x.url);
	}
	assert.equal(r.summary.connections, 1);
	await srv.stop();
});

test('fetch against the service, pipelined 10 deep on one connection: pending /delay answers still reach their own requests', T, async () => {
	needFetch();
	const srv = await startServer({}, { threads: '1' });
	const delays = [40, 0, 25, 3, 0, 60, 1, 10, 0, 5];
	const urls = delays.map((ms) => `http://127.0.0.1:${srv.port}/delay/${ms}`);
	const r = await runFetch(['--body', '--pipelining', '10', '--connections', '1', '--concurrency', '10', ...urls]);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.equal(r.summary.connections, 1);
	r.results.forEach((x, i) => {
		assert.equal(x.url, urls[i]);
		assert.equal(x.body, BODY.delay(delays[i]), x.url);
	});
	await srv.stop();
});

test('fetch against nginx: 200 requests pipelined 10 deep over one connection, bodies exact and in request order', T, async () => {
	needFetch();
	const nginx = await startNginx();
	const urls = [`${nginx.origin}/json`, `${nginx.origin}/health`];
	const r = await runFetch(['--body', '--count', '100', '--pipelining', '10', '--connections', '1', '--concurrency', '10', ...urls]);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.equal(r.results.length, 200);
	for (const x of r.results) {
		assert.equal(x.status, 200);
		assert.equal(x.body, x.url.endsWith('/json') ? BODY.json : BODY.health, `request ${x.i}`);
	}
	const log = await nginx.untilLog(200);
	assert.equal(nginx.connections(), 1, 'one upstream connection');
	assert.deepEqual(log.map((e) => e.n), Array.from({ length: 200 }, (_, i) => i + 1));
	// URLs go round robin: the requests reached nginx in dispatch order.
	assert.deepEqual(log.map((e) => e.uri), r.results.map((x) => new URL(x.url).pathname));
	await nginx.close();
});

test('fetch against nginx: 20 sequential requests reuse one connection; a 256 KiB body arrives intact', T, async () => {
	needFetch();
	const nginx = await startNginx();
	const r = await runFetch(['--count', '20', `${nginx.origin}/json`]);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.ok(r.results.every((x) => x.status === 200 && x.sha256 === sha256(BODY.json)));
	await nginx.untilLog(20);
	assert.equal(nginx.connections(), 1);
	const big = fs.readFileSync(path.join(nginx.dir, 'www', 'big'));
	const b = await runFetch([`${nginx.origin}/big`]);
	assert.equal(b.results[0].bytes, big.length);
	assert.equal(b.results[0].sha256, sha256(big));
	await nginx.close();
});

test('pipelining depth 10 keeps order: 10 requests reach the upstream on one connection before any answer, each response goes to its request', T, async () => {
	needFetch();
	const up = await Upstream.start({ '/seq': gateRoute(10) });
	const urls = Array.from({ length: 10 }, (_, i) => `${up.origin}/seq?i=${i}`);
	const r = await runFetch(['--body', '--pipelining', '10', '--connections', '1', '--concurrency', '10', ...urls]);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.equal(up.connections, 1);
	r.results.forEach((x, i) => {
		assert.equal(x.url, urls[i]);
		assert.deepEqual(JSON.parse(x.body), { path: `/seq?i=${i}`, seq: i });
	});
	await up.close();
});
