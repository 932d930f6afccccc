// Pub/Sub on PostgreSQL through the reference service (x-ingot-topics:
// post-created, x-ingot-subscriptions: count-words): `--migrate` creates
// the runtime's tables beside the app's; POST /posts publishes the post's
// id and body, stored as one message with one delivery per subscription,
// read back with psql.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curlResponse } from './lib.mjs';
import { dbServiceForSuite, migrate } from './dbservice.mjs';

const db = dbServiceForSuite();
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

test('POST /posts publishes post-created: one message (id, body), one ready delivery for count-words', T, async () => {
	const body = '  the quick\tbrown\n fox  ';
	const res = await post({ title: 'published', body, likes: 0 });
	assert.equal(res.status, 201, res.text);
	const id = res.json().id;
	const rows = (await db.pg.psql(
		`SELECT m.topic || '|' || (m.payload->>'id') || '|' || (m.payload->>'body') || '|' || d.subscription || '|' || d.state || '|' || d.attempts
		 FROM ingot_pubsub.messages m JOIN ingot_pubsub.deliveries d ON d.message_id = m.id
		 WHERE (m.payload->>'id')::bigint = ${id};`)).trim();
	assert.equal(rows, `post-created|${id}|${body}|count-words|ready|0`);
});

test('a post refused by the database (title taken) publishes nothing', T, async () => {
	const first = await post({ title: 'taken', body: 'one', likes: 0 });
	assert.equal(first.status, 201, first.text);
	const before = (await db.pg.psql('SELECT count(*) FROM ingot_pubsub.messages;')).trim();
	const second = await post({ title: 'taken', body: 'two', likes: 0 });
	assert.equal(second.status, 409, second.text);
	assert.equal((await db.pg.psql('SELECT count(*) FROM ingot_pubsub.messages;')).trim(), before);
});
