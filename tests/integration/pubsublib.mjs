// The Pub/Sub suites' shared setup and checks: the pubsub test app
// (tests/apps/pubsub, built out of the tree once per suite) on databases
// and brokers of the suite's own, processes of it, its publish route, and
// the ordering key's check both providers share.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, curlResponse, cleanup, commandRunner } from './lib.mjs';
import { postgresForSuite } from './pglib.mjs';
import { natsForSuite } from './natslib.mjs';
import { waitReady, pollUntil as until } from './dbservice.mjs';
import { buildTestApp } from './testapp.mjs';

const { must } = commandRunner({ timeoutMs: 240000 });

// For a suite of the pubsub app: call it at the top of the test file,
// nats: true for the NATS provider. After the suite, its processes,
// PostgreSQL servers, nats-servers and temporary folder go. Returns
// { T, newPostgres, nats, app, migrated, start, cluster }:
// - T: the tests' options (skipped under INGOT_BIN: the app builds its
//   own binary, tested in the plain pass);
// - newPostgres(), nats (natslib's, or null): servers of the suite's;
// - app() -> the app's binary; migrated() -> { bin, pg }: the app's
//   tables migrated on a database of its own;
// - start(bin, pg, env) -> a process of the app on pg (one thread, env
//   added), once /readyz says 200;
// - cluster(n) -> { bin, pg, broker, env, procs }: migrated(), with nats
//   a broker (a monitoring port too) that env points the app at, and n
//   processes started with env.
export function pubsubSuite(prefix, { nats: withNats = false } = {}) {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
	const newPostgres = postgresForSuite();
	const nats = withNats ? natsForSuite() : null;
	after(async () => {
		cleanup();
		await nats?.stopAll();
		fs.rmSync(tmp, { recursive: true, force: true });
	});
	const T = { timeout: 300000, ...(process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {}) };
	const app = () => buildTestApp('pubsub', tmp);
	async function migrated() {
		const bin = await app();
		const pg = await newPostgres();
		await must(bin, ['--migrate'], { env: { ...process.env, DATABASE_URL: pg.url } });
		return { bin, pg };
	}
	async function start(bin, pg, env = {}) {
		const srv = await startServer({ DATABASE_URL: pg.url, INGOT_THREADS: '1', INGOT_ADMIN_PORT: '-1', ...env }, { command: bin });
		await waitReady(srv);
		return srv;
	}
	async function cluster(n) {
		const { bin, pg } = await migrated();
		const broker = nats ? await nats.start({ monitor: true }) : null;
		const env = broker ? { INGOT_PUBSUB_URL: broker.url, INGOT_ADMIN_PORT: '0' } : {};
		const procs = [];
		for (let i = 0; i < n; i++)
			procs.push(await start(bin, pg, env));
		return { bin, pg, broker, env, procs };
	}
	return { T, newPostgres, nats, app, migrated, start, cluster };
}

// POST /publish/<topic> with the Event {n} (or n itself, an object): the response.
export function publishEvent(srv, topic, n) {
	return curlResponse(srv.port, `/publish/${topic}`,
		['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(typeof n === 'object' ? n : { n })]);
}

// The same, answered 204 (stored by the provider).
export async function publish(srv, topic, n) {
	const r = await publishEvent(srv, topic, n);
	assert.equal(r.status, 204, r.text);
}

// psql's answer, trimmed.
export const q = async (pg, sql) => (await pg.psql(sql)).trim();

// The scenarios both providers' suites run, each suite asserting its
// provider's own records beside them.

// n messages {n: 0..n-1} on the topic `events`, each through the next of procs.
export async function publishSpread(procs, n) {
	for (let i = 0; i < n; i++)
		await publish(procs[i % procs.length], 'events', i);
}

// Once every message of publishSpread is handled: each of the topic's two
// subscriptions ran each message once, none twice, in one of procs.
export async function assertEachOnce(pg, procs, n) {
	for (const sub of ['first', 'second'])
		assert.equal(await q(pg, `SELECT count(*) || '|' || count(DISTINCT n) FROM runs WHERE sub = '${sub}';`), `${n}|${n}`,
			`${sub}: one run per message, no duplicate`);
	await assertRunIn(pg, procs, 'runs');
}

// Each row of table (the app's runs or ordered_runs) was written by one of
// procs, none other.
async function assertRunIn(pg, procs, table) {
	const pids = new Set(procs.map((p) => String(p.pid)));
	for (const pid of (await q(pg, `SELECT DISTINCT pid FROM ${table};`)).split('\n'))
		assert.ok(pids.has(pid.trim()), `pid ${pid} is one of the processes'`);
}

// The flaky subscription's runs (it always fails) are spaced by the
// backoff (100 ms, then 200 ms): at least the minimum apart.
export async function assertBackoffGaps(pg) {
	assert.equal(await q(pg, `SELECT bool_and(gap >= interval '100 milliseconds') FROM (SELECT at - lag(at) OVER (ORDER BY at) AS gap
		FROM runs WHERE sub = 'flaky') g WHERE gap IS NOT NULL;`), 't');
}

// A process killed (SIGKILL) mid-handler: publishes a message on `slow`
// through procs[0], kills it once the handler has begun (it sleeps past the
// 2 s ack deadline) and resolves a process started in its place with
// start(bin, pg, env), to which the redelivery comes.
export async function killMidHandler({ bin, pg, env, procs }, start) {
	await publish(procs[0], 'slow', 1);
	await until(async () => await q(pg, "SELECT count(*) FROM runs WHERE sub = 'slow';") === '1', 'the first run');
	procs[0].kill();
	await procs[0].exited;
	return start(bin, pg, env);
}

// The ordering key's check, for both providers: perKey messages of each
// key published on the topic `ordered`, interleaved (a0 b0 c0 d0 a1 ...),
// each through the next of procs.
export async function publishInterleaved(procs, keys, perKey) {
	let i = 0;
	for (let seq = 0; seq < perKey; seq++)
		for (const key of keys)
			await publish(procs[i++ % procs.length], 'ordered', { key, seq });
}

// The app's ordered_runs once every run is in: each key's runs in the
// order they began are its messages in publish order, the ones that fail
// once (seq % 4 == 1) twice in a row; never two runs of a key at once; each
// run in one of procs.
export async function assertKeyOrder(pg, procs, keys, perKey) {
	for (const key of keys) {
		const seen = (await q(pg, `SELECT string_agg(seq::text, ',' ORDER BY id) FROM ordered_runs WHERE key = '${key}';`)).split(',').map(Number);
		const want = [];
		for (let seq = 0; seq < perKey; seq++)
			want.push(...(seq % 4 === 1 ? [seq, seq] : [seq]));
		assert.deepEqual(seen, want, `key ${key}: runs in publish order`);
	}
	assert.equal(await q(pg, 'SELECT max(inflight) FROM ordered_runs;'), '1');
	await assertRunIn(pg, procs, 'ordered_runs');
}
