// Graceful drain on SIGTERM/SIGINT: in-flight (pending) requests finish
// and the last response on each connection says Connection: close; idle
// keep-alive connections are closed; new connections are refused; the
// process exits 0 and logs "draining" and "stopped". Past the grace period
// the rest is cut and the exit log says so.
//
// These servers run one loop (INGOT_THREADS=1) so that "the idle
// connection was closed" proves the one listener is closed too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, RawClient, req, BODY } from './lib.mjs';

after(() => cleanup());

const T = { timeout: 30000 };

/** A connection with /health pipelined before `rest`: once the /health
 * response is in, the requests behind it have been read and dispatched. */
async function busy(port, rest) {
	const c = await RawClient.connect(port);
	await c.write(req('GET', '/health') + rest);
	const h = await c.response();
	assert.equal(h.text, BODY.health);
	return c;
}

async function idle(port) {
	const c = await RawClient.connect(port);
	await c.write(req('GET', '/json'));
	assert.equal((await c.response()).text, BODY.json);
	return c;
}

test('SIGTERM with requests in flight: they complete (Connection: close on the last), idle connections close, new connections are refused, exit 0 with "draining" and "stopped"', T, async () => {
	const srv = await startServer({}, { threads: '1' });
	const port = srv.port;
	const single = [];
	for (let i = 0; i < 4; i++) single.push(await busy(port, req('GET', '/delay/1000')));
	const piped = await busy(port, req('GET', '/delay/1000') + req('GET', '/blog/1') + req('GET', '/delay/500'));
	const idles = [await idle(port), await idle(port)];

	srv.signal('SIGTERM');

	// Idle keep-alive connections are closed without a response.
	for (const c of idles) {
		await c.waitEnd();
		assert.equal(c.buf.length, 0, 'no bytes on an idle connection closed by the drain');
	}
	// The listener is closed: a new connection is refused.
	await assert.rejects(RawClient.connect(port), (e) => e.code === 'ECONNREFUSED');

	for (const c of single) {
		const r = await c.response();
		assert.equal(r.status, 200);
		assert.equal(r.text, BODY.delay(1000));
		assert.equal(r.headers.connection, 'close', 'the last response of a draining connection');
		await c.waitEnd();
		assert.equal(c.buf.length, 0);
	}
	const [a, b, d] = await piped.responses(3);
	assert.equal(a.text, BODY.delay(1000));
	assert.equal(a.headers.connection, undefined, 'not the last on its connection');
	assert.equal(b.text, BODY.blog(1));
	assert.equal(b.headers.connection, undefined, 'not the last on its connection');
	assert.equal(d.text, BODY.delay(500));
	assert.equal(d.headers.connection, 'close');
	await piped.waitEnd();

	const exit = await srv.exited;
	assert.deepEqual(exit, { code: 0, signal: null });
	const draining = srv.logs.find((l) => l.msg === 'draining');
	assert.ok(draining, `a "draining" log line: ${srv.lines.join('\n')}`);
	assert.equal(draining.signal, 'SIGTERM');
	const stopped = srv.logs.find((l) => l.msg === 'stopped');
	assert.ok(stopped, `a "stopped" log line: ${srv.lines.join('\n')}`);
	assert.equal(stopped.cut, 0);
	assert.equal(stopped.dropped, 0);
	assert.ok(stopped.requests >= 4 * 2 + 4 + 2, `requests counted: ${stopped.requests}`);
	assert.ok(srv.logs.indexOf(draining) < srv.logs.indexOf(stopped));
	assert.ok(!srv.logs.some((l) => l.msg === 'stopped: grace period over'));
});

test('a request arriving on a busy connection during the drain is still answered, with Connection: close', T, async () => {
	const srv = await startServer({}, { threads: '1' });
	const c = await busy(srv.port, req('GET', '/delay/600'));
	const i = await idle(srv.port);
	srv.signal('SIGTERM');
	await i.waitEnd(); // the drain has started on the (only) loop
	await c.write(req('GET', '/blog/2'));
	const [a, b] = await c.responses(2);
	assert.equal(a.text, BODY.delay(600));
	assert.equal(a.headers.connection, undefined);
	assert.equal(b.text, BODY.blog(2));
	assert.equal(b.headers.connection, 'close');
	await c.waitEnd();
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
	assert.ok(srv.logs.some((l) => l.msg === 'stopped'));
});

test('SIGTERM past INGOT_GRACE_MS (200) with /delay/60000 in flight: exit 3 after the grace period with "stopped: grace period over", cut >= 1, and a "request cut" line naming the request', T, async () => {
	const srv = await startServer({ INGOT_GRACE_MS: '200' }, { threads: '1' });
	const c = await busy(srv.port, req('GET', '/delay/60000', { headers: ['X-Request-Id: cut-me-1'] }));
	srv.signal('SIGTERM');
	const exit = await srv.exited;
	// 3: stopped, but requests were cut (the README's exit statuses).
	assert.deepEqual(exit, { code: 3, signal: null });
	const last = srv.logs.find((l) => l.msg === 'stopped: grace period over');
	assert.ok(last, `the exit log: ${srv.lines.join('\n')}`);
	assert.equal(last.level, 'warn');
	assert.ok(last.cut >= 1, `cut = ${last.cut}`);
	const cut = srv.logs.filter((l) => l.msg === 'request cut');
	assert.equal(cut.length, 1, srv.lines.join('\n'));
	assert.deepEqual({ ...cut[0], ts: undefined }, { ts: undefined, level: 'warn', msg: 'request cut',
		request_id: 'cut-me-1', method: 'GET', route: '/delay/{ms}', operation: 'getDelay' });
	assert.ok(srv.logs.some((l) => l.msg === 'draining'));
	// The cut connection is closed without its response.
	await c.waitEnd();
	assert.equal(c.buf.length, 0);
});

test('SIGINT on an idle server: exit 0 with "draining" (signal SIGINT) and "stopped"', T, async () => {
	const srv = await startServer();
	const exit = await (srv.signal('SIGINT'), srv.exited);
	assert.deepEqual(exit, { code: 0, signal: null });
	assert.equal(srv.logs.find((l) => l.msg === 'draining')?.signal, 'SIGINT');
	assert.ok(srv.logs.some((l) => l.msg === 'stopped'));
});

test('SIGTERM with several loops (INGOT_THREADS=4) and busy connections on them: all complete, exit 0',
	T, async () => {
	const srv = await startServer({}, { threads: '4' });
	const conns = [];
	for (let i = 0; i < 8; i++) conns.push(await busy(srv.port, req('GET', '/delay/400')));
	srv.signal('SIGTERM');
	for (const c of conns) {
		const r = await c.response();
		assert.equal(r.text, BODY.delay(400));
		assert.equal(r.headers.connection, 'close');
		await c.waitEnd();
	}
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
	const stopped = srv.logs.find((l) => l.msg === 'stopped');
	assert.ok(stopped, srv.lines.join('\n'));
	assert.equal(stopped.cut, 0);
});

test('SIGHUP does not stop the server', T, async () => {
	const srv = await startServer({}, { threads: '1' });
	srv.signal('SIGHUP');
	// Pending signals are taken lowest number first, so SIGHUP (1) is
	// handled before the SIGTERM (15) of stop(): exit 0 without a signal
	// proves SIGHUP did not end the process.
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/health'));
	assert.equal((await c.response()).text, BODY.health);
	c.destroy();
	assert.equal(srv.exit, null);
	assert.deepEqual(await srv.stop(), { code: 0, signal: null });
});
