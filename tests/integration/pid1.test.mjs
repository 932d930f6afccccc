// The binary as PID 1 (a container's or an initramfs's only process): run in
// a new PID namespace, it handles SIGTERM itself (the kernel gives PID 1 no
// default actions) and reaps orphans that the namespace hands to it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, cleanup, BIN, BODY, curlResponse } from './lib.mjs';

after(cleanup);
const T = { timeout: 20000 };

/* The host PID of unshare's forked child: the service, PID 1 inside. */
function childOf(pid) {
	for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
		const kids = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
		if (kids) return Number(kids.split(/\s+/)[0]);
	}
	return 0;
}

function zombieChildren(ppid) {
	const found = [];
	for (const d of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(d)) continue;
		let st;
		try { st = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
		const fields = st.slice(st.lastIndexOf(')') + 2).split(' ');
		if (fields[0] === 'Z' && Number(fields[1]) === ppid) found.push(Number(d));
	}
	return found;
}

test('as PID 1 in its own PID namespace: serves, reaps orphans, and exits 0 on SIGTERM', T, async () => {
	const srv = await startServer({}, { command: 'unshare', args: ['--pid', '--fork', BIN] });
	assert.equal(srv.listening.pid, 1, 'the service sees itself as PID 1');
	const r = await curlResponse(srv.port, '/health');
	assert.equal(r.text, BODY.health);

	const pid1 = childOf(srv.pid);
	assert.ok(pid1 > 0, 'found the service under unshare');
	// An orphan in the namespace: its parent shell exits at once, so it is
	// reparented to PID 1, which must reap it when it exits. It writes its
	// parent once that is PID 1 (read from /proc, the host's, where PID 1 of
	// the namespace has its host PID: $PPID is fixed when a shell starts,
	// and the orphan may start before its parent has exited); never
	// reparented, it loops until the test's timeout.
	const mark = path.join(os.tmpdir(), `ingot-orphan-${process.pid}`);
	const orphan = `p=0; while [ "$p" != ${pid1} ]; do read -r _ _ _ p _ < /proc/self/stat; done; echo $p > ${mark}`;
	await new Promise((resolve, reject) => execFile('nsenter',
		['--target', String(pid1), '--pid', '--', 'sh', '-c', `(sh -c '${orphan}' &); exit 0`],
		(err) => (err ? reject(err) : resolve())));
	// Wait for the orphan to have run (an event: its file), then for no
	// zombie to remain under PID 1; both loops are bounded in count.
	for (let i = 0; !fs.existsSync(mark) || fs.readFileSync(mark, 'utf8').trim() === ''; i++) {
		assert.ok(i < 1e6, 'the orphan never ran');
		await new Promise((res) => setImmediate(res));
	}
	assert.equal(fs.readFileSync(mark, 'utf8').trim(), String(pid1), 'the orphan was reparented to PID 1');
	fs.unlinkSync(mark);
	for (let i = 0; zombieChildren(pid1).length; i++) {
		assert.ok(i < 1e5, `zombies left under PID 1: ${zombieChildren(pid1)}`);
		await new Promise((res) => setImmediate(res));
	}

	process.kill(pid1, 'SIGTERM');
	const x = await srv.exited;
	assert.equal(x.code, 0);
	assert.ok(srv.logs.some((l) => l.msg === 'stopped'));
});
