// The test API (net/testing.h) with a database: the reference service's
// handler tests (tests/unit/app/test_handlers.c, built by `make unit-build`)
// run with DATABASE_URL naming a migrated test database, so that their
// database cases (GET /db, /queries on the test core's pool) run instead
// of being skipped, under ASan+UBSan and as the static musl build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { ROOT } from './lib.mjs';
import { postgresForSuite } from './pglib.mjs';
import { migrate } from './dbservice.mjs';

const startPg = postgresForSuite();
const UNIT = path.join(ROOT, process.env.BUILD || 'build', 'test', 'unit');

function run(bin, env) {
	return new Promise((resolve) => {
		execFile(bin, [], { env: { ...process.env, ...env }, timeout: 120000, killSignal: 'SIGKILL' },
			(err, stdout, stderr) => resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }));
	});
}

test('the handler tests run their database cases on a real PostgreSQL', async () => {
	const pg = await startPg();
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	for (const kind of ['asan', 'musl']) {
		const bin = path.join(UNIT, `app/test_handlers.${kind}`);
		assert.ok(fs.existsSync(bin), `${bin}: make unit-build builds it`);
		const r = await run(bin, { DATABASE_URL: pg.url });
		assert.equal(r.code, 0, `${kind}:\n${r.stdout}${r.stderr}`);
		assert.match(r.stdout, /^ok \d+ - GET \/db: a row of the database/m, kind);
		assert.match(r.stdout, /^ok \d+ - GET \/queries\?queries=3: three rows/m, kind);
		assert.doesNotMatch(r.stdout, /# SKIP/, kind);
	}
});
