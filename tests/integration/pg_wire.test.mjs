// net/pg's wire, types and auth against a real PostgreSQL (pglib.mjs),
// without the connection engine: build/bin/pgwire_check logs in over a
// blocking socket with auth.c's SCRAM-SHA-256 or md5 (or trust), then sends
// every type as a parameter and reads it back as the server's text and
// echoed in binary and in text (its own TAP lines, counted here). A wrong
// password is refused by the server with 28P01, never by a client-side
// mistake, and the password shows nowhere in the output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.mjs';
import { postgresForSuite } from './pglib.mjs';

const CHECK = path.join(ROOT, process.env.BUILD || 'build', 'bin', 'pgwire_check');
const TYPES = 20; // the parameters pgwire_check sends

const start = postgresForSuite();

function run(pg, password, mode) {
	return new Promise((resolve) => {
		execFile(CHECK, ['127.0.0.1', String(pg.port), pg.user, password, pg.database, mode],
			{ timeout: 60000, env: { PATH: process.env.PATH } },
			(err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
	});
}

function tap(stdout) {
	const lines = stdout.split('\n');
	return {
		ok: lines.filter((l) => l.startsWith('ok ')).length,
		notOk: lines.filter((l) => l.startsWith('not ok ')),
	};
}

test('pgwire_check is built', () => {
	assert.ok(fs.existsSync(CHECK), `${CHECK} missing: make pgwire-check`);
});

test('SCRAM-SHA-256: every type both ways, text and binary', async () => {
	const pg = await start({ authMethod: 'scram-sha-256' });
	const r = await run(pg, pg.password, 'types');
	assert.match(r.stdout, /^# authenticated via scram-sha-256$/m, r.stdout + r.stderr);
	const t = tap(r.stdout);
	assert.deepEqual(t.notOk, [], r.stdout + r.stderr);
	// the server's text of each, and each echoed twice, with a row check per pass
	assert.equal(t.ok, 3 * (TYPES + 1), r.stdout);
	assert.equal(r.code, 0, r.stderr);
});

test('SCRAM-SHA-256 with a wrong password: the server refuses (28P01), the password is not shown', async () => {
	const pg = await start({ authMethod: 'scram-sha-256' });
	const wrong = 'Wr0ngPassw0rd';
	const r = await run(pg, wrong, 'auth');
	assert.equal(r.code, 3, r.stdout + r.stderr);
	assert.match(r.stdout, /^# auth failed 28P01 password authentication failed for user "ingot"$/m, r.stdout);
	assert.ok(!(r.stdout + r.stderr).includes(wrong));
	assert.ok(!(r.stdout + r.stderr).includes(pg.password));
	// and the right one still works on the same server
	const ok = await run(pg, pg.password, 'auth');
	assert.equal(ok.code, 0, ok.stdout + ok.stderr);
	assert.match(ok.stdout, /^# authenticated via scram-sha-256$/m);
});

test('md5: the right password logs in, a wrong one is refused', async () => {
	const pg = await start({ authMethod: 'md5' });
	const r = await run(pg, pg.password, 'types');
	assert.match(r.stdout, /^# authenticated via md5$/m, r.stdout + r.stderr);
	assert.deepEqual(tap(r.stdout).notOk, [], r.stdout);
	assert.equal(r.code, 0, r.stderr);
	const bad = await run(pg, 'nope', 'auth');
	assert.equal(bad.code, 3, bad.stdout + bad.stderr);
	assert.match(bad.stdout, /^# auth failed 28P01 /m);
});

test('trust: no password asked', async () => {
	const pg = await start({ authMethod: 'trust' });
	const r = await run(pg, '', 'auth');
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.match(r.stdout, /^# authenticated via trust$/m);
});
