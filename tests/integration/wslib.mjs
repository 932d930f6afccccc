// Raw RFC 6455 frames for the WebSocket suites (websocket.test.mjs,
// ws_conformance.test.mjs): what a client library will not send (an
// unmasked frame, reserved bits, a bad opcode, a split UTF-8 sequence),
// and the server's frames read back from a RawClient's buffer.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { RawClient, within } from './lib.mjs';

export const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
// RFC 6455 section 1.3's example: this key's accept value.
export const ACCEPT = 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=';

export function upgrade(path, { key = KEY, version = '13', origin, host = 'x', extra = '' } = {}) {
	return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n` +
		`Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: ${version}\r\n` +
		(origin ? `Origin: ${origin}\r\n` : '') + extra + '\r\n';
}

// One client frame: masked unless told otherwise.
export function frame(op, payload, { fin = true, mask = true, rsv = 0 } = {}) {
	const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
	const len = data.length;
	const head = [(fin ? 0x80 : 0) | rsv | op];
	if (len < 126) head.push((mask ? 0x80 : 0) | len);
	else if (len < 65536) head.push((mask ? 0x80 : 0) | 126, len >> 8, len & 255);
	else {
		head.push((mask ? 0x80 : 0) | 127);
		for (let i = 7; i >= 0; i--) head.push(Number((BigInt(len) >> BigInt(8 * i)) & 255n));
	}
	if (!mask) return Buffer.concat([Buffer.from(head), data]);
	const key = crypto.randomBytes(4);
	const body = Buffer.from(data.map((b, i) => b ^ key[i & 3]));
	return Buffer.concat([Buffer.from(head), key, body]);
}

// The server's frames in buf after its 101 head: [{op, fin, payload}], and
// whether the last is complete.
export function frames(buf) {
	let at = buf.indexOf('\r\n\r\n') + 4;
	const out = [];
	while (at + 2 <= buf.length) {
		const fin = !!(buf[at] & 0x80), op = buf[at] & 15, masked = !!(buf[at + 1] & 0x80);
		let len = buf[at + 1] & 127, h = 2;
		if (len === 126) { if (at + 4 > buf.length) break; len = buf.readUInt16BE(at + 2); h = 4; }
		else if (len === 127) { if (at + 10 > buf.length) break; len = Number(buf.readBigUInt64BE(at + 2)); h = 10; }
		if (at + h + len > buf.length) break;
		out.push({ op, fin, masked, payload: buf.subarray(at + h, at + h + len) });
		at += h + len;
	}
	return out;
}

export function closeOf(f) {
	return { code: f.payload.length >= 2 ? f.payload.readUInt16BE(0) : 1005, reason: f.payload.subarray(2).toString() };
}

export async function until(c, pred, what) {
	return within(20000, (async () => {
		while (!pred(c.buf)) {
			if (c.isClosed || c.ended) {
				if (pred(c.buf)) return;
				throw new Error(`closed before ${what}: ${c.buf.toString('latin1').slice(-300)}`);
			}
			await c._changed();
		}
	})(), `waiting for ${what}`);
}

// A raw client upgraded on /ws/echo, its 101 head read.
export async function opened(srv, opts) {
	const c = await RawClient.connect(srv.port);
	await c.write(upgrade('/ws/echo', opts));
	await until(c, (b) => b.includes('\r\n\r\n'), 'the 101');
	assert.match(c.buf.toString('latin1'), /^HTTP\/1\.1 101 /);
	return c;
}

// The server's close frame on c, once its connection has ended.
export async function closedWith(c) {
	await until(c, (b) => frames(b).some((f) => f.op === 8), 'the close frame');
	await within(20000, c.waitEnd(), 'the connection\'s end');
	const f = frames(c.buf).find((x) => x.op === 8);
	assert.equal(f.masked, false);
	return closeOf(f);
}
