// Streamed request bodies (include/ingot/body.h's ig_body_in_read, issue
// 30): the reference service's PUT /files/{name} (x-ingot-stream-body,
// maxBytes 64 MiB) stores its body in FILES_DIR as it arrives. Real
// clients (curl with its Expect: 100-continue, undici's fetch with a
// stream body, chunked) store 64 MiB intact while the server's memory
// stays put; a body over the limit is refused (413) before the handler
// with a Content-Length, as it passes the limit when chunked; the
// connection parses what follows a body; a client that leaves or stalls
// (INGOT_BODY_TIMEOUT_MS, an idle timeout here) stops the handler and
// leaves the directory as it was; the drain lets an upload end.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fetch } from 'undici';
import { startServer, cleanup, RawClient, req, adminAddr, scrapeSamples as metrics, within, curl, curlResponse, assertProblem } from './lib.mjs';

const T = { timeout: 120000 };
const MiB = 1 << 20;
const BIG = 64 * MiB;
let root, src, srcSha;

before(() => {
	root = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-uploads-'));
	src = path.join(root, 'source.bin');
	const h = crypto.createHash('sha256');
	const fd = fs.openSync(src, 'w');
	for (let i = 0; i < BIG / MiB; i++) {
		const b = crypto.randomBytes(MiB);
		h.update(b);
		fs.writeSync(fd, b);
	}
	fs.closeSync(fd);
	srcSha = h.digest('hex');
});

after(() => {
	cleanup();
	if (root) fs.rmSync(root, { recursive: true, force: true });
});

// A directory of its own for each test's service.
function filesDir() {
	return fs.mkdtempSync(path.join(root, 'dir-'));
}

const sha = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function rssKiB(pid) {
	return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

async function waiting(admin, n) {
	let m;
	do m = await metrics(admin); while (m.get('ingot_handlers_waiting') !== n);
	return m;
}

// A PUT on a socket of its own: head, then the body as the test writes
// it (send), and the answer's text once the server closes or answers.
function upload(port, target, headers) {
	const sock = net.connect({ host: '127.0.0.1', port });
	let text = '';
	sock.setEncoding('latin1');
	sock.on('data', (d) => { text += d; });
	const closed = new Promise((resolve) => sock.on('close', () => resolve(text)));
	sock.on('error', () => {});
	sock.write(`PUT ${target} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`);
	const send = (b) => new Promise((resolve) => { if (sock.write(b)) resolve(); else sock.once('drain', resolve); });
	return { sock, send, closed, text: () => text };
}

test('curl uploads 64 MiB with its Content-Length (and Expect: 100-continue): 201 {name, size}, the file intact', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir });
	const r = await curl(['-sS', '-D', '-', '-T', src, `http://127.0.0.1:${srv.port}/files/big.bin`], { timeoutMs: 60000 });
	assert.equal(r.code, 0, r.stderr);
	const s = r.stdout.toString('latin1');
	assert.match(s, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 Created\r\n/);
	assert.deepEqual(JSON.parse(s.slice(s.lastIndexOf('\r\n\r\n') + 4)), { name: 'big.bin', size: BIG });
	assert.equal(sha(path.join(dir, 'big.bin')), srcSha);
	assert.deepEqual(fs.readdirSync(dir), ['big.bin'], 'no part left behind');
});

test('undici fetch uploads it chunked (a stream body): 201, intact; a second PUT replaces the file', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir });
	const res = await fetch(`http://127.0.0.1:${srv.port}/files/streamed.bin`, {
		method: 'PUT', body: Readable.toWeb(fs.createReadStream(src, { highWaterMark: 256 * 1024 })), duplex: 'half',
		headers: { 'content-type': 'application/octet-stream' },
	});
	assert.equal(res.status, 201);
	assert.deepEqual(await res.json(), { name: 'streamed.bin', size: BIG });
	assert.equal(sha(path.join(dir, 'streamed.bin')), srcSha);
	const again = await fetch(`http://127.0.0.1:${srv.port}/files/streamed.bin`, { method: 'PUT', body: 'short now' });
	assert.equal(again.status, 201);
	assert.equal(fs.readFileSync(path.join(dir, 'streamed.bin'), 'utf8'), 'short now');
	// GET /files/{name} gives back what PUT stored.
	assert.equal((await curlResponse(srv.port, '/files/streamed.bin')).body.toString(), 'short now');
});

test('the server\'s RSS grows by under 2 MiB over a 64 MiB upload', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	// A first upload maps what any upload uses (a coroutine stack, the
	// request's memory, the read buffer): the transfer's own growth is
	// what is measured.
	const warm = await curlResponse(srv.port, '/files/warm.txt', ['-X', 'PUT', '--data-binary', 'warm']);
	assert.equal(warm.status, 201, warm.body.toString());
	await waiting(admin, 0);
	const before = rssKiB(srv.pid);
	let most = before;
	const u = upload(srv.port, '/files/paced.bin', [`Content-Length: ${BIG}`, 'Connection: close']);
	const fd = fs.openSync(src, 'r');
	const piece = Buffer.alloc(MiB);
	for (let sent = 0; sent < BIG; sent += MiB) {
		fs.readSync(fd, piece, 0, MiB, sent);
		await u.send(piece);
		if (sent % (4 * MiB) === 0) most = Math.max(most, rssKiB(srv.pid));
	}
	fs.closeSync(fd);
	const text = await within(60000, u.closed, 'the answer');
	assert.match(text, /^HTTP\/1\.1 201 Created\r\n/);
	assert.equal(sha(path.join(dir, 'paced.bin')), srcSha);
	console.log(`# upload: server RSS ${before} KiB before, at most ${most} KiB during 64 MiB`);
	assert.ok(most - before <= 2048, `RSS grew ${most - before} KiB`);
});

test('over maxBytes: a Content-Length is refused 413 before the handler; a chunked body once past it, leaving nothing', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir });
	const over = upload(srv.port, '/files/over.bin', [`Content-Length: ${BIG + 1}`]);
	const text = await within(20000, over.closed, 'the answer');
	assert.match(text, /^HTTP\/1\.1 413 /);
	assert.match(text, /the request body is too large/);
	assert.deepEqual(fs.readdirSync(dir), [], 'the handler never ran');

	const chunked = upload(srv.port, '/files/over.bin', ['Transfer-Encoding: chunked']);
	const piece = Buffer.alloc(MiB, 7);
	const head = Buffer.from(`${MiB.toString(16)}\r\n`), tail = Buffer.from('\r\n');
	// Sent until the server answers and closes (its answer may come while
	// the test still writes).
	let sent = 0;
	while (!chunked.sock.destroyed && !chunked.text() && sent <= BIG) {
		await chunked.send(Buffer.concat([head, piece, tail]));
		sent += MiB;
	}
	const t2 = await within(20000, chunked.closed, 'the answer');
	assert.match(t2, /^HTTP\/1\.1 413 /, t2);
	assert.match(t2, /over 64 MiB/);
	assert.match(t2, /\r\nConnection: close\r\n/i);
	assert.ok(sent > BIG, `answered after ${sent} bytes`);
	assert.deepEqual(fs.readdirSync(dir), [], 'the part is removed');
	assert.equal((await curlResponse(srv.port, '/health')).status, 200);
});

test('the connection parses what follows a body: a PUT and a GET in one write, with a Content-Length or chunked', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir });
	const c = await RawClient.connect(srv.port);
	await c.write(req('PUT', '/files/a.txt', { body: 'first file' }) + req('GET', '/files/a.txt') +
		req('PUT', '/files/b.txt', { headers: ['Transfer-Encoding: chunked'], body: '5\r\nsecon\r\n6\r\nd file\r\n0\r\n\r\n' }) +
		req('GET', '/health'));
	const [a, getA, b, health] = await c.responses(4);
	assert.equal(a.status, 201);
	assert.deepEqual(JSON.parse(a.body), { name: 'a.txt', size: 10 });
	assert.equal(getA.body.toString(), 'first file');
	assert.equal(b.status, 201);
	assert.deepEqual(JSON.parse(b.body), { name: 'b.txt', size: 11 });
	assert.equal(fs.readFileSync(path.join(dir, 'b.txt'), 'utf8'), 'second file');
	assert.equal(health.status, 200);
	c.destroy();
});

test('a client that leaves mid-upload stops the handler (logged): no file, no part, nothing waiting', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const u = upload(srv.port, '/files/left.bin', [`Content-Length: ${BIG}`]);
	await u.send(Buffer.alloc(3 * MiB, 1));
	await waiting(admin, 1); // the handler waits for the rest
	u.sock.destroy();
	const l = await within(20000, srv.waitLog((x) => x.msg === 'upload cut'), 'the handler stopping');
	assert.equal(l.result, 1); // IG_BODY_CLOSED
	assert.ok(l.bytes > 0 && l.bytes <= 3 * MiB, `${l.bytes} bytes stored before`);
	await waiting(admin, 0);
	assert.deepEqual(fs.readdirSync(dir), []);
	assert.equal((await curlResponse(srv.port, '/health')).status, 200);
});

test('INGOT_BODY_TIMEOUT_MS is an idle timeout for a streamed body: a trickle longer than it passes, a stall ends it', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir, INGOT_BODY_TIMEOUT_MS: '1500' }, { threads: '1' });
	// 8 pieces 250 ms apart: 2 s in all, never 1.5 s without a byte.
	const u = upload(srv.port, '/files/trickle.txt', ['Content-Length: 8', 'Connection: close']);
	for (let i = 0; i < 8; i++) {
		await u.send(String(i));
		await new Promise((r) => setTimeout(r, 250));
	}
	const text = await within(20000, u.closed, 'the answer');
	assert.match(text, /^HTTP\/1\.1 201 Created\r\n/, text);
	assert.equal(fs.readFileSync(path.join(dir, 'trickle.txt'), 'utf8'), '01234567');

	const stall = upload(srv.port, '/files/stalled.txt', ['Content-Length: 100']);
	await stall.send('half of it');
	await within(20000, stall.closed, 'the close');
	const l = await within(20000, srv.waitLog((x) => x.msg === 'upload cut'), 'the handler stopping');
	assert.equal(l.result, 1);
	assert.deepEqual(fs.readdirSync(dir).sort(), ['trickle.txt']);
});

test('a broken chunked framing is answered 400 and the connection closes; without FILES_DIR 404, the body unread', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir });
	const c = await RawClient.connect(srv.port);
	await c.write(req('PUT', '/files/bad.txt', { headers: ['Transfer-Encoding: chunked'], body: '4\r\nabcd\r\nzz\r\n' }));
	const r = await c.response();
	assertProblem(r, 400);
	assert.match(r.headers.connection, /close/i);
	await within(20000, c.waitEnd(), 'the close');
	assert.deepEqual(fs.readdirSync(dir), []);

	const none = await startServer({});
	const u = upload(none.port, '/files/x.bin', [`Content-Length: ${8 * MiB}`]);
	await u.send(Buffer.alloc(64 * 1024));
	const text = await within(20000, u.closed, 'the answer and the close');
	assert.match(text, /^HTTP\/1\.1 404 /);
	assert.match(text, /\r\nConnection: close\r\n/i);
});

test('the drain lets an upload under way finish within the grace period: 201, then exit 0', T, async () => {
	const dir = filesDir();
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0', INGOT_DRAIN_DELAY_MS: '0', INGOT_GRACE_MS: '60000' },
		{ threads: '1' });
	const admin = await adminAddr(srv);
	const u = upload(srv.port, '/files/drained.bin', [`Content-Length: ${4 * MiB}`]);
	await u.send(Buffer.alloc(MiB, 2));
	await waiting(admin, 1);
	srv.signal('SIGTERM');
	await within(20000, srv.waitLog((x) => x.msg === 'draining'), 'the drain');
	for (let i = 1; i < 4; i++) await u.send(Buffer.alloc(MiB, 2));
	const text = await within(60000, u.closed, 'the answer');
	assert.match(text, /^HTTP\/1\.1 201 Created\r\n/);
	assert.match(text, /\r\nConnection: close\r\n/i);
	assert.equal(fs.statSync(path.join(dir, 'drained.bin')).size, 4 * MiB);
	assert.equal((await srv.exited).code, 0);
});
