// How many loops the server runs: one per usable CPU, where usable means the
// affinity mask capped by a cgroup CPU quota, and INGOT_THREADS overrides.
// The quota test makes its own child cgroup (v1 cpu controller, or v2 with
// the cpu controller enabled) and removes it afterwards.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, cleanup, BIN, BODY, curlResponse } from './lib.mjs';

after(cleanup);
const T = { timeout: 20000 };
const cpus = os.availableParallelism ? os.availableParallelism() : os.cpus().length;

test('without INGOT_THREADS the server runs one loop per CPU of its affinity mask', T, async () => {
	const srv = await startServer({ INGOT_THREADS: undefined }, { command: 'taskset', args: ['-c', '0', BIN] });
	assert.equal(srv.listening.threads, 1);
	assert.equal(srv.listening.cpus, 1);
	const r = await curlResponse(srv.port, '/health');
	assert.equal(r.text, BODY.health);
	await srv.stop();
});

test('INGOT_THREADS overrides the CPU count', T, async () => {
	const srv = await startServer({ INGOT_THREADS: '3' });
	assert.equal(srv.listening.threads, 3);
	await srv.stop();
});

/* A writable cgroup directory with a CPU quota interface, or null. */
function makeQuotaCgroup(name, quotaUs, periodUs) {
	const v1 = ['/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/cpu'].find((d) =>
		fs.existsSync(path.join(d, 'cpu.cfs_quota_us')));
	if (v1) {
		const dir = path.join(v1, name);
		fs.mkdirSync(dir);
		fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(periodUs));
		fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
		return dir;
	}
	const v2 = '/sys/fs/cgroup';
	if (fs.existsSync(path.join(v2, 'cgroup.controllers')) &&
	    fs.readFileSync(path.join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu')) {
		const dir = path.join(v2, name);
		fs.mkdirSync(dir);
		fs.writeFileSync(path.join(dir, 'cpu.max'), `${quotaUs} ${periodUs}`);
		return dir;
	}
	return null;
}

test('a cgroup CPU quota caps the loops (half a CPU on a multi-CPU machine gives one loop)', T, async () => {
	const dir = makeQuotaCgroup(`ingot-test-${process.pid}`, 50000, 100000);
	assert.ok(dir, 'no writable cgroup with a CPU quota interface on this machine');
	let srv;
	try {
		// The shell joins the cgroup, then becomes the server.
		srv = await startServer({ INGOT_THREADS: undefined }, {
			command: 'sh', args: ['-c', `echo $$ > ${dir}/cgroup.procs && exec ${BIN}`] });
		assert.equal(srv.listening.cgroup_cpu_limit, 1);
		assert.equal(srv.listening.threads, 1, `${cpus} CPUs, quota 0.5`);
		const r = await curlResponse(srv.port, '/health');
		assert.equal(r.text, BODY.health);
	} finally {
		if (srv) await srv.stop();
		// The kernel releases an exited task from its cgroup a moment after
		// its parent has reaped it: retry on EBUSY, a bounded number of times.
		for (let i = 0; ; i++) {
			try { fs.rmdirSync(dir); break; } catch (e) {
				if (e.code !== 'EBUSY' || i > 100000) throw e;
				await new Promise((r) => setImmediate(r));
			}
		}
	}
});
