// net/nats, the runtime's NATS client, against a real nats-server (Debian's
// package, 2.9) that each test starts on a free loopback port with its own
// JetStream store, driven by tests/nats/natscheck.c (the client on its own
// loop, no app), which prints one JSON line per event. Core pub/sub with
// headers, request and reply, no responders and a request's timeout; token
// and user/password auth, refused and accepted; JetStream: streams, a
// durable pull consumer, publish with the ack (and a duplicate), pulls with
// ack, nak with a delay (redelivered), term, MaxDeliver ending the
// redeliveries, no_wait; and a reconnect after the server is stopped and
// started again on the same port, the subscription restored and readiness
// (the client's backend) down meanwhile; JetStream across a restart; a
// list of servers; 1,000 publishes in flight; the keepalive against a
// server of the test's own.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import net from 'node:net';
import readline from 'node:readline';
import { ROOT, freePort, within } from './lib.mjs';
import { natsForSuite } from './natslib.mjs';

const NATSCHECK = process.env.INGOT_NATSCHECK_BIN || path.join(ROOT, 'build', 'bin', 'natscheck');

const nats = natsForSuite();
after(() => nats.stopAll());
const { start: startNats, tempDir } = nats;

// natscheck's environment: this process's sanitizer options, and env.
function natscheckEnv(env = {}) {
	const base = { PATH: process.env.PATH, INGOT_LOG_LEVEL: 'warn' };
	for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS']) if (process.env[k]) base[k] = process.env[k];
	return { ...base, ...env };
}

// Runs natscheck to its end: {code, events, stderr}.
function natscheck(mode, url, { verify = false, env = {} } = {}) {
	return new Promise((resolve) => {
		execFile(NATSCHECK, [mode, url, ...(verify ? ['verify'] : [])],
			{ timeout: 60000, env: natscheckEnv(env) },
			(err, stdout, stderr) => {
				const events = stdout.split('\n').filter((l) => l.startsWith('{"ev"')).map((l) => JSON.parse(l));
				resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, events, stderr, stdout });
			});
	});
}

// Starts natscheck and hands its events over as they come: next(ms, what)
// resolves the next one; exited resolves its exit code.
function natscheckLive(mode, url) {
	const child = spawn(NATSCHECK, [mode, url], { env: natscheckEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
	const lines = [];
	let wake = null;
	readline.createInterface({ input: child.stdout }).on('line', (l) => {
		if (!l.startsWith('{"ev"')) return;
		lines.push(JSON.parse(l));
		wake?.();
	});
	const exited = new Promise((resolve) => child.on('close', (code) => { wake?.(); resolve(code); }));
	const next = (ms, what) => within(ms, (async () => {
		while (!lines.length) await new Promise((r) => { wake = r; });
		return lines.shift();
	})(), what);
	return { next, exited, kill: () => child.kill('SIGKILL') };
}

const only = (events, ev) => events.filter((e) => e.ev === ev);

test('core NATS: pub/sub with and without headers, request and reply, no responders, a timeout', async () => {
	const srv = await startNats();
	const r = await natscheck('core', srv.url);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.equal(r.events[0].ev, 'up');
	assert.equal(r.events[0].max_payload, 1048576, 'INFO read');
	const msgs = only(r.events, 'msg');
	assert.deepEqual(msgs.map((m) => [m.subject, m.payload, m.headers, m.trace]),
		[['t.a', 'one', false, ''], ['t.b', 'two', true, 'abc']]);
	const [reply] = only(r.events, 'reply');
	assert.equal(reply.payload, 'echo:ping');
	assert.equal(reply.trace, 'r1', "the responder's header came back");
	const ends = Object.fromEntries(only(r.events, 'request_end').map((e) => [e.request, e.err]));
	assert.deepEqual(ends, { none: 'no responders', silent: 'timeout' });
	assert.equal(r.events.at(-1).ev, 'done');
	await srv.stop();
});

test('token auth: the right token connects, a wrong or missing one is refused', async () => {
	const srv = await startNats({ args: ['--auth', 's3cret'] });
	const good = await natscheck('connect', `nats://s3cret@127.0.0.1:${srv.port}`);
	assert.equal(good.events[0].ev, 'up', good.stdout);
	for (const url of [`nats://wrong@127.0.0.1:${srv.port}`, srv.url]) {
		const bad = await natscheck('connect', url);
		assert.equal(bad.events[0].ev, 'down', bad.stdout);
		assert.equal(bad.events[0].kind, 'authorization refused');
		assert.equal(bad.events[0].publish, 'not connected', 'a publish without a connection fails, never queued');
		assert.equal(bad.events[0].ready, false, 'never up: readiness waits');
	}
	await srv.stop();
});

test('user and password auth', async () => {
	const srv = await startNats({ args: ['--user', 'bob', '--pass', 'p@ss'] });
	const good = await natscheck('connect', `nats://bob:p@ss@127.0.0.1:${srv.port}`);
	assert.equal(good.events[0].ev, 'up', good.stdout);
	const bad = await natscheck('connect', `nats://bob:nope@127.0.0.1:${srv.port}`);
	assert.equal(bad.events[0].kind, 'authorization refused', bad.stdout);
	await srv.stop();
});

test('TLS: upgraded when the INFO requires it, required by tls://, the certificate verified', async () => {
	const dir = tempDir('ingot-nats-tls-');
	const cert = path.join(dir, 'cert.pem');
	const key = path.join(dir, 'key.pem');
	execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2',
		'-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
	const srv = await startNats({ args: ['--tls', '--tlscert', cert, '--tlskey', key] });
	const core = await natscheck('core', srv.url);
	assert.equal(core.code, 0, core.stdout + core.stderr);
	assert.deepEqual(only(core.events, 'msg').map((m) => m.payload), ['one', 'two'], 'core NATS over the upgraded stream');
	const verified = await natscheck('connect', `tls://localhost:${srv.port}`, { verify: true, env: { INGOT_TLS_CA_FILE: cert } });
	assert.equal(verified.events[0].ev, 'up', verified.stdout);
	const unknown = await natscheck('connect', `tls://localhost:${srv.port}`, { verify: true });
	assert.deepEqual([unknown.events[0].ev, unknown.events[0].kind], ['down', 'tls failed'], 'an unknown issuer is refused');
	await srv.stop();
	const plain = await startNats();
	const refused = await natscheck('connect', `tls://127.0.0.1:${plain.port}`);
	assert.deepEqual([refused.events[0].ev, refused.events[0].kind], ['down', 'tls failed'], 'tls:// to a server without TLS');
	await plain.stop();
});

// A server of our own that answers the CONNECT's PING, pings the client
// once, and then answers nothing more: the client must answer our PING and
// give the connection up when its own keepalive PINGs go unanswered.
test('keepalive: the server\'s PING answered; unanswered PINGs end the connection', async () => {
	let pongs = 0;
	let clientPings = 0;
	let closed;
	const streamClosed = new Promise((r) => { closed = r; });
	const server = net.createServer((sock) => {
		sock.on('close', closed); // after every byte the client sent
		sock.write('INFO {"server_id":"fake","version":"2.9.0","max_payload":4096,"headers":true,"proto":1}\r\n');
		let buf = '';
		sock.on('data', (d) => {
			buf += d;
			let i;
			while ((i = buf.indexOf('\r\n')) >= 0) {
				const line = buf.slice(0, i);
				buf = buf.slice(i + 2);
				if (line === 'PING' && ++clientPings === 1) sock.write('PONG\r\nPING\r\n');
				if (line === 'PONG') pongs++;
			}
		});
		sock.on('error', () => {});
	});
	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	const url = `nats://127.0.0.1:${server.address().port}`;
	const r = await natscheck('idle', url, { env: { NATSCHECK_PING_MS: '50' } });
	await within(10000, streamClosed, 'the client closed its connection');
	server.close();
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.deepEqual(r.events.map((e) => e.ev), ['up', 'down']);
	assert.equal(r.events[1].kind, 'timeout');
	assert.match(r.events[1].why, /did not answer PINGs/);
	assert.equal(pongs, 1, "the client answered the server's PING");
	assert.ok(clientPings >= 3, `the CONNECT's PING and two keepalives before giving up (${clientPings})`);
});

test('JetStream: stream, durable pull consumer, publish acks, ack / nak with delay / term, MaxDeliver', async () => {
	const srv = await startNats();
	const r = await natscheck('js', srv.url);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	const ev = (name) => only(r.events, name);
	assert.equal(ev('stream_create')[0].err, 'ok');
	assert.equal(ev('stream_create_again')[0].err, 'ok', 'the same config again is no error');
	assert.equal(ev('consumer_create')[0].err, 'ok');
	assert.equal(ev('consumer_backoff')[0].err, 'ok', 'a consumer with BackOff');
	assert.equal(ev('consumer_no_stream')[0].err, 'server error');
	assert.equal(ev('consumer_no_stream')[0].err_code, 10059, 'JetStream says which error');
	assert.equal(ev('publish_no_stream')[0].err, 'no responders', 'a subject no stream takes');
	assert.deepEqual(ev('publish').map((p) => [p.err, p.stream, p.seq]), [['ok', 'T1', 1], ['ok', 'T1', 2], ['ok', 'T1', 3]]);
	assert.deepEqual([ev('publish_duplicate')[0].seq, ev('publish_duplicate')[0].duplicate], [1, true]);
	const msgs = ev('js_msg').map((m) => [m.payload, m.delivered, m.stream_seq]);
	// m1 acked, m2 nak'ed (with a delay, then at once), m3 termed: m2
	// alone comes again, until MaxDeliver (3).
	assert.deepEqual(msgs, [['m1', 1, 1], ['m2', 1, 2], ['m3', 1, 3], ['m2', 2, 2], ['m2', 3, 2]]);
	const ends = ev('pull_end').map((e) => [e.err, e.status, e.received]);
	assert.deepEqual(ends, [['ok', 0, 3], ['ok', 0, 1], ['ok', 0, 1], ['ok', 408, 0], ['ok', 404, 0]],
		'after MaxDeliver the pull expires empty (408); no_wait answers 404');
	assert.deepEqual([ev('stream_info')[0].messages, ev('stream_info')[0].last_seq], [3, 3]);
	await srv.stop();
});

test('JetStream: 1,000 publishes in flight at once, each acked once with its own sequence', async () => {
	const srv = await startNats();
	const r = await natscheck('burst', srv.url);
	assert.equal(r.code, 0, r.stdout + r.stderr);
	assert.deepEqual(only(r.events, 'burst').map((e) => [e.acked, e.failed]), [[1000, 0]]);
	await srv.stop();
});

test('reconnect: the server stopped and started again on the same port; the subscription is restored, readiness follows', async () => {
	const srv = await startNats();
	const live = natscheckLive('reconnect', srv.url);
	const up = await live.next(10000, 'first up');
	assert.deepEqual([up.ev, up.connects, up.ready], ['up', 1, true], 'the broker is a readiness backend, up');
	await srv.stop();
	const down = await live.next(10000, 'down');
	assert.equal(down.ev, 'down');
	assert.equal(down.publish, 'not connected', 'a publish while down fails');
	assert.equal(down.ready, false, 'not ready while the broker is down');
	const again = await startNats({ port: srv.port, dir: srv.dir });
	let e;
	do e = await live.next(20000, 'up again'); while (e.ev === 'down'); // failed redials while it starts
	assert.deepEqual([e.ev, e.connects, e.ready], ['up', 2, true]);
	const msg = await live.next(10000, 'the message on the restored subscription');
	assert.deepEqual([msg.ev, msg.subject, msg.payload], ['msg', 'r.x', 'after']);
	assert.equal(await live.exited, 0);
	await again.stop();
});

// Killed, not stopped: a server that shuts down cleanly ends waiting pulls
// with a status of its own first.
test('JetStream across a crash: a pull in flight fails, what was acked before is there after', async () => {
	const srv = await startNats();
	const live = natscheckLive('restart', srv.url);
	const before = [];
	let e;
	do before.push(e = await live.next(10000, 'stop_now')); while (e.ev !== 'stop_now');
	assert.deepEqual(only(before, 'publish').map((p) => [p.err, p.seq]), [['ok', 1]]);
	await srv.stop('SIGKILL');
	const lost = await live.next(10000, 'the pull ends');
	assert.deepEqual([lost.ev, lost.err], ['pull_end', 'disconnected'], 'the waiting pull fails with the connection');
	const again = await startNats({ port: srv.port, dir: srv.dir });
	do e = await live.next(20000, 'stream_info after the restart'); while (e.ev !== 'stream_info');
	assert.deepEqual([e.err, e.messages], ['ok', 1], 'the acknowledged message survived the restart');
	assert.equal(await live.exited, 0);
	await again.stop();
});

test('a list of servers: a dead one is passed over; a lost server is replaced by the next, the subscription moved', async () => {
	const a = await startNats();
	const b = await startNats();
	const dead = await freePort();
	const first = await natscheck('first-up', `nats://127.0.0.1:${dead},nats://127.0.0.1:${b.port}`);
	assert.deepEqual(first.events.map((e) => [e.ev, e.kind]), [['down', 'connect failed'], ['up', undefined]], first.stdout);
	const live = natscheckLive('reconnect', `nats://127.0.0.1:${a.port},nats://127.0.0.1:${b.port}`);
	const up = await live.next(10000, 'up on the first server');
	assert.deepEqual([up.ev, up.connects], ['up', 1]);
	await a.stop();
	let e;
	do e = await live.next(20000, 'up on the second server'); while (e.ev === 'down');
	assert.deepEqual([e.ev, e.connects], ['up', 2]);
	const msg = await live.next(10000, 'the message through the second server');
	assert.deepEqual([msg.ev, msg.payload], ['msg', 'after']);
	assert.equal(await live.exited, 0);
	await b.stop();
});
