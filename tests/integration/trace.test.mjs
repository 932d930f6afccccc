// Request ids, W3C trace context and the access log, through the real
// binary: X-Request-Id taken or made and echoed on every response (engine
// errors included), "request_id" in problem+json bodies and log lines, JSON
// escaping of an id with a quote and a backslash, traceparent continued
// into an upstream call (a raw TCP upstream sees the same trace id, a new
// parent id, the flags and tracestate) or replaced when invalid, the
// access log's exact fields, and INGOT_ACCESS_LOG_SAMPLE. Lines are awaited
// (a later request's line on the same core comes after), never slept for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, cleanup, RawClient, req, runBinary, curl, needTools } from './lib.mjs';
import { Upstream, serviceRoutes, stopAll } from './upstreams.mjs';

after(async () => { await stopAll(); cleanup(); });

const T = { timeout: 30000 };
const TID = '0af7651916cd43dd8448eb211c80319c';
const PID = 'b7ad6b7169203331';
const MADE = /^[0-9a-f]{32}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** One request on its own connection, sent byte for byte as given. */
async function send(port, method, target, headers = [], body = '') {
	const c = await RawClient.connect(port);
	await c.write(req(method, target, { headers, body }));
	const r = await c.response();
	const local = `${c.sock.localAddress}:${c.sock.localPort}`;
	c.destroy();
	return { ...r, local };
}

/** The access log line of the request whose id is id. */
function lineOf(srv, id, mark = 0) {
	return srv.waitLog((l) => l.msg === 'request' && l.request_id === id, mark);
}

test('a valid X-Request-Id is echoed, and carried in the access log', T, async () => {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1' });
	try {
		for (const id of ['abc-123', '!~', 'x'.repeat(128), 'a"b\\c']) {
			const r = await send(srv.port, 'GET', '/health', [`X-Request-Id: ${id}`]);
			assert.equal(r.status, 200);
			assert.equal(r.headers['x-request-id'], id);
			assert.equal((await lineOf(srv, id)).status, 200);
		}
	} finally {
		await srv.stop();
	}
});

test('an id is made when X-Request-Id is absent, empty, 129 characters, or holds a space or a tab', T, async () => {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1' });
	try {
		const seen = new Set();
		const cases = [[], ['X-Request-Id:'], [`X-Request-Id: ${'y'.repeat(129)}`], ['X-Request-Id: a b'],
			['X-Request-Id: a\tb'], ['X-Request-Id: caf\u00e9']];
		for (const h of cases) {
			const r = await send(srv.port, 'GET', '/health', h);
			assert.equal(r.status, 200);
			const id = r.headers['x-request-id'];
			assert.match(id, MADE, `made for ${JSON.stringify(h)}`);
			assert.ok(!seen.has(id), 'every made id is new');
			seen.add(id);
			assert.equal((await lineOf(srv, id)).status, 200);
		}
	} finally {
		await srv.stop();
	}
});

test('an id with a quote and a backslash is escaped in the access log and in a problem+json 400 and 404', T, async () => {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1' });
	try {
		const id = 'q"b\\s';
		const bad = await send(srv.port, 'POST', '/blog', [`X-Request-Id: ${id}`, 'Content-Type: application/json'], '{"x":1}');
		assert.equal(bad.status, 400);
		assert.equal(bad.headers['x-request-id'], id);
		const problem = JSON.parse(bad.text);
		assert.equal(problem.request_id, id);
		assert.ok(Array.isArray(problem.errors) && problem.errors.length > 0);
		const missing = await send(srv.port, 'GET', '/no/such/path', [`X-Request-Id: ${id}`]);
		assert.equal(missing.status, 404);
		assert.equal(JSON.parse(missing.text).request_id, id);
		// The raw line holds the escaped form and parses back to the id.
		await srv.waitLog((l) => l.msg === 'request' && l.status === 404 && l.request_id === id);
		const raw = srv.lines.filter((l) => l.includes('"msg":"request"') && l.includes('"status":400'));
		assert.equal(raw.length, 1);
		assert.ok(raw[0].includes('"request_id":"q\\"b\\\\s"'), raw[0]);
	} finally {
		await srv.stop();
	}
});

test('engine errors after a parsed head carry the id too (413 over INGOT_MAX_BODY, its own or a made id), and are logged even with INGOT_ACCESS_LOG_SAMPLE=0', T, async () => {
	const srv = await startServer({ INGOT_MAX_BODY: '16', INGOT_ACCESS_LOG: '1', INGOT_ACCESS_LOG_SAMPLE: '0' });
	try {
		const own = await send(srv.port, 'POST', '/blog', ['X-Request-Id: big-1', 'Content-Type: application/json'], 'z'.repeat(64));
		assert.equal(own.status, 413);
		assert.equal(own.headers['x-request-id'], 'big-1');
		assert.equal(JSON.parse(own.text).request_id, 'big-1');
		const made = await send(srv.port, 'POST', '/blog', ['Content-Type: application/json'], 'z'.repeat(64));
		assert.equal(made.status, 413);
		assert.match(made.headers['x-request-id'], MADE);
		assert.equal(JSON.parse(made.text).request_id, made.headers['x-request-id']);
		// A head that does not parse has no id to echo.
		const c = await RawClient.connect(srv.port);
		await c.write('GET / HTTP/1.1\r\nHost: x\r\nX-Request-Id: nope\r\nBad Field: 1\r\n\r\n');
		const r = await c.response();
		c.destroy();
		assert.equal(r.status, 400);
		assert.equal(r.headers['x-request-id'], undefined);
		const big = await lineOf(srv, 'big-1');
		assert.equal(big.status, 413);
		assert.equal(big.bytes_out, Buffer.byteLength(own.text));
		assert.equal(big.client, own.local);
		assert.equal((await lineOf(srv, made.headers['x-request-id'])).status, 413);
		const bad = await srv.waitLog((l) => l.msg === 'request' && l.status === 400);
		assert.equal(bad.request_id, '', 'an unparsed head has no id');
		assert.equal(bad.route, '');
	} finally {
		await srv.stop();
	}
});

test('the access log line has exactly its fields: ts, request_id, trace_id, span_id, method, route, status, duration_us, bytes_in, bytes_out, client', T, async () => {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1' });
	try {
		const r = await send(srv.port, 'GET', '/blog/12', ['X-Request-Id: fields-1']);
		assert.equal(r.status, 200);
		const l = await lineOf(srv, 'fields-1');
		assert.deepEqual(Object.keys(l).sort(), ['bytes_in', 'bytes_out', 'client', 'duration_us', 'level', 'method',
			'msg', 'request_id', 'route', 'span_id', 'status', 'trace_id', 'ts'].sort());
		assert.match(l.ts, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
		assert.equal(l.method, 'GET');
		assert.equal(l.route, '/blog/{id}', 'the template, never the raw path');
		assert.equal(l.status, 200);
		assert.ok(Number.isInteger(l.duration_us) && l.duration_us >= 0);
		assert.equal(l.bytes_in, 0);
		assert.equal(l.bytes_out, Buffer.byteLength(r.text));
		assert.equal(l.client, r.local, 'the peer address and port the server saw');
		assert.match(l.trace_id, MADE);
		assert.match(l.span_id, /^[0-9a-f]{16}$/);
		const body = '{"title":"t","body":"b","likes":1}';
		const p = await send(srv.port, 'POST', '/blog', ['X-Request-Id: fields-2', 'Content-Type: application/json'], body);
		const lp = await lineOf(srv, 'fields-2');
		assert.equal(lp.method, 'POST');
		assert.equal(lp.route, '/blog');
		assert.equal(lp.status, p.status);
		assert.equal(lp.bytes_in, body.length);
		const u = await send(srv.port, 'GET', '/x/y/z', ['X-Request-Id: fields-3']);
		assert.equal(u.status, 404);
		assert.equal((await lineOf(srv, 'fields-3')).route, '', 'no path matched: an empty route');
	} finally {
		await srv.stop();
	}
});

test('over HTTPS the id is echoed and the access log names the TCP peer under the TLS layer', T, async () => {
	await needTools('openssl', 'curl');
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-trace-'));
	const key = path.join(dir, 'key.pem'), cert = path.join(dir, 'cert.pem');
	await new Promise((resolve, reject) => execFile('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt',
		'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'],
	(err) => (err ? reject(err) : resolve())));
	const srv = await startServer({ INGOT_ACCESS_LOG: '1', INGOT_TLS_CERT: cert, INGOT_TLS_KEY: key, INGOT_TLS_PORT: '0' });
	try {
		const r = await curl(['-k', '-i', '-H', 'X-Request-Id: tls-1', `https://127.0.0.1:${srv.listening.tls_port}/health`]);
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout.toString(), /\r\nX-Request-Id: tls-1\r\n/);
		const l = await lineOf(srv, 'tls-1');
		assert.match(l.client, /^127\.0\.0\.1:\d+$/);
		assert.notEqual(l.client.split(':')[1], String(srv.listening.tls_port), 'the client\'s port, not ours');
	} finally {
		await srv.stop();
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test('a valid traceparent is continued: the server span is new, the upstream sees the same trace id, a new parent id, the flags, tracestate and the request id', T, async () => {
	const up = await Upstream.start(serviceRoutes);
	const srv = await startServer({ INGOT_ACCESS_LOG: '1', UPSTREAM: up.origin });
	try {
		const headers = [`traceparent: 00-${TID}-${PID}-01`, 'tracestate: congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
			'X-Request-Id: proxy-1'];
		const r = await send(srv.port, 'GET', '/proxy/json', headers);
		assert.equal(r.status, 200);
		assert.equal(up.requests.length, 1);
		const h = up.requests[0].headers;
		const m = TRACEPARENT.exec(h.traceparent);
		assert.ok(m, `upstream traceparent ${h.traceparent}`);
		assert.equal(m[1], TID, 'the same trace id');
		assert.notEqual(m[2], PID, 'a new parent id: the client span');
		assert.equal(m[3], '01', 'the incoming flags');
		assert.equal(h.tracestate, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
		assert.equal(h['x-request-id'], 'proxy-1');
		const l = await lineOf(srv, 'proxy-1');
		assert.equal(l.trace_id, TID);
		assert.notEqual(l.span_id, PID, 'the server span has an id of its own');
		assert.notEqual(l.span_id, m[2], 'and the client span another');
		// Flags 00 pass as 00; a fan-out's calls share the trace, each its own span.
		await send(srv.port, 'GET', '/fanout?n=3', [`traceparent: 00-${TID}-${PID}-00`, 'X-Request-Id: fan-1']);
		const fan = up.requests.slice(1);
		assert.equal(fan.length, 3);
		const parents = new Set();
		for (const q of fan) {
			const f = TRACEPARENT.exec(q.headers.traceparent);
			assert.ok(f && f[1] === TID && f[3] === '00', q.headers.traceparent);
			parents.add(f[2]);
			assert.equal(q.headers['x-request-id'], 'fan-1');
			assert.equal(q.headers.tracestate, undefined, 'no tracestate was received');
		}
		assert.equal(parents.size, 3, 'each call is a span of its own');
	} finally {
		await srv.stop();
	}
});

test('a later traceparent version is read by its first 55 characters; version ff is not', T, async () => {
	const up = await Upstream.start(serviceRoutes);
	const srv = await startServer({ UPSTREAM: up.origin });
	try {
		await send(srv.port, 'GET', '/proxy/json', [`traceparent: cc-${TID}-${PID}-01-future-stuff`]);
		assert.equal(TRACEPARENT.exec(up.requests[0].headers.traceparent)[1], TID);
		await send(srv.port, 'GET', '/proxy/json', [`traceparent: ff-${TID}-${PID}-01`]);
		assert.notEqual(TRACEPARENT.exec(up.requests[1].headers.traceparent)[1], TID);
	} finally {
		await srv.stop();
	}
});

test('invalid traceparents are replaced by a new trace, and their tracestate is dropped', T, async () => {
	const up = await Upstream.start(serviceRoutes);
	const srv = await startServer({ INGOT_ACCESS_LOG: '1', UPSTREAM: up.origin });
	try {
		const bad = {
			uppercase: [`traceparent: 00-${TID.toUpperCase()}-${PID}-01`],
			'all-zero trace id': [`traceparent: 00-${'0'.repeat(32)}-${PID}-01`],
			'all-zero parent id': [`traceparent: 00-${TID}-${'0'.repeat(16)}-01`],
			'too long for 00': [`traceparent: 00-${TID}-${PID}-01-x`],
			'too short': [`traceparent: 00-${TID}-${PID}-1`],
			'version ff': [`traceparent: ff-${TID}-${PID}-01`],
			'two fields': [`traceparent: 00-${TID}-${PID}-01`, `traceparent: 00-${TID}-${PID}-01`],
		};
		const traces = new Set();
		let i = 0;
		for (const [name, headers] of Object.entries(bad)) {
			const id = `bad-${i++}`;
			const r = await send(srv.port, 'GET', '/proxy/json', [...headers, 'tracestate: congo=t61rcWkgMzE', `X-Request-Id: ${id}`]);
			assert.equal(r.status, 200, name);
			const h = up.requests.at(-1).headers;
			const m = TRACEPARENT.exec(h.traceparent);
			assert.ok(m, `${name}: a well-formed traceparent goes upstream (${h.traceparent})`);
			assert.notEqual(m[1], TID, `${name}: a new trace`);
			assert.notEqual(m[1], TID.toUpperCase());
			assert.equal(h.tracestate, undefined, `${name}: the old trace's tracestate is not passed on`);
			const l = await lineOf(srv, id);
			assert.equal(l.trace_id, m[1], `${name}: the log and the call agree on the new trace`);
			traces.add(m[1]);
		}
		assert.equal(traces.size, Object.keys(bad).length, 'a new trace each time');
	} finally {
		await srv.stop();
	}
});

test('several tracestate fields pass on as one list; over 512 characters in all it is dropped, not cut', T, async () => {
	const up = await Upstream.start(serviceRoutes);
	const srv = await startServer({ UPSTREAM: up.origin });
	try {
		await send(srv.port, 'GET', '/proxy/json', [`traceparent: 00-${TID}-${PID}-01`, `tracestate: k=${'v'.repeat(511)}`]);
		assert.equal(up.requests[0].headers.tracestate, undefined);
		await send(srv.port, 'GET', '/proxy/json', [`traceparent: 00-${TID}-${PID}-01`, `tracestate: k=${'v'.repeat(510)}`]);
		assert.equal(up.requests[1].headers.tracestate, `k=${'v'.repeat(510)}`, '512 exactly passes');
		await send(srv.port, 'GET', '/proxy/json', [`traceparent: 00-${TID}-${PID}-01`, 'tracestate: a=1', 'X-Other: x',
			'tracestate: b=2,c=3']);
		assert.equal(up.requests[2].headers.tracestate, 'a=1,b=2,c=3');
		await send(srv.port, 'GET', '/proxy/json', [`traceparent: 00-${TID}-${PID}-01`, `tracestate: a=${'v'.repeat(300)}`,
			`tracestate: b=${'v'.repeat(300)}`]);
		assert.equal(up.requests[3].headers.tracestate, undefined);
	} finally {
		await srv.stop();
	}
});

/** FNV-1a 64 of the id modulo a million: the sampling rule (trace.h). */
function keeps(id, share) {
	let h = 0xcbf29ce484222325n;
	for (const b of Buffer.from(id)) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
	return Number(h % 1000000n) < share * 1000000;
}

/** Sends the requests one after another on one connection (one core: the
 * lines come in order), then a last 404 whose line says all are in. */
async function sampled(env, requests) {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1', ...env }, { threads: '1' });
	try {
		const c = await RawClient.connect(srv.port);
		for (const [target, id] of requests) {
			await c.write(req('GET', target, { headers: [`X-Request-Id: ${id}`] }));
			await c.response();
		}
		await c.write(req('GET', '/the/end', { headers: ['X-Request-Id: the-end'] }));
		await c.response();
		c.destroy();
		await lineOf(srv, 'the-end');
		return srv.logs.filter((l) => l.msg === 'request' && l.request_id !== 'the-end');
	} finally {
		await srv.stop();
	}
}

test('INGOT_ACCESS_LOG_SAMPLE=0 logs no 2xx line and every 4xx line', T, async () => {
	const reqs = [];
	for (let i = 0; i < 20; i++) reqs.push(i % 4 === 3 ? ['/nope', `s0-${i}`] : ['/health', `s0-${i}`]);
	const lines = await sampled({ INGOT_ACCESS_LOG_SAMPLE: '0' }, reqs);
	assert.deepEqual(lines.map((l) => l.request_id), reqs.filter(([t]) => t === '/nope').map(([, id]) => id));
	assert.ok(lines.every((l) => l.status === 404));
});

test('INGOT_ACCESS_LOG_SAMPLE=0.5 keeps exactly the 2xx lines whose id hashes below one half', T, async () => {
	const reqs = [];
	for (let i = 0; i < 60; i++) reqs.push(['/health', `half-${i}`]);
	const lines = await sampled({ INGOT_ACCESS_LOG_SAMPLE: '0.5' }, reqs);
	const want = reqs.map(([, id]) => id).filter((id) => keeps(id, 0.5));
	assert.ok(want.length > 10 && want.length < 50, 'the ids split');
	assert.deepEqual(lines.map((l) => l.request_id), want);
});

test('INGOT_ACCESS_LOG_SAMPLE is in --help, and a value outside 0..1 stops the start with exit 2', T, async () => {
	const help = await runBinary(['--help']);
	assert.equal(help.code, 0);
	assert.match(help.stdout, /INGOT_ACCESS_LOG_SAMPLE/);
	for (const v of ['1.5', '-0.1', 'half', '']) {
		const r = await runBinary([], { INGOT_ACCESS_LOG_SAMPLE: v, PORT: '0' });
		assert.equal(r.code, 2, `value ${JSON.stringify(v)}`);
		assert.match(r.stderr, /INGOT_ACCESS_LOG_SAMPLE/);
	}
});
