// JWTs minted by a real library: tests/auth/jose_mint.mjs signs tokens
// with npm's jose (HS256/384, RS256/512, ES256/384, with and without kid,
// expired, not yet valid, wrong iss and aud, a swapped signature, a
// tampered payload) and three with the openssl command line (RS256,
// HS256, ES256); then the unit test tests/unit/net/auth/test_jwt.c (its
// ASan build, then its musl build) verifies each with net/auth and
// BearSSL, and its TAP lines are passed on. No service runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './lib.mjs';

const T = { timeout: 120000 };

function run(bin, args, env = {}) {
	return new Promise((resolve) => {
		execFile(bin, args, { env: { PATH: process.env.PATH, ...env }, timeout: 60000 }, (err, stdout, stderr) =>
			resolve({ code: err ? err.code ?? 1 : 0, stdout, stderr }));
	});
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jwt-jose-'));
const fixture = path.join(dir, 'tokens.txt');
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

for (const kind of ['asan', 'musl']) {
	test(`jose- and openssl-minted tokens verified by net/auth (${kind} build)`, T, async (t) => {
		if (!fs.existsSync(fixture)) {
			const m = await run(process.execPath, [path.join(ROOT, 'tests', 'auth', 'jose_mint.mjs'), fixture]);
			assert.equal(m.code, 0, m.stdout + m.stderr);
		}
		const bin = path.join(ROOT, 'build', 'test', 'unit', 'net', 'auth', `test_jwt.${kind}`);
		assert.ok(fs.existsSync(bin), `${bin} is not built (make unit-build)`);
		const r = await run(bin, [fixture], { ASAN_OPTIONS: process.env.ASAN_OPTIONS, UBSAN_OPTIONS: process.env.UBSAN_OPTIONS });
		const lines = r.stdout.split('\n').filter((l) => /^(not )?ok /.test(l));
		assert.ok(lines.filter((l) => l.includes(' - jose: ')).length >= 20, r.stdout + r.stderr);
		for (const l of lines) await t.test(l.replace(/^(not )?ok \d+ - /, ''), () => assert.ok(l.startsWith('ok '), l));
		assert.equal(r.code, 0, r.stdout + r.stderr);
	});
}
