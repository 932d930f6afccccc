// What an idle process keeps resident (net/cold.ld): its start and idle
// loop run only .text, so the request path's blocks (.text.request, in
// one mapping with the database routes' .text.path, and .text.warm) and the cold ones (.text.tls, .rodata.tls: TLS, the client,
// the database, Lambda, CORS's and the proxies' parsers...) have no page
// resident once it listens; GET /health then makes .text.request resident
// and nothing else. A start that calls into one of those blocks (a
// settings check in a request-path file did, twice) costs every idle
// process a 64 KiB window of code: this catches it where a size bench
// would only show a larger number. The sections come from the binary's
// own ELF section headers; a build linked without net/cold.ld (the ASan
// binary, lwIP's) has none of them and the test says so.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BIN, LWIP, startServer, cleanup, curlResponse } from './lib.mjs';

after(cleanup);

// { name: {addr, size} } of the ELF64 file's sections.
function sections(file) {
	const b = fs.readFileSync(file);
	if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2) return {};
	const shoff = Number(b.readBigUInt64LE(0x28)), shentsize = b.readUInt16LE(0x3a);
	const shnum = b.readUInt16LE(0x3c), shstrndx = b.readUInt16LE(0x3e);
	const hdr = (i) => shoff + i * shentsize;
	const strOff = Number(b.readBigUInt64LE(hdr(shstrndx) + 0x18));
	const out = {};
	for (let i = 0; i < shnum; i++) {
		const h = hdr(i);
		const nameAt = strOff + b.readUInt32LE(h);
		const name = b.toString('latin1', nameAt, b.indexOf(0, nameAt));
		out[name] = { addr: Number(b.readBigUInt64LE(h + 0x10)), size: Number(b.readBigUInt64LE(h + 0x20)) };
	}
	return out;
}

// The resident KiB of the mapping holding addr, from /proc/PID/smaps.
function residentAt(pid, addr) {
	let inside = false;
	for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
		const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
		if (m) inside = parseInt(m[1], 16) <= addr && addr < parseInt(m[2], 16);
		else if (inside && line.startsWith('Rss:')) return Number(line.split(/\s+/)[1]);
	}
	throw new Error(`no mapping holds 0x${addr.toString(16)}`);
}

const secs = sections(BIN);
const BLOCKS = ['.text.tls', '.text.request', '.text.warm', '.rodata.tls'];
const SKIP = LWIP ? 'the lwIP build is not linked with net/cold.ld'
	: BLOCKS.some((s) => !secs[s]) ? `${BIN} has no net/cold.ld blocks (an ASan or host build)` : false;

test('listening: no page of the request path or of the cold blocks is resident; after GET /health only .text.request is', { skip: SKIP, timeout: 30000 }, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '-1' });
	const resident = () => Object.fromEntries(BLOCKS.map((s) => [s, residentAt(srv.pid, secs[s].addr)]));
	assert.deepEqual(resident(), { '.text.tls': 0, '.text.request': 0, '.text.warm': 0, '.rodata.tls': 0 },
		'what the start ran or read beyond .text and .rodata');
	assert.equal((await curlResponse(srv.port, '/health')).status, 200);
	const after = resident();
	assert.ok(after['.text.request'] > 0, 'the request block, which GET /health runs');
	assert.deepEqual({ ...after, '.text.request': 0 }, { '.text.tls': 0, '.text.request': 0, '.text.warm': 0, '.rodata.tls': 0 },
		'GET /health ran or read only the request block');
	await srv.stop();
});
