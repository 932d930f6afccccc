// WebSockets (include/ingot/websocket.h, issue 30): the reference service's
// GET /ws/echo (x-ingot-websocket, typed {text, n} both ways) read by npm's
// `ws` client, and by raw sockets for what a client library will not send:
// the handshake's refusals, invalid UTF-8, an unmasked frame, fragments, a
// ping, the close handshake, the limit, the drain.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import WebSocket from 'ws';
import { startServer, cleanup, RawClient, within, adminAddr, scrapeSamples } from './lib.mjs';
import { KEY, ACCEPT, upgrade, frame, frames, closeOf, until, opened, closedWith } from './wslib.mjs';

after(cleanup);

const T = { timeout: 60000 };
let shared;
async function server() {
	shared ??= await startServer({ INGOT_WS_MAX_MESSAGE: '65536' });
	return shared;
}

test('the handshake: 101 with RFC 6455\'s accept value', T, async () => {
	const srv = await server();
	const c = await opened(srv);
	const head = c.buf.toString('latin1').split('\r\n\r\n')[0];
	assert.match(head, /\r\nUpgrade: websocket\r\n/i);
	assert.match(head, /\r\nConnection: Upgrade\r\n/i);
	assert.match(head, new RegExp(`\r\nSec-WebSocket-Accept: ${ACCEPT.replace(/[+/=]/g, '\\$&')}\r\n`));
	c.destroy();
});

test('npm ws: typed echo, n + 1, several in order; a clean close', T, async () => {
	const srv = await server();
	const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws/echo`);
	await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
	const got = [];
	const all = new Promise((res) => ws.on('message', (d, binary) => {
		assert.equal(binary, false);
		got.push(JSON.parse(d.toString()));
		if (got.length === 3) res();
	}));
	for (let n = 1; n <= 3; n++) ws.send(JSON.stringify({ text: `héllo ${n}`, n }));
	await within(20000, all, 'three echoes');
	assert.deepEqual(got, [1, 2, 3].map((n) => ({ text: `héllo ${n}`, n: n + 1 })));
	const closed = new Promise((res) => ws.once('close', (code, reason) => res({ code, reason: reason.toString() })));
	ws.close(1000, 'bye');
	assert.deepEqual(await within(20000, closed, 'the close'), { code: 1000, reason: 'bye' });
});

test('npm ws: ping is answered with a pong of the same payload', T, async () => {
	const srv = await server();
	const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws/echo`);
	await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
	const pong = new Promise((res) => ws.once('pong', (d) => res(d.toString())));
	ws.ping('are you there');
	assert.equal(await within(20000, pong, 'the pong'), 'are you there');
	ws.terminate();
});

test('a message its schema refuses, or not JSON, closes with 1008 and the reason', T, async () => {
	const srv = await server();
	for (const [msg, reason] of [['{"text": 5, "n": 1}', /^\/text: /], ['{"text": "x"', /^invalid JSON: /],
		[JSON.stringify({ text: 'x'.repeat(1001), n: 1 }), /^\/text: /], ['{"n": 1}', /text/]]) {
		const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws/echo`);
		await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
		const closed = new Promise((res) => ws.once('close', (code, r) => res({ code, reason: r.toString() })));
		ws.send(msg);
		const { code, reason: why } = await within(20000, closed, 'the close');
		assert.equal(code, 1008, msg);
		assert.match(why, reason, msg);
	}
});

test('fragments are assembled into one message, a ping between them answered', T, async () => {
	const srv = await server();
	const c = await opened(srv);
	const text = JSON.stringify({ text: 'in pieces', n: 41 });
	await c.write(Buffer.concat([frame(1, text.slice(0, 5), { fin: false }), frame(9, 'p'),
		frame(0, text.slice(5, 12), { fin: false }), frame(0, text.slice(12))]));
	await until(c, (b) => frames(b).some((f) => f.op === 1), 'the echo');
	const fs = frames(c.buf);
	assert.equal(fs[0].op, 10);
	assert.equal(fs[0].payload.toString(), 'p');
	assert.deepEqual(JSON.parse(fs[1].payload.toString()), { text: 'in pieces', n: 42 });
	c.destroy();
});

test('invalid UTF-8 in a text message closes with 1007', T, async () => {
	const srv = await server();
	const c = await opened(srv);
	// Split across two frames: the check is on the whole message.
	const bad = Buffer.concat([Buffer.from('{"text": "'), Buffer.from([0xc3]), Buffer.from('", "n": 1}')]);
	await c.write(Buffer.concat([frame(1, bad.subarray(0, 11), { fin: false }), frame(0, bad.subarray(11))]));
	assert.equal((await closedWith(c)).code, 1007);
});

test('a message over INGOT_WS_MAX_MESSAGE closes with 1009', T, async () => {
	const srv = await server();
	const c = await opened(srv);
	await c.write(frame(1, 'x'.repeat(65537)));
	assert.equal((await closedWith(c)).code, 1009);
});

test('protocol errors close with 1002: an unmasked frame, reserved bits, a stray continuation', T, async () => {
	const srv = await server();
	for (const bad of [frame(1, '{}', { mask: false }), frame(1, '{}', { rsv: 0x40 }), frame(0, 'x')]) {
		const c = await opened(srv);
		await c.write(bad);
		assert.equal((await closedWith(c)).code, 1002);
	}
});

test('a binary message closes with 1003 (text/JSON is declared)', T, async () => {
	const srv = await server();
	const c = await opened(srv);
	await c.write(frame(2, Buffer.from([1, 2, 3])));
	assert.equal((await closedWith(c)).code, 1003);
});

test('the client\'s close is answered with its code, then the connection ends', T, async () => {
	const srv = await server();
	const c = await opened(srv);
	const payload = Buffer.concat([Buffer.from([0x0f, 0xa0]), Buffer.from('done')]); // 4000
	await c.write(frame(8, payload));
	assert.deepEqual(await closedWith(c), { code: 4000, reason: 'done' });
});

test('the handshake\'s refusals: version 426, a bad key 400, another Origin 403; no Origin and Host\'s own pass', T, async () => {
	const srv = await server();
	const ask = async (opts) => {
		const c = await RawClient.connect(srv.port);
		await c.write(upgrade('/ws/echo', opts));
		const r = await c.response();
		c.destroy();
		return r;
	};
	const v = await ask({ version: '8' });
	assert.equal(v.status, 426);
	assert.equal(v.headers['sec-websocket-version'], '13');
	assert.equal((await ask({ key: 'short' })).status, 400);
	assert.equal((await ask({ origin: 'http://evil.test', host: 'app.test' })).status, 403);
	const same = await RawClient.connect(srv.port);
	await same.write(upgrade('/ws/echo', { origin: 'http://app.test', host: 'app.test' }));
	await until(same, (b) => b.includes('\r\n\r\n'), 'the 101');
	assert.match(same.buf.toString('latin1'), /^HTTP\/1\.1 101 /);
	same.destroy();
});

test('with CORS configured, only its origins may open one', T, async () => {
	const srv = await startServer({ INGOT_CORS_ORIGINS: 'https://app.test' });
	const ask = async (origin) => {
		const c = await RawClient.connect(srv.port);
		await c.write(upgrade('/ws/echo', { origin, host: 'api.test' }));
		await until(c, (b) => b.includes('\r\n\r\n'), 'the answer');
		const status = Number(c.buf.toString('latin1').split(' ')[1]);
		c.destroy();
		return status;
	};
	assert.equal(await ask('https://app.test'), 101);
	assert.equal(await ask('https://api.test'), 403);
	await srv.stop();
});

test('an idle socket gets pings (INGOT_WS_PING_MS)', T, async () => {
	const srv = await startServer({ INGOT_WS_PING_MS: '100' });
	const c = await opened(srv);
	await until(c, (b) => frames(b).some((f) => f.op === 9), 'a ping');
	await c.write(frame(10, ''));
	c.destroy();
	await srv.stop();
});

test('a client that reads late still gets every echo, in order (reading pauses behind INGOT_MAX_OUTPUT, then resumes)', T, async () => {
	const srv = await startServer({ INGOT_MAX_OUTPUT: '1024', INGOT_WRITE_TIMEOUT_MS: '60000' });
	const sock = net.connect(srv.port, '127.0.0.1');
	await new Promise((res, rej) => { sock.once('connect', res); sock.once('error', rej); });
	// 24 MB of echoes: more than loopback's buffers hold, both ways.
	const text = 'y'.repeat(960), count = 25000;
	const all = [Buffer.from(upgrade('/ws/echo'))];
	for (let n = 0; n < count; n++) all.push(frame(1, JSON.stringify({ text, n })));
	sock.pause();
	sock.write(Buffer.concat(all));
	const chunks = [];
	let bytes = 0;
	let enough = 0; // every echo's head (4 bytes: 126..65535) and payload
	for (let n = 1; n <= count; n++) enough += 4 + JSON.stringify({ text, n }).length;
	const done = new Promise((res, rej) => {
		sock.on('data', (d) => { chunks.push(d); bytes += d.length; if (bytes >= enough) res(); });
		sock.on('close', () => rej(new Error(`closed after ${bytes} bytes`)));
	});
	sock.resume();
	await within(40000, done, 'every echo').catch((e) => { throw new Error(`${e.message}: ${bytes} bytes, ${frames(Buffer.concat(chunks)).length} frames`); });
	const got = frames(Buffer.concat(chunks));
	assert.equal(got.length, count);
	assert.ok(got.every((f, i) => f.op === 1 && JSON.parse(f.payload.toString()).n === i + 1));
	sock.destroy();
	await srv.stop();
});

test('a handler\'s sends wait for room in a late reader\'s window: 20,000 answers to one message, every one', T, async () => {
	const srv = await startServer({ INGOT_MAX_OUTPUT: '1024', INGOT_WRITE_TIMEOUT_MS: '60000' });
	const sock = net.connect(srv.port, '127.0.0.1');
	await new Promise((res, rej) => { sock.once('connect', res); sock.once('error', rej); });
	const text = 'z'.repeat(960), count = 20000;
	sock.pause();
	sock.write(Buffer.concat([Buffer.from(upgrade('/ws/echo')), frame(1, JSON.stringify({ text, n: 7, repeat: count }))]));
	const one = 4 + JSON.stringify({ text, n: 8 }).length;
	const chunks = [];
	let bytes = 0;
	const done = new Promise((res, rej) => {
		sock.on('data', (d) => { chunks.push(d); bytes += d.length; if (bytes >= count * one && frames(Buffer.concat(chunks)).length === count) res(); });
		sock.on('close', () => rej(new Error(`closed after ${bytes} bytes`)));
	});
	sock.resume();
	await within(40000, done, 'every answer').catch((e) => { throw new Error(`${e.message}: ${bytes} bytes`); });
	const got = frames(Buffer.concat(chunks));
	assert.equal(got.length, count);
	assert.ok(got.every((f) => f.op === 1 && f.payload.length === one - 4));
	sock.destroy();
	await srv.stop();
});

test('a message handler that waits (ig_sleep): the next message waits for it, answers in order; an idle socket holds no handler', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws/echo`);
	await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
	const got = [];
	let waitingSeen = null;
	const both = new Promise((res) => ws.on('message', (d) => { got.push(JSON.parse(d.toString())); if (got.length === 2) res(); }));
	ws.send(JSON.stringify({ text: 'slow', n: 1, wait_ms: 300 }));
	ws.send(JSON.stringify({ text: 'fast', n: 10 }));
	// While the first waits, its handler is one waiting on a coroutine.
	waitingSeen = (await scrapeSamples(admin)).get('ingot_handlers_waiting');
	await within(20000, both, 'both answers');
	assert.deepEqual(got.map((m) => m.text), ['slow', 'fast']);
	assert.deepEqual(got.map((m) => m.n), [2, 11]);
	assert.equal(waitingSeen, 1);
	assert.equal((await scrapeSamples(admin)).get('ingot_handlers_waiting'), 0);
	ws.terminate();
	await srv.stop();
});

test('a socket that closes while its handler waits: the wait is cancelled, no answer; the drain likewise, 1001', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const c = await opened(srv);
	await c.write(frame(1, JSON.stringify({ text: 'never', n: 1, wait_ms: 5000 })));
	await within(20000, (async () => { while ((await scrapeSamples(admin)).get('ingot_handlers_waiting') !== 1); })(), 'the handler waiting');
	await c.write(frame(8, Buffer.from([0x03, 0xe8])));
	assert.equal((await closedWith(c)).code, 1000);
	assert.ok(!frames(c.buf).some((f) => f.op === 1), 'no answer after the close');
	await within(20000, (async () => { while ((await scrapeSamples(admin)).get('ingot_handlers_waiting') !== 0); })(), 'the handler gone');
	const d = await opened(srv);
	await d.write(frame(1, JSON.stringify({ text: 'never', n: 1, wait_ms: 5000 })));
	await within(20000, (async () => { while ((await scrapeSamples(admin)).get('ingot_handlers_waiting') !== 1); })(), 'the handler waiting');
	srv.signal('SIGTERM');
	assert.equal((await closedWith(d)).code, 1001);
	assert.equal((await srv.exited).code, 0);
});

test('the drain closes open sockets with 1001; exit 0', T, async () => {
	const srv = await startServer();
	const a = await opened(srv);
	const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws/echo`);
	await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
	const closed = new Promise((res) => ws.once('close', (code) => res(code)));
	srv.signal('SIGTERM');
	assert.equal((await closedWith(a)).code, 1001);
	assert.equal(await within(20000, closed, 'ws\'s close'), 1001);
	assert.equal((await srv.exited).code, 0);
});
