// Server-Sent Events (include/ingot/sse.h, issue 30): the reference
// service's GET /ticker sends typed ticks from a handler that waits between
// them, GET /events/idle keeps its stream once the handler has returned.
// Real clients (undici's fetch and EventSource, curl) read them; raw sockets check
// the framing (chunks, the final chunk, the connection's next request), the
// heartbeats, a slow reader holding back the producer with bounded memory,
// a client that leaves, the drain, and the memory of 1,000 idle streams.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fetch, EventSource } from 'undici';
import { spawn } from 'node:child_process';
import { startServer, cleanup, RawClient, req, adminAddr, scrapeSamples as metrics, within, BODY, curl } from './lib.mjs';

after(cleanup);

const T = { timeout: 60000 };

// The events of a text/event-stream body, as the HTML standard parses them
// (fields event, id, data; comments apart).
function parseEvents(text) {
	const events = [], comments = [];
	for (const block of text.split('\n\n')) {
		if (!block) continue;
		const ev = { data: [] };
		for (const line of block.split('\n')) {
			if (line.startsWith(':')) { comments.push(line.slice(1).trim()); continue; }
			const i = line.indexOf(':');
			const [k, v] = i < 0 ? [line, ''] : [line.slice(0, i), line.slice(i + 1).replace(/^ /, '')];
			if (k === 'data') ev.data.push(v); else ev[k] = v;
		}
		if (ev.data.length) events.push({ ...ev, data: ev.data.join('\n') });
	}
	return { events, comments };
}

// The chunked body's text so far (what has arrived of it), and whether its
// final chunk came; rest: the bytes after the body.
function dechunk(buf) {
	const s = buf.toString('latin1');
	let at = s.indexOf('\r\n\r\n') + 4, body = '';
	for (;;) {
		const nl = s.indexOf('\r\n', at);
		if (nl < 0) return { body, done: false };
		const n = parseInt(s.slice(at, nl), 16);
		if (n === 0) return { body, done: s.startsWith('\r\n', nl + 2), rest: s.slice(nl + 4) };
		if (s.length < nl + 2 + n + 2) return { body, done: false };
		body += s.slice(nl + 2, nl + 2 + n);
		at = nl + 2 + n + 2;
	}
}

// Waits until the client's bytes satisfy pred.
async function until(c, pred, what) {
	return within(20000, (async () => {
		while (!pred(c.buf)) {
			if (c.isClosed || c.ended) throw new Error(`closed before ${what}: ${c.buf.toString('latin1').slice(-300)}`);
			await c._changed();
		}
	})(), `waiting for ${what}`);
}

async function waiting(admin, n) {
	let m;
	do m = await metrics(admin); while (m.get('ingot_handlers_waiting') !== n);
	return m;
}

function rssKiB(pid) {
	const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
	return Number(m[1]);
}

test('undici fetch reads typed ticks framed per the HTML standard: event, id, JSON data; 200, text/event-stream, no-cache', T, async () => {
	const srv = await startServer();
	const res = await fetch(`http://127.0.0.1:${srv.port}/ticker?n=5&interval_ms=20`);
	assert.equal(res.status, 200);
	assert.equal(res.headers.get('content-type'), 'text/event-stream');
	assert.equal(res.headers.get('cache-control'), 'no-cache');
	const { events } = parseEvents(await res.text());
	assert.deepEqual(events.map((e) => [e.event, e.id, JSON.parse(e.data)]),
		[1, 2, 3, 4, 5].map((n) => ['tick', String(n), { n, of: 5 }]));
});

test('the stream is chunked and ends with the final chunk: the connection then answers its next request', T, async () => {
	const srv = await startServer();
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/ticker?n=2&interval_ms=10'));
	await until(c, (b) => dechunk(b).done, 'the final chunk');
	const d = dechunk(c.buf);
	assert.match(c.buf.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*Transfer-Encoding: chunked\r\n/);
	assert.equal(d.body, 'retry: 200\n\nevent: tick\nid: 1\ndata: {"n":1,"of":2}\n\nevent: tick\nid: 2\ndata: {"n":2,"of":2}\n\n');
	c.buf = Buffer.from(d.rest, 'latin1');
	await c.write(req('GET', '/health'));
	assert.equal((await c.response()).text, BODY.health);
});

test('EventSource (undici) gets the ticks, and reconnects with Last-Event-ID, which the handler reads and resumes after', T, async () => {
	const srv = await startServer();
	const es = new EventSource(`http://127.0.0.1:${srv.port}/ticker?n=3&interval_ms=20`);
	const got = [];
	try {
		await within(20000, new Promise((resolve) => {
			es.addEventListener('tick', (e) => { got.push([e.lastEventId, JSON.parse(e.data).n]); if (got.length === 3) resolve(); });
		}), 'three ticks');
		assert.deepEqual(got, [['1', 1], ['2', 2], ['3', 3]]);
		// The stream ended after 3: the reconnect (retry: 200) says the last id.
		const l = await within(20000, srv.waitLog((x) => x.msg === 'ticker resumed'), 'the reconnect');
		assert.equal(l.after, 3);
	} finally {
		es.close();
	}
	// A client's own Last-Event-ID: only what follows it is sent.
	const res = await fetch(`http://127.0.0.1:${srv.port}/ticker?n=4&interval_ms=0`, { headers: { 'Last-Event-ID': '2' } });
	assert.deepEqual(parseEvents(await res.text()).events.map((e) => e.id), ['3', '4']);
});

test('INGOT_SSE_HEARTBEAT_MS: a silent stream gets comment lines', T, async () => {
	const srv = await startServer({ INGOT_SSE_HEARTBEAT_MS: '100' });
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/events/idle'));
	await until(c, (b) => parseEvents(dechunk(b).body).comments.filter((x) => x === 'heartbeat').length >= 2, 'two heartbeats');
	const { events } = parseEvents(dechunk(c.buf).body);
	assert.deepEqual(events.map((e) => e.event === 'tick' ? JSON.parse(e.data) : e.data), [{ n: 0, of: 0 }, 'a\nb\nc\nd']);
	assert.match(dechunk(c.buf).body, /\nevent: lines\nid: 0\ndata: a\ndata: b\ndata: c\ndata: d\n\n/);
});

test('a stream outlives the idle timeout (a keep-alive connection beside it is closed by it); CORS heads it as any answer', T, async () => {
	const srv = await startServer({ INGOT_IDLE_TIMEOUT_MS: '200', INGOT_SSE_HEARTBEAT_MS: '0', INGOT_CORS_ORIGINS: 'https://app.test' });
	const stream = await RawClient.connect(srv.port);
	await stream.write(req('GET', '/events/idle', { headers: ['Origin: https://app.test'] }));
	await until(stream, (b) => parseEvents(dechunk(b).body).events.length === 2, 'the idle events');
	assert.match(stream.buf.toString('latin1'), /\r\nAccess-Control-Allow-Origin: https:\/\/app\.test\r\n/);
	const idle = await RawClient.connect(srv.port);
	await idle.write(req('GET', '/health'));
	assert.equal((await idle.response()).text, BODY.health);
	await within(20000, idle.waitEnd(), 'the idle close');
	assert.ok(!stream.ended && !stream.isClosed, 'the stream is still open');
	stream.end(); // and it ends when its client closes
	await within(20000, stream.waitEnd(), 'the stream\'s close');
});

test('the write timeout still applies: a stream whose client stops reading is cut, its handler stops', T, async () => {
	const srv = await startServer({ INGOT_WRITE_TIMEOUT_MS: '300' }, { threads: '1' });
	const c = await RawClient.connect(srv.port);
	c.sock.pause();
	await c.write(req('GET', '/ticker?n=100000&interval_ms=0&pad=1000'));
	const l = await within(20000, srv.waitLog((x) => x.msg === 'ticker stopped'), 'the cut');
	assert.ok(l.tick < 100000);
});

test('another handler sends to the kept idle streams: GET /events/idle?note= reaches every other one of its core', T, async () => {
	const srv = await startServer({}, { threads: '1' });
	const open = async (target, n) => {
		const c = await RawClient.connect(srv.port);
		await c.write(req('GET', target));
		await until(c, (b) => parseEvents(dechunk(b).body).events.length === n, 'the idle events');
		return c;
	};
	const streams = [await open('/events/idle', 2), await open('/events/idle', 2), await open('/events/idle', 2)];
	const sender = await open('/events/idle?note=hi%0Athere', 3);
	assert.deepEqual(parseEvents(dechunk(sender.buf).body).events[0], { event: 'sent', data: '3' });
	for (const c of streams) {
		await until(c, (b) => parseEvents(dechunk(b).body).events.length === 3, 'the note');
		assert.deepEqual(parseEvents(dechunk(c.buf).body).events.at(-1), { event: 'note', data: 'hi\nthere' });
	}
});

test('a slow reader holds back the producer (it waits, with bounded memory), then gets every tick', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const n = 10000, pad = 1000; // 10 MB of events if nothing held them back
	const c = await RawClient.connect(srv.port);
	c.sock.pause();
	const before = rssKiB(srv.pid);
	await c.write(req('GET', `/ticker?n=${n}&interval_ms=0&pad=${pad}`));
	await waiting(admin, 1); // the handler waits for the window, nothing else
	const during = rssKiB(srv.pid);
	console.log(`# slow reader: server RSS ${before} KiB before, ${during} KiB with the producer held back`);
	assert.ok(during - before < 4 * 1024, `RSS grew ${during - before} KiB`);
	c.sock.resume();
	await until(c, (b) => b.length > 5 && b.subarray(-5).toString('latin1') === '0\r\n\r\n', 'the end of the stream');
	const { events } = parseEvents(dechunk(c.buf).body);
	assert.equal(events.length, n);
	assert.equal(events.at(-1).id, String(n));
	await waiting(admin, 0);
});

test('a client that leaves cancels the waiting handler: it stops (logged) and no handler is left waiting', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' });
	const admin = await adminAddr(srv);
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/ticker?n=1000&interval_ms=50'));
	await until(c, (b) => parseEvents(dechunk(b).body).events.length >= 2, 'two ticks');
	c.destroy();
	const l = await within(20000, srv.waitLog((x) => x.msg === 'ticker stopped'), 'the handler stopping');
	assert.ok(l.tick < 1000);
	await waiting(admin, 0);
});

test('the drain ends open streams cleanly: what was sent, a comment, the final chunk, the close; exit 0', T, async () => {
	const srv = await startServer();
	const idle = await RawClient.connect(srv.port);
	await idle.write(req('GET', '/events/idle'));
	const ticking = await RawClient.connect(srv.port);
	await ticking.write(req('GET', '/ticker?n=100000&interval_ms=20'));
	await until(idle, (b) => parseEvents(dechunk(b).body).events.length === 2, 'the idle events');
	await until(ticking, (b) => parseEvents(dechunk(b).body).events.length >= 2, 'two ticks');
	srv.signal('SIGTERM');
	for (const c of [idle, ticking]) {
		await within(20000, c.waitEnd(), 'the close');
		const d = dechunk(c.buf);
		assert.ok(d.done, `the final chunk: ${c.buf.toString('latin1').slice(-200)}`);
		assert.match(d.body, /\n\n: closing\n\n$/);
	}
	assert.equal((await srv.exited).code, 0);
});

test('1,000 open idle streams hold no handler and little memory each', T, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const admin = await adminAddr(srv);
	const open = async () => {
		const c = await RawClient.connect(srv.port);
		await c.write(req('GET', '/events/idle'));
		await until(c, (b) => parseEvents(dechunk(b).body).events.length === 2, 'the idle events');
		return c;
	};
	// The pools' first pages (a connection, a stream) are not what is measured.
	const warm = await Promise.all(Array.from({ length: 20 }, open));
	const before = rssKiB(srv.pid);
	const conns = [];
	for (let i = 0; i < 1000; i += 100) conns.push(...await Promise.all(Array.from({ length: 100 }, open)));
	const during = rssKiB(srv.pid);
	const m = await waiting(admin, 0);
	const perStream = ((during - before) * 1024) / 1000;
	console.log(`# 1,000 idle streams: server RSS ${before} -> ${during} KiB, ${perStream.toFixed(0)} B a stream`);
	assert.ok(perStream < 8192, `${perStream} B a stream`);
	assert.equal(m.get('ingot_handlers_waiting'), 0);
	for (const c of [...warm, ...conns]) c.destroy();
});

test('curl reads the ticker\'s events in order, each as it is sent (-N: tick 1 while the handler waits for tick 2); Last-Event-ID: 2 gets 3 and 4', T, async () => {
	const srv = await startServer();
	const url = `http://127.0.0.1:${srv.port}/ticker`;
	const r = await curl(['-N', `${url}?n=4&interval_ms=20`]);
	assert.equal(r.code, 0, r.stderr);
	assert.deepEqual(parseEvents(r.stdout.toString()).events.map((e) => [e.event, e.id, JSON.parse(e.data)]),
		[1, 2, 3, 4].map((n) => ['tick', String(n), { n, of: 4 }]));
	const resumed = await curl(['-N', '-H', 'Last-Event-ID: 2', `${url}?n=4&interval_ms=0`]);
	assert.deepEqual(parseEvents(resumed.stdout.toString()).events.map((e) => e.id), ['3', '4']);
	// A minute between the two ticks: the first is on curl's output before
	// the stream ends, the second is not.
	const live = spawn('curl', ['-sSN', `${url}?n=2&interval_ms=60000`], { stdio: ['ignore', 'pipe', 'inherit'] });
	let out = '';
	await within(20000, new Promise((resolve, reject) => {
		live.stdout.on('data', (d) => { out += d; if (parseEvents(out).events.length) resolve(); });
		live.once('exit', (code) => reject(new Error(`curl exited (${code}): ${out}`)));
	}), 'the first tick on curl\'s output');
	assert.deepEqual(parseEvents(out).events.map((e) => e.id), ['1']);
	live.kill('SIGKILL');
	// Its leaving cancels the wait after tick 1.
	const l = await within(20000, srv.waitLog((x) => x.msg === 'ticker stopped'), 'the handler stopping');
	assert.equal(l.tick, 1);
});
