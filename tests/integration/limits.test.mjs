// Limits and timeouts: request line, head size, field count and body size
// (with their exact boundaries), slowloris and the head/body/idle/write
// timeouts, and back-pressure against a client that never reads.
// Timeouts are set short through the environment; tests wait for the
// resulting 408 or close, never for a clock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startServer, cleanup, RawClient, rawRequest, dripHeader, req, BODY, within } from './lib.mjs';

let srv;     // default limits
let quick;   // short head/body/idle timeouts
let pressed; // small output bound, short write timeout
before(async () => {
	[srv, quick, pressed] = await Promise.all([
		startServer(),
		startServer({ INGOT_HEADER_TIMEOUT_MS: '300', INGOT_BODY_TIMEOUT_MS: '300', INGOT_IDLE_TIMEOUT_MS: '300' }),
		startServer({ INGOT_MAX_OUTPUT: '65536', INGOT_WRITE_TIMEOUT_MS: '1000' }),
	]);
});
after(async () => {
	await Promise.all([srv, quick, pressed].filter(Boolean).map((s) => s.stop()));
	cleanup();
});

const T = { timeout: 20000 };

function assertProblem(res, status) {
	assert.equal(res.status, status, `status; body ${res.text}`);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	const p = res.json();
	assert.equal(p.status, status);
	assert.equal(typeof p.title, 'string');
	assert.equal(typeof p.detail, 'string');
	assert.equal(typeof p.type, 'string');
	return p;
}

/** The error response closes the connection: Connection: close, then FIN
 * with nothing after the response. */
async function assertClosedAfter(client, res) {
	assert.equal(res.headers.connection, 'close');
	await client.waitEnd();
	assert.equal(client.buf.length, 0, 'no bytes after the error response');
	client.destroy();
}

// ---- sizes ----

test('a request line of 8193 bytes (one over INGOT_MAX_REQUEST_LINE) is 414 and the connection closes', T, async () => {
	const target = '/' + 'a'.repeat(8193 - 'GET / HTTP/1.1\r\n'.length);
	const data = req('GET', target);
	assert.equal(data.indexOf('\r\n') + 2, 8193);
	const { res, client } = await rawRequest(srv.port, data);
	assertProblem(res, 414);
	await assertClosedAfter(client, res);
});

test('a request line of exactly 8192 bytes is accepted (404 for the unknown path) and the connection stays usable', T, async () => {
	const target = '/' + 'a'.repeat(8192 - 'GET / HTTP/1.1\r\n'.length);
	const data = req('GET', target);
	assert.equal(data.indexOf('\r\n') + 2, 8192);
	const { res, client } = await rawRequest(srv.port, data + req('GET', '/health'));
	assertProblem(res, 404);
	assert.equal((await client.response()).text, BODY.health);
	client.destroy();
});

test('a 20 KiB request line is 414 even though it also exceeds the head limit', T, async () => {
	const { res, client } = await rawRequest(srv.port, req('GET', '/' + 'b'.repeat(20000)));
	assertProblem(res, 414);
	await assertClosedAfter(client, res);
});

function headOfSize(size, target = '/health') {
	// GET target HTTP/1.1\r\nHost: x\r\nX-Pad: ppp...\r\n\r\n has exactly `size` bytes
	const fixed = `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Pad: \r\n\r\n`.length;
	return `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(size - fixed)}\r\n\r\n`;
}

test('a request head of 16385 bytes (one over INGOT_MAX_HEADER_BYTES) is 431 and the connection closes', T, async () => {
	const data = headOfSize(16385);
	assert.equal(data.length, 16385);
	const { res, client } = await rawRequest(srv.port, data);
	assertProblem(res, 431);
	await assertClosedAfter(client, res);
});

test('a request head of exactly 16384 bytes is accepted', T, async () => {
	const data = headOfSize(16384);
	assert.equal(data.length, 16384);
	const { res, client } = await rawRequest(srv.port, data + req('GET', '/json'));
	assert.equal(res.status, 200);
	assert.equal(res.text, BODY.health);
	assert.equal((await client.response()).text, BODY.json);
	client.destroy();
});

test('a head of 20 fields of 1000 bytes (over 16 KiB) is 431', T, async () => {
	const headers = [];
	for (let i = 0; i < 20; i++) headers.push(`X-F${i}: ${'v'.repeat(1000)}`);
	const { res, client } = await rawRequest(srv.port, req('GET', '/health', { headers }));
	assertProblem(res, 431);
	await assertClosedAfter(client, res);
});

test('101 header fields (one over INGOT_MAX_HEADERS) is 431; exactly 100 is accepted', T, async () => {
	const fields = (n) => Array.from({ length: n }, (_, i) => `X-H${i}: ${i}`);
	// Host counts as a field: Host + 100 = 101
	let { res, client } = await rawRequest(srv.port, req('GET', '/health', { headers: fields(100) }));
	assertProblem(res, 431);
	await assertClosedAfter(client, res);
	({ res, client } = await rawRequest(srv.port, req('GET', '/health', { headers: fields(99) })));
	assert.equal(res.status, 200);
	assert.equal(res.text, BODY.health);
	client.destroy();
});

test('Content-Length over INGOT_MAX_BODY (1048577) is 413 right after the head, then close', T, async () => {
	const c = await RawClient.connect(srv.port);
	await c.write('POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n');
	const res = await c.response();
	assertProblem(res, 413);
	await assertClosedAfter(c, res);
});

test('a body of exactly INGOT_MAX_BODY (1 MiB) is read (POST /health: 405) and the connection stays usable', T, async () => {
	const c = await RawClient.connect(srv.port);
	const body = Buffer.alloc(1 << 20, 0x61);
	await c.write(Buffer.concat([Buffer.from('POST /health HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1048576\r\n\r\n'), body]));
	const res = await c.response();
	assert.equal(res.status, 405, res.text);
	assert.equal(res.headers.connection, undefined, 'keep-alive');
	await c.write(req('GET', '/health'));
	const next = await c.response();
	assert.equal(next.status, 200);
	assert.equal(next.text, BODY.health);
	c.destroy();
});

test('a 1 MiB body and a pipelined request in the same write: both answered in order', T, async () => {
	const c = await RawClient.connect(srv.port);
	const body = Buffer.alloc(1 << 20, 0x62);
	await c.write(Buffer.concat([Buffer.from('POST /blog/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n'), body,
		Buffer.from(req('GET', '/blog/2'))]));
	const [a, b] = await c.responses(2);
	assert.equal(a.status, 405);
	assert.equal(b.text, BODY.blog(2));
	c.destroy();
});

test('a chunked body that grows over INGOT_MAX_BODY is 413 and the connection closes', T, async () => {
	const c = await RawClient.connect(srv.port);
	const chunk = Buffer.alloc(65536, 0x63);
	const parts = [Buffer.from('POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')];
	for (let i = 0; i < 17; i++) parts.push(Buffer.from('10000\r\n'), chunk, Buffer.from('\r\n'));
	parts.push(Buffer.from('0\r\n\r\n'));
	c.sock.write(Buffer.concat(parts), () => {});
	const res = await c.response();
	assertProblem(res, 413);
	await assertClosedAfter(c, res);
});

// ---- timeouts ----

test('slowloris: a client trickling a partial head gets 408 problem+json and is closed, while another client is served meanwhile', T, async () => {
	const slow = await RawClient.connect(quick.port);
	await slow.write('GET /health HTTP/1.1\r\nHost: x\r\n');
	// Keep trickling one header byte at a time: it must not extend the deadline.
	const stopDrip = dripHeader(slow, 10);
	try {
		const other = await RawClient.connect(quick.port);
		await other.write(req('GET', '/json'));
		const r = await other.response();
		assert.equal(r.text, BODY.json);
		assert.equal(slow.received, 0, 'the other client is answered before the slow client gets its 408');
		other.destroy();
		const res = await slow.response();
		assertProblem(res, 408);
		await assertClosedAfter(slow, res);
		// and the server goes on serving
		const later = await RawClient.connect(quick.port);
		await later.write(req('GET', '/health'));
		assert.equal((await later.response()).text, BODY.health);
		later.destroy();
	} finally {
		stopDrip();
	}
});

test('a partial head that stops is 408 after INGOT_HEADER_TIMEOUT_MS, then close', T, async () => {
	const c = await RawClient.connect(quick.port);
	await c.write('GET /health HTTP/1.1\r\nHo');
	const res = await c.response();
	assertProblem(res, 408);
	await assertClosedAfter(c, res);
});

test('a large Content-Length body that stops arriving is 408 after INGOT_BODY_TIMEOUT_MS, then close', T, async () => {
	const c = await RawClient.connect(quick.port);
	await c.write('POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 500000\r\n\r\n' + 'q'.repeat(100000));
	const res = await c.response();
	assertProblem(res, 408);
	await assertClosedAfter(c, res);
});

test('a chunked body that stops arriving is 408, then close', T, async () => {
	const c = await RawClient.connect(quick.port);
	await c.write('POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab');
	const res = await c.response();
	assertProblem(res, 408);
	await assertClosedAfter(c, res);
});

test('the head deadline is per request: back-to-back pipelined requests whose heads straddle reads are never 408 while each head completes at once', T, async () => {
	// Each write completes the pending head and starts the next one; every
	// head is whole within one round trip, far below the 300 ms limit.
	// Keep going for three header timeouts.
	const c = await RawClient.connect(quick.port);
	const full = req('GET', '/health');
	const cut = 20;
	await c.write(full.slice(0, cut));
	const start = Date.now();
	let n = 0;
	while (Date.now() - start < 900) {
		await c.write(full.slice(cut) + full.slice(0, cut));
		const r = await c.response();
		n++;
		assert.equal(r.status, 200, `request ${n}: ${r.text}`);
	}
	c.destroy();
});

test('the body deadline is per request: back-to-back chunked uploads whose bodies straddle reads are never 408 while each body completes at once', T, async () => {
	const c = await RawClient.connect(quick.port);
	const head = 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n';
	await c.write(head);
	const start = Date.now();
	let n = 0;
	while (Date.now() - start < 900) {
		// ends this body and starts the next request's body
		await c.write('0\r\n\r\n' + head);
		const r = await c.response();
		n++;
		assert.equal(r.status, 405, `request ${n}: ${r.text}`);
	}
	c.destroy();
});

test('an idle keep-alive connection is closed after INGOT_IDLE_TIMEOUT_MS without a response', T, async () => {
	const c = await RawClient.connect(quick.port);
	await c.write(req('GET', '/health'));
	assert.equal((await c.response()).text, BODY.health);
	await c.waitEnd();
	assert.equal(c.buf.length, 0, 'no bytes (no 408) on an idle close');
	c.destroy();
	const fresh = await RawClient.connect(quick.port);
	await fresh.waitEnd();
	assert.equal(fresh.received, 0, 'a connection that never sends is closed silently');
	fresh.destroy();
});

// ---- back-pressure ----

test('back-pressure: a client pipelining GET /json without reading is pushed back (the server stops reading) and closed after INGOT_WRITE_TIMEOUT_MS, while another client is served', { timeout: 60000 }, async (t) => {
	const sock = net.connect({ host: pressed.host, port: pressed.port });
	await once(sock, 'connect');
	sock.pause(); // never read a byte of the responses
	let error = null;
	sock.on('error', (e) => { error = e; });
	const closed = new Promise((resolve) => sock.once('close', () => resolve('close')));
	const chunk = Buffer.from(req('GET', '/json').repeat(1000)); // ~31 KB, 1000 requests
	const maxRequests = 2_000_000;
	let sent = 0;
	let stalls = 0;
	let servedMeanwhile = false;
	while (sent < maxRequests) {
		const ok = sock.write(chunk, () => {});
		sent += 1000;
		if (ok) continue;
		stalls++;
		// Listened for before another client is served below, during which
		// the socket may drain (not events.once: it would reject on the
		// 'error' of the reset).
		const drained = new Promise((resolve) => sock.once('drain', () => resolve('drain')));
		if (stalls === 1) {
			// The first stall: the server is now pushing back. Another
			// client must be served normally meanwhile.
			const other = await RawClient.connect(pressed.port);
			await other.write(req('GET', '/json') + req('GET', '/health'));
			const [a, b] = await within(15000, other.responses(2),
				`another client was not answered while the first was pushed back (sent ${sent})`);
			assert.equal(a.text, BODY.json);
			assert.equal(b.text, BODY.health);
			other.destroy();
			// (the write timeout is 1 s, so a loaded machine still has
			// ample time to serve this one before the first is cut)
			servedMeanwhile = !error && !sock.destroyed;
		}
		// Bounded, so a connection that neither drains nor closes fails
		// with its state rather than at the test's timeout.
		const r = await within(20000, Promise.race([drained, closed]),
			`the pushed-back client neither drained nor was closed (sent ${sent}, stalls ${stalls}, ` +
			`unsent ${sock.writableLength} bytes, error ${error && error.code})`);
		if (r === 'close') break;
	}
	assert.ok(sent < maxRequests, `the server read all ${sent} requests without pushing back`);
	t.diagnostic(`requests written before the server closed: ${sent}, stalls: ${stalls}, unsent bytes: ${sock.writableLength}`);
	// The last write never drained: the server had stopped reading. It is
	// the server that ends it, after the write timeout.
	const how = await within(20000, closed, 'the server did not close the non-reading client');
	assert.equal(how, 'close');
	assert.ok(error && ['ECONNRESET', 'EPIPE'].includes(error.code),
		`the pending write failed with a reset (${error && error.code}; sent ${sent} requests, ${stalls} stalls)`);
	assert.ok(servedMeanwhile, 'another client was served while the first was pushed back');
	// and the server is fine afterwards
	const after = await RawClient.connect(pressed.port);
	await after.write(req('GET', '/health'));
	assert.equal((await after.response()).text, BODY.health);
	after.destroy();
});
