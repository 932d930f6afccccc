// ICMP echo of the hosted lwIP stack: ping from the namespace to the
// server's own address over its TAP device gets answers, and the answers
// come from the server process (none while it is stopped). Runs in lwIP
// mode only (tests/run: INGOT_TEST_NET=tap inside a network namespace).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { LWIP, startServer, cleanup, commandRunner, needTools, curlResponse, BODY } from '../integration/lib.mjs';

const skip = !LWIP && 'needs lwIP mode: INGOT_TEST_NET=tap in a network namespace (tests/run)';
const T = { timeout: 30000, skip };
const { run } = commandRunner({ timeoutMs: 20000 });

let srv;
before(async () => {
	if (skip) return;
	await needTools('ping');
	srv = await startServer();
});
after(async () => { if (srv) await srv.stop(); cleanup(); });

/** ping ARGS... HOST: {code, transmitted, received, replies (lines "from HOST")}. */
async function ping(host, ...args) {
	const r = await run('ping', ['-n', ...args, host]);
	const m = /(\d+) packets transmitted, (\d+) received/.exec(r.stdout);
	assert.ok(m, `ping's summary: ${r.stdout}${r.stderr}`);
	const replies = r.stdout.split('\n').filter((l) => l.includes(`from ${host}:`) && /icmp_seq=/.test(l));
	return { code: r.code, transmitted: Number(m[1]), received: Number(m[2]), replies, out: r.stdout };
}

test('ping to the lwIP address: every echo request is answered by it', T, async () => {
	const p = await ping(srv.host, '-c', '5', '-i', '0.2', '-W', '5');
	assert.equal(p.code, 0, p.out);
	assert.equal(p.transmitted, 5);
	assert.equal(p.received, 5, p.out);
	assert.equal(p.replies.length, 5, p.out);
});

test('full-size echo requests (1472 bytes of payload, 1514-byte frames, DF) are answered whole', T, async () => {
	const p = await ping(srv.host, '-c', '3', '-i', '0.2', '-W', '5', '-s', '1472', '-M', 'do');
	assert.equal(p.received, 3, p.out);
	for (const l of p.replies) assert.match(l, /^1480 bytes from /, l);
});

test('the answers come from the server: none while it is stopped (SIGSTOP), again after SIGCONT, and it still serves HTTP', T, async () => {
	srv.signal('SIGSTOP');
	let p;
	try {
		p = await ping(srv.host, '-c', '1', '-W', '1');
	} finally {
		srv.signal('SIGCONT');
	}
	assert.equal(p.received, 0, `an answer while the server was stopped: ${p.out}`);
	assert.notEqual(p.code, 0);
	p = await ping(srv.host, '-c', '3', '-i', '0.2', '-W', '5');
	assert.equal(p.received, 3, p.out);
	const res = await curlResponse(srv.port, '/health');
	assert.equal(res.text, BODY.health);
});
