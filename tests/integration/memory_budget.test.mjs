// The memory budget (INGOT_MEMORY_BUDGET): a body that finds no room
// waits, then is answered 503 with Retry-After and counted; room given back
// lets the next one in; slow readers' unsent responses stay within it
// (their connections pause, the process's RSS stays bounded, a normal
// client is served); and in a 64 MiB memory cgroup the test creates, a
// flood of 1 MB bodies leaves the process alive (no OOM kill), every
// request answered by the route or with 503. TLS handshakes refused at an
// exhausted budget: tls.test.mjs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startServer, cleanup, RawClient, curl, BIN, LWIP, BODY, adminAddr, scrapeSamples as metrics } from './lib.mjs';

after(cleanup);

const T = { timeout: 60000 };
const MB = 1048576;

function head(len) {
	return `POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-foo: a\r\n` +
		`Content-Length: ${len}\r\n\r\n`;
}

// A whole request with a 1 MiB body, on a connection of its own: its answer.
async function post(port) {
	const c = await RawClient.connect(port);
	c.sock.on('error', () => {}); // the answer may come before the body is all written
	c.write(head(MB) + 'x'.repeat(MB)).catch(() => {});
	const res = await c.response();
	c.destroy();
	return res;
}

test('a body over INGOT_MEMORY_BUDGET waits, then 503 with Retry-After: 1, counted; freed room serves the next', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_MAX_BODY: String(MB), INGOT_MEMORY_BUDGET: String(4 * MB),
		INGOT_MEMORY_WAIT_MS: '100' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const budget = await srv.waitLog((x) => x.msg === 'memory budget');
	assert.equal(budget.request_body_bytes, 4 * MB);
	assert.equal(budget.source, 'INGOT_MEMORY_BUDGET');
	const route = await post(srv.port); // the route's own answer to this body
	assert.notEqual(route.status, 503);

	// Four heads of 1 MiB bodies, their bodies held back, take the budget.
	const holders = await Promise.all([0, 1, 2, 3].map(() => RawClient.connect(srv.port)));
	await Promise.all(holders.map((c) => c.write(head(MB) + 'x')));
	let m;
	do m = await metrics(admin); while (m.get('ingot_memory_budget_bytes{state="used"}') < 4 * MB);
	assert.equal(m.get('ingot_memory_budget_bytes{state="limit"}'), 4 * MB);
	assert.equal(m.get('ingot_memory_budget_rejections_total{cause="request_body"}'), 0);

	const refused = await post(srv.port);
	assert.equal(refused.status, 503, refused.text);
	assert.equal(refused.headers['retry-after'], '1');
	assert.equal(refused.headers.connection, 'close');
	assert.equal(refused.json().status, 503);
	m = await metrics(admin);
	assert.equal(m.get('ingot_memory_budget_rejections_total{cause="request_body"}'), 1);
	const line = await srv.waitLog((x) => x.msg?.startsWith('request refused: the memory budget'));
	assert.equal(line.rejections_total, 1);
	assert.equal(line.budget_bytes, 4 * MB);

	// Their clients gone, their reservations go back.
	for (const c of holders) c.destroy();
	do m = await metrics(admin); while (m.get('ingot_memory_budget_bytes{state="used"}') > 3 * MB);
	assert.equal((await post(srv.port)).status, route.status);
	assert.equal((await metrics(admin)).get('ingot_memory_budget_rejections_total{cause="request_body"}'), 1);
	await srv.stop();
});

test('a chunked body is charged as it arrives: over the budget, 503 after the wait', T, async () => {
	const srv = await startServer({ INGOT_MAX_BODY: String(8 * MB), INGOT_MEMORY_BUDGET: String(4 * MB),
		INGOT_MEMORY_WAIT_MS: '50' }, { threads: '1' });
	const c = await RawClient.connect(srv.port);
	c.sock.on('error', () => {});
	const chunk = 'x'.repeat(65536);
	let data = `POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-foo: a\r\nTransfer-Encoding: chunked\r\n\r\n`;
	for (let i = 0; i < 6 * 16; i++) data += `10000\r\n${chunk}\r\n`;
	c.write(data + '0\r\n\r\n').catch(() => {});
	const res = await c.response();
	assert.equal(res.status, 503, res.text);
	assert.equal(res.headers['retry-after'], '1');
	c.destroy();
	await srv.stop();
});

// POST /novalidate echoes its body: a request of ~24 KB (it fits the read
// buffer, so it is not charged itself) whose answer of ~24 KB does not fit
// a connection's first output block.
const ECHO_BODY = JSON.stringify({ name: 'A', nickname: null, ref: 1, status: 'active', scores: [],
	address: { street: 's'.repeat(24000), city: 'c', zip: '12345' }, active: true });
const ECHO = `POST /novalidate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-foo: a\r\n` +
	`Content-Length: ${ECHO_BODY.length}\r\n\r\n${ECHO_BODY}`;

function statusKiB(pid, key) {
	return Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
}

// The slow readers' server: a budget of 1 MiB, INGOT_MAX_OUTPUT at 4 MiB
// (without the budget each client below could have 4 MiB buffered).
const SLOW_BUDGET = MB, SLOW_CONNS = 10;
async function slowServer() {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_MEMORY_BUDGET: String(SLOW_BUDGET),
		INGOT_MAX_OUTPUT: String(4 * MB) }, { threads: '1' });
	srv.admin = await adminAddr(srv);
	await srv.waitLog((x) => x.msg === 'memory budget');
	return srv;
}

// SLOW_CONNS clients each send payload at once and never read an answer;
// resolves once every connection has paused at least once (none can
// buffer its 4 MiB), the budget's use read within its limit all along,
// with the clients and the RSS growth since rss0.
async function slowReaders(srv, payload, rss0) {
	const readers = Array.from({ length: SLOW_CONNS }, () => {
		const s = net.connect({ host: srv.host, port: srv.port });
		s.pause();
		s.on('error', () => {});
		s.write(payload);
		return s;
	});
	let m;
	do {
		m = await metrics(srv.admin);
		assert.ok(m.get('ingot_memory_budget_bytes{state="used"}') <= SLOW_BUDGET,
			`used ${m.get('ingot_memory_budget_bytes{state="used"}')} within the limit`);
	} while (m.get('ingot_memory_budget_paused_total') < SLOW_CONNS);
	assert.equal((await curl([`http://${srv.host}:${srv.port}/health`])).stdout.toString(), BODY.health,
		'a normal client is served meanwhile');
	// What the process holds: the budget, and per connection its read
	// buffer, its first output block, one response beyond the budget and
	// its exchanges' arenas: 256 KiB each is ample. Without the budget
	// these floods hold ~30 MiB.
	const grown = statusKiB(srv.pid, 'VmHWM') - rss0;
	assert.ok(grown <= SLOW_BUDGET + SLOW_CONNS * 256 * 1024, `RSS grew by ${grown} bytes`);
	return { readers, grown };
}

test('slow readers: their unsent responses stay within INGOT_MEMORY_BUDGET, their connections pause, RSS stays bounded, a normal client is served', T, async (t) => {
	const srv = await slowServer();
	const warm = await RawClient.connect(srv.port); // the pools' first pages
	await warm.write(ECHO);
	const first = await warm.response();
	assert.equal(first.status, 200);
	assert.ok(first.body.length > ECHO_BODY.length, `the echo of ${first.body.length} bytes`);
	warm.destroy();
	const { readers, grown } = await slowReaders(srv, ECHO.repeat(300), statusKiB(srv.pid, 'VmRSS'));
	t.diagnostic(`RSS grew ${grown} bytes under ${SLOW_CONNS} slow readers, budget ${SLOW_BUDGET}`);
	const pause = await srv.waitLog((x) => x.msg?.startsWith('connection paused: the memory budget is spent'));
	assert.equal(pause.budget_bytes, SLOW_BUDGET);
	assert.ok(pause.used_bytes <= SLOW_BUDGET);

	// A large answer too (a connection that holds nothing else may always
	// send one).
	const normal = await RawClient.connect(srv.port);
	await normal.write(ECHO);
	assert.equal((await normal.response()).text, first.text);
	normal.destroy();
	const m = await metrics(srv.admin);
	assert.ok(m.get('ingot_memory_budget_bytes{state="used"}') <= SLOW_BUDGET);
	assert.equal(m.get('ingot_memory_budget_rejections_total{cause="request_body"}'), 0, 'nothing refused: paused');

	// Gone, their output's charge goes back (the core keeps its credit).
	for (const s of readers) s.destroy();
	let used;
	do used = (await metrics(srv.admin)).get('ingot_memory_budget_bytes{state="used"}'); while (used > 2 * 256 * 1024);
	assert.equal((await srv.stop()).code, 0);
});

test('slow readers pipelining small requests for larger answers: a batch stops at the budget too, its answers not held in their arenas', T, async (t) => {
	// GET /blog?limit=100 answers ~6.4 KB to a request of ~40 bytes: one
	// read holds up to 128 of them (the queue's bound), made at once.
	const srv = await slowServer();
	const LIST = 'GET /blog?limit=100 HTTP/1.1\r\nHost: x\r\n\r\n';
	const warm = await RawClient.connect(srv.port);
	await warm.write(LIST.repeat(130));
	const answers = await warm.responses(130);
	assert.ok(answers.every((r) => r.status === 200 && r.body.length > 6000), 'the answers are ~6.4 KB');
	warm.destroy();
	const { readers, grown } = await slowReaders(srv, LIST.repeat(1500), statusKiB(srv.pid, 'VmRSS'));
	t.diagnostic(`RSS grew ${grown} bytes under ${SLOW_CONNS} slow readers of /blog, budget ${SLOW_BUDGET}`);
	for (const s of readers) s.destroy();
	assert.equal((await srv.stop()).code, 0);
});

// A memory cgroup of the test's own (v2 memory.max, else v1
// memory.limit_in_bytes), or null where neither can be made.
function makeCgroup(limit) {
	const name = `ingot-test-${process.pid}`;
	const v2 = '/sys/fs/cgroup';
	try {
		if (existsSync(path.join(v2, 'cgroup.controllers')) &&
			readFileSync(path.join(v2, 'cgroup.controllers'), 'utf8').includes('memory')) {
			const dir = path.join(v2, name);
			mkdirSync(dir);
			writeFileSync(path.join(dir, 'memory.max'), String(limit));
			writeFileSync(path.join(dir, 'memory.swap.max'), '0');
			return { dir, version: 2, ooms: () => Number(/oom_kill (\d+)/.exec(readFileSync(path.join(dir, 'memory.events'), 'utf8'))?.[1] ?? 0) };
		}
		const v1 = path.join(v2, 'memory');
		if (existsSync(path.join(v1, 'memory.stat'))) {
			const dir = path.join(v1, name);
			mkdirSync(dir);
			writeFileSync(path.join(dir, 'memory.limit_in_bytes'), String(limit));
			try { writeFileSync(path.join(dir, 'memory.memsw.limit_in_bytes'), String(limit)); } catch { /* no swap accounting */ }
			return { dir, version: 1, ooms: () => Number(/oom_kill (\d+)/.exec(readFileSync(path.join(dir, 'memory.oom_control'), 'utf8'))?.[1] ?? 0) };
		}
	} catch { /* not writable: skipped */ }
	return null;
}

test('in a 64 MiB memory cgroup, 120 clients sending 1 MB bodies: no OOM kill, every answer the route\'s or 503, the 503s counted', T, async (t) => {
	const cg = LWIP ? null : makeCgroup(64 * MB);
	if (!cg) { t.skip('no writable memory cgroup (v2 or v1) here'); return; }
	try {
		// Joined before the exec: the process is in the cgroup from its start.
		const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_MAX_BODY: String(MB) },
			{ command: '/bin/sh', args: ['-c', `echo $$ > ${cg.dir}/cgroup.procs && exec "$0"`, BIN] });
		const admin = await adminAddr(srv);
		const budget = await srv.waitLog((x) => x.msg === 'memory budget');
		assert.match(budget.source, /^cgroup v[12]/);
		assert.equal(budget.memory_limit_bytes, 64 * MB);
		assert.equal(budget.request_body_bytes, 24 * MB, 'half the limit less 8 MiB');
		const route = await post(srv.port);
		assert.notEqual(route.status, 503);

		// All 120 bodies in flight together: every head and half of every
		// body first, the rest once all of that has been written.
		const clients = await Promise.all(Array.from({ length: 120 }, () => RawClient.connect(srv.port)));
		const half = 'x'.repeat(MB / 2);
		for (const c of clients) c.sock.on('error', () => {});
		await Promise.all(clients.map((c) => c.write(head(MB) + half).catch(() => {})));
		for (const c of clients) c.write(half).catch(() => {});
		const answers = await Promise.all(clients.map((c) => c.response()));
		for (const c of clients) c.destroy();
		const statuses = answers.map((r) => r.status);
		const refused = statuses.filter((s) => s === 503).length;
		assert.deepEqual(statuses.filter((s) => s !== 503 && s !== route.status), [], 'the route\'s answer or 503');
		assert.equal(cg.ooms(), 0, 'no OOM kill');
		const peak = ['memory.peak', 'memory.max_usage_in_bytes'].map((f) => path.join(cg.dir, f)).find(existsSync);
		t.diagnostic(`cgroup v${cg.version}: ${refused} of 120 refused; peak ${peak ? readFileSync(peak, 'utf8').trim() : '?'} bytes`);
		const m = await metrics(admin);
		assert.equal(m.get('ingot_memory_budget_rejections_total{cause="request_body"}'), refused);
		assert.equal(m.get('ingot_memory_budget_bytes{state="limit"}'), 24 * MB);
		assert.equal((await post(srv.port)).status, route.status, 'it answers afterwards');
		assert.equal(srv.exit, null);
		assert.equal((await srv.stop()).code, 0);
	} finally {
		cleanup();
		try { rmdirSync(cg.dir); } catch { /* a process still leaving: the next run's name differs */ }
	}
});
