// The build without TLS (make TLS=none: build/bin/service-notls, the TLS
// backend of the unikernel). It serves plain HTTP as the default build does
// (/hash still hashes with BearSSL's SHA-256); a certificate setting stops
// the start with one message; the outbound client refuses an https://
// upstream with the error kind "tls" before it opens any connection.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BIN, BODY, startServer, cleanup, curlResponse } from './lib.mjs';

const NOTLS = process.env.INGOT_BIN_NOTLS || path.join(path.dirname(BIN), 'service-notls');
const T = { timeout: 30000 };

after(cleanup);

test('service-notls was built (make TLS=none bin)', () => {
	assert.ok(fs.existsSync(NOTLS), `${NOTLS} is missing`);
});

test('it serves plain HTTP, /hash included', T, async () => {
	const srv = await startServer({}, { command: NOTLS });
	for (const [target, body] of [['/health', BODY.health], ['/hash', BODY.hash], ['/json', BODY.json]]) {
		const r = await curlResponse(srv.port, target);
		assert.equal(r.status, 200, target);
		assert.equal(r.body.toString(), body, target);
	}
	assert.equal((await srv.stop()).code, 0);
});

test('a certificate setting stops the start with one message', T, async () => {
	const r = await new Promise((resolve) => {
		execFile(NOTLS, [], {
			env: { PATH: process.env.PATH, PORT: '0', INGOT_TLS_CERT_PEM: 'x', INGOT_TLS_KEY_PEM: 'y' },
			timeout: 10000, killSignal: 'SIGKILL',
		}, (err, stdout, stderr) => resolve({ code: err?.code ?? 0, stdout, stderr }));
	});
	// A setting the build cannot honour is a settings error, as a bad
	// certificate is in the other builds: exit 2, nothing listens.
	assert.equal(r.code, 2, r.stderr);
	assert.equal(r.stdout, '');
	assert.deepEqual(r.stderr.trim().split('\n'), [
		'ingot: TLS: this build has no TLS (built with TLS=none; use TLS=bearssl or TLS=mbedtls)',
	]);
});

test('an https:// upstream is refused with the kind "tls", no connection made', T, async () => {
	let connections = 0;
	const trap = net.createServer((s) => { connections++; s.destroy(); });
	await new Promise((resolve) => trap.listen(0, '127.0.0.1', resolve));
	const upstream = `https://127.0.0.1:${trap.address().port}`;
	try {
		const srv = await startServer({ UPSTREAM: upstream }, { command: NOTLS });
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 502);
		const problem = JSON.parse(r.body.toString());
		// The client gets the kind, never the upstream; the log gets why.
		assert.equal(problem.error, 'tls');
		assert.ok(!r.body.toString().includes(`127.0.0.1:${trap.address().port}`), r.body.toString());
		const line = await srv.waitLog((l) => l.msg === 'upstream error');
		assert.equal(line.level, 'error');
		assert.equal(line.message, `cannot use ${upstream}: this build has no TLS ` +
			'(built with TLS=none; use TLS=bearssl or TLS=mbedtls)');
		assert.equal((await srv.stop()).code, 0);
		assert.equal(connections, 0);
	} finally {
		trap.close();
	}
});
