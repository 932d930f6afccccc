// What an operator does through the admin listener and signals: bind it
// apart from HOST (INGOT_ADMIN_HOST), ask a token for all but the probes
// (INGOT_ADMIN_TOKEN), and read or change the log level while running
// (GET/PUT /loglevel, SIGUSR1 for debug, SIGUSR2 back to INGOT_LOG_LEVEL).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { LWIP, startServer, cleanup, curl, curlResponse, RawClient } from './lib.mjs';

after(cleanup);
const T = { timeout: 30000 };

async function admin(srv) {
	const l = await srv.waitLog((x) => x.msg === 'admin listening');
	return { addr: l.addr, at: `${LWIP ? srv.host : l.addr}:${l.port}` };
}

/** status, headers (lower-case names) and body of one admin request. */
async function ask(at, path, { method = 'GET', body, token } = {}) {
	const args = ['-s', '-i', '-X', method, `http://${at}${path}`];
	if (token !== undefined) args.push('-H', `Authorization: Bearer ${token}`);
	if (body !== undefined) args.push('--data-binary', body);
	const r = await curl(args);
	assert.equal(r.code, 0, r.stderr);
	const text = r.stdout.toString();
	const split = text.indexOf('\r\n\r\n');
	const head = text.slice(0, split).split('\r\n');
	const headers = Object.fromEntries(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
	return { status: Number(head[0].split(' ')[1]), headers, body: text.slice(split + 4) };
}

test('INGOT_ADMIN_HOST binds the admin listener apart from HOST', { ...T, skip: LWIP && 'lwIP listens on its own device\'s one address' }, async () => {
	const srv = await startServer({ HOST: '0.0.0.0', INGOT_ADMIN_PORT: '0', INGOT_ADMIN_HOST: '127.0.0.1' });
	const a = await admin(srv);
	assert.equal(srv.listening.addr, '0.0.0.0');
	assert.equal(a.addr, '127.0.0.1');
	assert.equal((await ask(a.at, '/livez')).status, 200);
	await srv.stop();
});

test('INGOT_ADMIN_TOKEN: /metrics and /loglevel ask for it (401, WWW-Authenticate: Bearer), the probes do not; the token is never logged', T, async () => {
	const token = 's3cret-admin-token';
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_ADMIN_TOKEN: token });
	const { at } = await admin(srv);
	for (const p of ['/metrics', '/loglevel']) {
		for (const t of [undefined, 'wrong', `${token}x`, token.slice(0, -1)]) {
			const r = await ask(at, p, { token: t });
			assert.equal(r.status, 401, `${p} with ${t}`);
			assert.equal(r.headers['www-authenticate'], 'Bearer');
		}
		assert.equal((await ask(at, p, { token })).status, 200, p);
	}
	for (const p of ['/livez', '/readyz']) assert.equal((await ask(at, p)).status, 200, p);
	await srv.stop();
	assert.ok(!srv.lines.join('\n').includes(token), 'the token is not in the logs');
});

test('GET /loglevel says the level; PUT from loopback changes it (logged, "by":"admin"); a word that is no level is 400', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' });
	const { at } = await admin(srv);
	assert.deepEqual(JSON.parse((await ask(at, '/loglevel')).body), { level: 'info' });
	let mark = srv.mark();
	let r = await ask(at, '/loglevel', { method: 'PUT', body: 'debug\n' });
	assert.equal(r.status, 200, r.body);
	assert.deepEqual(JSON.parse(r.body), { level: 'debug' });
	const changed = await srv.waitLog((l) => l.msg === 'log level changed', mark);
	assert.deepEqual([changed.level, changed.by], ['debug', 'admin']);
	assert.deepEqual(JSON.parse((await ask(at, '/loglevel')).body), { level: 'debug' });
	r = await ask(at, '/loglevel', { method: 'PUT', body: 'loud' });
	assert.equal(r.status, 400);
	r = await ask(at, '/loglevel', { method: 'DELETE' });
	assert.equal(r.status, 405);
	assert.equal(r.headers.allow, 'GET, HEAD, PUT');
	mark = srv.mark();
	r = await ask(at, '/loglevel', { method: 'PUT', body: 'warn' });
	assert.deepEqual(JSON.parse(r.body), { level: 'warn' });
	// At warn, an info line (the access log's) is not written.
	await srv.stop();
	assert.ok(!srv.logs.slice(mark).some((l) => l.level === 'info'), 'no info line after warn');
});

test('SIGUSR1 turns debug on, SIGUSR2 goes back to INGOT_LOG_LEVEL, each logged', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_LOG_LEVEL: 'info' });
	await ask((await admin(srv)).at, '/loglevel', { method: 'PUT', body: 'error' }); // not INGOT_LOG_LEVEL's
	const { at } = await admin(srv);
	let mark = srv.mark();
	srv.signal('SIGUSR1');
	let l = await srv.waitLog((x) => x.msg === 'log level changed', mark);
	assert.deepEqual([l.level, l.by], ['debug', 'SIGUSR1']);
	assert.deepEqual(JSON.parse((await ask(at, '/loglevel')).body), { level: 'debug' });
	mark = srv.mark();
	srv.signal('SIGUSR2');
	l = await srv.waitLog((x) => x.msg === 'log level changed', mark);
	assert.deepEqual([l.level, l.by], ['info', 'SIGUSR2']);
	assert.deepEqual(JSON.parse((await ask(at, '/loglevel')).body), { level: 'info' });
	await srv.stop();
});

test('debug level: an outbound call\'s line (origin, status, duration) and a timeout\'s (what it waited for); none of them at info', T, async () => {
	const debugLines = (srv) => srv.logs.filter((l) => l.level === 'debug');
	const run = async (level) => {
		const srv = await startServer({ INGOT_LOG_LEVEL: level, INGOT_HEADER_TIMEOUT_MS: '100', INGOT_ACCESS_LOG: '1' });
		assert.equal((await curlResponse(srv.port, '/proxy/json')).status, 200); // calls the service itself
		const c = await RawClient.connect(srv.port);
		c.write('GET /json HTTP/1.1\r\n'); // and no more: the head times out
		await c.waitEnd();
		await srv.stop();
		return srv;
	};
	let srv = await run('debug');
	const call = debugLines(srv).find((l) => l.msg === 'outbound call');
	assert.ok(call, srv.lines.join('\n'));
	assert.equal(call.method, 'GET');
	assert.equal(call.origin, `http://127.0.0.1:${srv.port}`);
	assert.equal(call.status, 200);
	assert.ok(Number.isInteger(call.duration_us) && call.duration_us > 0);
	const timeout = debugLines(srv).find((l) => l.msg === 'connection timed out');
	assert.equal(timeout?.waiting_for, 'head', srv.lines.join('\n'));
	srv = await run('info');
	assert.deepEqual(debugLines(srv), []);
});
