// The reference service on a test database (pglib's): migrated with
// `service --migrate`, then started with DATABASE_URL, and resolved once
// /readyz says 200 (its pool has connected once). For the suites of the
// database routes (techempower, posts).
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, curlResponse, runBinary, within, cleanup } from './lib.mjs';
import { startPostgres } from './pglib.mjs';

/** `service --migrate` against url: resolves {code, stdout, stderr, logs}
 * (logs: stdout's JSON lines, parsed). */
export async function migrate(url, env = {}) {
	const r = await runBinary(['--migrate'], { DATABASE_URL: url, ...env }, { timeoutMs: 60000 });
	r.logs = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
	return r;
}

/** Resolves once srv's /readyz answers 200. Each try is a request, the
 * next one after the loop's turn; the whole wait is bounded by within(). */
export async function waitReady(srv, ms = 20000) {
	await within(ms, (async () => {
		for (;;) {
			if ((await curlResponse(srv.port, '/readyz')).status === 200) return;
			await new Promise((resolve) => setImmediate(resolve));
		}
	})(), '/readyz never answered 200');
}

/** Polls fn (async) until it returns a truthy value, which it resolves;
 * fails naming what after ms. For outcomes another process writes (a
 * consumer's): each try a query, the next one 200 ms later. */
export async function pollUntil(fn, what, ms = 60000) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

/** Migrates pg's database and serves on it; resolves the server. */
export async function startDbService(pg, env = {}) {
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	const srv = await startServer({ DATABASE_URL: pg.url, ...env });
	await waitReady(srv);
	return srv;
}

/** For a suite of one migrated service on a database of its own: call it at
 * the top of the test file. before() starts a PostgreSQL (pglib's) and the
 * service on it, after() stops both; the object returned holds them as pg
 * and srv once before() has run. */
export function dbServiceForSuite(env = {}) {
	const db = { pg: null, srv: null };
	before(async () => {
		db.pg = await startPostgres();
		db.srv = await startDbService(db.pg, env);
	});
	after(async () => {
		if (db.srv) await db.srv.stop();
		if (db.pg) await db.pg.stop();
		cleanup();
	});
	return db;
}
