// Hooks (include/ingot/hooks.h) through real binaries. The hooks app
// (tests/apps/hooks, built out of the tree) names a root before-hook
// (gate: answers 418 for X-Teapot), a root after-hook (stamp: X-Hooked:
// <status>) and getItem's own pair: the after-hooks' fields are on every
// answer, the router's 404 and 405, the decoder's 400, the door's 401 and
// the connection's own 400 and 413 included; the before-hooks run after the
// door and the decoder (a 401 or a 400 runs none) and may answer instead
// of the handler; the order is the root's hooks, then the operation's.
// INGOT_SECURITY_HEADERS (off by default) adds nosniff to every answer of
// the reference service and HSTS to those over TLS only.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, RawClient, req, commandRunner, curl, curlResponse, needTools, parseResponse } from './lib.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-hooks-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { must } = commandRunner({ timeoutMs: 240000 });

// One request on its own connection, written raw: the answer, parsed.
async function raw(port, data) {
	const c = await RawClient.connect(port);
	try {
		c.sock.write(data);
		return await c.response();
	} finally { c.destroy(); }
}
const get = (target, headers = []) => req('GET', target, { headers: ['Connection: close', ...headers] });
const KEY = ['X-Key: secret'];

let appBin = null;
async function hooksApp() {
	if (appBin)
		return appBin;
	const dir = path.join(tmp, 'hooks');
	fs.cpSync(path.join(ROOT, 'tests', 'apps', 'hooks'), dir, { recursive: true, filter: (src) => path.basename(src) !== 'build' });
	await must('make', ['--no-print-directory', '-C', dir], { env: { ...process.env, INGOT_ROOT: ROOT } });
	appBin = path.join(dir, 'build', 'bin', 'hooks');
	return appBin;
}

const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const T = { timeout: 300000, ...SKIP };

test('an after-hook\'s fields are on every answer: 200, the router\'s 404 and 405, the decoder\'s 400, the door\'s 401, the connection\'s own 400 and 413', T, async () => {
	const srv = await startServer({ INGOT_THREADS: '1', INGOT_ADMIN_PORT: '-1', INGOT_MAX_BODY: '1024' }, { command: await hooksApp() });
	try {
		const ok = await raw(srv.port, get('/items/5', KEY));
		assert.equal(ok.status, 200);
		assert.deepEqual(ok.json(), { id: 5 });
		assert.equal(ok.headers['x-hooked'], '200');
		assert.equal(ok.headers['x-order'], 'stamp, item', 'the root\'s after-hooks, then the operation\'s');
		assert.equal(ok.headers['x-before'], 'getItem, item', 'the root\'s before-hooks, then the operation\'s');

		const notFound = await raw(srv.port, get('/nope'));
		assert.equal(notFound.status, 404);
		assert.equal(notFound.headers['x-hooked'], '404');
		assert.equal(notFound.headers['x-order'], 'stamp', 'no operation: the root\'s after-hooks alone');
		assert.equal(notFound.headers['x-exchange'], 'yes');

		const bad = await raw(srv.port, get('/items/abc', KEY));
		assert.equal(bad.status, 400);
		assert.equal(bad.json().errors[0].name, 'id');
		assert.equal(bad.headers['x-hooked'], '400');
		assert.equal(bad.headers['x-order'], 'stamp, item', 'the operation\'s 400 has its after-hooks');
		assert.equal(bad.headers['x-before'], undefined, 'a request the decoder refused runs no before-hook');

		const method = await raw(srv.port, req('DELETE', '/runs', { headers: ['Connection: close'] }));
		assert.equal(method.status, 405);
		assert.equal(method.headers['x-hooked'], '405');

		const head = await raw(srv.port, 'GARBAGE\r\n\r\n');
		assert.equal(head.status, 400);
		assert.equal(head.headers['content-type'], 'application/problem+json');
		assert.equal(head.headers['x-hooked'], '400', 'the connection\'s own answer runs the root\'s after-hooks');
		assert.equal(head.headers['x-exchange'], 'no', 'with no exchange');

		const large = await raw(srv.port, req('GET', '/items/5', { headers: ['Connection: close', ...KEY, 'Content-Length: 4096'], body: 'x'.repeat(4096) }));
		assert.equal(large.status, 413);
		assert.equal(large.headers['x-hooked'], '413');
	} finally { await srv.stop(); }
});

test('before-hooks run after the door and the decoder, in order, and may answer instead of the handler', T, async () => {
	const srv = await startServer({ INGOT_THREADS: '1', INGOT_ADMIN_PORT: '-1' }, { command: await hooksApp() });
	try {
		// /runs counts the before-hooks' runs (gate runs for /runs itself too).
		const runs = async () => (await raw(srv.port, get('/runs'))).json();
		const r0 = await runs();
		const denied = await raw(srv.port, get('/items/5'));
		assert.equal(denied.status, 401);
		assert.equal(denied.headers['x-hooked'], '401', 'the door\'s answer has the after-hooks\' fields');
		assert.equal(denied.headers['x-before'], undefined);
		const r1 = await runs();
		assert.deepEqual(r1, { gate: r0.gate + 1, item: r0.item }, 'an unauthenticated request ran no before-hook');

		const teapot = await raw(srv.port, get('/items/5', [...KEY, 'X-Teapot: 1']));
		assert.equal(teapot.status, 418, 'the root\'s before-hook answered');
		assert.equal(teapot.json(), 'short and stout');
		assert.equal(teapot.headers['x-before'], 'getItem', 'no later before-hook ran');
		assert.equal(teapot.headers['x-hooked'], '418');
		const r2 = await runs();
		assert.deepEqual(r2, { gate: r1.gate + 2, item: r1.item });

		const forbidden = await raw(srv.port, get('/items/13', KEY));
		assert.equal(forbidden.status, 403, 'the operation\'s before-hook answered with a problem');
		assert.equal(forbidden.json().detail, 'item 13 is not for anyone');
		assert.equal(forbidden.headers['x-before'], 'getItem, item');
		assert.equal(forbidden.headers['x-order'], 'stamp, item');
		assert.deepEqual(await runs(), { gate: r2.gate + 2, item: r2.item + 1 });
	} finally { await srv.stop(); }
});

test('INGOT_SECURITY_HEADERS\'s fields come before the document\'s after-hooks\'', T, async () => {
	const srv = await startServer({ INGOT_THREADS: '1', INGOT_ADMIN_PORT: '-1', INGOT_SECURITY_HEADERS: '1' }, { command: await hooksApp() });
	try {
		for (const r of [await raw(srv.port, get('/nope')), await raw(srv.port, 'GARBAGE\r\n\r\n')]) {
			const names = r.headerList.map(([name]) => name);
			assert.equal(r.headers['x-content-type-options'], 'nosniff');
			assert.ok(names.indexOf('x-content-type-options') < names.indexOf('x-hooked'), names.join(' '));
		}
	} finally { await srv.stop(); }
});

// ---- the reference service: security headers ----

const S = { timeout: 60000 };

test('security headers are off by default: no nosniff, no HSTS', S, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '-1' });
	try {
		for (const target of ['/health', '/nope']) {
			const r = await curlResponse(srv.port, target);
			assert.equal(r.headers['x-content-type-options'], undefined, target);
			assert.equal(r.headers['strict-transport-security'], undefined, target);
		}
	} finally { await srv.stop(); }
});

test('INGOT_SECURITY_HEADERS=1: nosniff on every answer (200, 404, 400, the connection\'s 400), no HSTS over plain HTTP', S, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '-1', INGOT_SECURITY_HEADERS: '1' });
	try {
		const answers = [[200, await curlResponse(srv.port, '/health')], [404, await curlResponse(srv.port, '/nope')],
			[400, await curlResponse(srv.port, '/blog/abc')], [400, await raw(srv.port, 'GARBAGE\r\n\r\n')]];
		for (const [status, r] of answers) {
			assert.equal(r.status, status);
			assert.equal(r.headers['x-content-type-options'], 'nosniff', `${status}: ${r.head}`);
			assert.equal(r.headers['strict-transport-security'], undefined, `${status} over plain HTTP`);
		}
	} finally { await srv.stop(); }
});

test('HSTS only over TLS: max-age 31536000 by default, INGOT_HSTS_MAX_AGE sets it', S, async () => {
	await needTools('openssl', 'curl');
	const key = path.join(tmp, 'key.pem'), cert = path.join(tmp, 'cert.pem');
	await must('openssl', ['req', '-x509', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
		'-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost']);
	const https = async (srv, target) => {
		const r = await curl(['-k', '-i', '--raw', `https://${srv.host}:${srv.listening.tls_port}${target}`]);
		assert.equal(r.code, 0, r.stderr);
		return parseResponse(r.stdout, { atEof: true }).response;
	};
	const tlsEnv = { INGOT_ADMIN_PORT: '-1', INGOT_TLS_CERT: cert, INGOT_TLS_KEY: key, INGOT_TLS_PORT: '0', INGOT_SECURITY_HEADERS: '1' };
	let srv = await startServer(tlsEnv);
	try {
		for (const target of ['/health', '/nope']) {
			const r = await https(srv, target);
			assert.equal(r.headers['strict-transport-security'], 'max-age=31536000', `${target}: ${r.head}`);
			assert.equal(r.headers['x-content-type-options'], 'nosniff');
		}
		const plain = await curlResponse(srv.port, '/health');
		assert.equal(plain.headers['strict-transport-security'], undefined, 'the plain listener of the same process');
		assert.equal(plain.headers['x-content-type-options'], 'nosniff');
	} finally { await srv.stop(); }
	srv = await startServer({ ...tlsEnv, INGOT_HSTS_MAX_AGE: '600' });
	try {
		assert.equal((await https(srv, '/health')).headers['strict-transport-security'], 'max-age=600');
	} finally { await srv.stop(); }
	srv = await startServer({ ...tlsEnv, INGOT_SECURITY_HEADERS: '0' });
	try {
		assert.equal((await https(srv, '/health')).headers['strict-transport-security'], undefined, 'off: no HSTS over TLS either');
	} finally { await srv.stop(); }
});

test('INGOT_HSTS_MAX_AGE out of range stops the start (exit 2)', S, async () => {
	await assert.rejects(startServer({ INGOT_ADMIN_PORT: '-1', INGOT_HSTS_MAX_AGE: '-1' }), /\(code 2,[\s\S]*INGOT_HSTS_MAX_AGE/);
});
