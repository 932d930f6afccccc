// Streams (issue 30) as a real browser reads them: headless Chromium,
// driven over the DevTools protocol (chromium.mjs), on a page of the
// reference service's own origin, runs EventSource on GET /ticker and
// WebSocket on GET /ws/echo; what the page saw (events, messages, close
// codes) comes back as a value and is checked here.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, within } from './lib.mjs';
import { findChromium, launchBrowser } from './chromium.mjs';

const CHROMIUM = findChromium();
const T = { timeout: 60000, skip: CHROMIUM.bin ? false : CHROMIUM.reason };

// One browser and one service (its access log: the handshake's refusal)
// for the suite; a test that needs a server of its own (the drain) starts
// it and points the page there.
let browser, srv;
before(async () => {
	if (!CHROMIUM.bin) return;
	[browser, srv] = await Promise.all([launchBrowser(CHROMIUM.bin), startServer({ INGOT_ACCESS_LOG: 'true' })]);
});
after(async () => {
	await browser?.close();
	cleanup();
});

// The page: any document of the service's origin (GET /plaintext is always
// there), so that /ticker and ws://HOST/ws/echo are same-origin for it.
const origin = (s) => `http://127.0.0.1:${s.port}`;
async function onOrigin(s) {
	await browser.navigate(`${origin(s)}/plaintext`);
	assert.equal(await browser.evaluate('location.origin'), origin(s));
}

// In the page: a socket on /ws/echo, open (its handshake passed Origin),
// kept as window.ws with window.wsClosed, the close event as a value.
const OPEN_WS = `new Promise((resolve, reject) => {
	const ws = new WebSocket('ws://' + location.host + '/ws/echo');
	window.ws = ws;
	window.wsClosed = new Promise((c) => ws.addEventListener('close', (e) =>
		c({ code: e.code, reason: e.reason, wasClean: e.wasClean })));
	ws.addEventListener('open', () => resolve(ws.protocol), { once: true });
	ws.addEventListener('error', () => reject(new Error('the socket failed to open')), { once: true });
})`;

test('EventSource: the ticker\'s typed events in order; at its end the browser reconnects with Last-Event-ID and nothing is sent twice', T, async () => {
	await onOrigin(srv);
	// Ends at the second error: the first stream's end, then the resumed
	// stream's (which has no ticks left after id 5).
	const seen = await browser.evaluate(`new Promise((resolve, reject) => {
		const es = new EventSource('/ticker?n=5');
		const log = [];
		let errors = 0;
		es.addEventListener('tick', (e) => log.push({ type: e.type, id: e.lastEventId, data: e.data, origin: e.origin }));
		es.addEventListener('message', (e) => log.push({ type: 'message', data: e.data }));
		es.addEventListener('open', () => log.push({ type: 'open' }));
		es.addEventListener('error', () => {
			log.push({ type: 'error', state: es.readyState });
			if (es.readyState === EventSource.CLOSED) reject(new Error('EventSource gave up: ' + JSON.stringify(log)));
			if (++errors === 2) { es.close(); resolve(log); }
		});
	})`);
	const ticks = [1, 2, 3, 4, 5].map((n) => ({ type: 'tick', id: String(n), data: JSON.stringify({ n, of: 5 }), origin: origin(srv) }));
	assert.deepEqual(seen, [{ type: 'open' }, ...ticks, { type: 'error', state: 0 }, { type: 'open' }, { type: 'error', state: 0 }]);
	// The reconnect's header reached the handler, which went on after it.
	const l = await within(20000, srv.waitLog((x) => x.msg === 'ticker resumed'), 'the reconnect\'s log');
	assert.equal(l.after, 5);
});

test('WebSocket: typed echoes in order (n + 1, text as sent); the page\'s close 1000 comes back clean', T, async () => {
	await onOrigin(srv);
	assert.equal(await browser.evaluate(OPEN_WS), '');
	const echoes = await browser.evaluate(`new Promise((resolve, reject) => {
		const got = [];
		ws.addEventListener('close', (e) => reject(new Error('closed ' + e.code + ' ' + e.reason + ' after ' + JSON.stringify(got))));
		ws.addEventListener('message', (e) => { got.push(e.data); if (got.length === 3) resolve(got); });
		for (const [n, text] of [[1, 'héllo'], [41, 'a "quoted" \\\\ line\\nand the next'], [-7, '€ 😀']])
			ws.send(JSON.stringify({ text, n }));
	})`);
	assert.deepEqual(echoes.map((e) => JSON.parse(e)), [
		{ text: 'héllo', n: 2 }, { text: 'a "quoted" \\ line\nand the next', n: 42 }, { text: '€ 😀', n: -6 }]);
	assert.deepEqual(await browser.evaluate(`ws.close(1000, 'bye'), wsClosed`), { code: 1000, reason: 'bye', wasClean: true });
});

test('WebSocket: a message its schema refuses, or not JSON, closes with 1008 and the reason the browser reads', T, async () => {
	await onOrigin(srv);
	for (const [msg, reason] of [['{"text": 5, "n": 1}', /^\/text: /], ['{"text": "x"', /^invalid JSON: /],
		[JSON.stringify({ text: 'x'.repeat(1001), n: 1 }), /^\/text: /]]) {
		await browser.evaluate(OPEN_WS);
		const c = await browser.evaluate(`ws.send(${JSON.stringify(msg)}), wsClosed`);
		assert.equal(c.code, 1008, msg);
		assert.match(c.reason, reason, msg);
		assert.equal(c.wasClean, true, msg);
	}
});

test('WebSocket: a 2 MiB message against the 1 MiB limit closes with 1009; a binary one with 1003', T, async () => {
	await onOrigin(srv);
	await browser.evaluate(OPEN_WS);
	const big = await browser.evaluate(`ws.send(JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024), n: 1 })), wsClosed`);
	// The close frame comes first; what the browser still sends after it
	// is discarded up to a bound (net/sock's linger), then the connection
	// is reset: the code and reason arrive, but not a clean close, so
	// wasClean is not asked for here.
	assert.equal(big.code, 1009, JSON.stringify(big));
	assert.equal(big.reason, 'a message over the size limit');
	await browser.evaluate(OPEN_WS);
	const binary = await browser.evaluate(`ws.send(new Uint8Array([1, 2, 3])), wsClosed`);
	assert.equal(binary.code, 1003, JSON.stringify(binary));
	assert.match(binary.reason, /text \(JSON\) only/);
});

test('WebSocket: another origin\'s page is refused at the handshake (no CORS configured: Host\'s own origin only)', T, async () => {
	await onOrigin(srv);
	// The same service under another name is another origin: the page's
	// Origin is http://127.0.0.1:PORT, the socket's Host localhost:PORT.
	const r = await browser.evaluate(`new Promise((resolve) => {
		const ws = new WebSocket('ws://localhost:${srv.port}/ws/echo');
		const log = [];
		ws.addEventListener('open', () => { log.push('open'); ws.close(); });
		ws.addEventListener('error', () => log.push('error'));
		ws.addEventListener('close', (e) => resolve({ log, code: e.code, wasClean: e.wasClean }));
	})`);
	assert.deepEqual(r, { log: ['error'], code: 1006, wasClean: false });
	// The refusal was the service's (not an unreachable name).
	await within(20000, srv.waitLog((x) => x.msg === 'request' && x.route === '/ws/echo' && x.status === 403), 'the 403\'s access log');
});

test('the drain closes the browser\'s open socket with 1001', T, async () => {
	// Chromium keeps a spare connection open that has sent no request yet:
	// the drain gives such a one the header timeout (10 s by default).
	const own = await startServer({ INGOT_HEADER_TIMEOUT_MS: '300' });
	await onOrigin(own);
	await browser.evaluate(OPEN_WS);
	own.signal('SIGTERM');
	assert.deepEqual(await browser.evaluate('wsClosed'), { code: 1001, reason: 'the server is shutting down', wasClean: true });
	assert.equal((await own.exited).code, 0);
});
