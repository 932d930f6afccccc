// The descriptor limit (issue 25, item 2): INGOT_MAX_CONNS lowered to what
// RLIMIT_NOFILE holds, with one warning; connections past it rejected and
// counted by reason; accept's EMFILE shedding what waits and pausing the
// listener instead of spinning; the admin listener answering throughout.
// The kernel's sockets only: over lwIP connections are not descriptors.
// Every wait is for an event (a log line, a close, a counter reaching a
// value); no duration is asserted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import fs from 'node:fs';
import { startServer, cleanup, curl, curlResponse, within, needTools, commandRunner, BIN, LWIP } from './lib.mjs';

after(cleanup);
const T = { skip: LWIP && 'connections over lwIP are not descriptors' };
const { must } = commandRunner();

async function adminPort(srv) {
	return (await srv.waitLog((l) => l.msg === 'admin listening')).port;
}

async function metrics(port) {
	const r = await curl([`http://127.0.0.1:${port}/metrics`]);
	assert.equal(r.code, 0, `a scrape answers: ${r.stderr}`);
	const out = new Map();
	for (const line of r.stdout.toString().split('\n')) {
		const m = /^(\S+) (\S+)$/.exec(line);
		if (m) out.set(m[1], Number(m[2]));
	}
	return out;
}

/** Scrapes until pred(samples) holds: the counters move when the server's
 * loop has handled what the test did, which no client event tells. */
async function metricsUntil(port, pred, what) {
	return within(20000, (async () => {
		for (;;) {
			const m = await metrics(port);
			if (pred(m)) return m;
			await new Promise((r) => setTimeout(r, 20)); // a poll's pace, not an ordering
		}
	})(), what);
}

/** n connections to port, each watched: closed says whether the server
 * closed it (before the test did), and with how many bytes received. */
async function flood(port, n) {
	const conns = [];
	for (let i = 0; i < n; i++) {
		const s = net.connect({ host: '127.0.0.1', port });
		const c = { s, closedByServer: false, bytes: 0, mine: false };
		s.on('data', (d) => { c.bytes += d.length; });
		s.on('error', () => {});
		c.closed = once(s, 'close').then(() => { c.closedByServer = !c.mine; });
		s.on('end', () => s.end());
		conns.push(c);
	}
	await Promise.all(conns.map((c) => once(c.s, 'connect')));
	return conns;
}

function closeAll(conns) {
	for (const c of conns) { c.mine = true; c.s.destroy(); }
}

async function livez(port) {
	const r = await curlResponse(port, '/livez');
	assert.equal(r.status, 200);
}

test('under ulimit -n 64, INGOT_MAX_CONNS=10000 is lowered with a warning; 200 connections are counted as rejected while the admin port answers', T, async () => {
	await needTools('prlimit', 'curl');
	const srv = await startServer({ INGOT_MAX_CONNS: '10000', INGOT_ADMIN_PORT: '0' },
		{ threads: '1', command: 'prlimit', args: ['--nofile=64:64', '--', BIN] });
	const warned = srv.logs.filter((l) => l.msg === 'INGOT_MAX_CONNS lowered to fit the descriptor limit');
	assert.equal(warned.length, 1, 'one warning');
	assert.equal(warned[0].level, 'warn');
	assert.equal(warned[0].max_conns_set, 10000);
	assert.equal(warned[0].nofile, 64);
	const limit = warned[0].max_conns;
	assert.ok(limit >= 4 && limit < 64, `lowered to ${limit}, which 64 descriptors hold`);
	assert.equal(srv.listening.max_conns, limit, 'the listening line gives the limit in effect');
	const admin = await adminPort(srv);
	assert.equal((await metrics(admin)).get('ingot_connections_limit'), limit);

	const conns = await flood(srv.port, 200);
	// The first `limit` are served (idle, kept open); the server closes the
	// others at once, with no byte: each one rejected.
	const refused = conns.slice(limit);
	await within(20000, Promise.all(refused.map((c) => c.closed)), 'the connections past the limit are closed');
	assert.ok(refused.every((c) => c.closedByServer && c.bytes === 0));
	assert.ok(conns.slice(0, limit).every((c) => !c.closedByServer), 'the first ones stay open');
	// While they are held, the admin listener answers.
	await livez(admin);
	const m = await metrics(admin);
	assert.equal(m.get('ingot_connections_rejected_total{reason="max_conns"}'), 200 - limit);
	assert.equal(m.get('ingot_connections_rejected_total{reason="fd_limit"}'), 0, 'the lowered limit left descriptors');
	assert.equal(m.get('ingot_connections_active'), limit);
	assert.equal(srv.logs.filter((l) => l.msg === 'descriptor limit: accepting paused').length, 0);

	// Once the flood closes, a normal client is served.
	closeAll(conns);
	await metricsUntil(admin, (x) => x.get('ingot_connections_active') === 0, 'the flood\'s connections closed');
	const r = await curlResponse(srv.port, '/json');
	assert.equal(r.status, 200);
	srv.kill();
});

/** The RLIMIT_NOFILE that leaves the process `free` more descriptors: the
 * limit bounds their numbers, and a new one takes the lowest free number
 * (an inherited descriptor above the limit stays usable, and uncounted). */
function limitLeaving(pid, free) {
	const held = new Set(fs.readdirSync(`/proc/${pid}/fd`).map(Number));
	let limit = 0;
	for (let left = free; left > 0 || held.has(limit); limit++) if (!held.has(limit)) left--;
	return limit;
}

// EMFILE itself: the test lowers the running process's limit to the
// descriptors it holds and a few, so that the connections limit
// (derived from the higher limit at start) is out of reach and accept
// runs out of descriptors. What waits is shed (closed, counted as
// fd_limit), the listener pauses (one warning for the pauses of a second),
// the admin listener still answers on its spares, and accepting resumes
// once descriptors are free.
test('EMFILE in accept: what waits is shed and counted, accepting pauses, the admin port answers, and serving resumes', T, async () => {
	await needTools('prlimit', 'curl');
	const srv = await startServer({ INGOT_MAX_CONNS: '1000', INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminPort(srv);
	assert.equal(srv.listening.max_conns, 1000, 'the start-time limit holds 1000');
	await livez(admin); // the admin listener's first connection has come and gone
	await metricsUntil(admin, (x) => x.get('ingot_connections_active') === 0, 'nothing open');
	const limit = limitLeaving(srv.pid, 3);
	// The soft limit only: the hard one could not be raised back.
	await must('prlimit', ['--pid', String(srv.pid), `--nofile=${limit}:`]);

	const mark = srv.mark();
	const conns = await flood(srv.port, 40);
	const paused = await within(20000, srv.waitLog((l) => l.msg === 'descriptor limit: accepting paused', mark),
		'the pause is logged');
	assert.equal(paused.level, 'warn');
	assert.ok(paused.backoff_ms >= 100 && paused.backoff_ms <= 1000, `backoff ${paused.backoff_ms} ms`);
	// Shed connections were closed by the server with no byte sent.
	const shedByClient = () => conns.filter((c) => c.closedByServer).length;
	const m = await metricsUntil(admin, (x) => x.get('ingot_connections_rejected_total{reason="fd_limit"}') >= 1,
		'shed connections are counted');
	assert.ok(conns.every((c) => c.bytes === 0));
	assert.equal(m.get('ingot_connections_rejected_total{reason="max_conns"}'), 0);
	// The admin listener answers on its spares while the API's is paused.
	await livez(admin);
	const shed = m.get('ingot_connections_rejected_total{reason="fd_limit"}');
	assert.ok(shed <= 40 && shedByClient() <= shed, `${shed} shed, ${shedByClient()} seen closed`);
	// No spin: a paused listener is back in epoll only after its backoff,
	// and then raises an event only for a connection waiting, so it pauses
	// at most once per connection, and once more for the first EMFILE
	// (which accept returns before it looks at the queue, so it may find
	// none). A spin would fail accept without end and log nothing.
	const lines = srv.logs.slice(mark).filter((l) => l.msg === 'descriptor limit: accepting paused');
	assert.ok(lines.at(-1).pauses <= 40 + 1, `${lines.at(-1).pauses} pauses for 40 connections`);

	// Descriptors back: the flood closes, the limit is restored, and a
	// normal client is served once the backoff ends.
	closeAll(conns);
	await must('prlimit', ['--pid', String(srv.pid), `--nofile=${srv.listening.nofile}:`]);
	await metricsUntil(admin, (x) => x.get('ingot_connections_active') === 0, 'the flood\'s connections closed');
	const r = await within(20000, (async () => {
		for (;;) {
			const x = await curl(['-sS', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${srv.port}/json`]);
			if (x.stdout.toString() === '200') return x;
			// Shed until the backoff ends: curl sees the close and tries again.
		}
	})(), 'a normal client is served after the backoff');
	assert.equal(r.stdout.toString(), '200');
	srv.kill();
});
