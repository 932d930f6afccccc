// Bearer JWTs' keys over HTTP (net/api/jwks_remote.c) through the real
// binary: a node http server on a free loopback port serves the JWKS (and
// an OpenID Connect discovery document) and counts its fetches; tokens are
// minted with npm's jose. /readyz is 503 until a first fetch succeeds; a
// rotated key's kid makes one refetch (its token is accepted once the new
// set is in, the old key's refused), and no second within the minute; a
// discovery document's jwks_uri and issuer are used; an https key server
// is trusted through INGOT_TLS_CA_FILE only. Ordering comes from
// the service's own log lines (one core: its lines keep their order),
// never from sleeps.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import * as jose from 'jose';
import { LWIP, startServer, cleanup, curlResponse, runBinary } from './lib.mjs';
import { makeTestPki, resolverFiles } from './upstreams.mjs';

after(() => cleanup());
const T = { timeout: 60000, skip: LWIP && 'the key server listens on the host\'s loopback, out of an lwIP server\'s reach' };

const now = () => Math.floor(Date.now() / 1000);
async function keyPair(kid) {
	const k = await jose.generateKeyPair('ES256', { extractable: true });
	return { kid, priv: k.privateKey, jwk: { ...(await jose.exportJWK(k.publicKey)), kid, alg: 'ES256', use: 'sig' } };
}
function mint(k, claims = {}) {
	const t = new jose.SignJWT({ scope: 'profile', ...claims }).setProtectedHeader({ alg: 'ES256', kid: k.kid })
		.setSubject(claims.sub ?? 'alice').setIssuedAt().setExpirationTime(now() + 600);
	return t.sign(k.priv);
}
const bearer = (t) => ['-H', `Authorization: Bearer ${t}`];

// The key server: { status, keys, discovery } are the test's to change.
// With tls ({ cert, key }): HTTPS, on https://keys.test:PORT.
async function keyServer(tls) {
	const s = { status: 200, keys: [], discovery: null, fetches: 0, discoveryFetches: 0 };
	const serve = (req, res) => {
		if (req.url === '/jwks.json') {
			s.fetches++;
			res.writeHead(s.status, { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=3000' });
			res.end(s.status === 200 ? JSON.stringify({ keys: s.keys }) : '{"error":"down"}');
		} else if (req.url === '/.well-known/openid-configuration' && s.discovery) {
			s.discoveryFetches++;
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(s.discovery));
		} else {
			res.writeHead(404);
			res.end();
		}
	};
	s.server = tls ? https.createServer(tls, serve) : http.createServer(serve);
	await new Promise((r) => s.server.listen(0, '127.0.0.1', r));
	s.base = tls ? `https://keys.test:${s.server.address().port}` : `http://127.0.0.1:${s.server.address().port}`;
	after(() => s.server.close());
	return s;
}

const isFetched = (l) => l.msg === 'JWKS fetched: new keys';

test('readiness is 503 until the first fetch succeeds; a failure is logged and retried', T, async () => {
	const ks = await keyServer();
	const k1 = await keyPair('k1');
	ks.status = 500;
	ks.keys = [k1.jwk];
	const srv = await startServer({ INGOT_JWKS_URL: `${ks.base}/jwks.json`, INGOT_THREADS: '1' });
	try {
		const failed = await srv.waitLog((l) => l.msg === 'JWKS fetch failed: no keys yet');
		assert.equal(failed.status, 500);
		assert.equal(failed.document, 'jwks');
		assert.ok(!JSON.stringify(failed).includes(ks.base), 'the URL is not logged');
		let res = await curlResponse(srv.port, '/readyz');
		assert.equal(res.status, 503);
		assert.deepEqual(res.json(), { status: 'backend down', backend: 'jwks' });
		res = await curlResponse(srv.port, '/me', bearer(await mint(k1)));
		assert.equal(res.status, 401, 'no keys yet');

		ks.status = 200; // the retry (after 1 s of backoff) succeeds
		const got = await srv.waitLog(isFetched);
		assert.equal(got.keys, 1);
		assert.equal((await curlResponse(srv.port, '/readyz')).status, 200);
		res = await curlResponse(srv.port, '/me', bearer(await mint(k1)));
		assert.equal(res.status, 200, res.text);
		assert.ok(ks.fetches >= 2);
	} finally {
		assert.equal((await srv.stop()).code, 0, 'a clean exit, a fetch\'s timer pending');
	}
});

test('key rotation: an unknown kid refetches once, the new key\'s token passes, the old key\'s is refused; no second refetch within the minute', T, async () => {
	const ks = await keyServer();
	const k1 = await keyPair('k1'), k2 = await keyPair('k2');
	ks.keys = [k1.jwk];
	const srv = await startServer({ INGOT_JWKS_URL: `${ks.base}/jwks.json`, INGOT_THREADS: '1', INGOT_ACCESS_LOG: '1',
		INGOT_AUTH_FAILURES_PER_MIN: '0' });
	try {
		await srv.waitLog(isFetched);
		const old = await mint(k1);
		assert.equal((await curlResponse(srv.port, '/me', bearer(old))).status, 200);
		assert.equal(ks.fetches, 1);

		// The server rotates: k2 only.
		ks.keys = [k2.jwk];
		const fresh = await mint(k2, { sub: 'bob' });
		let mark = srv.mark();
		let res = await curlResponse(srv.port, '/me', bearer(fresh));
		assert.equal(res.status, 401, 'refused while the set is fetched again');
		const refetch = await srv.waitLog((l) => l.msg === 'JWKS refetch: a token\'s kid is unknown', mark);
		const fetched = await srv.waitLog(isFetched, mark);
		assert.ok(srv.logs.indexOf(refetch) < srv.logs.indexOf(fetched));
		assert.equal(fetched.keys, 1);
		assert.equal(ks.fetches, 2, 'one refetch');

		res = await curlResponse(srv.port, '/me', bearer(fresh));
		assert.equal(res.status, 200, res.text);
		assert.equal(res.json().sub, 'bob');

		// The old key's token (cached before) and another unknown kid: both
		// refused, and neither refetches (the minute has not passed). The
		// request's access line follows any refetch line of its own.
		mark = srv.mark();
		const k3 = await keyPair('k3');
		for (const tok of [old, await mint(k3)]) {
			res = await curlResponse(srv.port, '/me', bearer(tok));
			assert.equal(res.status, 401);
			assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
		}
		const lines = [];
		for (let i = 0; i < 2; i++) {
			const l = await srv.waitLog((x) => x.msg === 'request' && x.route === '/me' && x.status === 401 && !lines.includes(x), mark);
			lines.push(l);
		}
		const upTo = srv.logs.indexOf(lines[1]);
		assert.ok(!srv.logs.slice(mark, upTo).some((l) => l.msg && l.msg.startsWith('JWKS refetch')), 'no second refetch');
		assert.equal(ks.fetches, 2);
	} finally {
		assert.equal((await srv.stop()).code, 0, 'a clean exit, a fetch\'s timer pending');
	}
});

test('OpenID Connect discovery: the document\'s jwks_uri gives the keys and its issuer is required', T, async () => {
	const ks = await keyServer();
	const k1 = await keyPair('k1');
	ks.keys = [k1.jwk];
	ks.discovery = { issuer: 'https://issuer.test', jwks_uri: `${ks.base}/jwks.json` };
	const srv = await startServer({ INGOT_OIDC_DISCOVERY_URL: `${ks.base}/.well-known/openid-configuration`, INGOT_THREADS: '1',
		INGOT_AUTH_FAILURES_PER_MIN: '0' });
	try {
		await srv.waitLog(isFetched);
		assert.equal(ks.discoveryFetches, 1);
		assert.equal(ks.fetches, 1);
		assert.equal((await curlResponse(srv.port, '/readyz')).status, 200);
		let res = await curlResponse(srv.port, '/me', bearer(await mint(k1, { iss: 'https://issuer.test' })));
		assert.equal(res.status, 200, res.text);
		res = await curlResponse(srv.port, '/me', bearer(await mint(k1, { iss: 'https://other.test' })));
		assert.equal(res.status, 401, 'the discovered issuer is checked');
		res = await curlResponse(srv.port, '/me', bearer(await mint(k1)));
		assert.equal(res.status, 401, 'a token without iss is refused');
	} finally {
		assert.equal((await srv.stop()).code, 0, 'a clean exit, a fetch\'s timer pending');
	}
});

test('https: the key server is trusted through INGOT_TLS_CA_FILE, refused without it', T, async () => {
	const pki = await makeTestPki(['keys.test']);
	const files = resolverFiles({ hosts: '127.0.0.1 keys.test\n' });
	try {
		const ks = await keyServer({ cert: pki.cert, key: pki.key });
		const k1 = await keyPair('k1');
		ks.keys = [k1.jwk];
		const env = { INGOT_JWKS_URL: `${ks.base}/jwks.json`, INGOT_HOSTS_FILE: files.hosts, INGOT_THREADS: '1' };
		let srv = await startServer({ ...env, INGOT_TLS_CA_FILE: pki.otherCaFile, INGOT_TLS_CA_MODE: 'replace' });
		try {
			const failed = await srv.waitLog((l) => l.msg === 'JWKS fetch failed: no keys yet');
			assert.equal(failed.error, 'tls');
			assert.equal((await curlResponse(srv.port, '/readyz')).status, 503);
		} finally {
			await srv.stop();
		}
		srv = await startServer({ ...env, INGOT_TLS_CA_FILE: pki.caFile, INGOT_TLS_CA_MODE: 'replace' });
		try {
			await srv.waitLog(isFetched);
			assert.equal((await curlResponse(srv.port, '/readyz')).status, 200);
			assert.equal((await curlResponse(srv.port, '/me', bearer(await mint(k1)))).status, 200);
		} finally {
			await srv.stop();
		}
	} finally {
		pki.cleanup();
		files.cleanup();
	}
});

test('settings: a file and a URL together, or a URL that is not http(s), stop the start', T, async () => {
	let r = await runBinary([], { INGOT_JWKS_URL: 'ftp://x/jwks', PORT: '0' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /INGOT_JWKS_URL: not an http/);
	r = await runBinary([], { INGOT_JWKS_URL: 'http://127.0.0.1:1/jwks', INGOT_JWKS_FILE: '/dev/null', PORT: '0' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /set one source of keys/);
});
