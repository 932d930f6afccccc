// The pubsub test app (tests/apps/pubsub) for the Pub/Sub suites: built
// out of the tree once per suite, its publish route, and the ordering
// key's check both providers share.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, curlResponse, commandRunner } from './lib.mjs';

// pubsubAppForSuite(tmp) -> async () => the app's binary, built into tmp
// at the first call.
export function pubsubAppForSuite(tmp) {
	const { must } = commandRunner({ timeoutMs: 240000 });
	let bin = null;
	return async () => {
		if (bin)
			return bin;
		const dir = path.join(tmp, 'pubsub');
		fs.cpSync(path.join(ROOT, 'tests', 'apps', 'pubsub'), dir, { recursive: true, filter: (src) => path.basename(src) !== 'build' });
		await must('make', ['--no-print-directory', '-C', dir], { env: { ...process.env, INGOT_ROOT: ROOT } });
		bin = path.join(dir, 'build', 'bin', 'pubsub');
		return bin;
	};
}

// POST /publish/<topic> with the Event {n} (or n itself, an object): the response.
export function publishEvent(srv, topic, n) {
	return curlResponse(srv.port, `/publish/${topic}`,
		['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(typeof n === 'object' ? n : { n })]);
}

// The same, answered 204 (stored by the provider).
export async function publish(srv, topic, n) {
	const r = await publishEvent(srv, topic, n);
	assert.equal(r.status, 204, r.text);
}

// psql's answer, trimmed.
export const q = async (pg, sql) => (await pg.psql(sql)).trim();

// The ordering key's check, for both providers: perKey messages of each
// key published on the topic `ordered`, interleaved (a0 b0 c0 d0 a1 ...),
// each through the next of procs.
export async function publishInterleaved(procs, keys, perKey) {
	let i = 0;
	for (let seq = 0; seq < perKey; seq++)
		for (const key of keys)
			await publish(procs[i++ % procs.length], 'ordered', { key, seq });
}

// The app's ordered_runs once every run is in: each key's runs in the
// order they began are its messages in publish order, the ones that fail
// once (seq % 4 == 1) twice in a row; never two runs of a key at once; each
// run in one of procs.
export async function assertKeyOrder(pg, procs, keys, perKey) {
	for (const key of keys) {
		const seen = (await q(pg, `SELECT string_agg(seq::text, ',' ORDER BY id) FROM ordered_runs WHERE key = '${key}';`)).split(',').map(Number);
		const want = [];
		for (let seq = 0; seq < perKey; seq++)
			want.push(...(seq % 4 === 1 ? [seq, seq] : [seq]));
		assert.deepEqual(seen, want, `key ${key}: runs in publish order`);
	}
	assert.equal(await q(pg, 'SELECT max(inflight) FROM ordered_runs;'), '1');
	const pids = new Set(procs.map((p) => String(p.pid)));
	for (const pid of (await q(pg, 'SELECT DISTINCT pid FROM ordered_runs;')).split('\n'))
		assert.ok(pids.has(pid.trim()), `pid ${pid} is one of the processes'`);
}
