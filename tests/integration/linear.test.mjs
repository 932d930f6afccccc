// Handlers that wait, written top to bottom (issue 26): /delay/{ms} sleeps
// with ig_sleep on its coroutine while the core serves others; a client
// that leaves makes the waiting handler return at once (nothing waits for
// the sleep to end); a drain whose grace period ends cuts the waiting
// handlers and exits; INGOT_MAX_WAITING caps the live coroutines of a
// core with 503 and Retry-After: 1, counted in
// ingot_waiting_rejections_total; ingot_handlers_waiting counts the
// suspended ones. TechEmpower's /db and /queries wait for their reads
// (ig_pg_send_read, ig_wait_all): a client that leaves while its read is
// held by a fake PostgreSQL makes the handler return at once, and the
// exchange ends only once the read has answered (its rows land in the
// request's memory). Run against the ASan binary too (tests/run): a
// cancelled handler's memory is freed once, after all that.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, RawClient, req, curlResponse, within, adminAddr, scrapeSamples as metrics, BODY } from './lib.mjs';
import { PgFake } from './pgfake.mjs';
import { waitReady } from './dbservice.mjs';

const fakes = [];
after(async () => { cleanup(); await Promise.all(fakes.map((f) => f.close())); });

const T = { timeout: 30000 };

// Scrapes until ingot_handlers_waiting is n.
async function waiting(admin, n) {
	let m;
	do m = await metrics(admin); while (m.get('ingot_handlers_waiting') !== n);
	return m;
}

// A connection whose request is read and its handler waiting: /health
// pipelined before it has been answered.
async function parked(port, target, headers = []) {
	const c = await RawClient.connect(port);
	await c.write(req('GET', '/health') + req('GET', target, { headers }));
	assert.equal((await c.response()).text, BODY.health);
	return c;
}

test('/delay/{ms}: 40 handlers sleep at once on one core while /health is answered; each answers its own delay, pipelined ones in order', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const conns = [];
	for (let i = 0; i < 40; i++) {
		const c = await RawClient.connect(srv.port);
		await c.write(req('GET', `/delay/${4000 + (i % 4) * 10}`));
		conns.push(c);
	}
	await waiting(admin, 40);
	const h = await RawClient.connect(srv.port);
	await h.write(req('GET', '/health'));
	assert.equal((await h.response()).text, BODY.health, 'the core serves while 40 handlers wait');
	for (const [i, c] of conns.entries()) assert.equal((await c.response()).text, BODY.delay(4000 + (i % 4) * 10));
	const p = await RawClient.connect(srv.port);
	const delays = [30, 0, 20, 1, 0];
	await p.write(delays.map((ms) => req('GET', `/delay/${ms}`)).join(''));
	const rs = await p.responses(delays.length);
	assert.deepEqual(rs.map((r) => r.text), delays.map((ms) => BODY.delay(ms)));
	await waiting(admin, 0);
	assert.equal((await srv.stop()).code, 0);
});

test('a client that leaves during a linear sleep: its handler returns at once (cancelled), its answer is dropped, nothing stays waiting', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_LOG_LEVEL: 'debug' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const conns = [];
	for (let i = 0; i < 3; i++) conns.push(await parked(srv.port, '/delay/60000', [`X-Request-Id: gone-${i}`]));
	await waiting(admin, 3);
	const from = srv.mark();
	for (const c of conns) c.destroy();
	// A sleep of 60 s ends within the test's 30 s only by its cancellation.
	await waiting(admin, 0);
	for (let i = 0; i < 3; i++) {
		const l = await srv.waitLog((x) => x.msg === 'response dropped: client gone' && x.request_id === `gone-${i}`, from);
		assert.equal(l.status, 503, 'the handler saw IG_WAIT_CANCELLED and returned');
	}
	// The core goes on: a new sleep answers.
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/delay/1'));
	assert.equal((await c.response()).text, BODY.delay(1));
	assert.equal((await srv.stop()).code, 0);
	assert.equal(srv.stderr, '', 'no sanitizer report');
});

test('SIGTERM with linear handlers waiting past INGOT_GRACE_MS (2000): they are cut at the grace period (exit 3, one "request cut" line each), the process exits cleanly', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_GRACE_MS: '2000' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const conns = [];
	for (let i = 0; i < 3; i++) conns.push(await parked(srv.port, '/delay/60000', [`X-Request-Id: cut-${i}`]));
	await waiting(admin, 3);
	const quick = await parked(srv.port, '/delay/1000');
	srv.signal('SIGTERM');
	const r = await quick.response();
	assert.equal(r.text, BODY.delay(1000), 'a sleep that ends within the grace period is answered');
	assert.equal(r.headers.connection, 'close');
	const x = await srv.exited;
	assert.equal(x.code, 3, srv.lines.join('\n'));
	const cut = srv.logs.filter((l) => l.msg === 'request cut').map((l) => l.request_id).sort();
	assert.deepEqual(cut, ['cut-0', 'cut-1', 'cut-2']);
	for (const c of conns) {
		await c.waitEnd();
		assert.ok(!c.buf.toString().includes('delayed_ms'), 'a cut request gets no answer');
	}
	assert.equal(srv.stderr, '', 'no sanitizer report');
});

test('INGOT_MAX_WAITING=2: a third request while two handlers wait is answered 503 with Retry-After: 1 before its handler runs, counted in ingot_waiting_rejections_total; room comes back when one leaves', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_MAX_WAITING: '2' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const a = await parked(srv.port, '/delay/60000');
	const b = await parked(srv.port, '/delay/60000');
	let m = await waiting(admin, 2);
	assert.equal(m.get('ingot_waiting_rejections_total'), 0);
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/delay/1'));
	const r = await c.response();
	assert.equal(r.status, 503);
	assert.equal(r.headers['retry-after'], '1');
	assert.equal(r.headers['content-type'], 'application/problem+json');
	assert.match(JSON.parse(r.text).detail, /waiting/);
	m = await metrics(admin);
	assert.equal(m.get('ingot_waiting_rejections_total'), 1);
	assert.equal(m.get('ingot_handlers_waiting'), 2, 'the refused request never waited');
	a.destroy();
	await waiting(admin, 1);
	await c.write(req('GET', '/delay/1'));
	assert.equal((await c.response()).text, BODY.delay(1), 'a stack is free again');
	b.destroy();
	await waiting(admin, 0);
	assert.equal((await srv.stop()).code, 0);
});

test('a client that leaves while its /queries reads are held by the database: the handler returns at once, the exchange ends only after the reads answered, and the core goes on', T, async () => {
	let holding = false;
	const fake = await PgFake.start({ hold: () => holding });
	fakes.push(fake);
	const srv = await startServer({
		DATABASE_URL: `postgres://fake@127.0.0.1:${fake.port}/fake?sslmode=disable`, INGOT_PG_POOL_SIZE: '1',
		INGOT_ADMIN_PORT: '0', INGOT_LOG_LEVEL: 'debug',
	}, { threads: '1' });
	await waitReady(srv);
	const admin = await adminAddr(srv);
	assert.equal((await curlResponse(srv.port, '/queries?queries=3')).status, 200); // statements prepared
	const worlds = () => fake.queries.filter((q) => /world/i.test(q.sql)).length;
	const before = worlds();
	holding = true;
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/queries?queries=3', { headers: ['X-Request-Id: left-db'] }));
	await within(10000, fake.until(() => worlds() - before >= 3), 'the reads never reached the fake');
	await waiting(admin, 1);
	const from = srv.mark();
	c.destroy();
	await waiting(admin, 0); // cancelled: returned without its rows
	assert.ok(!srv.logs.slice(from).some((l) => l.request_id === 'left-db'),
		'the exchange is held while its reads are unanswered');
	holding = false;
	fake.flush();
	const l = await srv.waitLog((x) => x.msg === 'response dropped: client gone' && x.request_id === 'left-db', from);
	assert.equal(l.status, 503);
	const r = await curlResponse(srv.port, '/queries?queries=2');
	assert.equal(r.status, 200);
	assert.equal(JSON.parse(r.body.toString()).length, 2);
	assert.equal((await srv.stop()).code, 0);
	assert.equal(srv.stderr, '', 'no sanitizer report');
});
