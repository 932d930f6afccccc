// The build without TLS (make TLS=none: build/bin/service-notls, the TLS
// backend of the unikernel). It serves plain HTTP as the default build does
// (/hash still hashes with BearSSL's SHA-256); a certificate setting stops
// the start with one message; the outbound client refuses an https://
// upstream with the error kind "tls" before it opens any connection; and
// the door verifies JWTs (HS256, RS256, ES256, minted by npm's jose) with
// BearSSL's hash and signature code, linked without TLS.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as jose from 'jose';
import { BIN, BODY, startServer, cleanup, curlResponse } from './lib.mjs';

const NOTLS = process.env.INGOT_BIN_NOTLS || path.join(path.dirname(BIN), 'service-notls');
const T = { timeout: 30000 };

after(cleanup);

test('service-notls was built (make TLS=none bin)', () => {
	assert.ok(fs.existsSync(NOTLS), `${NOTLS} is missing`);
});

test('it serves plain HTTP, /hash included', T, async () => {
	const srv = await startServer({}, { command: NOTLS });
	for (const [target, body] of [['/health', BODY.health], ['/hash', BODY.hash], ['/json', BODY.json]]) {
		const r = await curlResponse(srv.port, target);
		assert.equal(r.status, 200, target);
		assert.equal(r.body.toString(), body, target);
	}
	assert.equal((await srv.stop()).code, 0);
});

test('a certificate setting stops the start with one message', T, async () => {
	const r = await new Promise((resolve) => {
		execFile(NOTLS, [], {
			env: { PATH: process.env.PATH, PORT: '0', INGOT_TLS_CERT_PEM: 'x', INGOT_TLS_KEY_PEM: 'y' },
			timeout: 10000, killSignal: 'SIGKILL',
		}, (err, stdout, stderr) => resolve({ code: err?.code ?? 0, stdout, stderr }));
	});
	// A setting the build cannot honour is a settings error, as a bad
	// certificate is in the other builds: exit 2, nothing listens.
	assert.equal(r.code, 2, r.stderr);
	assert.equal(r.stdout, '');
	assert.deepEqual(r.stderr.trim().split('\n'), [
		'ingot: TLS: this build has no TLS (built with TLS=none; use TLS=bearssl or TLS=mbedtls)',
	]);
});

test('an https:// upstream is refused with the kind "tls", no connection made', T, async () => {
	let connections = 0;
	const trap = net.createServer((s) => { connections++; s.destroy(); });
	await new Promise((resolve) => trap.listen(0, '127.0.0.1', resolve));
	const upstream = `https://127.0.0.1:${trap.address().port}`;
	try {
		const srv = await startServer({ UPSTREAM: upstream }, { command: NOTLS });
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 502);
		const problem = JSON.parse(r.body.toString());
		// The client gets the kind, never the upstream; the log gets why.
		assert.equal(problem.error, 'tls');
		assert.ok(!r.body.toString().includes(`127.0.0.1:${trap.address().port}`), r.body.toString());
		const line = await srv.waitLog((l) => l.msg === 'upstream error');
		assert.equal(line.level, 'error');
		assert.equal(line.message, `cannot use ${upstream}: this build has no TLS ` +
			'(built with TLS=none; use TLS=bearssl or TLS=mbedtls)');
		assert.equal((await srv.stop()).code, 0);
		assert.equal(connections, 0);
	} finally {
		trap.close();
	}
});

test('JWTs verify without TLS: /me admits HS256, RS256 and ES256 tokens, refuses a bad signature', T, async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-notls-jwt-'));
	try {
		const keys = [], signers = {};
		for (const alg of ['RS256', 'ES256']) {
			const pair = await jose.generateKeyPair(alg, { extractable: true });
			keys.push({ ...(await jose.exportJWK(pair.publicKey)), kid: alg, alg, use: 'sig' });
			signers[alg] = pair.privateKey;
		}
		const secret = Buffer.from('a secret of thirty-two bytes, ok');
		keys.push({ kty: 'oct', k: secret.toString('base64url'), kid: 'HS256', alg: 'HS256' });
		signers.HS256 = secret;
		const jwks = path.join(dir, 'jwks.json');
		fs.writeFileSync(jwks, JSON.stringify({ keys }));
		const srv = await startServer({ INGOT_JWKS_FILE: jwks }, { command: NOTLS });
		const mint = (alg) => new jose.SignJWT({ scope: 'profile' }).setProtectedHeader({ alg, kid: alg })
			.setSubject(`by-${alg}`).setIssuedAt().setExpirationTime('10m').sign(signers[alg]);
		for (const alg of ['HS256', 'RS256', 'ES256']) {
			const r = await curlResponse(srv.port, '/me', ['-H', `Authorization: Bearer ${await mint(alg)}`]);
			assert.equal(r.status, 200, `${alg}: ${r.text}`);
			assert.equal(JSON.parse(r.text).sub, `by-${alg}`);
		}
		const t = await mint('ES256');
		const tampered = t.slice(0, -4) + (t.endsWith('AAAA') ? 'BBBB' : 'AAAA');
		const r = await curlResponse(srv.port, '/me', ['-H', `Authorization: Bearer ${tampered}`]);
		assert.equal(r.status, 401, r.text);
		assert.equal((await srv.stop()).code, 0);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});
