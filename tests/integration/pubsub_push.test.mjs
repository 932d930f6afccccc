// Push delivery (net/pubsub/push.c): POST /_ingot/push/<subscription>
// over HTTP, through the verdicts app (tests/apps/verdicts, built out of
// the tree), whose handlers log "job ran" and return the verdict each
// message names: CloudEvents in the binary and the structured mode and GCP
// Pub/Sub push's wrapper are delivered and acked (204), a drop is 202, a
// retry 503 with Retry-After, a message that breaks the schema 422; the
// event's traceparent continues the trace; without the bearer secret, or
// with another, 401 and the handler does not run; without
// INGOT_PUSH_SECRET the path is the router's 404. Where the document has a
// bearer JWT scheme (the reference service's) and a key set is configured,
// the door's JWT is taken in place of the secret.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID, randomBytes } from 'node:crypto';
import * as jose from 'jose';
import { BIN, startServer, cleanup, hostFor, adminAddr, scrapeSamples } from './lib.mjs';
import { buildTestApp } from './testapp.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-push-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const T = { timeout: 300000, ...SKIP };
const SECRET = randomBytes(24).toString('hex');

let srv;
before(async () => {
	if (SKIP.skip)
		return;
	srv = await startServer({ INGOT_PUSH_SECRET: SECRET, INGOT_ADMIN_PORT: '-1' },
		{ command: await buildTestApp('verdicts', tmp) });
});

const url = (s, p) => `http://${hostFor(s.port)}:${s.port}${p}`;
const auth = (secret = SECRET) => ({ authorization: `Bearer ${secret}` });

function binary(job, headers = {}) {
	return { method: 'POST', headers: { ...auth(), 'content-type': 'application/json', 'ce-specversion': '1.0',
		'ce-id': randomUUID(), 'ce-source': '/tests/push', 'ce-type': 'dev.ingot.job', ...headers }, body: JSON.stringify(job) };
}

function structured(job, extra = {}) {
	return { method: 'POST', headers: { ...auth(), 'content-type': 'application/cloudevents+json; charset=utf-8' },
		body: JSON.stringify({ specversion: '1.0', id: randomUUID(), source: '/tests/push', type: 'dev.ingot.job',
			datacontenttype: 'application/json', data: job, ...extra }) };
}

// GCP Pub/Sub push's JSON body (cloud.google.com/pubsub/docs/push, "Receive messages")
function gcp(job, attributes = {}) {
	return { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({
		message: { attributes, data: Buffer.from(JSON.stringify(job)).toString('base64'),
			messageId: '2070443601311540', message_id: '2070443601311540',
			publishTime: '2021-02-26T19:13:55.749Z', publish_time: '2021-02-26T19:13:55.749Z' },
		subscription: 'projects/myproject/subscriptions/mysubscription' }) };
}

// The job's "job ran" line (its n is unique to the test that sent it).
const ranLine = (n) => srv.waitLog((l) => l.msg === 'job ran' && l.n === n);

test('a binary-mode CloudEvent is delivered and acked (204); its ce-traceparent continues the trace', T, async () => {
	const trace = randomBytes(16).toString('hex');
	const res = await fetch(url(srv, '/_ingot/push/work'),
		binary({ n: 101, verdict: 'ack' }, { 'ce-traceparent': `00-${trace}-${randomBytes(8).toString('hex')}-01` }));
	assert.equal(res.status, 204, await res.text());
	const line = await ranLine(101);
	assert.equal(line.sub, 'work');
	assert.equal(line.trace_id, trace);
	assert.equal(line.deadline, 0); // over HTTP, none
});

test('a structured-mode CloudEvent (data in the envelope, or data_base64) is delivered; its traceparent attribute continues the trace', T, async () => {
	const trace = randomBytes(16).toString('hex');
	let res = await fetch(url(srv, '/_ingot/push/audit'),
		structured({ n: 102, verdict: 'ack' }, { traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01` }));
	assert.equal(res.status, 204, await res.text());
	const line = await ranLine(102);
	assert.equal(line.sub, 'audit');
	assert.equal(line.trace_id, trace);
	const ev = structured(null);
	const body = JSON.parse(ev.body);
	delete body.data;
	body.data_base64 = Buffer.from(JSON.stringify({ n: 103, verdict: 'ack' })).toString('base64');
	res = await fetch(url(srv, '/_ingot/push/work'), { ...ev, body: JSON.stringify(body) });
	assert.equal(res.status, 204, await res.text());
	await ranLine(103);
});

test('a GCP Pub/Sub push wrapper delivers its base64 message.data', T, async () => {
	const res = await fetch(url(srv, '/_ingot/push/work'), gcp({ n: 104, verdict: 'ack' }));
	assert.equal(res.status, 204, await res.text());
	assert.equal((await ranLine(104)).sub, 'work');
});

test('verdicts as statuses: drop 202, retry 503 with Retry-After, a message that breaks the schema 422 (its handler never runs)', T, async () => {
	let res = await fetch(url(srv, '/_ingot/push/work'), binary({ n: 105, verdict: 'drop' }));
	assert.equal(res.status, 202);
	res = await fetch(url(srv, '/_ingot/push/work'), structured({ n: 106, verdict: 'retry' }));
	assert.equal(res.status, 503);
	assert.equal(res.headers.get('retry-after'), '1');
	assert.equal((await ranLine(106)).verdict, 'retry');
	const mark = srv.mark();
	res = await fetch(url(srv, '/_ingot/push/work'), gcp({ n: 107, verdict: 'later' }));
	assert.equal(res.status, 422);
	assert.equal((await res.json()).status, 422);
	// the next delivery's line comes with none of 107's before it
	assert.equal((await fetch(url(srv, '/_ingot/push/work'), binary({ n: 108, verdict: 'ack' }))).status, 204);
	await srv.waitLog((l) => l.msg === 'job ran' && l.n === 108, mark);
	assert.deepEqual(srv.logs.slice(mark).filter((l) => l.msg === 'job ran').map((l) => l.n), [108]);
});

test('pushed deliveries are counted as a consumer\'s are: ingot_pubsub_delivered_total by result and the handling time, summed over the cores', T, async () => {
	const two = await startServer({ INGOT_PUSH_SECRET: SECRET, INGOT_ADMIN_PORT: '0' },
		{ command: srv.proc.spawnfile, threads: '2' });
	try {
		const admin = await adminAddr(two);
		const sent = [[201, 'ack', 204], [202, 'ack', 204], [203, 'ack', 204], [204, 'drop', 202], [205, 'retry', 503],
			[206, 'later', 422]];
		for (const [n, verdict, status] of sent) {
			// a connection each: the kernel spreads them over both cores
			const res = await fetch(url(two, '/_ingot/push/work'), { ...binary({ n, verdict }), keepalive: false });
			assert.equal(res.status, status, `n ${n}`);
		}
		const m = await scrapeSamples(admin);
		const count = (result) => m.get(`ingot_pubsub_delivered_total{subscription="work",result="${result}"}`);
		assert.deepEqual(['ack', 'retry', 'drop', 'dead'].map(count), [3, 1, 1, 1]);
		assert.equal(m.get('ingot_pubsub_handling_duration_seconds_count{subscription="work"}'), 6);
	} finally {
		await two.stop();
	}
});

test('without the bearer secret, or with another, 401 and nothing runs; another method 405; an unknown subscription 404', T, async () => {
	const mark = srv.mark();
	const none = binary({ n: 109, verdict: 'ack' });
	delete none.headers.authorization;
	let res = await fetch(url(srv, '/_ingot/push/work'), none);
	assert.equal(res.status, 401);
	assert.equal(res.headers.get('www-authenticate'), 'Bearer');
	res = await fetch(url(srv, '/_ingot/push/work'), binary({ n: 110, verdict: 'ack' }, auth(SECRET.replace(/.$/, (c) => (c === '0' ? '1' : '0')))));
	assert.equal(res.status, 401);
	res = await fetch(url(srv, '/_ingot/push/work'), { ...binary({ n: 111, verdict: 'ack' }, { 'x-ingot-push-secret': SECRET }), headers: { 'x-other': SECRET } });
	assert.equal(res.status, 401);
	res = await fetch(url(srv, '/_ingot/push/work'), { method: 'PUT', headers: auth(), body: '{}' });
	assert.equal(res.status, 405);
	res = await fetch(url(srv, '/_ingot/push/nope'), binary({ n: 112, verdict: 'ack' }));
	assert.equal(res.status, 404);
	assert.equal((await fetch(url(srv, '/_ingot/push/work'), binary({ n: 113, verdict: 'ack' }))).status, 204);
	await srv.waitLog((l) => l.msg === 'job ran' && l.n === 113, mark);
	assert.deepEqual(srv.logs.slice(mark).filter((l) => l.msg === 'job ran').map((l) => l.n), [113]);
});

test('without INGOT_PUSH_SECRET the path is the router\'s 404, whatever the request carries', T, async () => {
	const bare = await startServer({ INGOT_ADMIN_PORT: '-1' }, { command: srv.proc.spawnfile });
	try {
		const res = await fetch(url(bare, '/_ingot/push/work'), binary({ n: 114, verdict: 'ack' }));
		assert.equal(res.status, 404);
		assert.equal((await res.json()).detail, 'no such resource');
		// an empty bearer is no secret either
		assert.equal((await fetch(url(bare, '/_ingot/push/work'), binary({ n: 115, verdict: 'ack' }, auth('')))).status, 404);
	} finally {
		await bare.stop();
	}
});

test('the door\'s bearer JWT (the reference service, INGOT_JWKS_FILE) is taken in place of the secret; a bad token is the door\'s 401', { timeout: 60000 }, async () => {
	const key = await jose.generateKeyPair('ES256', { extractable: true });
	const other = await jose.generateKeyPair('ES256', { extractable: true });
	const jwks = path.join(tmp, 'jwks.json');
	fs.writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await jose.exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] }));
	const mint = (signWith) => new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('eventarc')
		.setIssuedAt().setExpirationTime(Math.floor(Date.now() / 1000) + 600).sign(signWith);
	// a message that breaks post-created's schema: past the door, the
	// generated entry refuses it (422) with no database needed
	const push = (s, headers) => fetch(url(s, '/_ingot/push/count-words'),
		{ method: 'POST', headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', ...headers }, body: '{"id":0}' });
	const ref = await startServer({ INGOT_JWKS_FILE: jwks, INGOT_ADMIN_PORT: '-1' }, { command: BIN });
	try {
		assert.equal((await push(ref, { authorization: `Bearer ${await mint(key.privateKey)}` })).status, 422);
		let res = await push(ref, { authorization: `Bearer ${await mint(other.privateKey)}` });
		assert.equal(res.status, 401);
		assert.equal(res.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
		res = await push(ref, {});
		assert.equal(res.status, 401);
		assert.equal(res.headers.get('www-authenticate'), 'Bearer');
	} finally {
		await ref.stop();
	}
	// neither a key set nor the secret: off
	const off = await startServer({ INGOT_ADMIN_PORT: '-1' }, { command: BIN });
	try {
		assert.equal((await push(off, { authorization: `Bearer ${await mint(key.privateKey)}` })).status, 404);
	} finally {
		await off.stop();
	}
});
