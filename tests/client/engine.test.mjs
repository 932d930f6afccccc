// The outbound client's connection engine (net/client: Client, Pool, Agent,
// net/sock outbound streams), driven through the test CLI tests/client/fetch.c
// against upstreams on loopback: raw-socket upstreams written here (each
// misbehaviour fails only its own request, with a clear error), keep-alive
// and pipelining (counted connections, order), timeouts, back-pressure and
// abort, a hostile upstream under load, HTTPS with a test CA, and nginx as a
// real upstream ($connection in its access log). Waits are for events (a
// process exit, a listening port); the timeouts tested are the client's own.
// FETCH=path selects the binary (default build/bin/fetch; the ASan build is
// build/bin/fetch-asan).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FETCH = process.env.FETCH || path.join(ROOT, 'build', 'bin', 'fetch');
const servers = new Set();
const children = new Set();
const tempDirs = new Set();
after(() => {
	for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
	for (const s of servers) {
		s.close();
		s.closeAllConnections?.(); // https
	}
	// TERM, not KILL: nginx's master then stops its workers.
	for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
});
// Every accepted socket, so that none keeps the process alive at the end.
const accepted = new Set();
function track(srv) {
	servers.add(srv);
	srv.on('connection', (s) => {
		accepted.add(s);
		s.on('close', () => accepted.delete(s));
	});
	return srv;
}
after(() => { for (const s of accepted) s.destroy(); });

function hasCommand(cmd) {
	try { execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }); return true; } catch { return false; }
}

function fetch(args) {
	return new Promise((resolve) => {
		execFile(FETCH, args, { timeout: 20000, maxBuffer: 1 << 28 }, (err, stdout, stderr) => {
			const lines = stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
			resolve({ code: err ? err.code : 0, stderr, results: lines.filter((l) => !l.summary),
				summary: lines.find((l) => l.summary), raw: stdout });
		});
	});
}

// A raw upstream: handler(sock, req, state) answers each request head it is
// given, in order; state.conns counts connections, state.requests requests.
function upstream(handler) {
	const state = { conns: 0, requests: 0, sockets: new Set() };
	const srv = net.createServer((sock) => {
		state.conns++;
		state.sockets.add(sock);
		sock.on('close', () => state.sockets.delete(sock));
		sock.on('error', () => {});
		let buf = Buffer.alloc(0);
		let chain = Promise.resolve();
		sock.on('data', (d) => {
			buf = Buffer.concat([buf, d]);
			for (;;) {
				const end = buf.indexOf('\r\n\r\n');
				if (end < 0) return;
				const head = buf.subarray(0, end).toString('latin1');
				const m = /content-length: *(\d+)/i.exec(head);
				const len = m ? Number(m[1]) : 0;
				if (buf.length < end + 4 + len) return;
				const body = buf.subarray(end + 4, end + 4 + len).toString();
				buf = buf.subarray(end + 4 + len);
				const [line, ...fields] = head.split('\r\n');
				const [method, path] = line.split(' ');
				const req = { method, path, fields, body, n: state.requests++ };
				chain = chain.then(() => handler(sock, req, state));
			}
		});
	});
	track(srv);
	return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => {
		state.url = `http://127.0.0.1:${srv.address().port}`;
		state.server = srv;
		resolve(state);
	}));
}

const ok = (body, extra = '') => `HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const delay = (ms) => new Promise((r) => setTimeout(r, ms));

test('keep-alive: ten sequential requests use one connection', async () => {
	const up = await upstream((s, r) => s.write(ok(`r${r.n}`)));
	const r = await fetch(['--count', '10', '--body', `${up.url}/a`]);
	assert.equal(r.code, 0);
	assert.deepEqual(r.results.map((x) => x.body), [...Array(10).keys()].map((i) => `r${i}`));
	assert.equal(up.conns, 1);
	assert.equal(r.summary.connections, 1);
});

test('pipelining depth 10 keeps order on one connection', async () => {
	// Answers in order, the first slowest: responses must not overtake.
	const up = await upstream(async (s, r) => { if (r.n % 10 === 0) await delay(30); s.write(ok(`p${r.n}`)); });
	const r = await fetch(['--count', '30', '--concurrency', '30', '--pipelining', '10', '--connections', '1', '--body', `${up.url}/p`]);
	assert.equal(r.code, 0);
	assert.deepEqual(r.results.map((x) => x.i), [...Array(30).keys()]);
	assert.deepEqual(r.results.map((x) => x.body), [...Array(30).keys()].map((i) => `p${i}`));
	assert.equal(up.conns, 1);
});

test('pipelined requests leave in one write (batched)', async () => {
	let firstChunk = null;
	const state = { conns: 0 };
	const srv = net.createServer((sock) => {
		state.conns++;
		let n = 0;
		sock.on('data', (d) => {
			if (!firstChunk) firstChunk = d.toString();
			const k = d.toString().split('GET ').length - 1;
			for (let i = 0; i < k; i++) sock.write(ok(`b${n++}`));
		});
	});
	track(srv);
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	const url = `http://127.0.0.1:${srv.address().port}/b`;
	const r = await fetch(['--count', '10', '--concurrency', '10', '--pipelining', '10', '--connections', '1', url]);
	assert.equal(r.code, 0);
	assert.equal(firstChunk.split('GET ').length - 1, 10, firstChunk);
});

test('Content-Length and chunked together fail that request only', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/bad') s.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
		else s.write(ok('fine'));
	});
	const r = await fetch(['--body', `${up.url}/bad`, `${up.url}/good`]);
	assert.equal(r.results[0].error, 'protocol');
	assert.match(r.results[0].message, /Content-Length|Transfer-Encoding/i);
	assert.equal(r.results[1].body, 'fine');
	assert.equal(up.conns, 2);
});

test('a bad chunk size fails that request only', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/bad') s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n');
		else s.write(ok('fine'));
	});
	const r = await fetch(['--body', `${up.url}/bad`, `${up.url}/good`]);
	assert.equal(r.results[0].error, 'protocol');
	assert.match(r.results[0].message, /chunk/);
	assert.equal(r.results[1].body, 'fine');
});

test('oversized headers: too_large', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/bad') s.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(20000)}\r\nContent-Length: 0\r\n\r\n`);
		else s.write(ok('fine'));
	});
	const r = await fetch(['--body', `${up.url}/bad`, `${up.url}/good`]);
	assert.equal(r.results[0].error, 'too_large');
	assert.match(r.results[0].message, /too large/);
	assert.equal(r.results[1].body, 'fine');
});

test('a close in mid-body: reset', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/bad') { s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly some'); s.end(); }
		else s.write(ok('fine'));
	});
	const r = await fetch(['--body', `${up.url}/bad`, `${up.url}/good`]);
	assert.equal(r.results[0].error, 'reset');
	assert.match(r.results[0].message, /middle of the response/);
	assert.equal(r.results[1].body, 'fine');
});

test('a response to a request never sent closes the connection, not the next response', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/double') s.write(ok('one') + ok('forged'));
		else s.write(ok(`fine${r.n}`));
	});
	const r = await fetch(['--body', `${up.url}/double`, `${up.url}/good`, `${up.url}/good`]);
	assert.equal(r.results[0].body, 'one');
	assert.equal(r.results[1].body, 'fine1');
	assert.equal(r.results[2].body, 'fine2');
	assert.equal(up.conns, 2);
});

test('Connection: close and HTTP/1.0 close-delimited bodies', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/close') { s.write(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nc${r.n}`); s.end(); }
		else { s.write(`HTTP/1.0 200 OK\r\n\r\nuntil close ${r.n}`); s.end(); }
	});
	const r = await fetch(['--count', '2', '--body', `${up.url}/close`, `${up.url}/ten`]);
	assert.equal(r.code, 0);
	assert.deepEqual(r.results.map((x) => x.body), ['c0', 'until close 1', 'c2', 'until close 3']);
	assert.equal(up.conns, 4);
});

test('1xx interim responses are skipped; 204 and 304 have no body', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/interim') s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n' + ok('final'));
		else if (r.path === '/204') s.write('HTTP/1.1 204 No Content\r\n\r\n');
		else s.write('HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n');
	});
	const r = await fetch(['--body', `${up.url}/interim`, `${up.url}/204`, `${up.url}/304`, `${up.url}/interim`]);
	assert.equal(r.code, 0, r.raw);
	assert.deepEqual(r.results.map((x) => [x.status, x.body]), [[200, 'final'], [204, ''], [304, ''], [200, 'final']]);
	assert.equal(up.conns, 1);
});

test('chunked bodies with extensions and trailers, and large bodies, are exact', async () => {
	const big = Buffer.alloc(5 << 20, 'q');
	for (let i = 0; i < big.length; i += 997) big[i] = 65 + (i % 26);
	const up = await upstream((s, r) => {
		if (r.path === '/chunked') s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n');
		else if (r.path === '/bigcl') { s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\n\r\n`); s.write(big); }
		else {
			s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
			for (let i = 0; i < big.length; i += 100000) { const c = big.subarray(i, i + 100000); s.write(`${c.length.toString(16)}\r\n`); s.write(c); s.write('\r\n'); }
			s.write('0\r\n\r\n');
		}
	});
	const r = await fetch(['--max-body', String(8 << 20), `${up.url}/chunked`, `${up.url}/bigcl`, `${up.url}/bigchunked`]);
	assert.equal(r.code, 0, r.raw);
	const sha = createHash('sha256').update(big).digest('hex');
	assert.equal(r.results[0].sha256, createHash('sha256').update('hello world').digest('hex'));
	assert.equal(r.results[1].sha256, sha);
	assert.equal(r.results[2].sha256, sha);
	assert.equal(up.conns, 1);
});

test('the dispatch API gets the same bytes', async () => {
	const up = await upstream((s, r) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'));
	const r = await fetch(['--dispatch', '--count', '3', '--body', `${up.url}/d`]);
	assert.deepEqual(r.results.map((x) => x.body), ['abc', 'abc', 'abc']);
	assert.equal(up.conns, 1);
});

test('pipelined calls behind a failing response are sent again on a new connection', async () => {
	let conn = 0;
	const up = await upstream((s, r) => {
		// The first connection answers its first request with garbage.
		if (!s.tag) s.tag = ++conn;
		if (s.tag === 1) { s.write('HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n'); return; }
		s.write(ok(`n${r.path}`));
	});
	const r = await fetch(['--count', '5', '--concurrency', '5', '--pipelining', '5', '--connections', '1', '--body',
		`${up.url}/1`]);
	const errors = r.results.filter((x) => x.error);
	assert.equal(errors.length, 1, r.raw);
	assert.equal(errors[0].i, 0);
	assert.equal(errors[0].error, 'protocol');
	assert.deepEqual(r.results.filter((x) => !x.error).map((x) => x.i), [1, 2, 3, 4]);
});

test('a POST is not pipelined behind another call', async () => {
	const open = new WeakMap();
	let overlapped = 0;
	const up = await upstream(async (s, r) => {
		if (open.get(s)) overlapped++;
		open.set(s, true);
		await delay(5);
		open.set(s, false);
		s.write(ok(r.method));
	});
	// The upstream handles one request at a time per connection; a
	// pipelined POST would arrive while the previous one is open.
	const srvSeen = [];
	up.server.on('connection', (s) => s.on('data', (d) => srvSeen.push(String(d).split('POST ').length - 1)));
	const r = await fetch(['--method', 'POST', '--data', 'x', '--count', '8', '--concurrency', '8', '--pipelining', '4',
		'--connections', '2', '--body', `${up.url}/post`]);
	assert.equal(r.code, 0);
	assert.equal(r.summary.ok, 8);
	assert.ok(srvSeen.every((n) => n <= 1), `a data event held ${Math.max(...srvSeen)} POSTs`);
	assert.equal(overlapped, 0);
});

test('an upstream that closes a kept-alive connection: the idempotent request is sent again', async () => {
	const up = await upstream((s, r) => {
		if (r.n === 0) s.write(ok('first'));
		else if (r.n === 1) s.destroy(); // closes as the second request arrives
		else s.write(ok(`again${r.n}`));
	});
	const r = await fetch(['--count', '2', '--body', `${up.url}/k`]);
	assert.equal(r.code, 0, r.raw);
	assert.equal(r.results[1].body, 'again2');
});

test('headers timeout and body timeout', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/slowhead') return; // never answers
		if (r.path === '/slowbody') { s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'); return; }
		s.write(ok('fine'));
	});
	const r = await fetch(['--timeout-headers', '100', '--timeout-body', '100', '--body',
		`${up.url}/slowhead`, `${up.url}/slowbody`, `${up.url}/good`]);
	assert.equal(r.results[0].error, 'headers_timeout');
	assert.match(r.results[0].message, /100 ms/);
	assert.equal(r.results[1].error, 'body_timeout');
	assert.equal(r.results[2].body, 'fine');
});

// A socket that listens with backlog 0 and never accepts, its queue filled:
// further SYNs are dropped and a connect hangs. (Node's listeners always
// accept, so a few lines of Python hold it.)
const HANG_LISTENER = `
import socket, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(0)
port = s.getsockname()[1]
fill = []
for i in range(8):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(('127.0.0.1', port))
    except BlockingIOError: pass
    fill.append(c)
print(port, flush=True)
sys.stdin.buffer.read(1)
`;

test('connect timeout: a listener whose backlog is full', { skip: !hasCommand('python3') && 'no python3' }, async () => {
	const py = spawn('python3', ['-c', HANG_LISTENER], { stdio: ['pipe', 'pipe', 'inherit'] });
	children.add(py);
	const port = await new Promise((r) => py.stdout.once('data', (d) => r(Number(String(d).trim()))));
	const r = await fetch(['--timeout-connect', '200', `http://127.0.0.1:${port}/x`]);
	py.kill();
	assert.equal(r.results[0].error, 'connect_timeout', r.raw);
	assert.match(r.results[0].message, /timed out after 200 ms/);
});

test('connect refused: connect error with the address', async () => {
	const srv = net.createServer();
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	const port = srv.address().port;
	await new Promise((r) => srv.close(r));
	const r = await fetch([`http://127.0.0.1:${port}/x`]);
	assert.equal(r.code, 1);
	assert.equal(r.results[0].error, 'connect');
	assert.match(r.results[0].message, /Connection refused/);
});

test('a bad URL and a bad header are bad_request', async () => {
	const r = await fetch(['ftp://x/', 'http://127.0.0.1:1/a b']);
	assert.deepEqual(r.results.map((x) => x.error), ['bad_request', 'bad_request']);
	const r2 = await fetch(['--header', 'X-A: a\rb', 'http://127.0.0.1:1/']);
	assert.equal(r2.results[0].error, 'bad_request');
});

test('the request carries Host, the headers given, and Content-Length', async () => {
	let seen = null;
	const up = await upstream((s, r) => { seen = r; s.write(ok('y')); });
	const r = await fetch(['--method', 'PUT', '--header', 'X-Test: 1', '--header', 'Host: evil', '--data', 'hello', `${up.url}/h?q=1`]);
	assert.equal(r.code, 0);
	assert.equal(seen.method, 'PUT');
	assert.equal(seen.path, '/h?q=1');
	assert.equal(seen.body, 'hello');
	const port = new URL(up.url).port;
	assert.deepEqual(seen.fields, [`Host: 127.0.0.1:${port}`, 'X-Test: 1', 'Content-Length: 5']);
});

test('many concurrent requests over a few connections', async () => {
	const up = await upstream((s, r) => s.write(ok(`m${r.n}`)));
	const r = await fetch(['--count', '2000', '--concurrency', '200', '--pipelining', '10', '--connections', '8', `${up.url}/m`]);
	assert.equal(r.code, 0);
	assert.equal(r.summary.ok, 2000);
	assert.ok(up.conns <= 8, `${up.conns} connections`);
});

test('back-pressure: a body read with pauses is exact', async () => {
	const big = Buffer.alloc(3 << 20);
	for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
	const up = await upstream((s, r) => {
		if (r.path === '/cl') { s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\n\r\n`); s.write(big); }
		else {
			s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
			for (let i = 0; i < big.length; i += 300000) { const c = big.subarray(i, i + 300000); s.write(`${c.length.toString(16)}\r\n`); s.write(c); s.write('\r\n'); }
			s.write('0\r\n\r\n');
		}
	});
	const r = await fetch(['--dispatch', '--pause-ms', '1', `${up.url}/cl`, `${up.url}/chunked`, `${up.url}/cl`]);
	assert.equal(r.code, 0, r.raw);
	const sha = createHash('sha256').update(big).digest('hex');
	for (const x of r.results) {
		assert.equal(x.sha256, sha);
		assert.ok(x.pauses > 3, `${x.pauses} pauses`);
	}
	assert.equal(up.conns, 1);
});

test('keep-alive expiry: idle connections close after keep_alive_ms', async () => {
	const up = await upstream((s, r) => s.write(ok('k')));
	const r = await fetch(['--count', '3', '--keep-alive', '30', '--interval', '120', `${up.url}/e`]);
	assert.equal(r.code, 0);
	assert.equal(r.summary.connections, 3);
	assert.equal(up.conns, 3);
	const r2 = await fetch(['--count', '3', '--keep-alive', '2000', '--interval', '30', `${up.url}/e`]);
	assert.equal(r2.summary.connections, 1);
});

test('the upstream\'s Keep-Alive: timeout hint shortens the idle time', async () => {
	const up = await upstream((s, r) => s.write(ok('k', 'Keep-Alive: timeout=1\r\n')));
	// timeout=1 s: the client leaves idle connections after 0.5 s.
	const r = await fetch(['--count', '2', '--keep-alive', '5000', '--interval', '700', `${up.url}/e`]);
	assert.equal(r.code, 0);
	assert.equal(r.summary.connections, 2);
});

test('bytes on an idle connection close it; the next request gets a new one', async () => {
	const up = await upstream(async (s, r) => {
		s.write(ok(`x${r.n}`));
		if (r.n === 0) setTimeout(() => s.write('HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n'), 10);
	});
	const r = await fetch(['--count', '2', '--interval', '100', '--body', `${up.url}/i`]);
	assert.equal(r.code, 0, r.raw);
	assert.deepEqual(r.results.map((x) => x.body), ['x0', 'x1']);
	assert.equal(up.conns, 2);
});

test('abort: a call waiting for its head becomes a zombie; the connection stays in step', async () => {
	const up = await upstream(async (s, r) => {
		if (r.path === '/slow') await delay(120);
		s.write(ok(`a${r.n}:${r.path}`));
	});
	// /slow is aborted at 100 ms, its request already sent; /fast then goes
	// behind it on the same connection (pipelining 2). The slow response
	// is read and dropped; /fast gets its own.
	const r = await fetch(['--dispatch', '--abort-ms', '100', '--pipelining', '2', '--connections', '1',
		'--body', `${up.url}/slow`, `${up.url}/fast`]);
	assert.equal(r.results.length, 2, r.raw);
	assert.equal(r.results[0].error, 'aborted');
	assert.equal(r.results[1].body, 'a1:/fast');
	assert.equal(up.conns, 1);
});

test('abort in the middle of a body closes that connection only', async () => {
	const up = await upstream(async (s, r) => {
		if (r.path === '/trickle') { s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc'); return; }
		s.write(ok('fine'));
	});
	const r = await fetch(['--dispatch', '--abort-ms', '60', '--body', `${up.url}/trickle`]);
	assert.equal(r.results[0].error, 'aborted');
	const r2 = await fetch(['--body', `${up.url}/fine`]);
	assert.equal(r2.results[0].body, 'fine');
});

// ---- regressions (review of net/client) ----

test('an early response to a request still being written: its rest is not sent, the next call gets a new connection', async () => {
	// A 413 as soon as the head of a 32 MiB PUT arrives, the rest left
	// unread: the client is still writing (EAGAIN) when the answer comes.
	// The rest of that body must not go out as if it were the next request
	// on a kept-alive connection.
	let conns = 0;
	const firstBytes = [];
	const srv = track(net.createServer((s) => {
		conns++;
		s.on('error', () => {});
		let head = '';
		const onData = (d) => {
			head += d.subarray(0, 4096).toString('latin1');
			if (!head.includes('\r\n\r\n')) return;
			firstBytes.push(head.slice(0, 8));
			s.removeListener('data', onData);
			s.pause();
			s.write('HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\n\r\nbig!');
		};
		s.on('data', onData);
	}));
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	const url = `http://127.0.0.1:${srv.address().port}/up`;
	// No headers timeout within the test: a call left behind would hang.
	const r = await fetch(['--method', 'PUT', '--data-size', String(32 << 20), '--count', '2', '--timeout-headers', '600000',
		'--body', url]);
	assert.deepEqual(r.results.map((x) => x.status), [413, 413], r.raw);
	assert.deepEqual(r.results.map((x) => x.body), ['big!', 'big!']);
	assert.equal(conns, 2);
	assert.deepEqual(firstBytes, ['PUT /up ', 'PUT /up ']);
});

test('a destroyed pool finishes the calls in flight, and fails those put back in its queue', async () => {
	const up = await upstream((s, r) => {
		if (r.path === '/close') { s.write(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nc${r.n}`); s.end(); }
		else s.write(ok(`k${r.n}`));
	});
	// Two pipelined calls on one connection, the dispatcher destroyed at
	// once: both answers are read.
	const kept = await fetch(['--destroy-early', '--count', '2', '--concurrency', '2', '--pipelining', '2',
		'--connections', '1', '--body', `${up.url}/keep`]);
	assert.deepEqual(kept.results.map((x) => x.body), ['k0', 'k1'], kept.raw);
	// The first answer closes the connection: the second call cannot be
	// sent again by a destroyed pool, and ends aborted (it used to hang).
	const closed = await fetch(['--destroy-early', '--count', '2', '--concurrency', '2', '--pipelining', '2',
		'--connections', '1', '--body', `${up.url}/close`]);
	assert.equal(closed.results.length, 2, closed.raw);
	assert.match(closed.results[0].body, /^c\d+$/);
	assert.equal(closed.results[1].error, 'aborted');
	assert.match(closed.results[1].message, /destroyed/);
	assert.equal(closed.summary.calls_live, 0);
});

test('an aborted call whose connection fails during its own on_error is freed', async () => {
	// Two pipelined GETs: the first's head comes with part of its body,
	// then nothing. The second (sent, unanswered) is aborted and becomes a
	// zombie; its on_error aborts the first, in mid-body, which fails the
	// connection and gives the zombie up while its callback runs.
	const up = await upstream((s, r) => {
		if (r.path === '/first') s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc');
	});
	const r = await fetch(['--dispatch', '--abort-others', 'headers', '--abort-cascade', '--concurrency', '2',
		'--pipelining', '2', '--connections', '1', `${up.url}/first`, `${up.url}/second`]);
	assert.deepEqual(r.results.map((x) => x.error), ['aborted', 'aborted'], r.raw);
	assert.equal(r.summary.calls_live, 0, 'no call slot leaked');
});

test('aborting a call half written behind one sent whole: the first still gets its response', async () => {
	// Two 32 MiB PUTs pipelined; the upstream reads the first only (the
	// second stays half written) and answers it a little later. Meanwhile
	// the second is aborted: that must not fail the first.
	const srv = track(net.createServer((s) => {
		s.on('error', () => {});
		let head = '', need = -1, seen = 0;
		s.on('data', (d) => {
			seen += d.length;
			if (need < 0) {
				head += d.toString('latin1', 0, Math.min(d.length, 4096));
				const end = head.indexOf('\r\n\r\n');
				if (end < 0) return;
				need = end + 4 + Number(/content-length: *(\d+)/i.exec(head)[1]);
			}
			if (seen >= need && !s.isPaused()) {
				s.pause();
				// Not a synchronisation: either order passes; later is the case looked for.
				setTimeout(() => s.write(ok('first')), 100);
			}
		});
	}));
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	const r = await fetch(['--dispatch', '--abort-others', 'connect', '--method', 'PUT', '--data-size', String(32 << 20), '--count', '2',
		'--concurrency', '2', '--pipelining', '2', '--connections', '1', '--body', `http://127.0.0.1:${srv.address().port}/p`]);
	const byIndex = Object.fromEntries(r.results.map((x) => [x.i, x]));
	assert.equal(byIndex[0]?.body, 'first', r.raw);
	assert.equal(byIndex[1]?.error, 'aborted', r.raw);
	assert.equal(r.summary.calls_live, 0);
});

test('resumes asked inside callbacks, across connections, never re-enter a connection being parsed', async () => {
	// Each call pauses in on_headers and on_data and resumes the others,
	// so a resume of connection A runs from inside connection B's callback
	// and back. Two pipelined chunked responses per connection, each pair
	// in one write.
	const chunked = (b) => `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`;
	const up = await upstream((s, r) => {
		if (!s.held) { s.held = r; return; } // answered with the next one, in one write
		s.write(chunked(`body-${s.held.path}-a`) + chunked(`body-${r.path}-b`));
		s.held = null;
	});
	const r = await fetch(['--dispatch', '--cross-resume', '--count', '2', '--concurrency', '4', '--pipelining', '2',
		'--connections', '2', '--body', `${up.url}/x`, `${up.url}/y`]);
	assert.equal(r.code, 0, r.raw + r.stderr);
	assert.equal(r.summary.ok, 4);
	assert.equal(up.conns, 2);
	for (const x of r.results) assert.match(x.body, /^body-\/[xy]-[ab]$/);
});

test('a retried 5xx or a followed 3xx whose body never ends is dropped after 64 KiB', async () => {
	let busyOnce = false;
	const up = await upstream((s, r) => {
		const endless = (status, extra) => {
			s.write(`HTTP/1.1 ${status} X\r\n${extra}Content-Length: 100000000\r\n\r\n`);
			s.write(Buffer.alloc(128 << 10, 'd')); // and then nothing more
		};
		if (r.path === '/busy' && !busyOnce) { busyOnce = true; endless(503, 'Retry-After: 0\r\n'); }
		else if (r.path === '/moved') endless(302, 'Location: /there\r\n');
		else s.write(ok(`at ${r.path}`));
	});
	// The body timeout is longer than the test: only the cap lets these end.
	const retried = await fetch(['--retry', '1', '--timeout-body', '600000', '--body', `${up.url}/busy`]);
	assert.equal(retried.results[0]?.body, 'at /busy', retried.raw);
	assert.equal(retried.results[0].retries, 1);
	const followed = await fetch(['--redirect', '1', '--timeout-body', '600000', '--body', `${up.url}/moved`]);
	assert.equal(followed.results[0]?.body, 'at /there', followed.raw);
	assert.equal(followed.results[0].redirects, 1);
});

// ---- a hostile upstream under load ----

// Each request gets a random answer (valid, malformed, truncated, with extra
// bytes, a close, a reset, nothing), written in random pieces with random
// gaps; seeded, so a run repeats. It runs in a child process: its queues of
// answers for clients long gone must not keep this one busy.
function chaosServer(seedValue, net) {
	let seed = seedValue;
	// mulberry32
	const rnd = (n) => {
		seed = (seed + 0x6D2B79F5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
	};

	const answers = [
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello',
		() => 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n',
		() => 'HTTP/1.1 204 No Content\r\n\r\n',
		() => 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
		() => 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA GARBAGE\r\n\r\n',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged',
		() => 'HTTP/1.0 200 OK\r\n\r\nuntil close',
		() => 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye',
		() => `HTTP/1.1 200 OK\r\nX-Big: ${'b'.repeat(rnd(40000))}\r\nContent-Length: 1\r\n\r\nx`,
		() => 'garbage that is not http\r\n\r\n',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
		() => 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
		() => 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc',
		() => 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n',
		() => 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' + '1\r\na\r\n'.repeat(200) + '0\r\n\r\n',
		() => `HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n${'z'.repeat(70000)}`,
	];

	const srv = net.createServer((s) => {
		s.on('error', () => {});
		let queue = Promise.resolve();
		s.on('data', (d) => {
			const n = String(d).split('\r\n\r\n').length - 1;
			for (let i = 0; i < n; i++) {
				queue = queue.then(async () => {
					if (s.destroyed) return;
					const what = rnd(100);
					if (what < 4) { s.destroy(); return; }
					if (what < 7) { s.resetAndDestroy?.(); return; }
					if (what < 9) return; // never answers
					const text = answers[rnd(answers.length)]();
					// Bytes after a complete response go in the same write:
					// if they came later, after the client had sent its next
					// request, HTTP/1.1 could not tell them from its answer.
					const atomic = /EXTRA|forged/.test(text);
					let at = 0, pieces = 0;
					while (at < text.length && !s.destroyed) {
						const k = atomic ? text.length : 1 + rnd(rnd(2) ? 20 : 5000);
						s.write(text.slice(at, at + k));
						at += k;
						if (rnd(4) === 0) await new Promise((r) => setTimeout(r, rnd(3)));
						// A client that left is only seen by yielding to I/O.
						else if (++pieces % 32 === 0) await new Promise((r) => setImmediate(r));
					}
					if (text.includes('until close') || text.includes('Connection: close')) s.end();
				});
			}
		});
	});
	srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
}

async function chaosUpstream(seed) {
	const code = `const net = require('node:net'); (${chaosServer.toString()})(${seed}, net);`;
	const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
	children.add(child);
	const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
	return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') };
}

const CHAOS_BODIES = new Set(['hello', 'abcde', '', 'ok', 'until close', 'bye', 'x', 'abc', 'a'.repeat(200), 'z'.repeat(70000)]);

test('a hostile upstream: every request ends once, no response leaks into another', async () => {
	const chaos = await chaosUpstream(4);
	const url = chaos.url;
	for (const args of [['--count', '2000', '--concurrency', '50', '--connections', '8'],
		['--dispatch', '--count', '1000', '--concurrency', '20', '--connections', '4', '--pause-ms', '1'],
		['--dispatch', '--count', '1000', '--concurrency', '30', '--connections', '4', '--pipelining', '5', '--abort-ms', '2'],
		['--count', '1000', '--concurrency', '30', '--connections', '4', '--pipelining', '5', '--retry', '2']]) {
		const r = await fetch(['--body', '--timeout-headers', '60', '--timeout-body', '60', ...args, `${url}/x`]);
		assert.ok(r.summary, `no summary: ${r.stderr}`);
		const seen = new Set(r.results.map((x) => x.i));
		assert.equal(r.results.length, r.summary.requests, 'one result per request');
		assert.equal(seen.size, r.summary.requests, 'no request ended twice');
		assert.ok(r.results.every((x) => x.error || x.status), 'each has a status or an error');
		// Without pipelining, no answer lands on the wrong request.
		if (!args.includes('--pipelining'))
			for (const x of r.results.filter((x) => 'body' in x)) assert.ok(CHAOS_BODIES.has(x.body), x.body.slice(0, 40));
		const kinds = new Set(r.results.map((x) => x.error || 'ok'));
		assert.ok(kinds.has('ok') && kinds.has('protocol') && kinds.has('reset'), [...kinds].join());
	}
	chaos.stop();
});

// ---- HTTPS ----

// A test CA and a certificate for localhost and 127.0.0.1 signed by it.
function testCertificates() {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-fetch-tls-'));
	tempDirs.add(dir);
	const sh = (cmd) => execFileSync('sh', ['-c', cmd], { cwd: dir, stdio: 'ignore' });
	sh('openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=ingot test CA"');
	sh('openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj "/CN=localhost"');
	fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
	sh('openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext.cnf');
	return { ca: path.join(dir, 'ca.pem'), key: fs.readFileSync(path.join(dir, 'srv.key')), cert: fs.readFileSync(path.join(dir, 'srv.pem')) };
}

test('HTTPS with a test CA: accepted with it, refused without it and for another name',
	{ skip: !hasCommand('openssl') && 'no openssl' }, async () => {
	const certs = testCertificates();
	let conns = 0;
	const srv = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => res.end(`tls ${req.url}`));
	srv.on('secureConnection', () => conns++);
	track(srv);
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	const port = srv.address().port;
	const ca = certs.ca;
	const r = await fetch(['--cacert', ca, '--count', '3', '--body', `https://localhost:${port}/a`, `https://127.0.0.1:${port}/b`]);
	assert.equal(r.code, 0, r.raw);
	assert.deepEqual(r.results.map((x) => x.body), ['tls /a', 'tls /b', 'tls /a', 'tls /b', 'tls /a', 'tls /b']);
	assert.equal(conns, 2, 'one connection per origin, kept alive');
	const big = await fetch(['--cacert', ca, '--dispatch', '--count', '200', '--concurrency', '50', '--connections', '4', `https://localhost:${port}/c`]);
	assert.equal(big.summary.ok, 200);
	const untrusted = await fetch([`https://localhost:${port}/a`]);
	assert.equal(untrusted.results[0].error, 'tls');
	assert.match(untrusted.results[0].message, /not trusted/);
	// Names under .localhost resolve to 127.0.0.1 without DNS.
	const wrongName = await fetch(['--cacert', ca, `https://other.localhost:${port}/a`]);
	assert.equal(wrongName.results[0].error, 'tls');
	assert.match(wrongName.results[0].message, /host name/);
});

test('HTTPS: a close-delimited body ends with close_notify; a bare FIN is a truncation, not an end',
	{ skip: !hasCommand('openssl') && 'no openssl' }, async () => {
	const certs = testCertificates();
	// Raw TLS over a TCP socket this test holds, so that it can send the
	// FIN without TLS's close_notify.
	const srv = track(net.createServer((raw) => {
		raw.on('error', () => {});
		const t = new tls.TLSSocket(raw, { isServer: true, key: certs.key, cert: certs.cert });
		t.on('error', () => {});
		let head = '';
		t.on('data', (d) => {
			head += d;
			if (!head.includes('\r\n\r\n')) return;
			const body = 'until close '.repeat(100);
			const notify = head.startsWith('GET /notify ');
			t.write(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${body}`, () => {
				if (notify) t.end(); // close_notify, then FIN
				else raw.end(); // FIN only
			});
		});
	}));
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	const base = `https://localhost:${srv.address().port}`;
	const r = await fetch(['--cacert', certs.ca, '--body', `${base}/notify`, `${base}/fin`]);
	assert.equal(r.results[0].body, 'until close '.repeat(100), r.raw);
	assert.equal(r.results[1].error, 'reset', r.raw);
	assert.match(r.results[1].message, /close_notify/);
});

// ---- nginx as a real upstream ----

test('nginx: bodies exact, keep-alive reuse and pipelining order by its $connection',
	{ skip: !hasCommand('nginx') && 'no nginx' }, async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-fetch-nginx-'));
	tempDirs.add(dir);
	fs.chmodSync(dir, 0o755); // its workers may run as nobody
	const big = Buffer.alloc(2 << 20);
	for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 9)) & 0xff;
	fs.writeFileSync(path.join(dir, 'big.bin'), big);
	// A free port: nginx cannot report one it picked itself.
	const probe = net.createServer();
	await new Promise((r) => probe.listen(0, '127.0.0.1', r));
	const port = probe.address().port;
	await new Promise((r) => probe.close(r));
	fs.writeFileSync(path.join(dir, 'nginx.conf'), `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  log_format conn '$connection $connection_requests $request_uri $status';
  access_log ${dir}/access.log conn;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  keepalive_requests 10000;
  server {
    listen 127.0.0.1:${port};
    location = /json { default_type application/json; return 200 '{"id":1,"name":"widget"}'; }
    location /files/ { alias ${dir}/; }
  }
}
`);
	const ngx = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
	children.add(ngx);
	// Ready when it accepts a connection.
	for (;;) {
		const up = await new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); }); s.on('error', () => r(false)); });
		if (up) break;
		if (ngx.exitCode !== null) assert.fail('nginx exited');
		await new Promise((r) => setImmediate(r));
	}
	const u = `http://127.0.0.1:${port}`;
	const seq = await fetch(['--count', '20', '--body', `${u}/json`]);
	assert.equal(seq.code, 0);
	assert.ok(seq.results.every((x) => x.body === '{"id":1,"name":"widget"}'));
	const pipe = await fetch(['--count', '40', '--concurrency', '40', '--pipelining', '10', '--connections', '1', `${u}/json`]);
	assert.deepEqual(pipe.results.map((x) => x.i), [...Array(40).keys()]);
	const file = await fetch(['--max-body', String(4 << 20), '--count', '2', `${u}/files/big.bin`]);
	assert.equal(file.code, 0);
	const sha = createHash('sha256').update(big).digest('hex');
	assert.ok(file.results.every((x) => x.status === 200 && x.sha256 === sha), file.raw);
	ngx.kill('SIGQUIT'); // graceful: the access log is complete once it exits
	await new Promise((r) => ngx.once('exit', r));
	const conns = {};
	for (const line of fs.readFileSync(path.join(dir, 'access.log'), 'utf8').trim().split('\n')) {
		const [c, , uri] = line.split(' ');
		(conns[uri] ??= new Set()).add(c);
	}
	// Three runs, three connections: 20 sequential requests on one, 40
	// pipelined on one, the two files on one.
	assert.equal(new Set([...conns['/json']]).size, 2);
	assert.equal(conns['/files/big.bin'].size, 1);
});
