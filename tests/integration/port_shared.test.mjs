// A port is not silently shared: a second process on a port one already
// serves stops with exit 2 naming PORT and the port, and the first goes on
// answering; INGOT_SHARE_PORT=true joins it (a handover: the new process
// starts, the old one drains and the new one answers). A process's own
// per-core listeners still share theirs; another address is another port.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, curlResponse, freePort, runBinary } from './lib.mjs';

after(cleanup);
const T = { timeout: 60000 };

test('a second process on a served port exits 2 naming PORT and the port; the first, on two cores, goes on answering', T, async () => {
	const port = await freePort();
	const first = await startServer({ PORT: String(port) }, { threads: '2' });
	assert.equal(first.listening.threads, 2);
	const second = await runBinary([], { PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '2' });
	assert.equal(second.code, 2, `${second.stdout}${second.stderr}`);
	assert.match(second.stderr, new RegExp(`PORT ${port} is served by another process already`));
	assert.match(second.stderr, /INGOT_SHARE_PORT=true/);
	assert.doesNotMatch(second.stdout, /"msg":"listening"/);
	for (let i = 0; i < 4; i++) assert.equal((await curlResponse(port, '/livez')).status, 200);
	await first.stop();
});

test('a wildcard listener holds the port for every address: a second process on 127.0.0.1 exits 2', T, async () => {
	const port = await freePort();
	const first = await startServer({ PORT: String(port), HOST: '0.0.0.0' });
	const second = await runBinary([], { PORT: String(port), HOST: '127.0.0.1' });
	assert.equal(second.code, 2, `${second.stdout}${second.stderr}`);
	assert.match(second.stderr, new RegExp(`PORT ${port}`));
	await first.stop();
});

test('INGOT_SHARE_PORT=true joins the port: a handover, where the old process drains and the new one answers', T, async () => {
	const port = await freePort();
	const old = await startServer({ PORT: String(port) });
	const next = await startServer({ PORT: String(port), INGOT_SHARE_PORT: 'true' });
	assert.equal(next.port, port);
	assert.equal((await old.stop()).code, 0);
	for (let i = 0; i < 4; i++) assert.equal((await curlResponse(port, '/livez')).status, 200);
	assert.equal(next.exit, null, 'the new process serves on');
	await next.stop();
});

test('the port of another address is not taken: 127.0.0.2 beside 127.0.0.1 on one port number', T, async () => {
	const port = await freePort();
	const a = await startServer({ PORT: String(port), HOST: '127.0.0.1' });
	const b = await startServer({ PORT: String(port), HOST: '127.0.0.2' });
	assert.equal(b.port, port);
	await Promise.all([a.stop(), b.stop()]);
});
