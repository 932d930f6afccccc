// SQS through Lambda (net/pubsub/sqs.c), through the Runtime API emulator
// and the verdicts app (tests/apps/verdicts, built out of the tree), whose
// handlers log "job ran" and return the verdict each message names: a
// batch's failed records come back as batchItemFailures, exactly those;
// SNS-wrapped messages are unwrapped; a FIFO queue's group stops at its
// first failure; a queue that maps to no subscription fails its records;
// records that are not SQS's are an invalid event; INGOT_SQS_SUBSCRIPTIONS
// is checked against the document at the start.
// The events are AWS's documented shapes (lambda_events/sqs.json,
// sqs-fifo.json, sns-notification.json).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ROOT, ServerProcess, cleanup } from './lib.mjs';
import { buildTestApp } from './testapp.mjs';
import { RuntimeApi } from './lambda_emulator.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-sqs-'));
const procs = new Set();
const apis = new Set();
after(async () => {
	for (const p of procs) p.kill();
	for (const a of apis) await a.stop().catch(() => {});
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const T = { timeout: 300000, ...SKIP };
const FIXTURES = path.join(ROOT, 'tests', 'integration', 'lambda_events');
const fixture = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
const MAPPING = 'my-queue=work,fifo.fifo=work,audits=audit';

const verdictsApp = () => buildTestApp('verdicts', tmp);

// The sanitizers' settings (tests/run sends their reports to files).
const SANITIZER_ENV = Object.fromEntries(['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']
	.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));

function spawnRuntime(bin, api, env) {
	const proc = spawn(bin, [], {
		env: { PATH: process.env.PATH, ...SANITIZER_ENV, AWS_LAMBDA_RUNTIME_API: api.address, ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const srv = new ServerProcess(proc);
	procs.add(srv);
	srv.exited.then(() => procs.delete(srv));
	return srv;
}

async function runtime(env = { INGOT_SQS_SUBSCRIPTIONS: MAPPING }) {
	const api = new RuntimeApi();
	await api.start();
	apis.add(api);
	const srv = spawnRuntime(await verdictsApp(), api, env);
	await srv.waitLog((l) => l.msg === 'lambda runtime');
	return { api, srv };
}

// A record of the documented event, its own id, body and queue.
function record(base, { body, queue = 'my-queue', group }) {
	const r = structuredClone(base);
	r.messageId = randomUUID();
	r.body = typeof body === 'string' ? body : JSON.stringify(body);
	r.eventSourceARN = `arn:aws:sqs:us-east-2:123456789012:${queue}`;
	if (group !== undefined)
		r.attributes.MessageGroupId = group;
	return r;
}

// The log lines since mark, once they are all in: the process's lines
// come on a pipe, not with the answer, so a sentinel batch follows and its
// run's line is waited for (a process's lines are in order).
async function logsSince(api, srv, mark) {
	const sentinel = record(fixture('sqs.json').Records[0], { body: { n: 999999, verdict: 'ack' } });
	assert.deepEqual((await api.invoke({ Records: [sentinel] })).body, { batchItemFailures: [] });
	const end = await srv.waitLog((l) => l.msg === 'job ran' && l.request_id === sentinel.messageId, mark);
	return srv.logs.slice(mark, srv.logs.indexOf(end));
}
const ran = (logs) => logs.filter((l) => l.msg === 'job ran');
const failures = (answer) => answer.body.batchItemFailures.map((f) => f.itemIdentifier);

test('a batch of 10 with 2 that fail: batchItemFailures names exactly those 2; drops and acks are successes', T, async () => {
	const { api, srv } = await runtime();
	const base = fixture('sqs.json').Records[0];
	const verdicts = ['ack', 'ack', 'retry', 'drop', 'ack', 'ack', 'ack', 'retry', 'ack', 'drop'];
	const records = verdicts.map((verdict, n) => record(base, { body: { n, verdict } }));
	const mark = srv.logs.length;
	const answer = await api.invoke({ Records: records });
	assert.equal(answer.kind, 'response', JSON.stringify(answer.body));
	assert.deepEqual(failures(answer), [records[2].messageId, records[7].messageId]);
	// every record's handler ran once, in order, with its message id as the request id
	const runs = ran(await logsSince(api, srv, mark));
	assert.deepEqual(runs.map((l) => l.n), verdicts.map((_, n) => n));
	assert.deepEqual(runs.map((l) => l.request_id), records.map((r) => r.messageId));
	// each with the invocation's deadline (outbound calls end by it)
	assert.deepEqual(runs.map((l) => l.deadline), verdicts.map(() => 1));
	// a batch with no failure answers an empty list (the whole batch deleted)
	const ok = await api.invoke({ Records: [record(base, { body: { n: 1, verdict: 'ack' } })] });
	assert.deepEqual(ok.body, { batchItemFailures: [] });
});

test('a message that breaks the schema is a failure (SQS dead-letters it), logged with the reason; the handler never runs', T, async () => {
	const { api, srv } = await runtime();
	const base = fixture('sqs.json').Records[0];
	const records = [record(base, { body: { n: 1, verdict: 'maybe' } }), record(base, { body: 'Test message.' }),
		record(base, { body: { n: 2, verdict: 'ack' } })];
	const mark = srv.logs.length;
	const answer = await api.invoke({ Records: records });
	assert.deepEqual(failures(answer), [records[0].messageId, records[1].messageId]);
	assert.deepEqual(ran(await logsSince(api, srv, mark)).map((l) => l.n), [2]);
	const logged = (await logsSince(api, srv, mark)).filter((l) => l.msg === 'sqs record failed');
	assert.deepEqual(logged.map((l) => [l.message_id, l.subscription, l.reason]), [
		[records[0].messageId, 'work', "the message breaks the topic's schema"],
		[records[1].messageId, 'work', "the message breaks the topic's schema"],
	]);
});

test('SNS-wrapped: a record whose body is an SNS notification delivers its Message', T, async () => {
	const { api, srv } = await runtime();
	const base = fixture('sqs.json').Records[0];
	const wrap = (msg) => ({ ...fixture('sns-notification.json'), Message: JSON.stringify(msg) });
	const records = [record(base, { body: wrap({ n: 7, verdict: 'ack' }), queue: 'audits' }),
		record(base, { body: wrap({ n: 8, verdict: 'retry' }), queue: 'audits' })];
	const mark = srv.logs.length;
	const answer = await api.invoke({ Records: records });
	assert.deepEqual(failures(answer), [records[1].messageId]);
	assert.deepEqual(ran(await logsSince(api, srv, mark)).map((l) => [l.sub, l.n, l.verdict]), [['audit', 7, 'ack'], ['audit', 8, 'retry']]);
});

test('FIFO: after a group\'s first failure its later records fail without running; other groups go on', T, async () => {
	const { api, srv } = await runtime();
	const base = fixture('sqs-fifo.json').Records[0];
	const spec = [['a', 'ack'], ['a', 'retry'], ['b', 'ack'], ['a', 'ack'], ['b', 'ack'], ['a', 'drop']];
	const records = spec.map(([group, verdict], n) => record(base, { body: { n, verdict }, queue: 'fifo.fifo', group }));
	const mark = srv.logs.length;
	const answer = await api.invoke({ Records: records });
	assert.deepEqual(failures(answer), [records[1].messageId, records[3].messageId, records[5].messageId]);
	assert.deepEqual(ran(await logsSince(api, srv, mark)).map((l) => l.n), [0, 1, 2, 4]);
});

test('a queue that maps to no subscription: its records fail, logged, and the rest of the batch runs', T, async () => {
	const { api, srv } = await runtime();
	const base = fixture('sqs.json').Records[0];
	const records = [record(base, { body: { n: 1, verdict: 'ack' }, queue: 'elsewhere' }),
		record(base, { body: { n: 2, verdict: 'ack' } })];
	const mark = srv.logs.length;
	const answer = await api.invoke({ Records: records });
	assert.deepEqual(failures(answer), [records[0].messageId]);
	assert.deepEqual(ran(await logsSince(api, srv, mark)).map((l) => l.n), [2]);
	const logged = (await logsSince(api, srv, mark)).find((l) => l.msg === 'sqs record failed');
	assert.equal(logged.queue, 'elsewhere');
	assert.match(logged.reason, /maps to no subscription/);
	// the documented event as it is: its queue is not mapped without the setting
	const { api: bare } = await runtime({});
	const doc = fixture('sqs.json');
	const all = await bare.invoke(doc);
	assert.deepEqual(failures(all), doc.Records.map((r) => r.messageId));
});

test('records that are not all SQS messages (an S3 event\'s) are an invalid event, answered through /error', T, async () => {
	const { api, srv } = await runtime();
	const sqs = record(fixture('sqs.json').Records[0], { body: { n: 1, verdict: 'ack' } });
	const s3 = { eventVersion: '2.1', eventSource: 'aws:s3', awsRegion: 'us-east-2', eventName: 'ObjectCreated:Put',
		s3: { bucket: { name: 'my-bucket' }, object: { key: 'a.txt', size: 1 } } };
	const mark = srv.logs.length;
	const answer = await api.invoke({ Records: [sqs, s3] });
	assert.equal(answer.kind, 'error');
	assert.equal(answer.body.errorType, 'Runtime.InvalidEvent');
	assert.match(answer.body.errorMessage, /not all SQS messages/);
	assert.deepEqual(ran(await logsSince(api, srv, mark)), []);
});

test('INGOT_SQS_SUBSCRIPTIONS naming no subscription of the document stops the start: init/error and exit 2', T, async () => {
	for (const [value, why] of [['my-queue=nope', /declares no subscription "nope"/], ['my-queue', /is not queue=subscription/]]) {
		const api = new RuntimeApi();
		await api.start();
		apis.add(api);
		const srv = spawnRuntime(await verdictsApp(), api, { INGOT_SQS_SUBSCRIPTIONS: value });
		const err = await api.waitInitError();
		assert.match(err.body.errorMessage, why);
		assert.match(err.body.errorMessage, /INGOT_SQS_SUBSCRIPTIONS/);
		await srv.exited;
		assert.equal(srv.exit.code, 2);
	}
});
