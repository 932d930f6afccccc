// request-path.js: writes net/request_path.ld, the list of functions that
// the reference service's database routes run, which net/cold.ld puts
// together in .text.path, just before the request block (.text.request)
// in the same mapping. Spread over the binary, /db's executed lines
// crowded some of the L1 instruction cache's sets past their ways
// (simulated: 44.8 misses a request, 11.1 once together). A measurement
// tool, not part of the build: rerun it after a change to the request
// path (tests/integration/request_path.test.mjs fails when a listed
// function no longer exists under that name).
//
// How: the service runs under valgrind's callgrind (--dump-instr=yes) on
// a PostgreSQL of the bench's own (lib.js's benchDatabase), once per
// route, its costs zeroed after 256 warm-up requests and dumped after 768
// more. Each executed instruction's address is placed in its input
// section by the link map (build/bin/service.map), so the binary needs no
// symbols. A section in which some route ran at least one instruction
// every 20 requests, on average, is listed, the hottest first (a rare but
// long function too: a list of the functions entered every 20 requests,
// 180 of them, laid out with more misses), unless a start without a
// database runs it (a process started once more, its costs dumped after
// two idle seconds): such a section in the block would fault it in for
// every process, one that serves no database route too. What only a start
// with a database runs (the pool's connect, its first queries) is listed:
// that process serves these routes.
//
// Usage: node tools/bench/request-path.js [--print]  (needs valgrind;
// --print writes the list to stdout instead of net/request_path.ld).
// Knobs: BENCH_SERVICE (build/bin/service; its .map beside it),
// DATABASE_URL (else the bench's own cluster).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const net = require('node:net');
const { memoryMap } = require('../linkmap.js');
const { ROOT, sleep, track, run, freePort, isListening, benchDatabase, scratchDir, benchCleanup } = require('./lib.js');

const BIN = process.env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service');
const MAP = `${BIN}.map`;
const OUTPUT = path.join(ROOT, 'net', 'request_path.ld');
const ROUTES = ['/db', '/fortunes', '/queries?queries=20', '/updates?queries=20'];
const WARM = 256;
const MEASURED = 768;
const PIPELINED = 16;
const MIN_PER_REQUEST = 0.05;

// The link map's input sections of code (linkmap.js's entries), sorted by
// address.
function codeSections(mapFile) {
	return memoryMap(mapFile).filter((s) => s.input.startsWith('.text') && s.size > 0).sort((a, b) => a.start - b.start);
}

function sectionAt(sections, addr) {
	let lo = 0, hi = sections.length - 1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1, s = sections[mid];
		if (addr < s.start) hi = mid - 1;
		else if (addr >= s.start + s.size) lo = mid + 1;
		else return s;
	}
	return null;
}

// A callgrind dump's instructions executed per address (positions: instr
// line; a call's cost line, after calls=, is inclusive and skipped).
function instructions(file) {
	const per = new Map();
	let addr = 0, afterCall = false;
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		if (line.startsWith('calls=')) { afterCall = true; continue; }
		const c = line[0];
		if (!(c === '0' || c === '+' || c === '-' || c === '*')) continue;
		const f = line.split(' ');
		const a = f[0];
		if (a.startsWith('0x')) addr = parseInt(a, 16);
		else if (c === '+') addr += a.startsWith('+0x') ? parseInt(a.slice(3), 16) : Number(a.slice(1));
		else if (c === '-') addr -= a.startsWith('-0x') ? parseInt(a.slice(3), 16) : Number(a.slice(1));
		if (afterCall) { afterCall = false; continue; }
		per.set(addr, (per.get(addr) || 0) + Number(f[2] || 0));
	}
	return per;
}

// The pattern that names one input section in a linker script.
function pattern(s) {
	const archive = /([^/]+\.a)\((.+)\)$/.exec(s.object);
	const file = archive ? `${archive[1]}:${archive[2]}`
		: s.object.includes('/obj/') ? s.object.slice(s.object.lastIndexOf('/obj/') + 5) : path.basename(s.object);
	return `*${file}(${s.input})`;
}

function send(port, target, n) {
	const batch = `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(PIPELINED);
	return new Promise((resolve, reject) => {
		const s = net.connect(port, '127.0.0.1');
		// Answers counted by their status lines; the last 12 characters
		// carried over, too few to hold a whole one twice.
		let tail = '', sent = 0, done = 0;
		const more = () => { sent += PIPELINED; s.write(batch); };
		s.on('connect', more);
		s.on('data', (d) => {
			const t = tail + d.toString('latin1');
			done += (t.match(/HTTP\/1\.1 \d{3} /g) || []).length;
			tail = t.slice(-12);
			if (done < sent) return;
			if (sent < n) { more(); return; }
			s.destroy();
			resolve();
		});
		s.on('error', reject);
	});
}

// One process's profile: the dump of what route's measured requests ran,
// or, with no route, of what its start and two idle seconds ran. db: its
// DATABASE_URL, or none. A route's process logs warnings only, as the
// bench's do; a start's alone, at the default level (its lines format
// numbers, say).
let processes = 0;
async function profile(dir, db, route) {
	const port = await freePort();
	const out = path.join(dir, `process${++processes}`);
	const log = path.join(dir, 'service.log');
	const fd = fs.openSync(log, 'w');
	// callgrind_control reaches the process through vgdb's pipes, named
	// by a prefix (here, in the scratch directory), the PID, USER and
	// HOST (the service's address: both sides need the same).
	const vgdb = `--vgdb-prefix=${path.join(dir, 'vgdb')}`;
	const control = async (what) => {
		const r = await run('callgrind_control', [vgdb, what, String(child.pid)], { env: { ...process.env, HOST: '127.0.0.1' } });
		if (r.code !== 0 || !/OK/.test(r.out)) throw new Error(`callgrind_control ${what}: ${r.out}${r.err}`);
	};
	const child = track(spawn('valgrind', ['--tool=callgrind', vgdb, '--dump-instr=yes', `--callgrind-out-file=${out}`, BIN], {
		stdio: ['ignore', fd, fd],
		env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '1',
			INGOT_ADMIN_PORT: '-1', ...(route ? { INGOT_LOG_LEVEL: 'warn' } : {}),
			...(db ? { DATABASE_URL: db, INGOT_PG_POOL_SIZE: '4' } : {}) },
	}));
	fs.closeSync(fd);
	const exited = new Promise((r) => child.on('close', r));
	for (let t = 0; !isListening(port); t++) {
		if (child.exitCode !== null || t > 600) throw new Error(`the service did not start: ${fs.readFileSync(log, 'utf8').slice(-400)}`);
		await sleep(100);
	}
	// callgrind_control -d writes the next of out.1, out.2...
	let dumps = 0;
	const dump = async () => {
		await control('-d');
		const file = `${out}.${++dumps}`;
		if (!fs.existsSync(file)) throw new Error(`callgrind_control -d wrote no ${file}`);
		return file;
	};
	let profiled;
	if (route) {
		await send(port, route, WARM);
		await control('-z');
		await send(port, route, MEASURED);
		profiled = await dump();
	} else {
		// What the start and an idle loop run (its timers: a second of them).
		await sleep(2000);
		profiled = await dump();
	}
	process.kill(child.pid, 'SIGTERM');
	await exited;
	return profiled;
}

async function main() {
	try { execFileSync('valgrind', ['--version'], { stdio: 'ignore' }); } catch {
		console.error('request-path: needs valgrind (apt-get install valgrind)');
		process.exit(2);
	}
	const sections = codeSections(MAP);
	const dir = scratchDir('request-path-');
	const db = await benchDatabase();
	const migrated = await run(BIN, ['--migrate'], { env: { PATH: process.env.PATH, DATABASE_URL: db.url } });
	if (migrated.code !== 0) throw new Error(`${BIN} --migrate: ${migrated.err}`);
	// What a start without a database runs.
	const startRan = new Set();
	for (const [addr, n] of instructions(await profile(dir, null, null))) {
		const s = n > 0 && sectionAt(sections, addr);
		if (s) startRan.add(s);
	}
	const runs = [];
	for (const route of ROUTES) runs.push({ route, requests: await profile(dir, db.url, route) });
	const hot = new Map(); // section -> the most instructions a request of some route ran in it
	for (const { route, requests } of runs) {
		const per = new Map();
		for (const [addr, n] of instructions(requests)) {
			const s = sectionAt(sections, addr);
			if (s) per.set(s, (per.get(s) || 0) + n / MEASURED);
		}
		let listed = 0;
		for (const [s, n] of per) if (n >= MIN_PER_REQUEST && !startRan.has(s)) { hot.set(s, Math.max(hot.get(s) || 0, n)); listed++; }
		console.error(`${route}: ${listed} sections with an instruction run every ${Math.round(1 / MIN_PER_REQUEST)} requests, not by the start`);
	}
	const list = [...hot].sort((a, b) => b[1] - a[1]).map(([s]) => s);
	const bytes = list.reduce((sum, s) => sum + s.size, 0);
	const body = [
		'/* The reference service\'s database routes (/db, /fortunes, /queries,',
		' * /updates): every function they run, the hottest first, in one place',
		' * (net/cold.ld INCLUDEs it in .text.path, before .text.request). Written by',
		` * tools/bench/request-path.js from ${path.relative(ROOT, MAP)}: ${list.length} sections, ${(bytes / 1024).toFixed(1)} KiB. */`,
		...list.map((s) => `\t\t${pattern(s)}`),
		'',
	].join('\n');
	if (process.argv.includes('--print')) process.stdout.write(body);
	else { fs.writeFileSync(OUTPUT, body); console.error(`wrote ${path.relative(ROOT, OUTPUT)}`); }
}

main().catch((e) => { console.error(`request-path: ${e.message}`); process.exitCode = 1; }).finally(benchCleanup);
