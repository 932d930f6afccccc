// Rate limits through the real binary (2 cores): the reference service's
// GET /limited (5 a second per client address, burst 5) answers 100
// requests sent at once from one address with 5 or 6 200s and 429
// problem+json for the rest, with Retry-After, RateLimit-Policy and
// RateLimit, counted in ingot_rate_limited_total; requests pass again once
// the bucket has refilled. X-Forwarded-For and Forwarded name the client
// only when the peer is in INGOT_TRUSTED_PROXIES. The quota app
// (tests/apps/quota, built out of the tree) limits by a header: two values
// get separate allowances, the root's limit is one allowance for the
// operations it covers, and an operation may opt out; and by the subject
// of a bearer token (npm jose's, against INGOT_JWKS_FILE): one subject's
// 100 requests at once get 5 or 6 answers, another subject keeps its own
// allowance, and an open operation keyed by subject is keyed by address.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jose from 'jose';
import { ROOT, startServer, cleanup, burst, req, adminAddr, scrapeSamples, within, commandRunner, curlResponse } from './lib.mjs';

const T = { timeout: 60000 };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-ratelimit-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

const get = (target, headers = []) => req('GET', target, { headers: ['Connection: close', ...headers] });
const ok = (res) => res.filter((r) => r.status === 200).length;

// Polls until a request passes: GCRA refuses without spending, so polling
// does not delay the refill it waits for.
async function untilPasses(port, target, headers = []) {
	for (;;) {
		const [r] = await burst(port, [get(target, headers)]);
		if (r.status === 200)
			return r;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

test('/limited: 100 requests at once from one address, 5 or 6 pass, the rest 429 with the draft\'s headers; then they pass again', T, async () => {
	const srv = await startServer({ INGOT_THREADS: '2', INGOT_ADMIN_PORT: '0' });
	try {
		const res = await burst(srv.port, Array.from({ length: 100 }, () => get('/limited')));
		const passed = ok(res);
		assert.ok(passed >= 5 && passed <= 6, `${passed} passed`);
		for (const r of res.filter((x) => x.status !== 200)) {
			assert.equal(r.status, 429);
			assert.equal(r.headers['content-type'], 'application/problem+json');
			assert.equal(r.json().status, 429);
			assert.match(r.headers['retry-after'], /^[1-9]\d*$/);
			assert.equal(r.headers['ratelimit-policy'], '"getLimited";q=5;w=1');
			assert.match(r.headers.ratelimit, /^"getLimited";r=0;t=[1-9]\d*$/);
		}
		assert.deepEqual(res.filter((r) => r.status === 200).map((r) => r.json()), Array(passed).fill({ ok: true }));
		const m = await scrapeSamples(await adminAddr(srv));
		assert.equal(m.get('ingot_rate_limited_total{http_route="/limited"}'), 100 - passed);
		// Other routes are not limited.
		assert.equal(ok(await burst(srv.port, Array.from({ length: 20 }, () => get('/health')))), 20);
		await within(5000, untilPasses(srv.port, '/limited'), '/limited never passed again');
	} finally { await srv.stop(); }
});

// A client's requests with these headers, 20 at once, twice over: one
// client (20 requests) or two (their own allowances).
const twoClients = (a, b) => [...Array(20).fill(get('/limited', a)), ...Array(20).fill(get('/limited', b))];

test('X-Forwarded-For and Forwarded name the client only from a trusted proxy (INGOT_TRUSTED_PROXIES)', T, async () => {
	const plain = await startServer({ INGOT_THREADS: '2', INGOT_ADMIN_PORT: '-1' });
	try {
		const n = ok(await burst(plain.port, twoClients(['X-Forwarded-For: 203.0.113.1'], ['X-Forwarded-For: 203.0.113.2'])));
		assert.ok(n >= 5 && n <= 6, `an untrusted peer's X-Forwarded-For is ignored: one client, ${n} passed`);
	} finally { await plain.stop(); }
	const proxied = await startServer({ INGOT_THREADS: '2', INGOT_ADMIN_PORT: '-1', INGOT_TRUSTED_PROXIES: '127.0.0.1/32' });
	try {
		let n = ok(await burst(proxied.port, twoClients(['X-Forwarded-For: 203.0.113.1'], ['X-Forwarded-For: 203.0.113.2'])));
		assert.ok(n >= 10 && n <= 12, `behind a trusted proxy, two clients: ${n} passed`);
		// A hop the client wrote itself (farther than the nearest untrusted) changes nothing.
		n = ok(await burst(proxied.port, twoClients(['X-Forwarded-For: 1.1.1.1, 198.51.100.9'], ['X-Forwarded-For: 2.2.2.2, 198.51.100.9'])));
		assert.ok(n >= 5 && n <= 6, `one client behind spoofed hops: ${n} passed`);
		n = ok(await burst(proxied.port, twoClients(['Forwarded: for=192.0.2.10'], ['Forwarded: for="[2001:db8::10]:4711"'])));
		assert.ok(n >= 10 && n <= 12, `Forwarded: two clients: ${n} passed`);
	} finally { await proxied.stop(); }
});

test('INGOT_TRUSTED_PROXIES that is no CIDR list stops the start (exit 2)', T, async () => {
	await assert.rejects(startServer({ INGOT_ADMIN_PORT: '-1', INGOT_TRUSTED_PROXIES: '10.0.0.0/33' }), /\(code 2,[\s\S]*INGOT_TRUSTED_PROXIES/);
});

const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const { must } = commandRunner({ timeoutMs: 240000 });

// The quota app, built once for the tests that serve it.
let quotaBuilt;
function quota() {
	const dir = path.join(tmp, 'quota');
	quotaBuilt ??= (async () => {
		fs.cpSync(path.join(ROOT, 'tests', 'apps', 'quota'), dir, { recursive: true, filter: (src) => path.basename(src) !== 'build' });
		await must('make', ['--no-print-directory', '-C', dir], { env: { ...process.env, INGOT_ROOT: ROOT } });
		return path.join(dir, 'build', 'bin', 'quota');
	})();
	return quotaBuilt;
}

test('a header-keyed limit from the root: two header values get their own allowances, the covered operations share one, an opt-out is free', { timeout: 300000, ...SKIP }, async () => {
	const srv = await startServer({ INGOT_THREADS: '2', INGOT_ADMIN_PORT: '-1' }, { command: await quota() });
	try {
		const keyed = (k, target = '/quota') => Array(30).fill(get(target, [`X-Api-Key: ${k}`]));
		const res = await burst(srv.port, [...keyed('a'), ...keyed('b')]);
		const a = ok(res.slice(0, 30)), b = ok(res.slice(30));
		assert.ok(a >= 3 && a <= 4 && b >= 3 && b <= 4, `key a: ${a}, key b: ${b} passed`);
		const refused = res.find((r) => r.status === 429);
		assert.equal(refused.headers['ratelimit-policy'], '"global";q=3;w=1');
		assert.match(refused.headers.ratelimit, /^"global";r=0;t=[1-9]\d*$/);
		assert.match(refused.headers['retry-after'], /^[1-9]\d*$/);
		// /other is under the same root limit: key a's allowance is spent there too.
		const other = await burst(srv.port, Array(10).fill(get('/other', ['X-Api-Key: a'])));
		assert.ok(ok(other) <= 1, `/other with a spent key: ${ok(other)} passed`);
		assert.equal(ok(await burst(srv.port, keyed('a', '/free'))), 30, 'x-ingot-rate-limit: false: never limited');
		const r = await within(5000, untilPasses(srv.port, '/quota', ['X-Api-Key: a']), 'key a never passed again');
		assert.deepEqual(r.json(), { ok: true });
		assert.equal((await curlResponse(srv.port, '/quota')).status, 200, 'no header: the empty value\'s own allowance');
	} finally { await srv.stop(); }
});

test('a limit keyed by subject: one subject\'s 100 requests at once, 5 or 6 pass, the rest 429 with the headers; another subject keeps its own allowance, an open operation falls back to the address; then they pass again', { timeout: 300000, ...SKIP }, async () => {
	const key = await jose.generateKeyPair('ES256', { extractable: true });
	const jwks = path.join(tmp, 'jwks.json');
	fs.writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await jose.exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] }));
	const token = (sub) => new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject(sub)
		.setIssuedAt().setExpirationTime('10m').sign(key.privateKey);
	const as = (t) => get('/mine', [`Authorization: Bearer ${t}`]);
	const alice = await token('alice'), bob = await token('bob');
	const srv = await startServer({ INGOT_THREADS: '2', INGOT_ADMIN_PORT: '-1', INGOT_JWKS_FILE: jwks },
		{ command: await quota() });
	try {
		const res = await burst(srv.port, Array(100).fill(as(alice)));
		const passed = ok(res);
		assert.ok(passed >= 5 && passed <= 6, `alice: ${passed} passed`);
		for (const r of res.filter((x) => x.status !== 200)) {
			assert.equal(r.status, 429);
			assert.equal(r.headers['content-type'], 'application/problem+json');
			assert.match(r.headers['retry-after'], /^[1-9]\d*$/);
			assert.equal(r.headers['ratelimit-policy'], '"getMine";q=5;w=1');
			assert.match(r.headers.ratelimit, /^"getMine";r=0;t=[1-9]\d*$/);
		}
		// From the same address, alice's spent allowance is hers alone.
		// From the same address, alice's spent allowance is hers alone.
		const n = ok(await burst(srv.port, Array(20).fill(as(bob))));
		assert.ok(n >= 5 && n <= 6, `bob, after alice: ${n} passed`);
		// An open operation keyed by subject has no principal: one
		// allowance for the address, whatever token is sent (keyed by
		// subject, three callers would get three).
		const anyone = (t) => Array(10).fill(get('/anyone', t ? [`Authorization: Bearer ${t}`] : []));
		const anon = ok(await burst(srv.port, [...anyone(), ...anyone(alice), ...anyone(bob)]));
		assert.ok(anon >= 5 && anon <= 6, `/anyone (keyed by the address): ${anon} passed`);
		// A refused token is the door's 401, counted by no limit.
		assert.equal((await burst(srv.port, [as('bad.bad.bad')]))[0].status, 401);
		const r = await within(5000, untilPasses(srv.port, '/mine', [`Authorization: Bearer ${alice}`]), 'alice never passed again');
		assert.deepEqual(r.json(), { ok: true });
	} finally { await srv.stop(); }
});
