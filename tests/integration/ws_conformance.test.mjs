// The repo's own WebSocket conformance suite (RFC 6455), after the
// categories of Autobahn|Testsuite (in neither Debian nor npm): framing,
// pings, reserved bits, opcodes, fragmentation, UTF-8 (split sequences
// across fragments included), close codes, limits. Raw frames on the
// reference service's GET /ws/echo, which answers a typed {text, n} with
// n + 1 and closes as RFC 6455 section 7.4 says for what it refuses. Each
// case is one connection; the README lists the categories.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup } from './lib.mjs';
import { frame, frames, closeOf, until, opened, closedWith } from './wslib.mjs';

after(cleanup);

const T = { timeout: 120000 };
const OP = { cont: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 };
const LIMIT = 4096; // INGOT_WS_MAX_MESSAGE here

let shared;
async function server() {
	shared ??= await startServer({ INGOT_WS_MAX_MESSAGE: String(LIMIT) });
	return shared;
}

// A typed message whose JSON is exactly size bytes (text padded with x).
function sized(size, n = 1) {
	const bare = JSON.stringify({ text: '', n }).length;
	assert.ok(size >= bare);
	return JSON.stringify({ text: 'x'.repeat(size - bare), n });
}
const json = (text, n = 1) => Buffer.from(JSON.stringify({ text, n }));
// A close frame's payload: the code, then the reason's bytes.
function closing(code, reason = Buffer.alloc(0)) {
	const b = Buffer.alloc(2);
	b.writeUInt16BE(code);
	return Buffer.concat([b, Buffer.isBuffer(reason) ? reason : Buffer.from(reason)]);
}

// Writes data (a buffer, or buffers written one by one), then waits for
// the echoes of count messages: their decoded JSON, and the frames before.
async function echoes(data, count = 1) {
	const c = await opened(await server());
	try {
		for (const d of Array.isArray(data) ? data : [data]) await c.write(d);
		await until(c, (b) => frames(b).filter((f) => f.op === OP.text).length >= count, `${count} echo(es)`);
		const fs = frames(c.buf);
		for (const f of fs) assert.equal(f.masked, false, 'a server frame is never masked');
		return { all: fs, texts: fs.filter((f) => f.op === OP.text).map((f) => JSON.parse(f.payload.toString('utf8'))) };
	} finally {
		c.destroy();
	}
}

// Writes data and returns the server's close: its code and reason, after
// the connection has ended.
async function refused(data) {
	const c = await opened(await server());
	for (const d of Array.isArray(data) ? data : [data]) await c.write(d);
	return closedWith(c);
}

// ---- framing ----
test('framing: payload lengths at the 7-bit/16-bit edge (125, 126, 127) and beyond are echoed', T, async () => {
	for (const size of [20, 125, 126, 127, 1020]) { // 1,020: the schema's text at its most, 1,000 characters
		const message = sized(size, size);
		const { texts } = await echoes(frame(OP.text, message));
		assert.deepEqual(texts, [{ text: JSON.parse(message).text, n: size + 1 }], `size ${size}`);
	}
});

test('framing: a message written a byte at a time, and several messages in one write, are each echoed', T, async () => {
	const one = frame(OP.text, JSON.stringify({ text: 'drip', n: 7 }));
	const { texts } = await echoes([...one].map((b) => Buffer.from([b])));
	assert.deepEqual(texts, [{ text: 'drip', n: 8 }]);
	const many = Buffer.concat([1, 2, 3, 4, 5].map((n) => frame(OP.text, JSON.stringify({ text: `m${n}`, n }))));
	const r = await echoes(many, 5);
	assert.deepEqual(r.texts, [1, 2, 3, 4, 5].map((n) => ({ text: `m${n}`, n: n + 1 })));
});

test('framing: an unmasked client frame closes with 1002', T, async () => {
	assert.equal((await refused(frame(OP.text, sized(30), { mask: false }))).code, 1002);
});

// ---- pings ----
test('pings: a ping of 0 and of 125 bytes gets a pong of the same payload; ten in a row, ten pongs in order', T, async () => {
	const c = await opened(await server());
	try {
		const payloads = [Buffer.alloc(0), Buffer.alloc(125, 0xfe), ...Array.from({ length: 10 }, (_, i) => Buffer.from(`p${i}`))];
		await c.write(Buffer.concat(payloads.map((p) => frame(OP.ping, p))));
		await until(c, (b) => frames(b).filter((f) => f.op === OP.pong).length >= payloads.length, 'the pongs');
		const pongs = frames(c.buf).filter((f) => f.op === OP.pong);
		assert.deepEqual(pongs.map((f) => f.payload.toString('hex')), payloads.map((p) => p.toString('hex')));
	} finally {
		c.destroy();
	}
});

test('pings: an unsolicited pong is ignored (the next message is echoed)', T, async () => {
	const r = await echoes(Buffer.concat([frame(OP.pong, 'unasked'), frame(OP.text, sized(40, 3))]));
	assert.equal(r.texts[0].n, 4);
	assert.ok(!r.all.some((f) => f.op === OP.pong || f.op === OP.close), 'nothing answers a pong');
});

test('pings: a ping of 126 bytes, and a fragmented ping, close with 1002', T, async () => {
	assert.equal((await refused(frame(OP.ping, Buffer.alloc(126, 1)))).code, 1002);
	assert.equal((await refused(frame(OP.ping, 'half', { fin: false }))).code, 1002);
});

// ---- reserved bits ----
test('reserved bits: RSV1, RSV2 or RSV3 on a text, a ping or a continuation frame close with 1002', T, async () => {
	for (const rsv of [0x40, 0x20, 0x10, 0x70]) {
		assert.equal((await refused(frame(OP.text, sized(30), { rsv }))).code, 1002, `text rsv ${rsv}`);
		assert.equal((await refused(frame(OP.ping, 'r', { rsv }))).code, 1002, `ping rsv ${rsv}`);
	}
	const text = sized(30);
	assert.equal((await refused(Buffer.concat([frame(OP.text, text.slice(0, 10), { fin: false }),
		frame(OP.cont, text.slice(10), { rsv: 0x20 })]))).code, 1002);
});

// ---- opcodes ----
test('opcodes: the reserved data opcodes 3-7 and control opcodes 11-15 close with 1002', T, async () => {
	for (const op of [3, 4, 5, 6, 7, 11, 12, 13, 14, 15]) {
		assert.equal((await refused(frame(op, 'x'))).code, 1002, `opcode ${op}`);
	}
});

// ---- fragmentation ----
test('fragmentation: a message in 3 fragments, and in fragments of one byte each, is echoed whole', T, async () => {
	const text = JSON.stringify({ text: 'three parts', n: 10 });
	const three = await echoes(Buffer.concat([frame(OP.text, text.slice(0, 4), { fin: false }),
		frame(OP.cont, text.slice(4, 20), { fin: false }), frame(OP.cont, text.slice(20))]));
	assert.deepEqual(three.texts, [{ text: 'three parts', n: 11 }]);
	const bytes = Buffer.from(JSON.stringify({ text: 'bytes', n: 20 }));
	const parts = [...bytes].map((b, i) => frame(i === 0 ? OP.text : OP.cont, Buffer.from([b]), { fin: i === bytes.length - 1 }));
	assert.deepEqual((await echoes(Buffer.concat(parts))).texts, [{ text: 'bytes', n: 21 }]);
});

test('fragmentation: empty fragments around the data are allowed', T, async () => {
	const text = JSON.stringify({ text: 'empties', n: 1 });
	const r = await echoes(Buffer.concat([frame(OP.text, '', { fin: false }), frame(OP.cont, text, { fin: false }),
		frame(OP.cont, '')]));
	assert.deepEqual(r.texts, [{ text: 'empties', n: 2 }]);
});

test('fragmentation: a new data frame inside a fragmented message, a stray continuation, a fragmented close: 1002', T, async () => {
	const text = sized(30);
	assert.equal((await refused(Buffer.concat([frame(OP.text, text.slice(0, 10), { fin: false }),
		frame(OP.text, text)]))).code, 1002);
	assert.equal((await refused(frame(OP.cont, text))).code, 1002);
	assert.equal((await refused(frame(OP.close, closing(1000), { fin: false }))).code, 1002);
});

// ---- UTF-8 ----
const VALID = ['κόσμε', 'ｱｲｳ 漢字', 'emoji 😀🎉', '\u0000 nul and \u007f', '\uffff\ud7ff\ue000', '\u{10ffff}'];
test('UTF-8: valid text of 1- to 4-byte sequences is echoed as sent, whole or split inside a sequence', T, async () => {
	for (const s of VALID) {
		const body = json(s, 5);
		assert.deepEqual((await echoes(frame(OP.text, body))).texts, [{ text: s, n: 6 }], s);
		// Every split point, so some fall inside a multi-byte sequence.
		for (let at = 1; at < body.length; at += 3) {
			const r = await echoes(Buffer.concat([frame(OP.text, body.subarray(0, at), { fin: false }),
				frame(OP.cont, body.subarray(at))]));
			assert.deepEqual(r.texts, [{ text: s, n: 6 }], `${s} split at ${at}`);
		}
	}
});

const INVALID = {
	'an overlong NUL (c0 80)': [0xc0, 0x80],
	'an overlong slash (e0 80 af)': [0xe0, 0x80, 0xaf],
	'a surrogate (ed a0 80)': [0xed, 0xa0, 0x80],
	'above U+10FFFF (f4 90 80 80)': [0xf4, 0x90, 0x80, 0x80],
	'a lone continuation byte (80)': [0x80],
	'fe': [0xfe],
	'ff': [0xff],
	'a 3-byte sequence cut short (e2 82)': [0xe2, 0x82],
};
test('UTF-8: invalid sequences close with 1007, in one frame or split across fragments', T, async () => {
	for (const [what, bytes] of Object.entries(INVALID)) {
		const body = Buffer.concat([Buffer.from('{"text": "a'), Buffer.from(bytes), Buffer.from('b", "n": 1}')]);
		assert.equal((await refused(frame(OP.text, body))).code, 1007, what);
		const at = 11 + Math.ceil(bytes.length / 2); // inside the bad sequence
		assert.equal((await refused(Buffer.concat([frame(OP.text, body.subarray(0, at), { fin: false }),
			frame(OP.cont, body.subarray(at))]))).code, 1007, `${what}, split`);
	}
	// A sequence cut short at the message's end.
	assert.equal((await refused(frame(OP.text, Buffer.concat([Buffer.from('{"n": 1, "text": "'), Buffer.from([0xce])])))).code,
		1007);
});

// ---- close codes ----
test('close codes: a valid code (1000-1003, 1007-1014, 3000-4999) is answered with itself; no code, with none', T, async () => {
	for (const code of [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]) {
		const c = await refused(frame(OP.close, closing(code, 'bye')));
		assert.equal(c.code, code, `code ${code}`);
	}
	const bare = await refused(frame(OP.close, Buffer.alloc(0)));
	assert.equal(bare.code, 1005, 'an empty close is answered with an empty close');
});

test('close codes: codes that may not be sent (0, 999, 1004-1006, 1015, 1016, 1100, 2000, 2999, 5000), a 1-byte payload: 1002', T, async () => {
	for (const code of [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]) {
		assert.equal((await refused(frame(OP.close, closing(code)))).code, 1002, `code ${code}`);
	}
	assert.equal((await refused(frame(OP.close, Buffer.from([0x03])))).code, 1002, 'one byte');
});

test('close codes: a reason of 123 bytes is fine; a reason that is not UTF-8 closes with 1007', T, async () => {
	const long = await refused(frame(OP.close, closing(1000, 'r'.repeat(123))));
	assert.equal(long.code, 1000);
	assert.equal((await refused(frame(OP.close, closing(1000, Buffer.from([0x61, 0xc3]))))).code, 1007);
	assert.equal((await refused(frame(OP.close, closing(1000, 'r'.repeat(124))))).code, 1002, 'a control payload over 125');
});

test('close codes: after its close, the server sends nothing more and ends the connection', T, async () => {
	const c = await opened(await server());
	await c.write(Buffer.concat([frame(OP.close, closing(1000)), frame(OP.text, sized(30)), frame(OP.ping, 'late')]));
	await closedWith(c);
	const fs = frames(c.buf);
	assert.equal(fs.filter((f) => f.op === OP.close).length, 1);
	assert.equal(fs[fs.length - 1].op, OP.close, 'the close is the last frame');
	assert.equal(closeOf(fs[fs.length - 1]).code, 1000);
});

// ---- limits ----
test(`limits: a message over INGOT_WS_MAX_MESSAGE (${LIMIT}), in one frame or in fragments, closes with 1009`, T, async () => {
	assert.equal((await refused(frame(OP.text, 'x'.repeat(LIMIT + 1)))).code, 1009);
	const parts = [frame(OP.text, 'x'.repeat(2000), { fin: false }), frame(OP.cont, 'x'.repeat(2000), { fin: false }),
		frame(OP.cont, 'x'.repeat(200))];
	assert.equal((await refused(Buffer.concat(parts))).code, 1009);
});

test('limits: a 64-bit length with its top bit set closes with 1002', T, async () => {
	const head = Buffer.from([0x81, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4]);
	assert.equal((await refused(head)).code, 1002);
});
