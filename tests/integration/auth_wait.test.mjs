// An auth handler that waits, through the real binary (2 cores): the gate
// app (tests/apps/gate, built out of the tree) judges its apiKey after a
// linear sleep (ig_sleep), so the door runs on the handler's coroutine. A
// good key passes and the principal, the path and the query reach the
// handler; a bad key is 401 after the wait; no key is 401 without a call;
// the decoder runs only after the door (a bad query is 400 with the key,
// 401 without); many requests waiting at once all get their answers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, burst, req, curlResponse, assertProblem, commandRunner } from './lib.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-authwait-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const { must } = commandRunner({ timeoutMs: 240000 });
const key = (k) => ['-H', `X-Key: ${k}`];

test('an auth handler that waits (a linear sleep) judges the key on the handler\'s coroutine, before the decoder', { timeout: 300000, ...SKIP }, async () => {
	const dir = path.join(tmp, 'gate');
	fs.cpSync(path.join(ROOT, 'tests', 'apps', 'gate'), dir, { recursive: true, filter: (src) => path.basename(src) !== 'build' });
	await must('make', ['--no-print-directory', '-C', dir], { env: { ...process.env, INGOT_ROOT: ROOT } });
	const srv = await startServer({ INGOT_THREADS: '2', INGOT_ADMIN_PORT: '-1' }, { command: path.join(dir, 'build', 'bin', 'gate') });
	try {
		let res = await curlResponse(srv.port, '/gate/alpha?n=7', key('k-good'));
		assert.equal(res.status, 200, res.text);
		assert.deepEqual(res.json(), { name: 'alpha', by: 'gate-user', n: 7 });
		res = await curlResponse(srv.port, '/gate/alpha', key('k-bad'));
		assertProblem(res, 401);
		assert.equal(res.headers['www-authenticate'], 'ApiKey realm="api"');
		assertProblem(await curlResponse(srv.port, '/gate/alpha'), 401);
		// The door first: a bad query is the decoder's 400 only for a caller it admitted.
		assertProblem(await curlResponse(srv.port, '/gate/alpha?n=-1', key('k-good')), 400);
		assertProblem(await curlResponse(srv.port, '/gate/alpha?n=-1', key('k-bad')), 401);
		// 40 at once, each its own name: every one waits in its door and gets its own answer.
		const names = Array.from({ length: 40 }, (_, i) => `n${i}`);
		const all = await burst(srv.port, names.map((n) => req('GET', `/gate/${n}?n=1`, { headers: ['Connection: close', 'X-Key: k-good'] })));
		assert.deepEqual(all.map((r) => r.status), Array(40).fill(200));
		assert.deepEqual(all.map((r) => r.json().name), names);
	} finally { await srv.stop(); }
});
