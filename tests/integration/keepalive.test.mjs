// Connection management: keep-alive by default in 1.1, Connection: close,
// HTTP/1.0 with and without keep-alive, Expect: 100-continue, chunked
// request bodies with trailers, and absolute-form targets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, RawClient, rawRequest, req, BODY } from './lib.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { if (srv) await srv.stop(); cleanup(); });

const T = { timeout: 20000 };

test('two requests one after the other on one HTTP/1.1 connection are both answered; it stays open', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/health'));
	const a = await c.response();
	assert.equal(a.text, BODY.health);
	assert.equal(a.headers.connection, undefined);
	await c.write(req('GET', '/blog/3'));
	const b = await c.response();
	assert.equal(b.text, BODY.blog(3));
	assert.equal(c.ended, false);
	c.destroy();
});

test('Connection: close is honoured: the response says Connection: close and the server closes the socket', T, async () => {
	const { res, client } = await rawRequest(srv.port, req('GET', '/health', { headers: ['Connection: close'] }));
	assert.equal(res.status, 200);
	assert.equal(res.text, BODY.health);
	assert.equal(res.headers.connection, 'close');
	await client.waitEnd();
	assert.equal(client.buf.length, 0);
	client.destroy();
});

test('Connection: close among other options ("TE, close") is honoured', T, async () => {
	const { res, client } = await rawRequest(srv.port, req('GET', '/health', { headers: ['Connection: TE, Close'] }));
	assert.equal(res.headers.connection, 'close');
	await client.waitEnd();
	client.destroy();
});

test('HTTP/1.0 without keep-alive gets its response and the connection closes', T, async () => {
	const { res, client } = await rawRequest(srv.port, 'GET /json HTTP/1.0\r\n\r\n');
	assert.equal(res.status, 200);
	assert.equal(res.version, '1.1');
	assert.equal(res.text, BODY.json);
	assert.notEqual(res.headers.connection, 'keep-alive');
	await client.waitEnd();
	assert.equal(client.buf.length, 0);
	client.destroy();
});

test('HTTP/1.0 with Connection: keep-alive stays open and the response says keep-alive', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write('GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
	const a = await c.response();
	assert.equal(a.text, BODY.health);
	assert.equal(a.headers.connection, 'keep-alive');
	await c.write('GET /blog/10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
	const b = await c.response();
	assert.equal(b.text, BODY.blog(10));
	assert.equal(b.headers.connection, 'keep-alive');
	assert.equal(c.ended, false);
	// a 1.0 request without keep-alive then ends it
	await c.write('GET /health HTTP/1.0\r\n\r\n');
	const last = await c.response();
	assert.equal(last.text, BODY.health);
	await c.waitEnd();
	c.destroy();
});

test('Expect: 100-continue gets "HTTP/1.1 100 Continue" before the body is sent, then the final response', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write('POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n');
	const interim = await c.response();
	assert.equal(interim.status, 100);
	assert.equal(interim.raw.toString('latin1'), 'HTTP/1.1 100 Continue\r\n\r\n');
	await c.write('hello world');
	const fin = await c.response();
	assert.equal(fin.status, 405);
	// the connection goes on
	await c.write(req('GET', '/health'));
	assert.equal((await c.response()).text, BODY.health);
	c.destroy();
});

test('Expect: 100-continue with a body larger than the read buffer gets 100 Continue, then the final response', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write('POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\nExpect: 100-continue\r\n\r\n');
	const interim = await c.response();
	assert.equal(interim.status, 100);
	await c.write(Buffer.alloc(200000, 0x41));
	assert.equal((await c.response()).status, 405);
	c.destroy();
});

test('Expect: 100-continue with the body already sent gets no 100 Continue, just the response', T, async () => {
	const { res, client } = await rawRequest(srv.port,
		'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhi' + req('GET', '/json'));
	assert.equal(res.status, 405);
	assert.equal((await client.response()).text, BODY.json);
	client.destroy();
});

test('Expect: 100-continue whose body exceeds INGOT_MAX_BODY gets 413, not 100 Continue', T, async () => {
	const { res, client } = await rawRequest(srv.port,
		'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n');
	assert.equal(res.status, 413);
	await client.waitEnd();
	client.destroy();
});

test('a chunked request body with trailers is consumed and the next pipelined request is answered', T, async () => {
	const body = '5\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\nX-More: 1\r\n\r\n';
	const { res, client } = await rawRequest(srv.port,
		`POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}` + req('GET', '/json') + req('GET', '/blog/9'));
	assert.equal(res.status, 405);
	const [a, b] = await client.responses(2);
	assert.equal(a.text, BODY.json);
	assert.equal(b.text, BODY.blog(9));
	client.destroy();
});

test('a chunked body split across writes (size line, data and trailer apart) is consumed', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write('POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
	await c.write('a\r');
	await c.write('\n0123456');
	await c.write('789\r\n0\r\nX-T');
	await c.write(': 1\r\n\r');
	await c.write('\n' + req('GET', '/health'));
	const [a, b] = await c.responses(2);
	assert.equal(a.status, 405);
	assert.equal(b.text, BODY.health);
	c.destroy();
});

test('an absolute-form target (GET http://x/health) is routed by its path', T, async () => {
	const { res, client } = await rawRequest(srv.port, 'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n' +
		'GET http://example.test:8080/blog/4?q=1 HTTP/1.1\r\nHost: x\r\n\r\n');
	assert.equal(res.status, 200);
	assert.equal(res.text, BODY.health);
	assert.equal((await client.response()).text, BODY.blog(4));
	client.destroy();
});

test('a GET with a Content-Length body is answered and the body is not taken as the next request', T, async () => {
	const { res, client } = await rawRequest(srv.port,
		'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nXXXX' + req('GET', '/blog/8'));
	assert.equal(res.text, BODY.health);
	assert.equal((await client.response()).text, BODY.blog(8));
	client.destroy();
});

test('a client half-close (FIN) after its requests still gets their responses, then the server closes', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/json') + req('GET', '/health'));
	c.sock.end();
	const [a, b] = await c.responses(2);
	assert.equal(a.text, BODY.json);
	assert.equal(b.text, BODY.health);
	await c.waitEnd();
	c.destroy();
});

test('a client that closes its side while a request is pending is taken as gone: earlier responses arrive, the pending one is cancelled', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/json') + req('GET', '/delay/50'));
	const [a] = await c.responses(1);
	assert.equal(a.text, BODY.json);
	c.sock.end();
	await c.waitEnd();
	assert.equal(c.buf.length, 0, 'nothing after the first response: the pending one was cancelled');
	c.destroy();
});
