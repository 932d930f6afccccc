// The cron scheduler (net/cron/scheduler.c) against a real PostgreSQL
// (pglib): three processes of the reference service on one database, each
// scheduling the job heartbeat (every 1s, HEARTBEAT_CRON=1), run each tick
// once between them, as the claims table and the heartbeat rows both say;
// a process with HEARTBEAT_CRON off schedules nothing; and POST
// /_ingot/cron (a Knative PingSource's CloudEvent) runs a job with the
// secret only; without a database each process runs each tick itself.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, curlResponse, within, adminAddr, scrapeSamples, cleanup } from './lib.mjs';
import { postgresForSuite } from './pglib.mjs';
import { migrate, waitReady } from './dbservice.mjs';

const newPostgres = postgresForSuite();
after(cleanup);
const T = { timeout: 120000 };

async function heartbeat(srv) {
	const r = await curlResponse(srv.port, '/cron/heartbeat');
	assert.equal(r.status, 200, r.text);
	return r.json();
}

test('three replicas run each heartbeat tick once, claimed in PostgreSQL', T, async () => {
	const pg = await newPostgres();
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	// The runtime's own migration made the claims table beside the app's.
	assert.equal((await pg.psql("SELECT to_regclass('ingot_cron_claims') IS NOT NULL;")).trim(), 't');
	const env = { DATABASE_URL: pg.url, HEARTBEAT_CRON: '1', INGOT_ADMIN_PORT: '0' };
	const replicas = await Promise.all([0, 1, 2].map(() => startServer(env)));
	try {
		await Promise.all(replicas.map((srv) => waitReady(srv)));
		let hb;
		await within(60000, (async () => {
			for (;;) {
				hb = await heartbeat(replicas[0]);
				if (hb.ticks >= 10) return;
			}
		})(), 'the heartbeat never reached 10 ticks');
		const pids = new Set(replicas.map((s) => s.pid));
		for (const p of hb.pids)
			assert.ok(pids.has(p), `pid ${p} is one of the replicas' (${[...pids]})`);
		// Every replica answers the same count: one database.
		assert.ok((await heartbeat(replicas[2])).ticks >= 10);
		// Each replica's scheduler saw the ticks the others claimed.
		const counts = { ok: 0, elsewhere: 0 };
		for (const srv of replicas) {
			const s = await scrapeSamples(await adminAddr(srv));
			for (const k of Object.keys(counts))
				counts[k] += s.get(`ingot_cron_runs_total{job="heartbeat",result="${k}"}`) ?? 0;
		}
		// (failed is not asserted: a claim made before a replica's pool has
		// connected may time out on a loaded machine; it then runs nothing.)
		assert.ok(counts.ok >= 10, `ok runs ${counts.ok}`);
		assert.ok(counts.elsewhere >= 10, `ticks claimed elsewhere ${counts.elsewhere}`);
	} finally {
		await Promise.all(replicas.map((srv) => srv.stop()));
	}
	// After the stop: no tick ran twice, and each run tick has its one claim.
	const [rows, ticks] = (await pg.psql('SELECT count(*), count(DISTINCT tick) FROM heartbeat;')).trim().split('|').map(Number);
	assert.ok(rows >= 10, `rows ${rows}`);
	assert.equal(rows, ticks, 'a tick ran twice');
	const unclaimed = (await pg.psql(
		"SELECT count(*) FROM heartbeat h WHERE NOT EXISTS (SELECT 1 FROM ingot_cron_claims c " +
		"WHERE c.job = 'heartbeat' AND c.tick = to_timestamp(h.tick) AND c.pid = h.pid);")).trim();
	assert.equal(unclaimed, '0', 'each row is the run of a tick its process claimed');
	// A claim without its row: only a run in flight when its replica stopped.
	const orphans = Number((await pg.psql(
		"SELECT count(*) FROM ingot_cron_claims c WHERE c.job = 'heartbeat' AND NOT EXISTS " +
		'(SELECT 1 FROM heartbeat h WHERE to_timestamp(h.tick) = c.tick);')).trim());
	assert.ok(orphans <= replicas.length, `${orphans} claimed ticks never ran`);
});

test('HEARTBEAT_CRON off (the default): no scheduler; the operation still answers', T, async () => {
	const pg = await newPostgres();
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	const srv = await startServer({ DATABASE_URL: pg.url, INGOT_ADMIN_PORT: '0' });
	try {
		await waitReady(srv);
		// The scheduler was never prepared: it registered no metrics.
		const s = await scrapeSamples(await adminAddr(srv));
		assert.ok(![...s.keys()].some((k) => k.startsWith('ingot_cron_')), 'no cron metrics');
		// A manual tick is recorded (the operation works), with no tick.
		const r = await curlResponse(srv.port, '/cron/heartbeat', ['-X', 'POST']);
		assert.equal(r.status, 204, r.text);
		assert.deepEqual(await heartbeat(srv), { ticks: 1, pids: [srv.pid] });
		assert.equal((await pg.psql('SELECT count(tick) FROM heartbeat;')).trim(), '0');
		// INGOT_CRON_SECRET not set: the trigger's endpoint is off.
		const off = await curlResponse(srv.port, '/_ingot/cron', ['-X', 'POST', '-H', 'Authorization: Bearer x',
			'-H', 'Content-Type: application/json', '--data-binary', '{"job":"heartbeat"}']);
		assert.equal(off.status, 404);
	} finally {
		await srv.stop();
	}
});

test('POST /_ingot/cron runs the named job with INGOT_CRON_SECRET as a bearer token, in both CloudEvents modes', T, async () => {
	const pg = await newPostgres();
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	const srv = await startServer({ DATABASE_URL: pg.url, INGOT_CRON_SECRET: 'cron-s3cret', INGOT_ACCESS_LOG: '1' });
	const post = (headers, body) => curlResponse(srv.port, '/_ingot/cron',
		['-X', 'POST', ...headers.flatMap((h) => ['-H', h]), '--data-binary', body]);
	const binary = ['ce-specversion: 1.0', 'ce-type: dev.knative.sources.ping', 'ce-source: /apis/v1/namespaces/x/pingsources/svc-heartbeat',
		'ce-id: 1', 'Content-Type: application/json'];
	const bearer = 'Authorization: Bearer cron-s3cret';
	try {
		await waitReady(srv);
		// Refused without the secret, or with another: nothing runs.
		assert.equal((await post(binary, '{"job":"heartbeat"}')).status, 401);
		const wrong = await post([...binary, 'Authorization: Bearer cron-s3creT'], '{"job":"heartbeat"}');
		assert.equal(wrong.status, 401);
		assert.equal(wrong.headers['www-authenticate'], 'Bearer');
		assert.equal((await curlResponse(srv.port, '/_ingot/cron', ['-H', bearer])).status, 405);
		assert.equal((await heartbeat(srv)).ticks, 0);
		// Binary mode: the body is the data.
		const r1 = await post([...binary, bearer], '{"job":"heartbeat"}');
		assert.equal(r1.status, 204, r1.text);
		assert.deepEqual(await heartbeat(srv), { ticks: 1, pids: [srv.pid] });
		// Structured mode: the envelope's data.
		const r2 = await post(['Content-Type: application/cloudevents+json; charset=utf-8', bearer], JSON.stringify({
			specversion: '1.0', type: 'dev.knative.sources.ping', source: '/x', id: '2', data: { job: 'heartbeat' } }));
		assert.equal(r2.status, 204, r2.text);
		assert.equal((await heartbeat(srv)).ticks, 2);
		// A job the document does not have, and data without a job.
		assert.equal((await post([...binary, bearer], '{"job":"nightly"}')).status, 404);
		assert.equal((await post([...binary, bearer], '{"name":"heartbeat"}')).status, 400);
		assert.equal((await heartbeat(srv)).ticks, 2);
		// The run went through the engine: the access log has the job's request.
		const line = await within(10000, srv.waitLog((l) => l.msg === 'request' && l.client === 'cron' && l.route === '/cron/heartbeat'), 'the job\'s access log line');
		assert.equal(line.status, 204, JSON.stringify(line));
	} finally {
		await srv.stop();
	}
});

test('without a database the scheduler runs each tick itself, unclaimed, after one warning', T, async () => {
	const srv = await startServer({ HEARTBEAT_CRON: '1', INGOT_ADMIN_PORT: '0' });
	try {
		await within(10000, srv.waitLog((l) => l.level === 'warn' && /^cron: no database configured/.test(l.msg)),
			'the warning');
		// The heartbeat's own operation needs the database: its run is a 503, logged as a failed job.
		const failed = await within(20000, srv.waitLog((l) => l.msg === 'cron job failed'), 'a tick run');
		assert.equal(failed.job, 'heartbeat');
		assert.equal(failed.status, 503);
		const s = await scrapeSamples(await adminAddr(srv));
		assert.ok(s.get('ingot_cron_runs_total{job="heartbeat",result="failed"}') >= 1);
		assert.equal(s.get('ingot_cron_runs_total{job="heartbeat",result="elsewhere"}'), 0);
		assert.equal(srv.logs.filter((l) => /^cron: no database configured/.test(l.msg ?? '')).length, 1);
	} finally {
		await srv.stop();
	}
});
