// Many connections at once: 1,000 concurrent keep-alive connections are all
// accepted and answered twice. The client runs in a child process under
// `ulimit -n 4096` because 1,000 sockets barely fit Node's default soft
// limit of 1024 and Node cannot raise its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, cleanup, RawClient, req, BODY } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let srv;
before(async () => { srv = await startServer(); });
after(async () => { if (srv) await srv.stop(); cleanup(); });

function runClient(port, n, host) {
	return new Promise((resolve) => {
		execFile('bash', ['-c', 'ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"', 'bash',
			process.execPath, path.join(here, 'clients', 'many_conns.mjs'), String(port), String(n), host],
		{ timeout: 50000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
			let out = null;
			try { out = JSON.parse(stdout.trim().split('\n').pop()); } catch { /* below */ }
			resolve({ err, out, stdout, stderr });
		});
	});
}

test('1,000 concurrent keep-alive connections are all answered, then all answered again on the same connections', { timeout: 60000 }, async () => {
	const { err, out, stdout, stderr } = await runClient(srv.port, 1000, srv.host);
	assert.ok(out && !out.error, `client failed: ${err} ${stdout} ${stderr}`);
	assert.equal(out.first, 1000, 'first round: 200 with the right body on every connection');
	assert.equal(out.openAfterFirst, 1000, 'every connection still open after the first round');
	assert.equal(out.second, 1000, 'second round on the same connections');
	assert.equal(out.openAfterSecond, 1000);
	// The server is still fine afterwards.
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/health'));
	assert.equal((await c.response()).text, BODY.health);
	c.destroy();
});

test('INGOT_MAX_CONNS bounds connections per core: the one over the limit is closed, the others are served', { timeout: 20000 }, async () => {
	const small = await startServer({ INGOT_MAX_CONNS: '3' }, { threads: '1' });
	try {
		const held = [];
		for (let i = 0; i < 3; i++) {
			const c = await RawClient.connect(small.port);
			await c.write(req('GET', '/health'));
			assert.equal((await c.response()).text, BODY.health);
			held.push(c);
		}
		const extra = await RawClient.connect(small.port); // TCP accepts; the server closes it
		extra.sock.write(req('GET', '/health'), () => {});
		await extra.waitEnd();
		assert.equal(extra.received, 0, 'no response on the refused connection');
		// one of the held connections is still served
		await held[0].write(req('GET', '/json'));
		assert.equal((await held[0].response()).text, BODY.json);
		// after one leaves, a new connection is served
		held[1].destroy();
		await held[1].closed;
		// The server notices the close asynchronously; a new connection may
		// still race it, so retry until one is served (each attempt waits for
		// a definite outcome: a response or a close).
		let served = false;
		for (let attempt = 0; attempt < 50 && !served; attempt++) {
			const c = await RawClient.connect(small.port);
			c.sock.write(req('GET', '/health'), () => {});
			try {
				served = (await c.response()).text === BODY.health;
			} catch { /* closed: over the limit still */ }
			c.destroy();
		}
		assert.ok(served, 'a connection is served again once one left');
		for (const c of held) c.destroy();
	} finally {
		await small.stop();
	}
});
