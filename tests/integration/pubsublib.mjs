// The pubsub test app (tests/apps/pubsub) for the Pub/Sub suites: built
// out of the tree once per suite, and its publish route.
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
