// Pipelining and the pending path over raw sockets: many requests in one
// write, a request split into single bytes, handlers that complete later
// keeping the response order, and a client that leaves while its request
// is pending.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, RawClient, req, BODY } from './lib.mjs';

let srv;
// A header timeout shorter than the default (10 s) only so that a request
// left stuck in the read buffer shows up as a 408 quickly.
before(async () => { srv = await startServer({ INGOT_LOG_LEVEL: 'debug', INGOT_HEADER_TIMEOUT_MS: '2000' }); });
after(async () => { if (srv) await srv.stop(); cleanup(); });

const T = { timeout: 20000 };

function mixedTarget(i) {
	if (i % 10 === 3) return ['/health', BODY.health];
	if (i % 10 === 7) return ['/json', BODY.json];
	return [`/blog/${i}`, BODY.blog(i)];
}

test('100 pipelined requests in one write get 100 ordered responses', T, async () => {
	const c = await RawClient.connect(srv.port);
	const expected = [];
	let data = '';
	for (let i = 1; i <= 100; i++) {
		const [target, body] = mixedTarget(i);
		data += req('GET', target);
		expected.push(body);
	}
	await c.write(data);
	const got = await c.responses(100);
	got.forEach((r, i) => {
		assert.equal(r.status, 200, `response ${i + 1}`);
		assert.equal(r.text, expected[i], `response ${i + 1}`);
		assert.equal(r.headers.connection, undefined, 'keep-alive is the default in 1.1');
	});
	assert.equal(c.buf.length, 0, 'nothing beyond the 100 responses');
	assert.equal(c.ended, false, 'the connection stays open');
	// still usable
	await c.write(req('GET', '/health'));
	assert.equal((await c.response()).text, BODY.health);
	c.destroy();
});

test('1000 pipelined requests in one write (more than the read buffer and the queue bound) get 1000 ordered responses', T, async () => {
	const c = await RawClient.connect(srv.port);
	let data = '';
	for (let i = 1; i <= 1000; i++) data += req('GET', `/blog/${i}`);
	assert.ok(data.length > 32768, 'larger than one read buffer');
	await c.write(data);
	for (let i = 1; i <= 1000; i++) {
		const r = await c.response();
		assert.equal(r.text, BODY.blog(i), `response ${i}`);
	}
	assert.equal(c.buf.length, 0);
	c.destroy();
});

test('a request sent one byte per write gets the right response', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.writeBytewise(req('GET', '/blog/7', { headers: ['User-Agent: bytewise', 'Accept: */*'] }));
	const r = await c.response();
	assert.equal(r.status, 200);
	assert.equal(r.text, BODY.blog(7));
	c.destroy();
});

// The head never ends, so a server that looked only for its end would
// answer 408 at the header timeout: the error is found as its bytes come.
test('a head sent one byte per write is refused 400 at its first bad field, before it ends', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.writeBytewise('GET /health HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nBad Name: 1\r\n');
	const r = await c.response();
	assert.equal(r.status, 400);
	c.destroy();
});

test('a chunked POST and a pipelined GET sent one byte per write are both answered in order', T, async () => {
	const c = await RawClient.connect(srv.port);
	const data = 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
		'3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n' + req('GET', '/json');
	await c.writeBytewise(data);
	const [a, b] = await c.responses(2);
	assert.equal(a.status, 405);
	assert.equal(b.status, 200);
	assert.equal(b.text, BODY.json);
	c.destroy();
});

test('pipelined /delay/200, /health, /delay/50 in one write: responses arrive in request order', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/delay/200') + req('GET', '/health') + req('GET', '/delay/50'));
	const r = await c.responses(3);
	assert.deepEqual(r.map((x) => x.status), [200, 200, 200]);
	assert.deepEqual(r.map((x) => x.text), [BODY.delay(200), BODY.health, BODY.delay(50)]);
	c.destroy();
});

test('ready responses behind a pending one wait for it, then leave together in order', T, async () => {
	const c = await RawClient.connect(srv.port);
	const list = [req('GET', '/delay/100')];
	for (let i = 1; i <= 20; i++) list.push(req('GET', `/blog/${i}`));
	list.push(req('GET', '/delay/10'), req('GET', '/json'));
	await c.write(list.join(''));
	const r = await c.responses(list.length);
	assert.equal(r[0].text, BODY.delay(100));
	for (let i = 1; i <= 20; i++) assert.equal(r[i].text, BODY.blog(i));
	assert.equal(r[21].text, BODY.delay(10));
	assert.equal(r[22].text, BODY.json);
	c.destroy();
});

test('a pending request whose client resets the connection is dropped ("response dropped: client gone") and the server stays healthy', T, async () => {
	const c = await RawClient.connect(srv.port);
	// /health first: when its response arrives the /delay request has been read.
	await c.write(req('GET', '/health') + req('GET', '/delay/200'));
	assert.equal((await c.response()).text, BODY.health);
	const mark = srv.mark();
	c.sock.resetAndDestroy();
	await c.closed;
	const d = await srv.waitLog((l) => l.msg === 'response dropped: client gone', mark);
	assert.equal(d.level, 'debug');
	// /delay waits linearly (ig_sleep): cancelled, it returned at once.
	assert.equal(d.status, 503);
	// Its 503 reaches nobody: no failure to log ("server error").
	assert.equal(srv.logs.slice(mark).filter((l) => l.level === 'error').length, 0,
		srv.logs.slice(mark).map((l) => JSON.stringify(l)).join('\n'));
	// healthy: new connections are served
	const c2 = await RawClient.connect(srv.port);
	await c2.write(req('GET', '/health') + req('GET', '/delay/1'));
	const r = await c2.responses(2);
	assert.equal(r[0].text, BODY.health);
	assert.equal(r[1].text, BODY.delay(1));
	c2.destroy();
});

test('a client that closes (FIN) while its request is pending does not disturb the server', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/health') + req('GET', '/delay/100'));
	assert.equal((await c.response()).text, BODY.health);
	c.sock.end();
	// The server either answers the pending request and closes, or drops it;
	// either way the connection ends and the server keeps serving.
	await c.waitEnd();
	const c2 = await RawClient.connect(srv.port);
	await c2.write(req('GET', '/json'));
	assert.equal((await c2.response()).text, BODY.json);
	c2.destroy();
	c.destroy();
});

test('requests pipelined after a request with Connection: close are not answered', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/blog/1') + req('GET', '/blog/2', { headers: ['Connection: close'] }) +
		req('GET', '/blog/3'));
	const [a, b] = await c.responses(2);
	assert.equal(a.text, BODY.blog(1));
	assert.equal(b.text, BODY.blog(2));
	assert.equal(b.headers.connection, 'close');
	await c.waitEnd();
	assert.equal(c.buf.length, 0, 'no third response');
});

test('a malformed request behind a pending one: the pending response first, then the 400, then close', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/delay/100') + 'GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n' + req('GET', '/health'));
	const a = await c.response();
	assert.equal(a.text, BODY.delay(100));
	const b = await c.response();
	assert.equal(b.status, 400);
	assert.equal(b.headers.connection, 'close');
	await c.waitEnd();
	assert.equal(c.buf.length, 0, 'the /health after the bad request is not answered');
});

function pendingThenMany(n) {
	let data = req('GET', '/delay/50');
	for (let i = 1; i <= n; i++) data += req('GET', `/blog/${i}`);
	return data;
}

test('a pending request followed by 127 pipelined requests (exactly the queue bound) in one write: all 128 answered in order', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(pendingThenMany(127));
	assert.equal((await c.response()).text, BODY.delay(50));
	for (let i = 1; i <= 127; i++) {
		const r = await c.response();
		assert.equal(r.status, 200, `response to /blog/${i}: ${r.text}`);
		assert.equal(r.text, BODY.blog(i));
	}
	c.destroy();
});

test('a pending request followed by 200 pipelined requests in one write (more than the queue bound of 128): all 201 answered in order', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(pendingThenMany(200));
	assert.equal((await c.response()).text, BODY.delay(50));
	for (let i = 1; i <= 200; i++) {
		const r = await c.response();
		assert.equal(r.status, 200, `response to /blog/${i}: ${r.text}`);
		assert.equal(r.text, BODY.blog(i));
	}
	assert.equal(c.ended, false);
	c.destroy();
});
