// Streamed response bodies (include/ingot/body.h, issue 30): the reference
// service's GET /files/{name} sends a file of FILES_DIR a piece at a time,
// with its Content-Length or chunked (HEAD: the head alone). Real clients
// (curl, undici's fetch) get 64 MiB intact; a reader that stops holds the handler back while the
// server's memory stays put; a client that leaves stops the handler; a
// file cut short cuts the connection (never a short body that looks
// whole); names cannot leave the directory.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fetch } from 'undici';
import { startServer, cleanup, RawClient, req, adminAddr, scrapeSamples as metrics, within, curl, curlResponse, assertProblem } from './lib.mjs';

const T = { timeout: 120000 };
const BIG = 64 * 1024 * 1024;
let dir, bigSha;

before(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-files-'));
	const h = crypto.createHash('sha256');
	const fd = fs.openSync(path.join(dir, 'big.bin'), 'w');
	for (let i = 0; i < BIG / (1 << 20); i++) {
		const b = crypto.randomBytes(1 << 20);
		h.update(b);
		fs.writeSync(fd, b);
	}
	fs.closeSync(fd);
	bigSha = h.digest('hex');
	fs.writeFileSync(path.join(dir, 'small.txt'), 'hello, file\n');
	fs.mkdirSync(path.join(dir, 'sub'));
	fs.writeFileSync(path.join(dir, 'sub', 'inner.txt'), 'not reachable\n');
	fs.symlinkSync(path.join(dir, 'small.txt'), path.join(dir, 'link.txt'));
});

after(() => {
	cleanup();
	if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function rssKiB(pid) {
	const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
	return Number(m[1]);
}

async function waiting(admin, n) {
	let m;
	do m = await metrics(admin); while (m.get('ingot_handlers_waiting') !== n);
	return m;
}

// A GET on a socket of its own whose body is hashed as it arrives (64 MiB
// never sits in the test's memory): the head's text, the body's length and
// sha256, and how the connection ended. onBody(received, sock) runs on each
// piece of the body.
function download(port, target, { paused = false, onBody = () => {} } = {}) {
	const sock = net.connect({ host: '127.0.0.1', port });
	if (paused) sock.pause();
	let head = null, pending = Buffer.alloc(0), received = 0;
	const h = crypto.createHash('sha256');
	const done = new Promise((resolve, reject) => {
		sock.on('error', reject);
		sock.on('close', () => resolve({ head, received, sha: h.digest('hex') }));
	});
	sock.on('data', (d) => {
		if (head === null) {
			pending = Buffer.concat([pending, d]);
			const at = pending.indexOf('\r\n\r\n');
			if (at < 0) return;
			head = pending.subarray(0, at).toString('latin1');
			d = pending.subarray(at + 4);
		}
		received += d.length;
		h.update(d);
		onBody(received, sock);
	});
	sock.write(req('GET', target, { headers: ['Connection: close'] }));
	return { sock, done };
}

test('curl downloads 64 MiB intact: 200, application/octet-stream, its Content-Length', T, async () => {
	const srv = await startServer({ FILES_DIR: dir });
	const out = path.join(dir, 'got.bin');
	const r = await curl(['-D', '-', '-o', out, `http://127.0.0.1:${srv.port}/files/big.bin`], { timeoutMs: 60000 });
	assert.equal(r.code, 0, r.stderr);
	const head = r.stdout.toString('latin1');
	assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
	assert.match(head, /\r\nContent-Type: application\/octet-stream\r\n/i);
	assert.match(head, new RegExp(`\\r\\nContent-Length: ${BIG}\\r\\n`, 'i'));
	assert.doesNotMatch(head, /Transfer-Encoding/i);
	assert.equal(crypto.createHash('sha256').update(fs.readFileSync(out)).digest('hex'), bigSha);
	fs.rmSync(out);
});

test('undici fetch downloads it chunked (?chunked=true) intact, and the connection serves the next request', T, async () => {
	const srv = await startServer({ FILES_DIR: dir });
	const res = await fetch(`http://127.0.0.1:${srv.port}/files/big.bin?chunked=true`);
	assert.equal(res.status, 200);
	assert.equal(res.headers.get('transfer-encoding'), 'chunked');
	assert.equal(res.headers.get('content-length'), null);
	const h = crypto.createHash('sha256');
	let n = 0;
	for await (const piece of res.body) {
		h.update(piece);
		n += piece.length;
	}
	assert.equal(n, BIG);
	assert.equal(h.digest('hex'), bigSha);

	// On one connection: the chunked file (with its last chunk), then /health.
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/files/small.txt?chunked=true') + req('GET', '/health'));
	const last = '\r\n\r\nc\r\nhello, file\n\r\n0\r\n\r\n';
	await within(20000, (async () => {
		while (!c.buf.includes(last)) {
			if (c.isClosed || c.ended) throw new Error(`closed: ${c.buf.toString('latin1')}`);
			await c._changed();
		}
	})(), 'the chunked file');
	const s = c.buf.toString('latin1');
	assert.match(s, /^HTTP\/1\.1 200 OK\r\n/);
	assert.match(s.slice(0, s.indexOf(last)), /\r\nTransfer-Encoding: chunked(\r\n|$)/i);
	c.buf = c.buf.subarray(s.indexOf(last) + last.length);
	assert.equal((await c.response()).status, 200); // /health, after the last chunk
	c.destroy();
});

test('Range: one range is a 206 with its Content-Range; curl -C - resumes a cut download to the same sha256; past the end 416; several ranges the whole file', T, async () => {
	const srv = await startServer({ FILES_DIR: dir });
	const url = `http://127.0.0.1:${srv.port}/files/big.bin`;
	const big = fs.readFileSync(path.join(dir, 'big.bin'));
	const first = await curlResponse(srv.port, '/files/big.bin', ['-r', '0-99']);
	assert.equal(first.status, 206);
	assert.equal(first.headers['content-range'], `bytes 0-99/${BIG}`);
	assert.equal(first.headers['content-length'], '100');
	assert.deepEqual(first.body, big.subarray(0, 100));
	const tail = await curlResponse(srv.port, '/files/big.bin', ['-r', '-100']);
	assert.equal(tail.status, 206);
	assert.equal(tail.headers['content-range'], `bytes ${BIG - 100}-${BIG - 1}/${BIG}`);
	assert.deepEqual(tail.body, big.subarray(BIG - 100));
	// A download cut after 10 MiB, resumed by curl from where its file ends.
	const part = path.join(dir, 'resumed.bin');
	fs.writeFileSync(part, big.subarray(0, 10 << 20));
	const r = await curl(['-sS', '-C', '-', '-o', part, '-w', '%{http_code}', url], { timeoutMs: 60000 });
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.stdout.toString(), '206');
	assert.equal(crypto.createHash('sha256').update(fs.readFileSync(part)).digest('hex'), bigSha);
	fs.rmSync(part);
	const past = await curlResponse(srv.port, '/files/big.bin', ['-r', `${BIG}-`]);
	assertProblem(past, 416);
	assert.equal(past.headers['content-range'], `bytes */${BIG}`);
	const several = await curlResponse(srv.port, '/files/small.txt', ['-r', '0-1,3-4']);
	assert.equal(several.status, 200);
	assert.equal(several.headers['accept-ranges'], 'bytes');
	assert.equal(several.body.toString(), 'hello, file\n');
	const ifRange = await curlResponse(srv.port, '/files/small.txt', ['-r', '0-1', '-H', 'If-Range: "x"']);
	assert.equal(ifRange.status, 200);
});

test('HEAD has the head alone (its Content-Length, or chunked) and the connection answers its next request', T, async () => {
	const srv = await startServer({ FILES_DIR: dir });
	const c = await RawClient.connect(srv.port);
	await c.write(req('HEAD', '/files/big.bin') + req('HEAD', '/files/big.bin?chunked=true') + req('GET', '/files/small.txt'));
	const [sized, chunked] = await c.responses(2, { head: true });
	assert.equal(sized.status, 200);
	assert.equal(sized.headers['content-length'], String(BIG));
	assert.equal(chunked.status, 200);
	assert.equal(chunked.headers['transfer-encoding'], 'chunked');
	const small = await c.response();
	assert.equal(small.body.toString(), 'hello, file\n');
	c.destroy();
});

test('over HTTP/1.0 a body of no known length is ended by the close: no chunks', T, async () => {
	const srv = await startServer({ FILES_DIR: dir });
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/files/small.txt?chunked=true', { version: '1.0' }));
	await within(20000, c.waitEnd(), 'the close');
	const s = c.buf.toString('latin1');
	const at = s.indexOf('\r\n\r\n');
	assert.match(s, /^HTTP\/1\.1 200 OK\r\n/);
	assert.doesNotMatch(s.slice(0, at), /Transfer-Encoding|Content-Length/i);
	assert.match(s.slice(0, at), /\r\nConnection: close(\r\n|$)/i);
	assert.equal(s.slice(at + 4), 'hello, file\n');
});

test('a reader that stops holds the handler back: the server\'s RSS grows by under 2 MiB over the 64 MiB', T, async () => {
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	// A first download maps what any download uses (a coroutine stack, the
	// request's memory): the transfer's own growth is what is measured.
	const warm = await curlResponse(srv.port, '/files/small.txt');
	assert.equal(warm.body.toString(), 'hello, file\n');
	await waiting(admin, 0);
	const rssBefore = rssKiB(srv.pid);
	let most = rssBefore;
	const sample = () => { most = Math.max(most, rssKiB(srv.pid)); };
	let next = 4 << 20;
	const d = download(srv.port, '/files/big.bin', {
		paused: true,
		onBody: (n) => { if (n >= next) { sample(); next += 4 << 20; } },
	});
	await waiting(admin, 1); // the window is full: the handler waits for the client
	sample();
	d.sock.resume();
	const got = await within(60000, d.done, 'the download');
	assert.match(got.head, /^HTTP\/1\.1 200 OK\r\n/);
	assert.equal(got.received, BIG);
	assert.equal(got.sha, bigSha);
	console.log(`# slow reader: server RSS ${rssBefore} KiB before, at most ${most} KiB during 64 MiB`);
	assert.ok(most - rssBefore <= 2048, `RSS grew ${most - rssBefore} KiB`);
	await waiting(admin, 0);
});

test('a client that leaves mid-file stops the handler (logged) and leaves nothing waiting', T, async () => {
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const d = download(srv.port, '/files/big.bin', { paused: true });
	await waiting(admin, 1);
	d.sock.destroy();
	const l = await within(20000, srv.waitLog((x) => x.msg === 'file cut'), 'the handler stopping');
	assert.equal(l.result, 1); // IG_BODY_CLOSED
	await waiting(admin, 0);
	assert.equal((await curlResponse(srv.port, '/health')).status, 200);
});

test('the write timeout cuts a reader that stops for good: the handler stops (logged)', T, async () => {
	const srv = await startServer({ FILES_DIR: dir, INGOT_WRITE_TIMEOUT_MS: '300' }, { threads: '1' });
	const d = download(srv.port, '/files/big.bin', { paused: true });
	const l = await within(20000, srv.waitLog((x) => x.msg === 'file cut'), 'the cut');
	assert.equal(l.result, 1); // IG_BODY_CLOSED
	d.sock.destroy();
});

test('a file that ends before its Content-Length cuts the connection: the client never sees a short body as whole', T, async () => {
	const f = path.join(dir, 'shrinks.bin');
	fs.copyFileSync(path.join(dir, 'big.bin'), f);
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const d = download(srv.port, '/files/shrinks.bin', { paused: true });
	await waiting(admin, 1); // it has sent its length and the first pieces
	fs.truncateSync(f, 8 << 20);
	d.sock.resume();
	const got = await within(60000, d.done, 'the cut');
	assert.match(got.head, new RegExp(`\\r\\nContent-Length: ${BIG}\\r\\n`, 'i'));
	assert.ok(got.received < BIG, `received ${got.received}`);
	const l = await within(20000, srv.waitLog((x) => x.msg === 'file cut'), 'the log line');
	assert.equal(l.result, 2); // IG_BODY_INVALID: short of its length
	fs.rmSync(f);
});

test('names stay inside FILES_DIR: dot names and escapes break the document (400); absent, a directory, a symlink are 404; no FILES_DIR is 404', T, async () => {
	const srv = await startServer({ FILES_DIR: dir });
	assert.equal((await curlResponse(srv.port, '/files/small.txt')).body.toString(), 'hello, file\n');
	for (const name of ['..', '.', '.hidden', '..%2Fsub%2Finner.txt', 'sub%2Finner.txt', 'a%00b'])
		assertProblem(await curlResponse(srv.port, `/files/${name}`, ['--path-as-is']), 400);
	for (const name of ['absent.txt', 'sub', 'link.txt'])
		assertProblem(await curlResponse(srv.port, `/files/${name}`), 404);
	const none = await startServer({});
	assertProblem(await curlResponse(none.port, '/files/small.txt'), 404);
});

test('the drain lets a download finish within the grace period, then closes its connection; exit 0', T, async () => {
	const srv = await startServer({ FILES_DIR: dir, INGOT_ADMIN_PORT: '0', INGOT_DRAIN_DELAY_MS: '0', INGOT_GRACE_MS: '60000' },
		{ threads: '1' });
	const admin = await adminAddr(srv);
	const d = download(srv.port, '/files/big.bin', { paused: true });
	await waiting(admin, 1);
	srv.signal('SIGTERM');
	await within(20000, srv.waitLog((x) => x.msg === 'draining'), 'the drain');
	d.sock.resume();
	const got = await within(60000, d.done, 'the download');
	assert.equal(got.received, BIG);
	assert.equal(got.sha, bigSha);
	assert.equal((await srv.exited).code, 0);
});
