// A handler that overflows its coroutine stack, through a real binary: the
// deep app (tests/apps/deep) copied out of the tree and built with its make
// fragment; /shallow answers, then /deep recurses into its stack's guard
// page and the process ends killed by SIGSEGV after exactly one fatal
// "stack overflow" line that names the stack size and the request. The
// same app's unikernel (`make unikernel` in its directory) under qemu's TCG:
// the same line on the console, and qemu ends with an odd status.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, curl, curlResponse, within, commandRunner, needTools, freePort, rawRequest, req } from './lib.mjs';
import { Guest, killGuests } from './guest.mjs';

const T = { timeout: 300000 };
// Built here, static; the sanitizer pass of tests/run (INGOT_BIN) would
// build the same again.
const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-overflow-'));
after(() => {
	killGuests();
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { must } = commandRunner({ timeoutMs: 240000 });

const dir = path.join(tmp, 'deep');
let copied = false;
// `make -C dir target` on the app copied out of the tree (once).
async function make(target) {
	if (!copied) {
		fs.cpSync(path.join(ROOT, 'tests', 'apps', 'deep'), dir, {
			recursive: true, filter: (src) => path.basename(src) !== 'build',
		});
		copied = true;
	}
	await must('make', ['--no-print-directory', '-C', dir, target], { env: { ...process.env, INGOT_ROOT: ROOT } });
}
async function deepApp() {
	await make('all');
	return path.join(dir, 'build', 'bin', 'deep');
}

for (const stack of [16384, 65536]) {
	test(`a handler deeper than its ${stack}-byte stack: one "stack overflow" line with the request, then SIGSEGV`, { ...T, ...SKIP }, async () => {
		const srv = await startServer({ INGOT_ADMIN_PORT: '-1', INGOT_STACK_SIZE: String(stack) },
			{ command: await deepApp() });
		const ok = await curlResponse(srv.port, '/shallow');
		assert.equal(ok.status, 200);
		assert.deepEqual(JSON.parse(ok.body.toString()), { depth: 1 });

		const id = `deep-${stack}`;
		const r = await curl(['-s', '-H', `X-Request-Id: ${id}`, `http://127.0.0.1:${srv.port}/deep`]);
		assert.notEqual(r.code, 0, 'no answer: the connection ends with the process');
		const exit = await within(30000, srv.exited, 'the service ending after the overflow');
		assert.deepEqual(exit, { code: null, signal: 'SIGSEGV' }, 'the fault is handed back to the default action');

		const fatal = srv.logs.filter((l) => l.msg === 'stack overflow');
		assert.equal(fatal.length, 1, srv.lines.join('\n'));
		assert.deepEqual(fatal[0], {
			ts: fatal[0].ts, level: 'error', msg: 'stack overflow', signal: 'SIGSEGV', from: 'fault',
			stack_bytes: stack, request_id: id, method: 'GET', route: '/deep', operation: 'deep',
		});
		assert.ok(!srv.logs.some((l) => l.msg === 'fatal signal'), 'no second fatal line');
	});
}

test('on the unikernel: /shallow answers, /deep ends the VM with one "stack overflow" line with the request, and an odd status', { ...T, ...SKIP }, async () => {
	await needTools('qemu-system-x86_64');
	await make('unikernel');
	const g = new Guest('unikernel', await freePort(), {
		dir: tmp, env: { IMAGES: path.join(dir, 'build', 'images'), QEMU_APPEND: 'INGOT_STACK_SIZE=16384' },
	});
	await g.waitLog((l) => l.msg === 'listening');
	const { res, client } = await rawRequest(g.port, req('GET', '/shallow'));
	client.destroy();
	assert.equal(res.status, 200, g.describe());
	assert.equal(res.text, '{"depth":1}');

	const id = 'deep-unikernel';
	const r = await curl(['-s', '-H', `X-Request-Id: ${id}`, `http://127.0.0.1:${g.port}/deep`]);
	assert.notEqual(r.code, 0, 'no answer: the connection ends with the VM');
	const x = await g.waitExit();
	assert.ok(Number.isInteger(x.code) && x.code % 2 === 1, `status ${x.code}; ${g.describe()}`);
	const fatal = g.logs.filter((l) => l.msg === 'stack overflow');
	assert.equal(fatal.length, 1, g.describe());
	assert.deepEqual([fatal[0].level, fatal[0].stack_bytes, fatal[0].request_id, fatal[0].method, fatal[0].route, fatal[0].operation],
		['error', 16384, id, 'GET', '/deep', 'deep'], g.describe());
	assert.ok(!g.console.includes('cpu exception"'), `not the generic exception line; ${g.describe()}`);
});
