// A handler that overflows its coroutine stack, through a real binary: the
// deep app (tests/apps/deep) copied out of the tree and built with its make
// fragment; /shallow answers, then /deep recurses into its stack's guard
// page and the process ends killed by SIGSEGV after exactly one fatal
// "stack overflow" line that names the stack size and the request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, curl, curlResponse, within, commandRunner } from './lib.mjs';

const T = { timeout: 300000 };
// Built here, static; the sanitizer pass of tests/run (INGOT_BIN) would
// build the same again.
const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-overflow-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { must } = commandRunner({ timeoutMs: 240000 });

let bin;
async function deepApp() {
	if (bin)
		return bin;
	const dir = path.join(tmp, 'deep');
	fs.cpSync(path.join(ROOT, 'tests', 'apps', 'deep'), dir, {
		recursive: true, filter: (src) => path.basename(src) !== 'build',
	});
	await must('make', ['--no-print-directory', '-C', dir], { env: { ...process.env, INGOT_ROOT: ROOT } });
	bin = path.join(dir, 'build', 'bin', 'deep');
	return bin;
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
			stack_bytes: stack, request_id: id, method: 'GET', route: '/deep',
		});
		assert.ok(!srv.logs.some((l) => l.msg === 'fatal signal'), 'no second fatal line');
	});
}
