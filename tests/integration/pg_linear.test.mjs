// The linear database calls against a real PostgreSQL (pglib's): runs the
// unit test tests/unit/net/pg/test_linear.c (its ASan build, then its musl
// build) with DATABASE_URL set, and passes on its TAP lines: ig_pg_run,
// ig_pg_send and ig_wait_all, and transactions committed, rolled back,
// left open by a handler (rolled back), aborted by a failed statement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.mjs';
import { postgresForSuite } from './pglib.mjs';

const startPg = postgresForSuite();
const T = { timeout: 120000 };

function runUnit(bin, env) {
	return new Promise((resolve) => {
		execFile(bin, [], { env: { PATH: process.env.PATH, ...env }, timeout: 60000 }, (err, stdout, stderr) =>
			resolve({ code: err ? err.code ?? 1 : 0, stdout, stderr }));
	});
}

for (const kind of ['asan', 'musl']) {
	test(`the linear database calls on the test core (${kind} build), against PostgreSQL`, T, async (t) => {
		const bin = path.join(ROOT, 'build', 'test', 'unit', 'net', 'pg', `test_linear.${kind}`);
		assert.ok(fs.existsSync(bin), `${bin} is not built (make unit-build)`);
		const pg = await startPg();
		const r = await runUnit(bin, { DATABASE_URL: pg.url, ASAN_OPTIONS: process.env.ASAN_OPTIONS,
			UBSAN_OPTIONS: process.env.UBSAN_OPTIONS });
		const lines = r.stdout.split('\n').filter((l) => /^(not )?ok /.test(l));
		assert.ok(lines.length >= 12, r.stdout + r.stderr);
		for (const l of lines) await t.test(l.replace(/^(not )?ok \d+ - /, ''), () => assert.ok(l.startsWith('ok '), l));
		assert.equal(r.code, 0, r.stdout + r.stderr);
	});
}
