// The door through the real binary and curl: /me and /reports/{name} of
// the reference service with JWTs minted by npm's jose against a JWKS
// file in a temp dir (INGOT_JWKS_FILE), and API keys checked by the app's
// auth handler (REPORTS_API_KEYS). 401 with RFC 6750's challenge (no error
// attribute without a token, invalid_token for each bad one), 403
// insufficient_scope naming the scope, open routes untouched, the
// failures counted in ingot_auth_failures_total and limited per address
// across cores. The principal is typed (the document's x-ingot-principal,
// struct Caller): /me and /reports answer from it, and a signed token
// whose claims break its schema is refused before the handler.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jose from 'jose';
import { startServer, cleanup, curlResponse, assertProblem, adminAddr, scrapeSamples, hostFor, burst, req } from './lib.mjs';

after(() => cleanup());
const T = { timeout: 30000 };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-auth-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const jwksFile = path.join(dir, 'jwks.json');
let key, other;

before(async () => {
	key = await jose.generateKeyPair('ES256', { extractable: true });
	other = await jose.generateKeyPair('ES256', { extractable: true });
	const pub = await jose.exportJWK(key.publicKey);
	fs.writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...pub, kid: 'k1', alg: 'ES256', use: 'sig' }] }));
});

const now = () => Math.floor(Date.now() / 1000);
function mint(claims, { signWith = key.privateKey, kid = 'k1', exp = now() + 600 } = {}) {
	return new jose.SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', kid }).setSubject(claims.sub ?? 'alice')
		.setIssuedAt().setExpirationTime(exp).sign(signWith);
}
const bearer = (t) => ['-H', `Authorization: Bearer ${t}`];
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');

async function withServer(env, fn) {
	const all = { INGOT_JWKS_FILE: jwksFile, REPORTS_API_KEYS: 'key-one,key-two', INGOT_ADMIN_PORT: '0', ...env };
	for (const k of Object.keys(all)) if (all[k] === undefined) delete all[k];
	const srv = await startServer(all);
	try { await fn(srv); } finally { await srv.stop(); }
}

function assertUnauthorized(res, challenge) {
	const p = assertProblem(res, 401);
	assert.equal(res.headers['www-authenticate'], challenge);
	// The body never says which check failed.
	assert.ok(!/expired|signature|kid|alg/i.test(res.text), res.text);
	return p;
}

test('/me: a good token answers its sub and scopes; none, or a bad one, is 401', T, async () => {
	await withServer({}, async (srv) => {
		let res = await curlResponse(srv.port, '/me', bearer(await mint({ sub: 'alice', scope: 'reports:read profile' })));
		assert.equal(res.status, 200, res.text);
		assert.deepEqual(res.json(), { sub: 'alice', scopes: ['reports:read', 'profile'] });
		// Again: the cached token gives the same answer.
		res = await curlResponse(srv.port, '/me', bearer(await mint({ sub: 'bob', scp: ['a', 'b'] })));
		assert.deepEqual(res.json(), { sub: 'bob', scopes: ['a', 'b'] });

		assertUnauthorized(await curlResponse(srv.port, '/me'), 'Bearer');
		assertUnauthorized(await curlResponse(srv.port, '/me', ['-H', 'Authorization: Basic YTpi']), 'Bearer');

		const bad = {
			expired: await mint({}, { exp: now() - 3600 }),
			'bad signature': await mint({}, { signWith: other.privateKey }),
			'wrong kid': await mint({}, { kid: 'k2' }),
			'alg none': `${b64({ alg: 'none', kid: 'k1' })}.${b64({ sub: 'mallory', exp: now() + 600 })}.`,
			'tampered payload': (await mint({ sub: 'alice' })).replace(/\.[^.]+\./, `.${b64({ sub: 'root', exp: now() + 600 })}.`),
			garbage: 'not-a-token',
		};
		for (const [name, tok] of Object.entries(bad)) {
			res = await curlResponse(srv.port, '/me', bearer(tok));
			assert.equal(res.status, 401, name);
			assertUnauthorized(res, 'Bearer error="invalid_token"');
		}

		const samples = await scrapeSamples(await adminAddr(srv));
		assert.equal(samples.get('ingot_auth_failures_total{scheme="bearer",reason="expired"}'), 1);
		assert.equal(samples.get('ingot_auth_failures_total{scheme="bearer",reason="unknown_kid"}'), 1);
		assert.ok(samples.get('ingot_auth_failures_total{scheme="bearer",reason="missing"}') >= 2);
	});
});

test('/reports/{name}: an API key or a token with reports:read; a missing scope is 403 naming it', T, async () => {
	await withServer({}, async (srv) => {
		let res = await curlResponse(srv.port, '/reports/weekly', ['-H', 'X-API-Key: key-two']);
		assert.equal(res.status, 200, res.text);
		assert.deepEqual(res.json(), { name: 'weekly', by: 'api-key' });
		res = await curlResponse(srv.port, '/reports/weekly', ['-H', 'X-API-Key: key-three']);
		assertProblem(res, 401);
		res = await curlResponse(srv.port, '/reports/weekly', ['-H', 'X-API-Key: key-']);
		assertProblem(res, 401);

		res = await curlResponse(srv.port, '/reports/weekly', bearer(await mint({ sub: 'carol', scope: 'reports:read' })));
		assert.equal(res.status, 200, res.text);
		assert.deepEqual(res.json(), { name: 'weekly', by: 'carol' });

		res = await curlResponse(srv.port, '/reports/weekly', bearer(await mint({ sub: 'dave', scope: 'profile' })));
		assertProblem(res, 403);
		assert.equal(res.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="reports:read"');

		// The door runs before the decoder: a bad parameter without
		// credentials is 401, not 400.
		res = await curlResponse(srv.port, '/reports/NOT_VALID', []);
		assertProblem(res, 401);
	});
});

test('x-ingot-principal: claims that break the Caller schema are 401 invalid_token; fitting ones reach the handler typed', T, async () => {
	await withServer({}, async (srv) => {
		let res = await curlResponse(srv.port, '/me', bearer(await mint({ sub: 'frank', name: 'Frank', scope: 'a' })));
		assert.equal(res.status, 200, res.text);
		assert.deepEqual(res.json(), { sub: 'frank', scopes: ['a'] });
		const breaking = {
			'name not a string': await mint({ sub: 'gina', name: 42 }),
			'name over maxLength': await mint({ sub: 'gina', name: 'n'.repeat(256) }),
			'sub over maxLength': await mint({ sub: 's'.repeat(256) }),
		};
		for (const [what, tok] of Object.entries(breaking)) {
			res = await curlResponse(srv.port, '/me', bearer(tok));
			assert.equal(res.status, 401, what);
			assertUnauthorized(res, 'Bearer error="invalid_token"');
		}
		// The same token on the other route that takes it: refused there too.
		res = await curlResponse(srv.port, '/reports/weekly', bearer(await mint({ sub: 'gina', name: 42, scope: 'reports:read' })));
		assertUnauthorized(res, 'Bearer error="invalid_token"');
		const samples = await scrapeSamples(await adminAddr(srv));
		assert.equal(samples.get('ingot_auth_failures_total{scheme="bearer",reason="claims"}'), 4);
	});
});

test('open routes stay open; without INGOT_JWKS_FILE every token is refused', T, async () => {
	await withServer({ INGOT_JWKS_FILE: undefined }, async (srv) => {
		let res = await curlResponse(srv.port, '/health');
		assert.equal(res.status, 200);
		assert.equal(res.headers['www-authenticate'], undefined);
		res = await curlResponse(srv.port, '/me', bearer(await mint({ sub: 'alice' })));
		assertUnauthorized(res, 'Bearer error="invalid_token"');
	});
});

test('the access log names the subject, never the token', T, async () => {
	await withServer({ INGOT_ACCESS_LOG: '1' }, async (srv) => {
		const good = await mint({ sub: 'erin', scope: 'x' });
		const res = await curlResponse(srv.port, '/me', bearer(good));
		assert.equal(res.status, 200, res.text);
		const line = await srv.waitLog((l) => l.msg === 'request' && l.route === '/me');
		assert.equal(line.subject, 'erin');
		assert.ok(!JSON.stringify(line).includes(good.split('.')[2]), 'the token is not logged');
		await curlResponse(srv.port, '/health');
		const open = await srv.waitLog((l) => l.msg === 'request' && l.route === '/health');
		assert.equal(open.subject, undefined);
	});
});

test('failed attempts per address are limited: 429, then even for a good token (the access log off)', T, async () => {
	await withServer({ INGOT_AUTH_FAILURES_PER_MIN: '3', INGOT_THREADS: '1' }, async (srv) => {
		const good = await mint({ sub: 'erin', scope: 'x' });
		// 3 a minute: 3 failures at once, then one each 20 s.
		let res, refused = 0;
		for (; refused < 7; refused++) {
			res = await curlResponse(srv.port, '/me', bearer('bad.bad.bad'));
			if (res.status === 429) break;
			assert.equal(res.status, 401);
		}
		assert.equal(refused, 3, `429 after ${refused} failures`);
		assertProblem(res, 429);
		const wait = Number(res.headers['retry-after']);
		assert.ok(wait >= 1 && wait <= 20, `Retry-After: ${res.headers['retry-after']}`);
		res = await curlResponse(srv.port, '/me', bearer(good));
		assert.equal(res.status, 429);
		// Open routes are not limited.
		assert.equal((await curlResponse(srv.port, '/health')).status, 200);
		const samples = await scrapeSamples(await adminAddr(srv));
		assert.ok(samples.get('ingot_auth_failures_total{scheme="bearer",reason="rate_limited"}') >= 2);
	});
});

test('the failures\' limit holds across cores: 2 cores, 60 bad tokens at once from one address, the limit\'s 20 (within 10%) are judged, the rest 429', T, async () => {
	await withServer({ INGOT_AUTH_FAILURES_PER_MIN: '20', INGOT_THREADS: '2' }, async (srv) => {
		const bad = req('GET', '/me', { headers: ['Connection: close', 'Authorization: Bearer bad.bad.bad'] });
		const res = await burst(srv.port, Array(60).fill(bad));
		const judged = res.filter((r) => r.status === 401).length;
		assert.ok(judged >= 20 && judged <= 22, `${judged} judged (401)`);
		for (const r of res.filter((x) => x.status !== 401)) {
			assertProblem(r, 429);
			assert.match(r.headers['retry-after'], /^[1-9]\d*$/);
		}
		const samples = await scrapeSamples(await adminAddr(srv));
		assert.equal(samples.get('ingot_auth_failures_total{scheme="bearer",reason="rate_limited"}'), 60 - judged);
	});
});

test('a changed INGOT_JWKS_FILE is read again: a new key\'s token passes once the file is seen', T, async () => {
	const file = path.join(dir, 'rotating.json');
	fs.copyFileSync(jwksFile, file);
	const next = await jose.generateKeyPair('ES256', { extractable: true });
	await withServer({ INGOT_JWKS_FILE: file, INGOT_THREADS: '1', INGOT_AUTH_FAILURES_PER_MIN: '0' }, async (srv) => {
		const tok = await mint({ sub: 'rot' }, { signWith: next.privateKey, kid: 'k3' });
		let res = await curlResponse(srv.port, '/me', bearer(tok));
		assert.equal(res.status, 401, 'unknown before the change');
		const keys = JSON.parse(fs.readFileSync(jwksFile, 'utf8')).keys;
		keys.push({ ...(await jose.exportJWK(next.publicKey)), kid: 'k3', alg: 'ES256', use: 'sig' });
		fs.writeFileSync(`${file}.new`, JSON.stringify({ keys }));
		fs.renameSync(`${file}.new`, file);
		// The file is looked at no more than once a second: poll (bounded).
		const url = `http://${hostFor(srv.port)}:${srv.port}/me`;
		let status = 0;
		for (let i = 0; i < 100 && status !== 200; i++) {
			if (i) await new Promise((r) => setTimeout(r, 50));
			status = (await fetch(url, { headers: { Authorization: `Bearer ${tok}` } })).status;
		}
		assert.equal(status, 200, 'the new key verifies once the file is read again');
		res = await curlResponse(srv.port, '/me', bearer(await mint({ sub: 'old' })));
		assert.equal(res.status, 200, 'the old key stays');
	});
});
