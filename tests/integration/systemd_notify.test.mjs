// systemd's notification protocol (NOTIFY_SOCKET), against a datagram socket
// of the test's own (python3 reads it: Node has no unix datagrams): READY=1
// once listening, STOPPING=1 when the drain begins, WATCHDOG=1 at half of
// WATCHDOG_USEC while every core's loop turns; a core whose loop stops
// (INGOT_TEST_STALL_CORE) stops the pings, and the withheld ping is logged.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, cleanup, within } from './lib.mjs';

const T = { timeout: 60000 };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-notify-'));
const receivers = new Set();
after(() => {
	for (const r of receivers) r.kill('SIGKILL');
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

/** A bound datagram socket: .messages grows as datagrams arrive; until(pred). */
async function receiver(name) {
	const sock = path.join(tmp, name);
	const child = spawn('python3', ['-u', '-c', [
		'import socket, sys',
		's = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)',
		's.bind(sys.argv[1])',
		'print("bound", flush=True)',
		'while True:',
		'    print(s.recv(4096).decode().replace("\\n", " "), flush=True)',
	].join('\n'), sock], { stdio: ['ignore', 'pipe', 'inherit'] });
	receivers.add(child);
	const r = { sock, messages: [], waiters: [] };
	let buf = '';
	let bound;
	const ready = new Promise((resolve) => { bound = resolve; });
	child.stdout.on('data', (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf('\n')) >= 0) {
			const line = buf.slice(0, i);
			buf = buf.slice(i + 1);
			if (line === 'bound') bound();
			else r.messages.push(line);
		}
		r.waiters = r.waiters.filter((w) => (w.pred(r.messages) ? (w.resolve(), false) : true));
	});
	r.until = (pred, what) => within(30000, new Promise((resolve) => {
		if (pred(r.messages)) resolve();
		else r.waiters.push({ pred, resolve });
	}), what);
	await within(10000, ready, 'the receiver bound');
	return r;
}
const count = (m, s) => m.filter((x) => x === s).length;

test('READY=1 when listening, WATCHDOG=1 while the loops turn, STOPPING=1 when draining; exit 0', T, async () => {
	const rx = await receiver('plain.sock');
	const srv = await startServer({ NOTIFY_SOCKET: rx.sock, WATCHDOG_USEC: '200000' });
	await rx.until((m) => count(m, 'WATCHDOG=1') >= 3, 'three pings');
	assert.equal(rx.messages[0], 'READY=1', rx.messages.join(', '));
	srv.signal('SIGTERM');
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
	await rx.until((m) => m.includes('STOPPING=1'), 'STOPPING=1');
	// Nothing but these three kinds, READY once and first, STOPPING once.
	assert.deepEqual([...new Set(rx.messages)].sort(), ['READY=1', 'STOPPING=1', 'WATCHDOG=1']);
	assert.equal(count(rx.messages, 'READY=1'), 1);
	assert.equal(count(rx.messages, 'STOPPING=1'), 1);
	assert.ok(!srv.logs.some((l) => /watchdog/.test(l.msg)), 'no ping withheld');
});

test('without WATCHDOG_USEC: READY=1 and STOPPING=1, no pings; without NOTIFY_SOCKET nothing is sent', T, async () => {
	const rx = await receiver('nowatchdog.sock');
	const srv = await startServer({ NOTIFY_SOCKET: rx.sock });
	await rx.until((m) => m.includes('READY=1'), 'READY=1');
	srv.signal('SIGTERM');
	assert.deepEqual(await srv.exited, { code: 0, signal: null });
	await rx.until((m) => m.includes('STOPPING=1'), 'STOPPING=1');
	assert.deepEqual(rx.messages, ['READY=1', 'STOPPING=1']);
});

test('a core whose loop stops turning stops the pings: the withheld ping is logged with the core, no WATCHDOG=1 after it',
	T, async () => {
	const rx = await receiver('stall.sock');
	// Core 1 stops turning after the second ping (the test hook).
	const srv = await startServer({ NOTIFY_SOCKET: rx.sock, WATCHDOG_USEC: '200000', INGOT_TEST_STALL_CORE: '1' }, { threads: '2' });
	const first = await within(30000, srv.waitLog((l) => l.msg === 'watchdog ping withheld: a loop is not turning'), 'a withheld ping');
	assert.equal(first.core, 1);
	// The hook stops core 1 at its first tick after the second ping; a
	// tick it made just before may let one more through.
	assert.ok(first.pings >= 2 && first.pings <= 3, `pings ${first.pings}`);
	// A second look, later, finds it still stuck, and no ping since.
	const second = await within(30000, srv.waitLog((l) => l.msg === 'watchdog ping withheld: a loop is not turning' && l !== first,
		srv.logs.indexOf(first) + 1), 'a second withheld ping');
	assert.equal(second.pings, first.pings);
	// Core 0 still runs the process's duties: SIGTERM is told to systemd.
	srv.signal('SIGTERM');
	await rx.until((m) => m.includes('STOPPING=1'), 'STOPPING=1');
	srv.kill(); // the stuck core never drains
	await srv.exited;
	// What systemd got: exactly the pings the server counted, none after.
	assert.deepEqual(rx.messages, ['READY=1', ...Array(first.pings).fill('WATCHDOG=1'), 'STOPPING=1']);
});
