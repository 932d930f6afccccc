// The Lambda runtime through the real binary, against a Runtime API
// emulator written from the published contract (lambda_emulator.mjs):
// every reference route as API Gateway 2.0, 1.0, function URL and ALB
// events (AWS's documented examples, lambda_events/), each answer compared
// with the same request over HTTP to the same binary (status, fields but
// Date, Content-Length and Connection, body); repeated query keys, cookies,
// a base64 body, a validation failure and an unknown route; handlers that
// call an upstream; the deadline; an init error; the Runtime API
// restarting; and that the process binds no socket. Every wait is for an
// event (a log line, a post, an exit), never a sleep.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { BIN, ROOT, startServer, cleanup, ServerProcess, parseResponse, within } from './lib.mjs';
import { Upstream, serviceRoutes, stopAll } from './upstreams.mjs';
import { RuntimeApi } from './lambda_emulator.mjs';
import { startPostgres } from './pglib.mjs';
import { migrate, waitReady } from './dbservice.mjs';

const T = { timeout: 60000 };
const FIXTURES = path.join(ROOT, 'tests', 'integration', 'lambda_events');
const fixture = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

const VALIDATE_BODY = '{"name":"Ada Lovelace","nickname":null,"ref":"A-1","status":"active",' +
	'"scores":[90,85,77,100,0],"address":{"street":"12 Main St","city":"Springfield","zip":"12345"},"active":true}';
const BLOG_BODY = '{"title":"Hello","body":"A post body.","likes":3,"tags":["c"]}';
const JSON_CT = ['content-type', 'application/json'];

// ---- processes ----

const procs = new Set();
const apis = new Set();
after(async () => {
	for (const p of procs) p.kill();
	for (const a of apis) await a.stop().catch(() => {});
	await stopAll();
	cleanup();
});

const SANITIZER_ENV = Object.fromEntries(['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']
	.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));

/** The binary under Lambda: resolves once it logged "lambda runtime"
 * (its first GET next is on its way). PORT and INGOT_ADMIN_PORT are set
 * on purpose: the runtime must ignore them. */
async function startRuntime(api, env = {}, { wait = true, argv = [BIN] } = {}) {
	const proc = spawn(argv[0], argv.slice(1), {
		env: { PATH: process.env.PATH, ...SANITIZER_ENV, AWS_LAMBDA_RUNTIME_API: api.address, PORT: '0',
			INGOT_ADMIN_PORT: '0', INGOT_THREADS: '2', HOST: '127.0.0.1', ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const srv = new ServerProcess(proc);
	procs.add(srv);
	srv.exited.then(() => procs.delete(srv));
	if (wait) await srv.waitLog((l) => l.msg === 'lambda runtime');
	return srv;
}

async function newApi(port = 0) {
	const api = new RuntimeApi();
	await api.start(port);
	apis.add(api);
	return api;
}

// ---- requests, as HTTP and as each kind of event ----
// A request: {method, path, query: [[key, value]] (raw, %-encoded),
// headers: [[lowercase name, value]], cookies: [strings], body: Buffer or
// string, base64: send the body base64-encoded}.

function bodyOf(r) {
	return Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body ?? '', 'utf8');
}

function putBody(ev, r) {
	const b = bodyOf(r);
	ev.isBase64Encoded = Boolean(r.base64);
	ev.body = r.base64 ? b.toString('base64') : b.toString('utf8');
}

function grouped(pairs, join) {
	const o = {};
	for (const [k, v] of pairs) o[k] = k in o ? (join ? `${o[k]}${join}${v}` : [...o[k], v]) : (join ? v : [v]);
	return o;
}

const queryString = (r) => (r.query ?? []).map(([k, v]) => `${k}=${v}`).join('&');
const decoded = (r) => (r.query ?? []).map(([k, v]) => [decodeURIComponent(k), decodeURIComponent(v)]);

const KINDS = {
	'API Gateway 2.0': (r) => v2(fixture('apigw-v2.json'), r),
	'function URL': (r) => v2(fixture('function-url.json'), r),
	'API Gateway 1.0': (r) => {
		const ev = fixture('apigw-v1.json');
		ev.httpMethod = ev.requestContext.httpMethod = r.method;
		ev.path = r.path;
		ev.requestContext.path = `/prod${r.path}`; // the stage: never routed on
		const q = decoded(r);
		ev.queryStringParameters = q.length ? Object.fromEntries(q) : null;
		ev.multiValueQueryStringParameters = q.length ? grouped(q) : null;
		const h = [...(r.headers ?? []), ...(r.cookies?.length ? [['cookie', r.cookies.join('; ')]] : [])];
		ev.headers = Object.fromEntries(h);
		ev.multiValueHeaders = grouped(h);
		putBody(ev, r);
		return ev;
	},
	// A REST API's proxy event: the 1.0 form without "version", which
	// REST's payload does not have (its path comes as sent, not decoded).
	'API Gateway REST': (r) => {
		const ev = KINDS['API Gateway 1.0'](r);
		delete ev.version;
		return ev;
	},
	ALB: (r) => {
		const ev = fixture('alb.json');
		ev.httpMethod = r.method;
		ev.path = r.path;
		ev.queryStringParameters = Object.fromEntries(r.query ?? []);
		const h = [...(r.headers ?? []), ...(r.cookies?.length ? [['cookie', r.cookies.join('; ')]] : [])];
		ev.headers = Object.fromEntries(h);
		putBody(ev, r);
		return ev;
	},
	'ALB, multi-value': (r) => {
		const ev = fixture('alb.json');
		delete ev.queryStringParameters;
		delete ev.headers;
		ev.httpMethod = r.method;
		ev.path = r.path;
		ev.multiValueQueryStringParameters = grouped(r.query ?? []);
		const h = [...(r.headers ?? []), ...(r.cookies?.length ? [['cookie', r.cookies.join('; ')]] : [])];
		ev.multiValueHeaders = grouped(h);
		putBody(ev, r);
		return ev;
	},
};

function v2(ev, r) {
	ev.requestContext.http.method = r.method;
	ev.requestContext.http.path = r.path;
	ev.rawPath = r.path;
	ev.rawQueryString = queryString(r);
	ev.queryStringParameters = Object.fromEntries(Object.entries(grouped(decoded(r), ',')));
	ev.headers = grouped(r.headers ?? [], ',');
	if (r.cookies?.length) ev.cookies = r.cookies;
	else delete ev.cookies;
	putBody(ev, r);
	return ev;
}

/** The same request over HTTP/1.1 on a connection of its own. */
function overHttp(port, r, id) {
	const target = (r.httpPath ?? r.path) + (r.query?.length ? `?${queryString(r)}` : '');
	let head = `${r.method} ${target} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n`;
	for (const [k, v] of r.headers ?? []) head += `${k}: ${v}\r\n`;
	if (r.cookies?.length) head += `cookie: ${r.cookies.join('; ')}\r\n`;
	const body = bodyOf(r);
	head += `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
	return new Promise((resolve, reject) => {
		const s = net.connect(port, '127.0.0.1');
		let buf = Buffer.alloc(0);
		s.on('data', (d) => { buf = Buffer.concat([buf, d]); });
		s.on('error', reject);
		s.on('end', () => {
			try {
				resolve(parseResponse(buf, { head: r.method === 'HEAD', atEof: true }).response);
			} catch (e) { reject(e); }
		});
		s.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
	});
}

const LEFT_OUT = new Set(['date', 'content-length', 'connection']);

/** An HTTP response's fields as {lowercase name: "v1, v2"}, Set-Cookie as a list. */
function httpFields(res) {
	const fields = {}, cookies = [];
	for (const [k, v] of res.headerList) {
		if (LEFT_OUT.has(k)) continue;
		if (k === 'set-cookie') cookies.push(v);
		else fields[k] = k in fields ? `${fields[k]}, ${v}` : v;
	}
	return { fields, cookies };
}

/** An event answer's fields in the same form. */
function answerFields(a) {
	const fields = {}, cookies = [...(a.cookies ?? [])];
	const add = (k, v) => {
		k = k.toLowerCase();
		if (k === 'set-cookie') cookies.push(v);
		else fields[k] = k in fields ? `${fields[k]}, ${v}` : v;
	};
	for (const [k, v] of Object.entries(a.headers ?? {})) add(k, v);
	for (const [k, vs] of Object.entries(a.multiValueHeaders ?? {})) for (const v of vs) add(k, v);
	return { fields, cookies };
}

function answerBody(a) {
	return a.isBase64Encoded ? Buffer.from(a.body, 'base64') : Buffer.from(a.body ?? '', 'utf8');
}

/** Asserts that the event answer is the HTTP response in the kind's form. */
function assertSame(kind, answer, res, what, mask) {
	assert.equal(answer.kind, 'response', `${what}: posted to /error: ${answer.raw}`);
	const a = answer.body;
	assert.equal(a.statusCode, res.status, `${what}: status`);
	assert.deepEqual(answerFields(a), httpFields(res), `${what}: fields`);
	// A field that is a measurement (fanout's slowest_ms) is masked on both sides.
	const masked = (b) => (mask ? Buffer.from(b.toString('latin1').replace(mask, '~'), 'latin1') : b);
	assert.deepEqual(masked(answerBody(a)), masked(res.body), `${what}: body`);
	assert.equal(typeof a.isBase64Encoded, 'boolean', `${what}: isBase64Encoded`);
	if (kind === 'API Gateway 1.0') assert.ok(a.multiValueHeaders && !a.headers, `${what}: multiValueHeaders`);
	if (kind.startsWith('ALB')) {
		assert.match(a.statusDescription, new RegExp(`^${res.status} ${res.reason}$`), `${what}: statusDescription`);
		assert.ok(kind.includes('multi') ? a.multiValueHeaders && !a.headers : a.headers && !a.multiValueHeaders,
			`${what}: the ALB's field form`);
	}
	if (kind === 'API Gateway 2.0' || kind === 'function URL') assert.ok(!a.multiValueHeaders, `${what}: v2.0 form`);
}

// ---- the shared setup: one runtime, one HTTP server, one upstream ----

let upstream, api, lambda, http;
before(async () => {
	upstream = await Upstream.start(serviceRoutes);
	const env = { UPSTREAM: upstream.origin };
	api = await newApi();
	lambda = await startRuntime(api, env);
	// One core, as the runtime has: the service's per-core state (the blog's
	// ids) then moves in step on both sides.
	http = await startServer(env, { threads: '1' });
});

async function compare(kind, r, what = `${r.method} ${r.path}`) {
	const id = randomUUID();
	const answer = await api.invoke(KINDS[kind](r), { requestId: id });
	const res = await overHttp(http.port, r, id);
	assertSame(kind, answer, res, `${kind} ${what}`, r.mask);
	return { answer: answer.body, res };
}

const ROUTES = [
	{ method: 'GET', path: '/health' },
	{ method: 'GET', path: '/json' },
	{ method: 'GET', path: '/compute' },
	{ method: 'GET', path: '/hash' },
	{ method: 'GET', path: '/blog', query: [['limit', '2'], ['offset', '1']] },
	{ method: 'POST', path: '/blog', headers: [JSON_CT], body: BLOG_BODY },
	{ method: 'GET', path: '/blog/3' },
	{ method: 'PUT', path: '/blog/3', headers: [JSON_CT], body: BLOG_BODY },
	{ method: 'GET', path: '/delay/5' },
	{ method: 'GET', path: '/proxy/json' },
	{ method: 'GET', path: '/fanout', query: [['n', '3']], mask: /(?<="slowest_ms":)[0-9.e+-]+/ },
	{ method: 'POST', path: '/validate', query: [['page', '2'], ['tags', 'a']], headers: [JSON_CT, ['x-foo', 'bar']], body: VALIDATE_BODY },
	{ method: 'POST', path: '/novalidate', query: [['page', '2'], ['tags', 'a']], headers: [JSON_CT, ['x-foo', 'bar']], body: VALIDATE_BODY },
	{ method: 'GET', path: '/plaintext' },
	{ method: 'GET', path: '/posts' },
	{ method: 'POST', path: '/posts', headers: [JSON_CT], body: '{"title":"t","body":"b"}' },
	{ method: 'GET', path: '/posts/1' },
	{ method: 'PUT', path: '/posts/1', headers: [JSON_CT], body: '{"title":"t","body":"b"}' },
	{ method: 'DELETE', path: '/posts/1' },
	{ method: 'GET', path: '/db' },
	{ method: 'GET', path: '/queries', query: [['queries', '2']] },
	{ method: 'GET', path: '/updates', query: [['queries', '2']] },
	{ method: 'GET', path: '/fortunes' },
	{ method: 'GET', path: '/livez' },
	{ method: 'GET', path: '/readyz' },
];

for (const kind of Object.keys(KINDS)) {
	test(`every reference route as ${kind} events answers as over HTTP`, T, async () => {
		const statuses = new Set();
		for (const r of ROUTES) statuses.add((await compare(kind, r)).res.status);
		// The routes reached their handlers: 2xx, and the database's 503s.
		assert.ok(statuses.has(200) && statuses.has(201) && statuses.has(503), [...statuses].join(','));
	});
}

test('repeated query keys reach the handler as over HTTP (2.0, 1.0, ALB multi-value)', T, async () => {
	const r = { method: 'POST', path: '/validate', query: [['tags', 'a'], ['tags', 'b%20c'], ['page', '3']],
		headers: [JSON_CT, ['x-foo', 'bar']], body: VALIDATE_BODY };
	for (const kind of ['API Gateway 2.0', 'API Gateway 1.0', 'ALB, multi-value']) {
		const { answer } = await compare(kind, r);
		assert.equal(answer.statusCode, 200);
		const out = JSON.parse(answer.body);
		assert.deepEqual(out.tags, ['a', 'b c'], `${kind}: ${answer.body}`);
		assert.equal(out.page, 3);
	}
});

test('repeated fields and cookies go in as over HTTP', T, async () => {
	const r = { method: 'GET', path: '/health', headers: [['accept', 'a/b'], ['accept', 'c/d']], cookies: ['a=1', 'b=2'] };
	for (const kind of Object.keys(KINDS)) await compare(kind, r);
});

test('a base64 body is decoded (a JSON post, and bytes that are not UTF-8)', T, async () => {
	for (const kind of Object.keys(KINDS)) {
		const { answer } = await compare(kind, { method: 'POST', path: '/blog', headers: [JSON_CT], body: BLOG_BODY, base64: true });
		assert.equal(answer.statusCode, 201);
		assert.equal(JSON.parse(answer.body).title, 'Hello');
		await compare(kind, { method: 'POST', path: '/blog', headers: [JSON_CT], body: Buffer.from([0xff, 0xfe, 0x00, 0x80]), base64: true },
			'POST /blog (binary)');
	}
});

test('a validation failure is the same 400 problem+json in the event form', T, async () => {
	for (const kind of Object.keys(KINDS)) {
		const { answer } = await compare(kind, { method: 'POST', path: '/validate', headers: [JSON_CT, ['x-foo', 'bar']], body: '{"name":1}' });
		assert.equal(answer.statusCode, 400);
		assert.match(answer.headers?.['Content-Type'] ?? answer.multiValueHeaders['Content-Type'][0], /^application\/problem\+json/);
		assert.ok(JSON.parse(answer.body).errors.length > 0);
	}
});

test('an unknown route is the same 404, and a wrong method the same 405', T, async () => {
	for (const kind of Object.keys(KINDS)) {
		assert.equal((await compare(kind, { method: 'GET', path: '/no/such/route' })).answer.statusCode, 404);
		assert.equal((await compare(kind, { method: 'DELETE', path: '/json' })).answer.statusCode, 405);
		// A path with bytes a request-target cannot hold, %-encoded on the way in.
		assert.equal((await compare(kind, { method: 'GET', path: '/blog/a b', httpPath: '/blog/a%20b' }, 'GET /blog/a b')).answer.statusCode, 400);
	}
});

// The kinds whose event carries the path %-decoded (an HTTP API's, 2.0 and
// 1.0 alike); the others carry it as the client sent it.
const DECODES_PATH = new Set(['API Gateway 2.0', 'API Gateway 1.0']);

test('a %-escape in the path is decoded once: an HTTP API\'s decoded path is not decoded again', T, async () => {
	for (const kind of Object.keys(KINDS)) {
		// GET /blog/%2531: the id is the three characters "%31", not 1.
		const literal = DECODES_PATH.has(kind) ? '/blog/%31' : '/blog/%2531';
		const { answer } = await compare(kind, { method: 'GET', path: literal, httpPath: '/blog/%2531' }, `GET ${literal}`);
		assert.equal(answer.statusCode, 400, `${kind}: GET /blog/%2531`);
		// GET /blog/%31 is GET /blog/1.
		const one = DECODES_PATH.has(kind) ? '/blog/1' : '/blog/%31';
		const r = await compare(kind, { method: 'GET', path: one, httpPath: '/blog/%31' }, `GET ${one}`);
		assert.equal(r.answer.statusCode, 200, `${kind}: GET /blog/%31`);
	}
});

test('an event field that cannot be HTTP (a CR LF in its value) is a 400 problem+json, and smuggles nothing in', T, async () => {
	const smuggle = `x\r\n\r\nPOST /blog HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nContent-Length: ${BLOG_BODY.length}\r\n\r\n${BLOG_BODY}`;
	for (const kind of Object.keys(KINDS)) {
		const id = randomUUID();
		const answer = await api.invoke(KINDS[kind]({ method: 'GET', path: '/health', headers: [['x-evil', smuggle]] }), { requestId: id });
		assert.equal(answer.kind, 'response', answer.raw);
		assert.equal(answer.body.statusCode, 400);
		const problem = JSON.parse(answer.body.body);
		assert.equal(problem.status, 400);
		assert.equal(problem.request_id, id);
		assert.equal(answerFields(answer.body).fields['content-type'], 'application/problem+json');
	}
	// No POST /blog ran on the runtime's side: its next id is still the HTTP side's.
	await compare('API Gateway 2.0', { method: 'POST', path: '/blog', headers: [JSON_CT], body: BLOG_BODY });
});

test('invocations queued together are answered one at a time, never interleaved', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a);
	await a.waitPolls(1);
	const ids = [randomUUID(), randomUUID(), randomUUID()];
	const answers = await Promise.all(ids.map((requestId) =>
		a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/delay/20' }), { requestId })));
	assert.ok(answers.every((x) => x.body.statusCode === 200));
	await a.waitPolls(4);
	// Each next comes only after the previous invocation's answer.
	assert.deepEqual(a.trail, ['next', ...ids.flatMap((id) => [`response ${id}`, 'next'])]);
	srv.kill();
});

test('the request id is the invocation id, and the X-Ray trace id becomes the upstream call\'s traceparent', T, async () => {
	const id = randomUUID();
	const mark = upstream.requests.length;
	const answer = await api.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/proxy/json' }), {
		requestId: id, traceId: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' });
	assert.equal(answer.body.statusCode, 200);
	assert.equal(answer.body.headers['X-Request-Id'], id);
	const seen = upstream.requests.slice(mark).find((q) => q.path === '/json');
	assert.ok(seen, 'the upstream was called');
	assert.equal(seen.headers['x-request-id'], id);
	assert.match(seen.headers.traceparent, /^00-5759e988bd862e3fe1be46a994272793-[0-9a-f]{16}-01$/);
	assert.notEqual(seen.headers.traceparent.slice(36, 52), '53995c3f42cd8ad8', 'a new client span');
});

test('the access log names the invocation: its id, the X-Ray trace, sourceIp as the client', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a, { INGOT_ACCESS_LOG: '1' });
	const id = randomUUID();
	const ev = KINDS['API Gateway 2.0']({ method: 'GET', path: '/blog/5' });
	ev.requestContext.http.sourceIp = '198.51.100.7';
	await a.invoke(ev, { requestId: id, traceId: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' });
	const line = await srv.waitLog((l) => l.msg === 'request' && l.request_id === id);
	assert.equal(line.trace_id, '5759e988bd862e3fe1be46a994272793');
	assert.equal(line.client, '198.51.100.7');
	assert.equal(line.route, '/blog/{id}');
	assert.equal(line.status, 200);
	srv.kill();
});

test('an outbound call ends by the invocation\'s deadline', T, async () => {
	const stalled = await Upstream.start({ '/json': () => ({ stall: true }) });
	const a = await newApi();
	// The client's own headers timeout is a minute: only the deadline can end the call in time.
	const srv = await startRuntime(a, { UPSTREAM: stalled.origin, INGOT_CLIENT_HEADERS_TIMEOUT_MS: '60000' });
	const answer = await a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/proxy/json' }),
		{ deadlineMs: Date.now() + 500 });
	assert.equal(answer.kind, 'response');
	assert.equal(answer.body.statusCode, 504, answer.raw);
	assert.equal(JSON.parse(answer.body.body).error, 'headers_timeout');
	srv.kill();
});

test('a bad setting is posted to init/error, naming it, and the process exits 2', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a, { INGOT_MAX_BODY: 'lots' }, { wait: false });
	const [err, exit] = await Promise.all([a.waitInitError(), srv.exited]);
	assert.equal(exit.code, 2);
	assert.equal(err.body.errorType, 'Runtime.InvalidSetting');
	assert.match(err.body.errorMessage, /INGOT_MAX_BODY/);
	assert.equal(err.headers['lambda-runtime-function-error-type'], 'Runtime.InvalidSetting');
	assert.equal(a.nextCount, 0, 'no invocation is pulled after an init error');
});

// No descriptor for the loop's eventfd (RLIMIT_NOFILE 4: stdio and one):
// ig_loop_init fails, and the error still reaches init/error, posted with
// blocking calls on the descriptor the failed loop left free.
// (The spare descriptors net/sock keeps for the descriptor limit are a
// listener's; the runtime has none, so these counts do not include any.)
test('a loop that cannot be made: the init error is posted all the same, and the process exits 1 (a runtime failure)', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a, {}, { wait: false, argv: ['prlimit', '--nofile=4:4', '--', BIN] });
	const [err, exit] = await Promise.all([a.waitInitError(), srv.exited]);
	assert.equal(exit.code, 1);
	assert.equal(err.body.errorType, 'Runtime.TooManyOpenFiles');
	assert.match(err.body.errorMessage, /^the runtime cannot set up its loop: /);
	assert.equal(err.headers['lambda-runtime-function-error-type'], 'Runtime.TooManyOpenFiles');
	assert.equal(a.nextCount, 0, 'no invocation is pulled after an init error');
});

test('a Runtime API that restarts between invocations is retried, with the retries logged', T, async () => {
	let a = await newApi();
	const srv = await startRuntime(a);
	const first = await a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/health' }));
	assert.equal(first.body.statusCode, 200);
	await a.waitPolls(2); // the runtime waits in its next GET
	const { port } = a;
	const mark = srv.mark();
	await a.stop();
	apis.delete(a);
	// Nothing listens now: the retries back off from 10 ms, each one logged.
	const retries = [];
	for (let i = 0; i < 3; i++) {
		retries.push(await srv.waitLog((l) => l.msg === 'runtime api retry' && !retries.includes(l), mark));
	}
	assert.deepEqual(retries.map((l) => l.delay_ms), [10, 20, 40]);
	assert.ok(retries.every((l) => l.call === 'next'));
	a = await newApi(port);
	const second = await a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/json' }));
	assert.equal(second.body.statusCode, 200);
	srv.kill();
});

// RLIMIT_NOFILE 5: the loop is made, but no descriptor is left for the
// Runtime API's socket, so every call fails on this side. The runtime gives
// up (the sandbox is broken; Lambda replaces it on the exit) instead of
// retrying until the function's timeout.
test('a Runtime API that cannot be reached is retried, then given up on: one error line, exit 1', T, async () => {
	const a = await newApi();
	// Under ASan, LeakSanitizer's check at exit needs descriptors this case
	// denies (it then loops trying to open its report): off for this process
	// alone; the other checks stay.
	const env = process.env.ASAN_OPTIONS ? { ASAN_OPTIONS: `${process.env.ASAN_OPTIONS}:detect_leaks=0` } : {};
	const srv = await startRuntime(a, env, { wait: false, argv: ['prlimit', '--nofile=5:5', '--', BIN] });
	const exit = await within(45000, srv.exited, 'the runtime never gave up');
	assert.equal(exit.code, 1);
	const retries = srv.logs.filter((l) => l.msg === 'runtime api retry');
	assert.equal(retries.length, 30);
	assert.ok(retries.every((l) => l.call === 'next'));
	assert.deepEqual(retries.slice(0, 7).map((l) => l.delay_ms), [10, 20, 40, 80, 160, 320, 500]);
	const gone = srv.logs.filter((l) => l.msg === 'runtime api unreachable');
	assert.equal(gone.length, 1);
	assert.equal(gone[0].level, 'error');
	assert.equal(gone[0].attempts, 31);
	assert.equal(a.nextCount, 0, 'no call got through');
});

/** The process's sockets (their inodes), from /proc/PID/fd. */
function socketInodes(pid) {
	const inodes = new Set();
	for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
		try {
			const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
			if (m) inodes.add(m[1]);
		} catch { /* closed meanwhile */ }
	}
	return inodes;
}

/** The TCP sockets of the network namespace, {inode, state, local}. */
function tcpTable() {
	const rows = [];
	for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
		if (!fs.existsSync(f)) continue;
		for (const line of fs.readFileSync(f, 'utf8').split('\n').slice(1)) {
			const c = line.trim().split(/\s+/);
			if (c.length > 9) rows.push({ local: c[1], state: c[3], inode: c[9] });
		}
	}
	return rows;
}

test('under Lambda no socket is bound: no listener, no admin listener, whatever PORT and INGOT_ADMIN_PORT say', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a, { PORT: '0', INGOT_ADMIN_PORT: '0' });
	assert.equal((await a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/health' }))).body.statusCode, 200);
	await a.waitPolls(2);
	const mine = socketInodes(srv.pid);
	const tcp = tcpTable().filter((r) => mine.has(r.inode));
	assert.equal(tcp.filter((r) => r.state === '0A').length, 0, 'a listening socket');
	assert.equal(tcp.length, 1, `one connection, to the Runtime API: ${JSON.stringify(tcp)}`);
	assert.equal(tcp[0].state, '01', 'established');
	assert.ok(!srv.logs.some((l) => l.msg === 'listening' || l.msg === 'admin listening'));
	srv.kill();
});

test('a streamed download (GET /files/{name}) answers whole under Lambda, base64: with its length or chunked; past the request\'s memory, 500; an upload is read whole', T, async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-lambda-files-'));
	try {
		const small = Buffer.from([0, 1, 2, 0xff, 0xfe, 10]);
		fs.writeFileSync(path.join(dir, 'small.bin'), small);
		const big = Buffer.alloc(4 << 20, 7); // over INGOT_MAX_BODY * 2 + 1 MiB (3 MiB by default)
		fs.writeFileSync(path.join(dir, 'big.bin'), big);
		const a = await newApi();
		const srv = await startRuntime(a, { FILES_DIR: dir });
		for (const kind of Object.keys(KINDS)) {
			for (const query of [[], [['chunked', 'true']]]) {
				const target = `/files/small.bin${query.length ? '?chunked=true' : ''}`;
				const { body } = await a.invoke(KINDS[kind]({ method: 'GET', path: '/files/small.bin', query }));
				assert.equal(body.statusCode, 200, `${kind} ${target}: ${JSON.stringify(body)}`);
				assert.equal(body.isBase64Encoded, true, kind);
				assert.deepEqual(Buffer.from(body.body, 'base64'), small, `${kind} ${target}`);
				const field = (h) => Object.entries(h ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
				const ct = field(body.headers) ?? field(body.multiValueHeaders)?.[0];
				assert.equal(ct, 'application/octet-stream', kind);
			}
			const { body } = await a.invoke(KINDS[kind]({ method: 'GET', path: '/files/big.bin' }));
			assert.equal(body.statusCode, 500, kind);
			// An upload (x-ingot-stream-body) comes whole in the event: ig_body_in_read reads it.
			const put = (await a.invoke(KINDS[kind]({ method: 'PUT', path: '/files/up.bin', body: small, base64: true }))).body;
			assert.equal(put.statusCode, 201, `${kind}: ${JSON.stringify(put)}`);
			assert.deepEqual(fs.readFileSync(path.join(dir, 'up.bin')), small, kind);
			fs.rmSync(path.join(dir, 'up.bin'));
			assert.match(Buffer.from(body.body, body.isBase64Encoded ? 'base64' : 'utf8').toString(), /memory/); // the engine's own answer for a body past the request's memory
		}
		srv.kill();
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

// ---- the streaming response mode (INGOT_LAMBDA_INVOKE_MODE=RESPONSE_STREAM) ----

/** A function URL event for method path?query with headers. */
function urlEvent(method, p, query = [], headers = []) {
	return KINDS['function URL']({ method, path: p, query, headers });
}

const kib = (pid, field) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);

test('streaming mode: a function URL\'s answers go through the streaming POST with the prelude; SSE events in order, Last-Event-ID goes on after it; API Gateway still gets JSON', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a, { INGOT_LAMBDA_INVOKE_MODE: 'RESPONSE_STREAM' });
	// A whole answer: the same status, fields and body as over HTTP, after the prelude.
	const health = await a.invoke(urlEvent('GET', '/health'));
	assert.equal(health.streaming, true);
	assert.equal(health.headers['transfer-encoding'], 'chunked');
	assert.equal(health.headers['content-type'], 'application/vnd.awslambda.http-integration-response');
	assert.equal(health.prelude.statusCode, 200);
	assert.equal(health.prelude.headers['Content-Type'], 'application/json');
	assert.deepEqual(JSON.parse(health.body), { status: 'ok' });
	assert.deepEqual(health.trailers, {}, 'a whole answer has no error trailers');
	const missing = await a.invoke(urlEvent('GET', '/no/such/route'));
	assert.equal(missing.prelude.statusCode, 404);
	assert.equal(missing.prelude.headers['Content-Type'], 'application/problem+json');
	assert.equal(JSON.parse(missing.body).status, 404);
	// SSE: the ticker's typed events, ids 1..3, then from 3 after Last-Event-ID: 2.
	const ticks = await a.invoke(urlEvent('GET', '/ticker', [['n', '3']]));
	assert.equal(ticks.prelude.statusCode, 200);
	assert.equal(ticks.prelude.headers['Content-Type'], 'text/event-stream');
	assert.ok(!('Transfer-Encoding' in ticks.prelude.headers), 'no hop-by-hop field in the prelude');
	const ids = (b) => [...b.toString().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
	assert.deepEqual(ids(ticks.body), [1, 2, 3]);
	assert.match(ticks.body.toString(), /event: tick\nid: 1\ndata: \{"n":1,"of":3\}\n\n/);
	const resumed = await a.invoke(urlEvent('GET', '/ticker', [['n', '5']], [['last-event-id', '2']]));
	assert.deepEqual(ids(resumed.body), [3, 4, 5]);
	// API Gateway's events are answered whole, as JSON, whatever the mode.
	const gw = await a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/health' }));
	assert.equal(gw.streaming, undefined);
	assert.equal(gw.body.statusCode, 200);
	// A WebSocket cannot be had in Lambda mode: 501, documented.
	const ws = await a.invoke(urlEvent('GET', '/ws/echo', [], [['connection', 'Upgrade'], ['upgrade', 'websocket'],
		['sec-websocket-version', '13'], ['sec-websocket-key', 'dGhlIHNhbXBsZSBub25jZQ==']]));
	assert.equal(ws.prelude.statusCode, 501);
	srv.kill();
});

test('streaming mode: a 48 MiB download leaves as it is read, held back by the Runtime API (bounded memory); a file cut short ends with the error trailers', T, async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-lambda-stream-'));
	try {
		// Past the buffered mode's reach: its request memory answers 500 at 4 MiB.
		const big = Buffer.alloc(48 << 20);
		for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
		fs.writeFileSync(path.join(dir, 'big.bin'), big);
		const a = await newApi();
		const srv = await startRuntime(a, { INGOT_LAMBDA_INVOKE_MODE: 'RESPONSE_STREAM', FILES_DIR: dir });
		const before = kib(srv.proc.pid, 'VmRSS');
		let paused = false;
		const got = await a.invoke(urlEvent('GET', '/files/big.bin'), {
			onData: (c, total, req) => {
				if (paused || total < (8 << 20)) return;
				// Nobody reads for a while: the runtime must stop writing and
				// its handler reading, where an unbounded buffer would take in
				// the rest of the file (the assertion is on the peak, after).
				paused = true;
				req.pause();
				setTimeout(() => req.resume(), 300);
			},
		});
		const peak = kib(srv.proc.pid, 'VmHWM');
		assert.equal(got.prelude.statusCode, 200);
		assert.equal(got.prelude.headers['Content-Type'], 'application/octet-stream');
		assert.equal(got.body.length, big.length);
		assert.ok(got.body.equals(big), 'the bytes as on disk');
		assert.ok(got.pieces > 1, 'the body came in pieces');
		assert.ok(paused);
		assert.ok(peak - before < 8 << 10, `RSS ${before} KiB before, at most ${peak} KiB during the 48 MiB`);
		// Cut short: the file shrinks while the runtime is held back, so the
		// handler's read ends before its Content-Length.
		let shrunk = false;
		const cut = await a.invoke(urlEvent('GET', '/files/big.bin'), {
			onData: (c, total, req) => {
				if (shrunk || total < (1 << 20)) return;
				shrunk = true;
				req.pause();
				fs.truncateSync(path.join(dir, 'big.bin'), 12 << 20);
				setImmediate(() => req.resume());
			},
		});
		assert.equal(cut.prelude.statusCode, 200);
		assert.ok(cut.body.length < big.length, `${cut.body.length} bytes`);
		assert.equal(cut.trailers['lambda-runtime-function-error-type'], 'Runtime.TruncatedResponse');
		const error = JSON.parse(Buffer.from(cut.trailers['lambda-runtime-function-error-body'], 'base64'));
		assert.equal(error.errorType, 'Runtime.TruncatedResponse');
		await srv.waitLog((l) => l.msg === 'invocation failed' && l.type === 'Runtime.TruncatedResponse');
		// The next invocation is answered as usual.
		const health = await a.invoke(urlEvent('GET', '/health'));
		assert.equal(health.prelude.statusCode, 200);
		srv.kill();
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test('streaming mode: a Runtime API that drops the streaming POST cancels the handler as a client gone; the next invocation goes on', T, async () => {
	const a = await newApi();
	const srv = await startRuntime(a, { INGOT_LAMBDA_INVOKE_MODE: 'RESPONSE_STREAM' });
	const mark = srv.logs.length;
	// A ticker of 600 events (a minute): dropped after its first event.
	const dropped = new Promise((resolve) => {
		a.invoke(urlEvent('GET', '/ticker', [['n', '600']]), {
			onData: (c, total, req) => {
				if (/id: 1\n/.test(c.toString())) {
					req.socket.destroy();
					resolve();
				}
			},
		});
	});
	await dropped;
	await srv.waitLog((l) => l.msg === 'runtime api stream failed', mark);
	const health = await a.invoke(urlEvent('GET', '/health'));
	assert.equal(health.prelude.statusCode, 200);
	assert.deepEqual(JSON.parse(health.body), { status: 'ok' });
	srv.kill();
});

test('the runtime\'s setting is in --help', T, async () => {
	const r = await new Promise((resolve) => {
		const p = spawn(BIN, ['--help'], { env: { PATH: process.env.PATH, ...SANITIZER_ENV } });
		let out = '';
		p.stdout.on('data', (d) => { out += d; });
		p.on('close', (code) => resolve({ code, out }));
	});
	assert.equal(r.code, 0);
	assert.match(r.out, /AWS_LAMBDA_RUNTIME_API/);
});

// ---- packaging: the zip (images/lambda) and the OCI image as a Lambda container ----

function run(cmd, args, opts = {}) {
	return new Promise((resolve) => {
		const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
		let out = '', err = '';
		p.stdout.on('data', (d) => { out += d; });
		p.stderr.on('data', (d) => { err += d; });
		p.on('close', (code) => resolve({ code, out, err }));
	});
}

test('images/lambda writes a reproducible zip holding only bootstrap (0755), which serves invocations', T, async () => {
	for (const t of ['zip', 'unzip', 'zipinfo']) assert.equal((await run('sh', ['-c', `command -v ${t}`])).code, 0, `${t} (tools/setup image)`);
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-lambda-'));
	try {
		const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };
		for (const d of ['a', 'b']) {
			const r = await run(path.join(ROOT, 'images', 'lambda'), [BIN, path.join(dir, d)], { env });
			assert.equal(r.code, 0, r.err);
		}
		const a = fs.readFileSync(path.join(dir, 'a', 'lambda.zip'));
		assert.deepEqual(a, fs.readFileSync(path.join(dir, 'b', 'lambda.zip')), 'the same bytes twice');
		const list = await run('zipinfo', [path.join(dir, 'a', 'lambda.zip')]);
		const entries = list.out.split('\n').filter((l) => /^[-d]/.test(l));
		assert.equal(entries.length, 1, list.out);
		assert.match(entries[0], /^-rwxr-xr-x .* 23-Nov-14 22:13 bootstrap$/, 'bootstrap, 0755, the fixed time in UTC');
		assert.equal((await run('unzip', ['-q', path.join(dir, 'a', 'lambda.zip'), '-d', path.join(dir, 'x')])).code, 0);
		const bootstrap = path.join(dir, 'x', 'bootstrap');
		assert.deepEqual(fs.readFileSync(bootstrap), fs.readFileSync(BIN), 'the binary itself');
		const apiZ = await newApi();
		const proc = spawn(bootstrap, [], { env: { ...SANITIZER_ENV, AWS_LAMBDA_RUNTIME_API: apiZ.address },
			stdio: ['ignore', 'pipe', 'pipe'] });
		const srv = new ServerProcess(proc);
		procs.add(srv);
		const answer = await apiZ.invoke(KINDS['function URL']({ method: 'GET', path: '/health' }));
		assert.equal(answer.body.statusCode, 200);
		srv.kill();
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test('the OCI image is a Lambda container image too: its entry point and environment, plus AWS_LAMBDA_RUNTIME_API', T, async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-oci-'));
	try {
		const r = await run(path.join(ROOT, 'images', 'oci'), [BIN, dir], { env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' } });
		assert.equal(r.code, 0, r.err);
		const blob = (d) => path.join(dir, 'oci', 'blobs', 'sha256', d.replace(/^sha256:/, ''));
		const index = JSON.parse(fs.readFileSync(path.join(dir, 'oci', 'index.json'), 'utf8'));
		const manifest = JSON.parse(fs.readFileSync(blob(index.manifests[0].digest), 'utf8'));
		const config = JSON.parse(fs.readFileSync(blob(manifest.config.digest), 'utf8')).config;
		const root = path.join(dir, 'root');
		fs.mkdirSync(root);
		assert.equal((await run('tar', ['-xzf', blob(manifest.layers[0].digest), '-C', root])).code, 0);
		// Lambda runs the entry point with the image's Env and its own variables.
		const env = Object.fromEntries(config.Env.map((e) => e.split(/=(.*)/s).slice(0, 2)));
		assert.equal(env.PORT, '8080');
		const apiO = await newApi();
		const [entry, ...args] = config.Entrypoint;
		const proc = spawn(path.join(root, entry), args, { env: { ...SANITIZER_ENV, ...env, AWS_LAMBDA_RUNTIME_API: apiO.address },
			stdio: ['ignore', 'pipe', 'pipe'] });
		const srv = new ServerProcess(proc);
		procs.add(srv);
		const answer = await apiO.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/json' }));
		assert.equal(answer.body.statusCode, 200);
		const tcp = tcpTable().filter((x) => socketInodes(srv.pid).has(x.inode));
		assert.equal(tcp.filter((x) => x.state === '0A').length, 0, 'the image\'s PORT and INGOT_ADMIN_PORT bind nothing');
		srv.kill();
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

// ---- a crash, in the sanitizers' build ----

const SANITIZED = fs.readFileSync(BIN).includes('__asan_init');

test('a handler that crashes in the ASan build is reported through .../{id}/error', { ...T, skip: !SANITIZED && 'the shipped build has no sanitizer: a crash is the exit Lambda reports' }, async () => {
	const stalled = await Upstream.start({ '/json': () => ({ stall: true }) });
	const a = await newApi();
	// Its own report directory: the crash below is this test's, not a finding.
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-crash-'));
	try {
		const srv = await startRuntime(a, { UPSTREAM: stalled.origin,
			ASAN_OPTIONS: `log_path=${dir}/report:abort_on_error=1`, UBSAN_OPTIONS: `log_path=${dir}/report` });
		const id = randomUUID();
		const answered = a.invoke(KINDS['API Gateway 2.0']({ method: 'GET', path: '/proxy/json' }), { requestId: id });
		await stalled.until((u) => u.requests.length > 0); // the handler is pending on its call
		process.kill(srv.pid, 'SIGSEGV');
		const [answer, exit] = await Promise.all([answered, srv.exited]);
		assert.equal(answer.kind, 'error');
		assert.equal(answer.body.errorType, 'Runtime.Crash');
		assert.equal(answer.headers['lambda-runtime-function-error-type'], 'Runtime.Crash');
		assert.notEqual(exit.code, 0);
		assert.ok(fs.readdirSync(dir).some((f) => f.startsWith('report')), 'the sanitizer wrote its report');
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test('with a database: the pool runs on the runtime\'s loop; a post written by an invocation is read over HTTP, /fortunes answers the same, an ingot.cron event runs its job, and no timer or consumer runs', T, async () => {
	const pg = await startPostgres();
	try {
		const m = await migrate(pg.url);
		assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
		const env = { DATABASE_URL: pg.url };
		const dbApi = await newApi();
		// HEARTBEAT_CRON on: under Lambda no timer runs all the same.
		const runtime = await startRuntime(dbApi, { ...env, HEARTBEAT_CRON: '1' });
		// The HTTP server consumes nothing: a delivery claimed would be the
		// runtime's, which must not poll (below).
		const srv = await startServer({ ...env, INGOT_PUBSUB_CONSUME: '0' }, { threads: '1' });
		try {
			await waitReady(srv);
			const invoke = (r) => dbApi.invoke(KINDS['API Gateway 2.0'](r), { requestId: randomUUID() });
			// The runtime's first query may wait for its pool's first
			// connect (INGOT_PG_ACQUIRE_TIMEOUT_MS, 1 s): a 503 until then.
			let created;
			for (let i = 0; i < 50; i++) {
				created = (await invoke({ method: 'POST', path: '/posts', headers: [JSON_CT],
					body: `{"title":"from lambda ${i}","body":"b","likes":1,"tags":["x"]}` })).body;
				if (created.statusCode !== 503) break;
			}
			assert.equal(created.statusCode, 201, JSON.stringify(created));
			const post = JSON.parse(created.body);
			const read = await overHttp(srv.port, { method: 'GET', path: `/posts/${post.id}` }, randomUUID());
			assert.equal(read.status, 200);
			assert.deepEqual(JSON.parse(read.body.toString()), post);
			const r = { method: 'GET', path: '/fortunes' };
			const id = randomUUID();
			const answer = await dbApi.invoke(KINDS['API Gateway 2.0'](r), { requestId: id });
			const res = await overHttp(srv.port, r, id);
			assertSame('API Gateway 2.0', answer, res, 'GET /fortunes with a database');
			assert.match(answerBody(answer.body).toString(), /Additional fortune added at request time/);
			// EventBridge Scheduler's Input (schemac --cron-export eventbridge)
			// runs the job: one heartbeat row, by the runtime's process.
			const tick = await dbApi.invoke({ source: 'ingot.cron', job: 'heartbeat', time: new Date().toISOString() },
				{ requestId: randomUUID() });
			assert.equal(tick.body.statusCode, 204, JSON.stringify(tick.body));
			const hb = await overHttp(srv.port, { method: 'GET', path: '/cron/heartbeat' }, randomUUID());
			assert.deepEqual(JSON.parse(hb.body.toString()), { ticks: 1, pids: [runtime.pid] });
			// No consumer runs under Lambda (frozen between invocations): the
			// post-created delivery its POST /posts published, NOTIFYed
			// invocations ago, is still unclaimed.
			assert.equal((await pg.psql("SELECT state || '|' || attempts FROM ingot_pubsub.deliveries;")).trim(), 'ready|0');
			// Still no socket of its own but the database connections.
			assert.equal(runtime.exit, null);
		} finally {
			runtime.kill();
			await srv.stop();
		}
	} finally {
		await pg.stop();
	}
});
