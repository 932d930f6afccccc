// Pub/Sub on NATS JetStream (INGOT_PUBSUB_URL=nats://...) against a real
// nats-server, through the pubsub app (tests/apps/pubsub, built by
// pubsublib.mjs), whose handlers record each run in
// PostgreSQL's runs table: three processes share each message once per
// subscription and two subscriptions each get every message; a failing
// handler is retried, then dead-lettered after maxAttempts (a message on
// the dead-letter topic's stream); a process killed mid-handler leaves the
// message to be redelivered after the ack deadline; a broker stopped
// mid-run makes publish answer an error, and after its restart nothing
// acknowledged is lost and delivery resumes; messages with an ordering key
// are handled one at a time per key, in publish order. And cron's ticks claimed in
// NATS's KV bucket: three replicas of the reference service run each tick
// once; a publish inside a transaction (the reference service's POST
// /posts) is refused. And a three-node cluster (streams replicated on all three) loses
// no acknowledged message when a node is killed mid-run. And a publish from
// a Lambda function (the Runtime API emulator): its first invocation waits
// for the function's client, the message is stored and handled by the
// long-lived process, never by the function; with the broker away it
// answers an error, and after the restart the function publishes again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ROOT, ServerProcess, startServer, curlResponse, adminAddr, scrapeSamples } from './lib.mjs';
import { RuntimeApi } from './lambda_emulator.mjs';
import { migrate, waitReady, pollUntil as until } from './dbservice.mjs';
import { pubsubSuite, publishEvent, publish, publishInterleaved, assertKeyOrder, q, publishSpread, assertEachOnce,
	assertBackoffGaps, killMidHandler } from './pubsublib.mjs';

// The app, built once; cluster(n): a broker, a migrated database (the
// runs table) and n processes of the app.
const { T, newPostgres, nats, migrated, start, cluster } = pubsubSuite('ingot-pubsub-nats-', { nats: true });

test('three processes: each message handled once per subscription, and both subscriptions of a topic get every message', T, async () => {
	const { pg, procs } = await cluster(3);
	try {
		const N = 30;
		await publishSpread(procs, N);
		await until(async () => await q(pg, 'SELECT count(DISTINCT (sub, n)) FROM runs;') === String(2 * N),
			'every message handled by both subscriptions');
		await assertEachOnce(pg, procs, N);
	} finally {
		await Promise.all(procs.map((p) => p.stop()));
	}
});

test('ordering key: three processes handle each key\'s messages one at a time, in publish order, a retry before the next (a consumer per partition)', T, async () => {
	const { pg, broker, procs } = await cluster(3);
	try {
		const keys = ['a', 'b', 'c', 'd'], PER_KEY = 12;
		await publishInterleaved(procs, keys, PER_KEY);
		// every message, the ones that fail once (seq % 4 == 1) twice
		const runs = keys.length * (PER_KEY + PER_KEY / 4);
		await until(async () => await q(pg, 'SELECT count(*) FROM ordered_runs;') === String(runs), 'every ordered message handled');
		// in publish order, a retry before the next, one at a time
		await assertKeyOrder(pg, procs, keys, PER_KEY);
		// the stream takes the partitions' subjects; each partition's
		// durable consumer is filtered to its own, one message in flight
		const st = await broker.stream('pubsub-ordered');
		assert.equal(st?.messages, keys.length * PER_KEY);
		for (const k of [0, 15]) {
			const c = await broker.consumer('pubsub-ordered', `in-order-${k}`);
			assert.deepEqual({ filter: c?.filter_subject, pending: c?.max_ack_pending, ack: c?.ack_policy },
				{ filter: `ingot.pubsub.ordered.${k}`, pending: 1, ack: 'explicit' }, `partition ${k}'s consumer`);
		}
		assert.equal(await broker.consumer('pubsub-ordered', 'in-order'), null, 'no consumer on the whole stream');
	} finally {
		await Promise.all(procs.map((p) => p.stop()));
	}
});

test('a handler that always fails: retried, then dead-lettered after maxAttempts (3) on the dead-letter topic\'s stream', T, async () => {
	const { pg, broker, procs } = await cluster(1);
	try {
		await publish(procs[0], 'failing', 7);
		await until(async () => (await broker.stream('pubsub-failing-dead'))?.messages === 1, 'the dead letter stored');
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE sub = 'flaky' AND n = 7;"), '3', 'maxAttempts runs');
		// The dead letter: the message as the handler got it (copied from
		// the delivery's own buffer), why and where it died in its headers.
		const letter = await broker.message('pubsub-failing-dead', 1);
		assert.deepEqual(JSON.parse(letter.data.toString('utf8')), { n: 7 });
		assert.match(letter.headers, /\r\nreason: max attempts reached\r\n/);
		assert.match(letter.headers, /\r\nsubscription: flaky\r\n/);
		assert.match(letter.headers, /\r\nattempts: 3\r\n/);
		// the subscription's durable consumer: explicit acks, AckWait the
		// ack deadline (30 s by default), one delivery past maxAttempts kept
		// for dead-lettering
		const c = await broker.consumer('pubsub-failing', 'flaky');
		assert.deepEqual({ durable: c?.durable_name, ack: c?.ack_policy, wait: c?.ack_wait, max: c?.max_deliver },
			{ durable: 'flaky', ack: 'explicit', wait: 30e9, max: 4 });
		await assertBackoffGaps(pg);
		const dead = procs[0].logs.find((l) => l.msg === 'pub/sub delivery dead');
		assert.ok(dead, 'the dead delivery logged');
		assert.equal(dead.subscription, 'flaky');
		assert.equal(dead.attempts, 3);
		assert.equal(dead.reason, 'max attempts reached');
		// the metrics PostgreSQL's consumers keep, from NATS's
		const admin = await adminAddr(procs[0]);
		// counted once the dead letter's PubAck is in, just after the stream has it
		const samples = await until(async () => {
			const m = await scrapeSamples(admin);
			return m.get('ingot_pubsub_delivered_total{subscription="flaky",result="dead"}') === 1 && m;
		}, 'the dead delivery counted');
		assert.equal(samples.get('ingot_pubsub_delivered_total{subscription="flaky",result="retry"}'), 2);
		assert.equal(samples.get('ingot_pubsub_handling_duration_seconds_count{subscription="flaky"}'), 3);
		assert.equal(samples.get('ingot_pubsub_published_total{topic="failing"}'), 1);
	} finally {
		await procs[0].stop();
	}
});

test('a process killed (SIGKILL) mid-handler: the message is redelivered after the ack deadline and handled once more', T, async () => {
	const c = await cluster(1);
	const { pg, procs } = c;
	let next = null;
	try {
		next = await killMidHandler(c, start);
		await until(async () => await q(pg, "SELECT count(*) FROM runs WHERE sub = 'slow';") === '2', 'the redelivery');
		assert.equal(await q(pg, "SELECT count(DISTINCT pid) FROM runs WHERE sub = 'slow';"), '2');
	} finally {
		await Promise.all([procs[0].stop(), next?.stop()]);
	}
});

test('the broker stopped mid-run: publish answers an error; after its restart nothing acknowledged is lost and delivery resumes', T, async () => {
	const { pg, broker, procs } = await cluster(1);
	let again = null;
	try {
		for (let i = 0; i < 5; i++)
			await publish(procs[0], 'events', i);
		await broker.stop();
		const down = await publishEvent(procs[0], 'events', 100);
		assert.equal(down.status, 500, 'the publish failed, not lost silently');
		// not ready while the broker is away
		await until(async () => (await curlResponse(procs[0].port, '/readyz')).status === 503, '/readyz 503');
		again = await nats.start({ port: broker.port, dir: broker.dir });
		await waitReady(procs[0]);
		for (let i = 5; i < 10; i++)
			await publish(procs[0], 'events', i);
		await until(async () => await q(pg, "SELECT count(DISTINCT n) FROM runs WHERE sub = 'first';") === '10',
			'every acknowledged message handled');
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE n = 100;"), '0', 'the failed publish was not delivered');
		// an ordered topic's partition consumers pull again too, in order
		await publishInterleaved(procs, ['p', 'q'], 4);
		await until(async () => await q(pg, 'SELECT count(*) FROM ordered_runs;') === '10', 'the ordered messages handled');
		await assertKeyOrder(pg, procs, ['p', 'q'], 4);
	} finally {
		await procs[0].stop();
		await again?.stop();
	}
});

test('cron on NATS: three replicas of the reference service run each heartbeat tick once, claimed in the KV bucket', { timeout: 120000 }, async () => {
	const pg = await newPostgres();
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	const broker = await nats.start({ monitor: true });
	const env = { DATABASE_URL: pg.url, INGOT_PUBSUB_URL: broker.url, HEARTBEAT_CRON: '1', INGOT_ADMIN_PORT: '-1' };
	const replicas = await Promise.all([0, 1, 2].map(() => startServer(env)));
	try {
		await Promise.all(replicas.map((srv) => waitReady(srv)));
		await until(async () => {
			const r = await curlResponse(replicas[0].port, '/cron/heartbeat');
			return r.status === 200 && r.json().ticks >= 10;
		}, 'ten heartbeat ticks');
	} finally {
		await Promise.all(replicas.map((srv) => srv.stop()));
	}
	const [rows, ticks] = (await q(pg, 'SELECT count(*), count(DISTINCT tick) FROM heartbeat;')).split('|').map(Number);
	assert.ok(rows >= 10, `rows ${rows}`);
	assert.equal(rows, ticks, 'a tick ran twice');
	assert.equal(await q(pg, 'SELECT count(*) FROM ingot_cron_claims;'), '0', 'no claim in PostgreSQL');
	// a key per claimed tick: at least one per run tick
	const kv = await broker.stream('KV_ingot-cron');
	assert.ok(kv && kv.messages >= rows, `the bucket's keys (${kv?.messages}) cover the ${rows} ticks run`);
});

test('a three-node JetStream cluster (INGOT_PUBSUB_URL lists its servers), the streams on all three: one node killed (SIGKILL) mid-run, no acknowledged message lost', T, async () => {
	const { bin, pg } = await migrated();
	const cluster3 = await nats.startCluster(3, { monitor: true });
	const srv = await startServer({ DATABASE_URL: pg.url, INGOT_PUBSUB_URL: cluster3.url,
		INGOT_THREADS: '1', INGOT_ADMIN_PORT: '-1' }, { command: bin });
	const acked = new Set();
	// Each message published until the cluster acknowledges it (a publish
	// may fail while the cluster elects its leaders, or after the kill).
	const publishAcked = async (n) => {
		await until(async () => (await publishEvent(srv, 'events', n)).status === 204, `message ${n} acknowledged`);
		acked.add(n);
	};
	try {
		await waitReady(srv);
		for (let n = 0; n < 10; n++)
			await publishAcked(n);
		assert.equal((await cluster3.nodes[1].stream('pubsub-events'))?.replicas, 3, 'the topic\'s stream on the three nodes');
		// the first server of the list: the one the service is connected to
		await cluster3.nodes[0].stop('SIGKILL');
		for (let n = 10; n < 20; n++)
			await publishAcked(n);
		await until(async () => await q(pg, "SELECT count(DISTINCT n) FROM runs WHERE sub = 'first';") === String(acked.size),
			'every acknowledged message handled');
		const handled = new Set((await q(pg, "SELECT DISTINCT n FROM runs WHERE sub = 'first';")).split('\n').map(Number));
		for (const n of acked)
			assert.ok(handled.has(n), `message ${n} handled`);
	} finally {
		await srv.stop();
	}
});

test('a publish inside a transaction with the NATS provider is refused: the reference service\'s POST /posts answers 503 and stores nothing', { timeout: 120000 }, async () => {
	const pg = await newPostgres();
	const m = await migrate(pg.url);
	assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	const broker = await nats.start({ monitor: true });
	const srv = await startServer({ DATABASE_URL: pg.url, INGOT_PUBSUB_URL: broker.url, INGOT_ADMIN_PORT: '-1' });
	try {
		await waitReady(srv);
		// the topic's stream is made as the client connects
		await until(async () => (await broker.stream('pubsub-post-created')) !== null, 'the stream made');
		const r = await curlResponse(srv.port, '/posts', ['-X', 'POST', '-H', 'Content-Type: application/json',
			'--data-binary', JSON.stringify({ title: 'in a transaction', body: 'one two three', likes: 0 })]);
		assert.equal(r.status, 503, r.text);
		assert.equal(await q(pg, 'SELECT count(*) FROM posts;'), '0', 'the transaction rolled back');
		assert.equal((await broker.stream('pubsub-post-created')).messages, 0, 'nothing sent');
	} finally {
		await srv.stop();
	}
});

// API Gateway's HTTP API event (AWS's documented shape, lambda_events/)
// for POST /publish/<topic> with the Event {n}.
function publishInvocation(topic, n) {
	const ev = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'integration', 'lambda_events', 'apigw-v2.json'), 'utf8'));
	ev.requestContext.http.method = 'POST';
	ev.requestContext.http.path = ev.rawPath = `/publish/${topic}`;
	ev.rawQueryString = '';
	ev.queryStringParameters = {};
	ev.headers = { 'content-type': 'application/json' };
	delete ev.cookies;
	ev.isBase64Encoded = false;
	ev.body = JSON.stringify({ n });
	return ev;
}

test('a publish from a Lambda function on NATS: stored once the function\'s client is up, handled by the long-lived process alone; an error while the broker is away, stored again after its restart', T, async () => {
	const { bin, pg, broker, procs } = await cluster(1);
	const api = new RuntimeApi();
	await api.start();
	let fn = null, again = null;
	try {
		fn = new ServerProcess(spawn(bin, [], {
			env: { PATH: process.env.PATH, AWS_LAMBDA_RUNTIME_API: api.address, DATABASE_URL: pg.url,
				INGOT_PUBSUB_URL: broker.url },
			stdio: ['ignore', 'pipe', 'pipe'],
		}));
		await fn.waitLog((l) => l.msg === 'lambda runtime');
		// At once: the publish waits for the client's connect and streams.
		const invoke = async (n) => (await api.invoke(publishInvocation('events', n), { requestId: randomUUID() })).body;
		const first = await invoke(0);
		assert.equal(first.statusCode, 204, JSON.stringify(first));
		await until(async () => await q(pg, "SELECT count(*) FROM runs WHERE n = 0;") === '2', 'both subscriptions ran it');
		// Its id in the stream's duplicate window (a send that lost its
		// connection before the PubAck goes again): its trace and span.
		const stored = await broker.message('pubsub-events', 1);
		const tp = /\r\ntraceparent: 00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]\r\n/.exec(stored.headers);
		assert.ok(tp, stored.headers);
		assert.match(stored.headers, new RegExp(`\r\nNats-Msg-Id: ${tp[1]}-${tp[2]}\r\n`));
		await broker.stop();
		const down = await invoke(1);
		assert.equal(down.statusCode, 500, `the publish failed, not lost silently: ${JSON.stringify(down)}`);
		again = await nats.start({ port: broker.port, dir: broker.dir });
		// The function's client reconnects with backoff: a publish waits 5 s
		// at most for it, so one may still answer 500 (IG_PUBSUB_PROVIDER:
		// not stored, or not known to be); each try publishes an n of its own.
		let up, n = 2;
		for (; n < 22; n++) {
			up = await invoke(n);
			if (up.statusCode !== 500) break;
		}
		assert.equal(up.statusCode, 204, JSON.stringify(up));
		await until(async () => await q(pg, `SELECT count(*) FROM runs WHERE n = ${n};`) === '2', 'the message after the restart handled');
		// Once each per subscription, by the long-lived process (no consumer
		// runs in the function); the publish with the broker away sent nothing.
		for (const sub of ['first', 'second'])
			assert.equal(await q(pg, `SELECT count(*) - count(DISTINCT n) FROM runs WHERE sub = '${sub}';`), '0', `${sub}: no duplicate`);
		assert.equal(await q(pg, 'SELECT count(*) FROM runs WHERE n IN (0, 1);'), '2');
		assert.equal(await q(pg, 'SELECT count(*) FROM runs WHERE n = 1;'), '0');
		assert.equal(await q(pg, `SELECT count(*) FROM runs WHERE pid <> ${procs[0].pid};`), '0');
		assert.equal(fn.exit, null, 'the function still runs');
	} finally {
		fn?.kill();
		await api.stop().catch(() => {});
		await procs[0].stop();
		await again?.stop();
	}
});

test('a topic whose stream cannot be made (its subject taken by another stream) fails its publishes with an error and holds none of the other topics\'', T, async () => {
	const { bin, pg } = await migrated();
	const broker = await nats.start({ monitor: true });
	// Another stream takes the slow topic's subject first: JetStream
	// refuses pubsub-slow (subjects overlap) for as long as it is there.
	const made = await broker.api('$JS.API.STREAM.CREATE.squatter', { name: 'squatter', subjects: ['ingot.pubsub.slow'], storage: 'memory' });
	assert.equal(made.error, undefined, JSON.stringify(made));
	const srv = await start(bin, pg, { INGOT_PUBSUB_URL: broker.url, INGOT_ADMIN_PORT: '-1' });
	try {
		await publish(srv, 'events', 7);
		await until(async () => await q(pg, 'SELECT count(*) FROM runs WHERE n = 7;') === '2', 'both subscriptions ran it');
		const slow = await publishEvent(srv, 'slow', 8);
		assert.equal(slow.status, 500, slow.text);
		await srv.waitLog((l) => l.msg === 'publish failed' && l.topic === 'slow' && l.why === 'its stream is not made');
		assert.equal((await broker.stream('squatter')).messages, 0, 'nothing sent');
		await publish(srv, 'events', 9);
	} finally {
		await srv.stop();
		await broker.stop();
	}
});
