// Liveness and readiness on the main port, answered by the engine: GET and
// HEAD /livez and /readyz (200, a JSON body, Cache-Control: no-store);
// readiness says 503 from the signal on, before the drain, and with
// INGOT_DRAIN_DELAY_MS the server goes on serving through the delay while
// /readyz says 503 (a second signal ends the delay here, so that no test
// waits for a clock). A document's own /readyz staying the app's is checked
// by tests/unit/app/test_handlers.c (the reference document has none).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, RawClient, req, BODY } from './lib.mjs';

after(() => cleanup());

const T = { timeout: 30000 };

async function ask(c, method, target) {
	await c.write(req(method, target));
	return c.response({ head: method === 'HEAD' });
}

test('GET and HEAD /livez and /readyz: 200, JSON, Cache-Control: no-store; other methods and longer paths are the app\'s', T, async () => {
	const srv = await startServer();
	const c = await RawClient.connect(srv.port);
	const live = await ask(c, 'GET', '/livez');
	assert.equal(live.status, 200);
	assert.equal(live.text, '{"status":"ok"}');
	assert.equal(live.headers['content-type'], 'application/json');
	assert.equal(live.headers['cache-control'], 'no-store');
	const ready = await ask(c, 'GET', '/readyz?probe=1');
	assert.equal(ready.status, 200);
	assert.equal(ready.text, '{"status":"ready"}');
	assert.equal(ready.headers['cache-control'], 'no-store');
	const head = await ask(c, 'HEAD', '/readyz');
	assert.equal(head.status, 200);
	assert.equal(head.headers['content-length'], String('{"status":"ready"}'.length));
	assert.equal(head.body.length, 0);
	assert.equal((await ask(c, 'POST', '/livez')).status === 200, false, 'POST /livez is not the probe');
	assert.equal((await ask(c, 'GET', '/livez/x')).status, 404);
	assert.equal((await ask(c, 'GET', '/health')).text, BODY.health, 'the connection still serves the app');
	c.destroy();
	assert.deepEqual(await srv.stop(), { code: 0, signal: null });
});

test('SIGTERM: /readyz says 503 draining on a connection still being served (its last request)', T, async () => {
	const srv = await startServer({}, { threads: '1' });
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/health') + req('GET', '/delay/1000'));
	assert.equal((await c.response()).text, BODY.health); // /delay is read and pending
	const idle = await RawClient.connect(srv.port);
	assert.equal((await ask(idle, 'GET', '/readyz')).status, 200);
	srv.signal('SIGTERM');
	await idle.waitEnd(); // the drain has begun on the only loop
	await c.write(req('GET', '/readyz'));
	const [d, r] = await c.responses(2);
	assert.equal(d.text, BODY.delay(1000));
	assert.equal(r.status, 503);
	assert.equal(r.text, '{"status":"draining"}');
	assert.equal(r.headers['cache-control'], 'no-store');
	assert.equal(r.headers.connection, 'close');
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
});

test('INGOT_DRAIN_DELAY_MS: /readyz 503 at once, new and keep-alive connections still served; then the drain', T, async () => {
	const srv = await startServer({ INGOT_DRAIN_DELAY_MS: '600000' });
	const keep = await RawClient.connect(srv.port);
	assert.equal((await ask(keep, 'GET', '/readyz')).status, 200);
	const mark = srv.mark();
	srv.signal('SIGTERM');
	const draining = await srv.waitLog((l) => l.msg === 'draining', mark);
	assert.equal(draining.signal, 'SIGTERM');
	assert.equal(draining.drain_delay_ms, 600000);
	assert.equal(draining.grace_ms, 8000);
	// During the delay: not ready, but serving as before.
	const r = await ask(keep, 'GET', '/readyz');
	assert.equal(r.status, 503);
	assert.equal(r.text, '{"status":"draining"}');
	const h = await ask(keep, 'GET', '/health');
	assert.equal(h.text, BODY.health);
	assert.equal(h.headers.connection, undefined, 'keep-alive goes on during the delay');
	const fresh = await RawClient.connect(srv.port); // still accepting
	const f = await ask(fresh, 'GET', '/blog/3');
	assert.equal(f.text, BODY.blog(3));
	assert.equal(f.headers.connection, undefined);
	assert.equal((await ask(fresh, 'GET', '/readyz')).status, 503);
	assert.equal((await ask(fresh, 'GET', '/livez')).status, 200, 'alive while not ready');
	assert.equal(srv.exit, null, 'still running in the delay');
	// A request in flight when the delay ends is answered by the drain.
	await keep.write(req('GET', '/delay/300'));
	srv.signal('SIGTERM'); // ends the delay: the drain starts
	const d = await keep.response();
	assert.equal(d.text, BODY.delay(300));
	assert.equal(d.headers.connection, 'close');
	await fresh.waitEnd(); // idle: closed by the drain
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
	const stopped = srv.logs.find((l) => l.msg === 'stopped');
	assert.ok(stopped, srv.lines.join('\n'));
	assert.equal(stopped.cut, 0);
});

test('INGOT_DRAIN_DELAY_MS=200 on an idle server: the drain follows the delay by itself, exit 0', T, async () => {
	const srv = await startServer({ INGOT_DRAIN_DELAY_MS: '200' });
	srv.signal('SIGTERM');
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
	assert.equal(srv.logs.find((l) => l.msg === 'draining')?.drain_delay_ms, 200);
	assert.ok(srv.logs.some((l) => l.msg === 'stopped'));
});
