// Pub/Sub on PostgreSQL through the reference service (x-ingot-topics:
// post-created, x-ingot-subscriptions: count-words): `--migrate` creates
// the runtime's tables beside the app's; POST /posts publishes the post's
// id and body, stored as one message with one delivery per subscription,
// read back with psql; the service's own consumer claims the delivery,
// runs countWords and marks it done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curl, curlResponse } from './lib.mjs';
import { dbServiceForSuite, migrate, pollUntil as until } from './dbservice.mjs';

const db = dbServiceForSuite({ INGOT_ADMIN_PORT: '0' });
const T = { timeout: 60000 };

function post(body) {
	return curlResponse(db.srv.port, '/posts',
		['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(body)]);
}

test('--migrate creates ingot_pubsub.messages and .deliveries; a second run changes nothing', T, async () => {
	const tables = await db.pg.psql(
		"SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'ingot_pubsub';");
	assert.equal(tables.trim(), 'deliveries,messages');
	const again = await migrate(db.pg.url);
	assert.equal(again.code, 0, again.stdout + again.stderr);
	assert.equal(again.logs.at(-1).applied, 0);
});

test('POST /posts publishes post-created: one message (id, body), one delivery for count-words, handled once', T, async () => {
	const body = '  the quick\tbrown\n fox  ';
	const res = await post({ title: 'published', body, likes: 0 });
	assert.equal(res.status, 201, res.text);
	const id = res.json().id;
	const handled = async () => (await db.pg.psql(
		`SELECT m.topic || '|' || (m.payload->>'id') || '|' || (m.payload->>'body') || '|' || d.subscription || '|' || d.state || '|' || d.attempts
		 FROM ingot_pubsub.messages m JOIN ingot_pubsub.deliveries d ON d.message_id = m.id
		 WHERE (m.payload->>'id')::bigint = ${id} AND d.state = 'done';`)).trim();
	const rows = await until(handled, 'the delivery done');
	assert.equal(rows, `post-created|${id}|${body}|count-words|done|1`);
});

test('a post refused by the database (title taken) publishes nothing', T, async () => {
	const first = await post({ title: 'taken', body: 'one', likes: 0 });
	assert.equal(first.status, 201, first.text);
	const before = (await db.pg.psql('SELECT count(*) FROM ingot_pubsub.messages;')).trim();
	const second = await post({ title: 'taken', body: 'two', likes: 0 });
	assert.equal(second.status, 409, second.text);
	assert.equal((await db.pg.psql('SELECT count(*) FROM ingot_pubsub.messages;')).trim(), before);
});

test('transactional publish: a post whose COMMIT fails leaves neither row nor message; the next one commits both', T, async () => {
	// A deferred constraint trigger fails the COMMIT of one title only,
	// after the INSERT and the publish have both succeeded in the transaction.
	await db.pg.psql(`CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.title = 'refused at commit' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$;
		CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON posts DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`, { user: 'ingot' });
	const count = async () => (await db.pg.psql(
		"SELECT count(*) FROM ingot_pubsub.messages WHERE topic = 'post-created';")).trim();
	const before = Number(await count());
	const refused = await post({ title: 'refused at commit', body: 'never published', likes: 0 });
	assert.equal(refused.status, 500, refused.text);
	assert.equal(Number(await count()), before);
	assert.equal((await db.pg.psql("SELECT count(*) FROM posts WHERE title = 'refused at commit';")).trim(), '0');
	assert.equal((await db.pg.psql(
		"SELECT count(*) FROM ingot_pubsub.messages WHERE payload->>'body' = 'never published';")).trim(), '0');

	const ok = await post({ title: 'committed', body: 'published once', likes: 0 });
	assert.equal(ok.status, 201, ok.text);
	assert.equal(Number(await count()), before + 1);
	assert.equal((await db.pg.psql(
		`SELECT count(*) FROM ingot_pubsub.messages WHERE (payload->>'id')::bigint = ${ok.json().id};`)).trim(), '1');
});

// ingot_pubsub_published_total{topic} from the admin listener's /metrics.
async function published(topic) {
	const l = await db.srv.waitLog((x) => x.msg === 'admin listening');
	const r = await curl([`http://${db.srv.host}:${l.port}/metrics`]);
	assert.equal(r.code, 0, r.stderr);
	const m = new RegExp(`^ingot_pubsub_published_total\\{topic="${topic}"\\} (\\d+)$`, 'm').exec(r.stdout.toString());
	assert.ok(m, `no series for ${topic}`);
	return Number(m[1]);
}

test('ingot_pubsub_published_total{topic} counts each stored message; a topic never published to reads 0', T, async () => {
	const before = await published('post-created');
	const res = await post({ title: 'counted', body: 'one more', likes: 0 });
	assert.equal(res.status, 201, res.text);
	assert.equal(await published('post-created'), before + 1);
	assert.equal(await published('post-created-dead'), 0);
});

test('GET /posts/{id}/stats answers 404 until count-words has handled the post, then its count', T, async () => {
	const stats = (id) => curlResponse(db.srv.port, `/posts/${id}/stats`);
	const missing = await stats(999999999);
	assert.equal(missing.status, 404, missing.text);
	assert.equal(missing.headers['content-type'], 'application/problem+json');
	const res = await post({ title: 'stats', body: ' three\tsmall\n words ', likes: 0 });
	assert.equal(res.status, 201, res.text);
	const id = res.json().id;
	const got = await until(async () => { const r = await stats(id); return r.status === 200 && r; }, 'the stats');
	assert.deepEqual(got.json(), { id, words: 3 });
});

test('a message carries the publisher\'s trace: attributes.traceparent continues the request\'s traceparent', T, async () => {
	const trace = '4bf92f3577b34da6a3ce929d0e0e4736', parent = '00f067aa0ba902b7';
	const res = await curlResponse(db.srv.port, '/posts', ['-X', 'POST', '-H', 'Content-Type: application/json',
		'-H', `traceparent: 00-${trace}-${parent}-01`,
		'--data-binary', JSON.stringify({ title: 'traced', body: 'b', likes: 0 })]);
	assert.equal(res.status, 201, res.text);
	const tp = (await db.pg.psql(`SELECT attributes->>'traceparent' FROM ingot_pubsub.messages
		WHERE (payload->>'id')::bigint = ${res.json().id};`)).trim();
	const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(tp);
	assert.ok(m, tp);
	assert.equal(m[1], trace);
	assert.notEqual(m[2], parent, 'a span of its own, a child of the request\'s');
});

test('ingot_pubsub_delivered_total{subscription,result} and the handling-duration histogram count each handled delivery', T, async () => {
	const l = await db.srv.waitLog((x) => x.msg === 'admin listening');
	const scrape = async () => {
		const r = await curl([`http://${db.srv.host}:${l.port}/metrics`]);
		assert.equal(r.code, 0, r.stderr);
		const text = r.stdout.toString();
		const num = (re) => Number(re.exec(text)?.[1] ?? NaN);
		return {
			ack: num(/^ingot_pubsub_delivered_total\{subscription="count-words",result="ack"\} (\d+)$/m),
			dead: num(/^ingot_pubsub_delivered_total\{subscription="count-words",result="dead"\} (\d+)$/m),
			count: num(/^ingot_pubsub_handling_duration_seconds_count\{subscription="count-words"\} (\d+)$/m),
		};
	};
	// the earlier tests' deliveries handled and counted first
	await until(async () => (await db.pg.psql("SELECT count(*) FROM ingot_pubsub.deliveries WHERE state = 'ready';")).trim() === '0',
		'no delivery pending');
	// (the histogram observes at the verdict, the counter once it is stored)
	const before = await until(async () => { const s = await scrape(); return s.count === s.ack + s.dead && s; }, 'the counts settled');
	assert.equal(before.dead, 0);
	const res = await post({ title: 'metered', body: 'one two', likes: 0 });
	assert.equal(res.status, 201, res.text);
	const after = await until(async () => { const s = await scrape(); return s.ack === before.ack + 1 && s; }, 'the ack counted');
	assert.equal(after.count, before.count + 1);
});
