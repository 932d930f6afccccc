// Pub/Sub's consumers on a real PostgreSQL (pglib), through the pubsub app
// (tests/apps/pubsub, built out of the tree), whose handlers insert a row
// into runs for every run: three processes share each message once per
// subscription and two subscriptions of a topic each get every message; a
// handler that always asks for a retry is retried with a backoff, then
// dead-lettered after maxAttempts with the attempts and the reason; a
// message that breaks the schema goes to the dead-letter topic at once; a
// process killed mid-handler leaves its delivery to be redelivered after
// the ack deadline; messages with an ordering key are handled one at a
// time per key, in publish order, retries included, across three
// processes; a subscription never runs more than its maxConcurrency
// handlers at once. Outcomes are polled for with bounded waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, curlResponse } from './lib.mjs';
import { waitReady, pollUntil as until } from './dbservice.mjs';
import { pubsubSuite, publish, publishEvent, publishInterleaved, assertKeyOrder, q, publishSpread, assertEachOnce,
	assertBackoffGaps, killMidHandler } from './pubsublib.mjs';

// The app, built once; cluster(n): a migrated database of its own and n
// processes of the app serving on it.
const { T, migrated, start, cluster } = pubsubSuite('ingot-pubsub-');

test('three processes: each message handled once per subscription, and both subscriptions of a topic get every message', T, async () => {
	const { pg, procs } = await cluster(3);
	try {
		const N = 30;
		await publishSpread(procs, N);
		await until(async () => await q(pg, "SELECT count(*) FROM ingot_pubsub.deliveries WHERE state <> 'done';") === '0',
			'every delivery done');
		await assertEachOnce(pg, procs, N);
		for (const sub of ['first', 'second'])
			assert.equal(await q(pg, `SELECT count(*) FROM ingot_pubsub.deliveries WHERE subscription = '${sub}' AND attempts = 1;`), `${N}`);
	} finally {
		await Promise.all(procs.map((p) => p.stop()));
	}
});

test('a handler that always fails: retried with a backoff, dead-lettered after maxAttempts (3) with the attempts and the reason', T, async () => {
	const { pg, procs } = await cluster(1);
	try {
		await publish(procs[0], 'failing', 7);
		const dead = await until(async () => await q(pg,
			"SELECT attempts || '|' || last_error FROM ingot_pubsub.deliveries WHERE subscription = 'flaky' AND state = 'dead';"),
		'the delivery dead');
		assert.equal(dead, '3|max attempts reached');
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE sub = 'flaky' AND n = 7;"), '3');
		await assertBackoffGaps(pg);
		assert.equal(await q(pg, `SELECT (payload->>'n') || '|' || (attributes->>'reason') || '|' || (attributes->>'subscription') || '|' || (attributes->>'attempts')
			FROM ingot_pubsub.messages WHERE topic = 'failing-dead';`), '7|max attempts reached|flaky|3');
	} finally {
		await procs[0].stop();
	}
});

test('a message that breaks the schema at the subscriber goes to the dead-letter topic with the reason; its handler never runs', T, async () => {
	const { pg, procs } = await cluster(1);
	try {
		// Written past the publisher's checks: n must be a non-negative integer.
		await pg.psql(`WITH m AS (INSERT INTO ingot_pubsub.messages (topic, payload) VALUES ('events', '{"n": -5}') RETURNING id)
			INSERT INTO ingot_pubsub.deliveries (message_id, subscription) SELECT id, 'first' FROM m;
			NOTIFY ingot_pubsub, 'events';`);
		const dead = await until(async () => await q(pg,
			"SELECT attempts || '|' || last_error FROM ingot_pubsub.deliveries WHERE subscription = 'first' AND state = 'dead';"),
		'the delivery dead');
		assert.equal(dead, "1|the message breaks the topic's schema");
		assert.equal(await q(pg, "SELECT attributes->>'reason' FROM ingot_pubsub.messages WHERE topic = 'events-dead';"),
			"the message breaks the topic's schema");
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE sub = 'first';"), '0');
	} finally {
		await procs[0].stop();
	}
});

test('PostgreSQL stopped mid-run: a publish answers an error; after its restart nothing acknowledged is lost and delivery resumes', T, async () => {
	const { pg, procs } = await cluster(1);
	try {
		for (let i = 0; i < 5; i++)
			await publish(procs[0], 'events', i);
		await pg.halt();
		const down = await publishEvent(procs[0], 'events', 100);
		assert.ok(down.status >= 500, `the publish failed, not lost silently (${down.status})`);
		await pg.resume();
		await waitReady(procs[0]);
		for (let i = 5; i < 10; i++)
			await publish(procs[0], 'events', i);
		await until(async () => await q(pg, "SELECT count(DISTINCT n) FROM runs WHERE sub = 'first';") === '10',
			'every acknowledged message handled');
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE n = 100;"), '0', 'the failed publish was not delivered');
		assert.equal(await q(pg, "SELECT count(*) FROM ingot_pubsub.messages WHERE payload->>'n' = '100';"), '0',
			'nor stored');
	} finally {
		await procs[0].stop();
	}
});

test('a process killed (SIGKILL) mid-handler: the delivery is redelivered after the ack deadline and handled once more', T, async () => {
	const c = await cluster(1);
	const { pg, procs } = c;
	let next = null;
	try {
		next = await killMidHandler(c, start);
		const done = await until(async () => await q(pg,
			"SELECT attempts FROM ingot_pubsub.deliveries WHERE subscription = 'slow' AND state = 'done';"), 'the redelivery done');
		assert.equal(done, '2');
		assert.equal(await q(pg, "SELECT count(*) || '|' || count(DISTINCT pid) FROM runs WHERE sub = 'slow';"), '2|2');
	} finally {
		await Promise.all([procs[0].stop(), next?.stop()]);
	}
});

test('SIGTERM while a delivery\'s handler waits: the drain waits for it until INGOT_GRACE_MS (1000), then cuts it (exit 3, a "request cut" line naming its handler); a process after it handles the message again', T, async () => {
	const { bin, pg } = await migrated();
	const srv = await start(bin, pg, { INGOT_GRACE_MS: '1000' });
	let next = null;
	try {
		await publish(srv, 'slow', 5);
		await until(async () => await q(pg, "SELECT count(*) FROM runs WHERE sub = 'slow';") === '1', 'the first run');
		srv.signal('SIGTERM');
		// A delivery the drain did not count would let the process stop at
		// once, with nothing cut.
		assert.deepEqual(await srv.exited, { code: 3, signal: null });
		const cut = srv.logs.filter((l) => l.msg === 'request cut');
		assert.equal(cut.length, 1, JSON.stringify(cut));
		assert.equal(cut[0].operation, 'onSlow');
		assert.equal(cut[0].method, 'POST');
		assert.equal(srv.logs.find((l) => l.msg === 'stopped: grace period over')?.cut, 1);
		next = await start(bin, pg);
		await until(async () => await q(pg,
			"SELECT attempts FROM ingot_pubsub.deliveries WHERE subscription = 'slow' AND state = 'done';"), 'the redelivery done');
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE sub = 'slow';"), '2');
	} finally {
		await Promise.all([srv.stop(), next?.stop()]);
	}
});

test('a message a day old whose deliveries are all settled is purged at a consumer\'s start; one with a dead delivery stays', T, async () => {
	const { bin, pg, procs } = await cluster(1);
	let next = null;
	try {
		await publish(procs[0], 'events', 41);
		await until(async () => await q(pg, "SELECT count(*) FROM ingot_pubsub.deliveries WHERE state = 'done';") === '2',
			'both deliveries done');
		await pg.psql(`WITH m AS (INSERT INTO ingot_pubsub.messages (topic, payload) VALUES ('events', '{"n": 42}') RETURNING id)
			INSERT INTO ingot_pubsub.deliveries (message_id, subscription, state) SELECT id, 'first', 'dead' FROM m;
			UPDATE ingot_pubsub.messages SET published_at = now() - interval '2 days';`);
		await procs[0].stop();
		next = await start(bin, pg);
		await until(async () => await q(pg, "SELECT count(*) FROM ingot_pubsub.messages WHERE payload->>'n' = '41';") === '0',
			'the settled message purged');
		assert.equal(await q(pg, "SELECT count(*) FROM ingot_pubsub.deliveries WHERE message_id IN (SELECT id FROM ingot_pubsub.messages WHERE payload->>'n' = '41');"), '0');
		assert.equal(await q(pg, "SELECT count(*) FROM ingot_pubsub.messages WHERE payload->>'n' = '42';"), '1');
	} finally {
		await Promise.all([procs[0].stop(), next?.stop()]);
	}
});

test('a delivery runs as a request of its own: its access-log line continues the publisher\'s trace; without the key the path is a 404', T, async () => {
	const { bin, pg } = await migrated();
	const srv = await startServer({ DATABASE_URL: pg.url, INGOT_THREADS: '1', INGOT_ADMIN_PORT: '-1', INGOT_ACCESS_LOG: '1' },
		{ command: bin });
	try {
		await waitReady(srv);
		const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
		const r = await curlResponse(srv.port, '/publish/events', ['-X', 'POST', '-H', 'Content-Type: application/json',
			'-H', `traceparent: 00-${trace}-00f067aa0ba902b7-01`, '--data-binary', JSON.stringify({ n: 3 })]);
		assert.equal(r.status, 204, r.text);
		// After the publish's own line: the deliveries', POSTs with no
		// operation's route (tasks of the consumer's: no router runs), answered 204.
		const lines = await until(async () => {
			const ls = srv.logs.filter((l) => l.msg === 'request' && l.method === 'POST' && l.route === '');
			return ls.length === 2 && ls;
		}, 'two deliveries\' access-log lines');
		for (const l of lines) {
			assert.equal(l.status, 204);
			assert.equal(l.trace_id, trace, 'the publisher\'s trace, continued');
		}
		assert.notEqual(lines[0].request_id, lines[1].request_id, 'a request id each');
		for (const key of [[], ['-H', 'Ingot-Pubsub-Key: 00000000000000000000000000000000']]) {
			const miss = await curlResponse(srv.port, '/_ingot/pubsub/first',
				['-X', 'POST', ...key, '-H', 'Content-Type: application/json', '--data-binary', '{"n":9}']);
			assert.equal(miss.status, 404, miss.text);
		}
		assert.equal(await q(pg, "SELECT count(*) FROM runs WHERE n = 9;"), '0');
	} finally {
		await srv.stop();
	}
});

test('ordering key: three processes handle each key\'s messages one at a time, in publish order, a retry before the next', T, async () => {
	const { pg, procs } = await cluster(3);
	try {
		const keys = ['a', 'b', 'c', 'd'], PER_KEY = 12;
		await publishInterleaved(procs, keys, PER_KEY);
		await until(async () => await q(pg,
			"SELECT count(*) FROM ingot_pubsub.deliveries WHERE subscription = 'in-order' AND state = 'done';") === String(keys.length * PER_KEY),
		'every ordered delivery done');
		assert.equal(await q(pg, "SELECT count(*) FROM ingot_pubsub.deliveries WHERE subscription = 'in-order' AND state <> 'done';"), '0');
		// the key's value was stored with each delivery
		assert.equal(await q(pg, "SELECT string_agg(DISTINCT ordering_key, ',' ORDER BY ordering_key) FROM ingot_pubsub.deliveries WHERE subscription = 'in-order';"),
			keys.join(','));
		// in publish order, a retry before the next, one at a time, shared
		// among the processes
		await assertKeyOrder(pg, procs, keys, PER_KEY);
	} finally {
		await Promise.all(procs.map((p) => p.stop()));
	}
});

test('a dead message releases its key: the next one of the key is handled', T, async () => {
	const { pg, procs } = await cluster(1);
	try {
		// Written past the publisher: seq -1 breaks the schema (dead at
		// once), and the next message of its key must still be handled.
		await pg.psql(`WITH m AS (INSERT INTO ingot_pubsub.messages (topic, payload) VALUES ('ordered', '{"key": "z", "seq": -1}') RETURNING id)
			INSERT INTO ingot_pubsub.deliveries (message_id, subscription, ordering_key) SELECT id, 'in-order', 'z' FROM m;`);
		await publish(procs[0], 'ordered', { key: 'z', seq: 0 });
		await until(async () => await q(pg,
			"SELECT string_agg(state, ',' ORDER BY message_id) FROM ingot_pubsub.deliveries WHERE subscription = 'in-order';") === 'dead,done',
		'the dead one, then the next of its key done');
		assert.equal(await q(pg, "SELECT string_agg(seq::text, ',' ORDER BY id) FROM ordered_runs WHERE key = 'z';"), '0');
	} finally {
		await procs[0].stop();
	}
});

test('maxConcurrency (2): a subscription\'s handlers never run more than 2 at once in a process, and do reach 2', T, async () => {
	const { bin, pg } = await migrated();
	// published first, by a process that does not consume, so the consumer
	// finds them all waiting
	const publisher = await start(bin, pg, { INGOT_PUBSUB_CONSUME: 'false' });
	let consumer = null;
	try {
		const N = 8;
		for (let n = 0; n < N; n++)
			await publish(publisher, 'limited', n);
		assert.equal(await q(pg, "SELECT count(*) FROM ingot_pubsub.deliveries WHERE subscription = 'limited' AND attempts = 0;"), String(N));
		consumer = await start(bin, pg);
		await until(async () => await q(pg,
			"SELECT count(*) FROM ingot_pubsub.deliveries WHERE subscription = 'limited' AND state = 'done';") === String(N),
		'every limited delivery done');
		assert.equal(await q(pg, "SELECT count(*) || '|' || count(DISTINCT seq) || '|' || max(inflight) FROM ordered_runs WHERE key = 'limited';"),
			`${N}|${N}|2`);
	} finally {
		await Promise.all([publisher.stop(), consumer?.stop()]);
	}
});

test('the consumer LISTENs on ingot_pubsub (a NOTIFY wakes it; the poll is the fallback)', T, async () => {
	const { pg, procs } = await cluster(1);
	try {
		// the listening connection's last statement, as the server shows it
		const n = await until(async () => {
			const c = await q(pg, `SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN "ingot_pubsub"';`);
			return c !== '0' && c;
		}, 'a backend that ran LISTEN "ingot_pubsub"');
		assert.equal(n, '1');
	} finally {
		await procs[0].stop();
	}
});
