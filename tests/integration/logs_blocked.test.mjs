// Logs never block the loops: with the access log on and a stdout that
// nobody reads (the test stops reading the service's pipe once it knows
// the ports), requests keep being answered, the lines that do not fit are
// counted in ingot_log_lines_dropped_total, SIGTERM still drains and the
// process exits 0; once the reader reads again, one line reports what was
// dropped and the "stopped" line still arrives.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, LWIP } from './lib.mjs';

after(cleanup);

const skip = LWIP && 'over lwIP the loops write their lines directly';

async function start() {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1', INGOT_ADMIN_PORT: '0' }, { threads: '2' });
	const admin = await srv.waitLog((l) => l.msg === 'admin listening');
	// The process's own exit, whatever its pipes do ('close' waits for
	// stdout to be read to its end).
	srv.exitedEarly = new Promise((resolve) => srv.proc.on('exit', (code, signal) => resolve({ code, signal })));
	srv.proc.stdout.pause();
	return { srv, api: `http://${srv.host}:${srv.port}`, admin: `http://${srv.host}:${admin.port}` };
}

async function dropped(admin) {
	const r = await fetch(`${admin}/metrics`);
	assert.equal(r.status, 200);
	const m = /^ingot_log_lines_dropped_total (\S+)$/m.exec(await r.text());
	assert.ok(m, 'the family is on /metrics');
	return Number(m[1]);
}

// Requests in rounds until the counter moves: a pipe (64 KiB), the test's
// own buffer and the rings fill after a few thousand access-log lines.
async function floodUntilDropped(api, admin) {
	let answered = 0;
	for (let round = 0; round < 200; round++) {
		const rs = await Promise.all(Array.from({ length: 100 }, () => fetch(`${api}/json`).then(async (r) => {
			await r.arrayBuffer();
			return r.status;
		})));
		assert.deepEqual(new Set(rs), new Set([200]));
		answered += rs.length;
		const n = await dropped(admin);
		if (n > 0)
			return { answered, dropped: n };
	}
	assert.fail(`no line dropped after ${answered} requests`);
}

test('a stdout nobody reads: requests are answered, lines dropped and counted, SIGTERM exits 0', { skip }, async () => {
	const { srv, api, admin } = await start();
	assert.equal(await dropped(admin), 0);
	const { answered } = await floodUntilDropped(api, admin);
	assert.ok(answered > 0);
	// Still serving, on both listeners, after the drops.
	assert.equal((await fetch(`${api}/json`)).status, 200);
	assert.equal((await fetch(`${admin}/livez`)).status, 200);
	assert.ok(await dropped(admin) > 0);
	srv.signal('SIGTERM');
	assert.deepEqual(await srv.exitedEarly, { code: 0, signal: null });
	srv.proc.stdout.resume();
});

test('once stdout is read again, one line reports the dropped count and "stopped" arrives', { skip }, async () => {
	const { srv, api, admin } = await start();
	await floodUntilDropped(api, admin);
	const from = srv.mark();
	srv.proc.stdout.resume();
	const report = await srv.waitLog((l) => l.msg === 'log lines dropped', from);
	assert.equal(report.level, 'warn');
	assert.ok(report.dropped > 0 && report.total >= report.dropped, JSON.stringify(report));
	// Served and logged again once the reader keeps up.
	const mark = srv.mark();
	const r = await fetch(`${api}/health`);
	await r.arrayBuffer();
	assert.equal(r.status, 200);
	await srv.waitLog((l) => l.msg === 'request' && l.route === '/health', mark);
	assert.deepEqual(await srv.stop(), { code: 0, signal: null });
	const stopped = srv.logs.find((l) => l.msg === 'stopped');
	assert.ok(stopped, 'the "stopped" line');
	assert.ok(stopped.requests >= 1);
	// Dropped lines are whole lines: everything that arrived parses.
	assert.deepEqual(srv.logs.filter((l) => l.unparsed !== undefined), []);
});
