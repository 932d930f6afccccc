// The process: configuration errors and --help/--version, the startup log
// line, and the binary being static: it runs alone in an empty chroot.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, chmodSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BIN, LWIP, ROOT, startServer, cleanup, runBinary, curlResponse, BODY, ingotVersion } from './lib.mjs';

after(() => cleanup());

const T = { timeout: 20000 };

test('PORT=abc exits with code 2 and a stderr message naming PORT', T, async () => {
	const r = await runBinary([], { PORT: 'abc', HOST: '127.0.0.1' });
	assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
	assert.match(r.stderr, /\bPORT\b/);
	assert.match(r.stderr, /abc/);
});

test('PORT=70000 (out of range) exits with code 2 naming PORT and the range', T, async () => {
	const r = await runBinary([], { PORT: '70000', HOST: '127.0.0.1' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /\bPORT\b/);
	assert.match(r.stderr, /65535/);
});

test('INGOT_THREADS=-1 exits 2 naming INGOT_THREADS', T, async () => {
	const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_THREADS: '-1' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /INGOT_THREADS/);
});

test('an empty or malformed value (INGOT_MAX_BODY=10x, INGOT_LOG_LEVEL=loud, INGOT_ACCESS_LOG=maybe) exits 2 naming the variable', T, async () => {
	for (const [k, v] of [['INGOT_MAX_BODY', '10x'], ['INGOT_MAX_BODY', ''], ['INGOT_LOG_LEVEL', 'loud'], ['INGOT_ACCESS_LOG', 'maybe']]) {
		const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', [k]: v });
		assert.equal(r.code, 2, `${k}=${v}: ${r.stderr}`);
		assert.match(r.stderr, new RegExp(k), `${k}=${v}`);
	}
});

test('an unknown flag and a bad flag value exit 2', T, async () => {
	let r = await runBinary(['--no-such-flag'], { PORT: '0' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /no-such-flag/);
	r = await runBinary(['--port', 'xyz'], {});
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /port/);
});

test('HOST that is not a numeric address fails to start with exit 2 (bad configuration) naming HOST', T, async () => {
	for (const host of ['localhost.invalid', 'localhost']) {
		const r = await runBinary([], { PORT: '0', HOST: host });
		assert.equal(r.code, 2, `${host}: ${r.stderr}`);
		assert.match(r.stderr, /HOST/);
	}
});

// The README's exit statuses, case by case (the grace period's cut, 3, is
// shutdown.test's; a fatal signal ends the process by the signal: above).
test('exit statuses: a port in use and an admin port in use are bad configuration (2); descriptors too few for the start are a runtime failure (1)',
	{ ...T, skip: LWIP && 'lwIP listens on its own device, not on the host\'s ports' }, async () => {
	const taken = net.createServer();
	await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
	const port = String(taken.address().port);
	try {
		let r = await runBinary([], { PORT: port, HOST: '127.0.0.1', INGOT_ADMIN_PORT: '-1' });
		assert.equal(r.code, 2, `port in use: ${r.stderr}`);
		assert.match(r.stderr, new RegExp(port));
		r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_ADMIN_PORT: port });
		assert.equal(r.code, 2, `admin port in use: ${r.stderr}`);
	} finally {
		taken.close();
	}
	// stdin, stdout and stderr only: no descriptor for the signalfd.
	const r = await new Promise((resolve) => execFile('prlimit', ['--nofile=3:3', '--', BIN],
		{ env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1' }, timeout: 10000 },
		(err, stdout, stderr) => resolve({ code: err ? err.code : 0, stderr })));
	assert.equal(r.code, 1, r.stderr);
	assert.match(r.stderr, /signalfd/);
});

test('an INGOT_ variable that names no setting: one warning with the nearest name, the start goes on; the app\'s own UPSTREAM is no INGOT_ name', T, async () => {
	const srv = await startServer({ INGOT_ACCES_LOG: '1', INGOT_SOMETHING_ELSE: 'x', UPSTREAM: 'http://127.0.0.1:1' });
	const warned = srv.logs.filter((l) => l.msg === 'an INGOT_ variable that names no setting is ignored');
	assert.deepEqual(warned.map((l) => [l.name, l.did_you_mean]).sort(),
		[['INGOT_ACCES_LOG', 'INGOT_ACCESS_LOG'], ['INGOT_SOMETHING_ELSE', undefined]]);
	assert.equal((await curlResponse(srv.port, '/health')).status, 200);
	assert.ok(!srv.logs.some((l) => l.msg === 'request'), 'the misspelled access log stays off');
	await srv.stop();
});

test('INGOT_STRICT_ENV=true: an unknown INGOT_ variable stops the start with exit 2, naming it and the nearest name; --migrate checks too', T, async () => {
	let r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_STRICT_ENV: 'true', INGOT_ACCES_LOG: '1' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /INGOT_ACCES_LOG is not a setting \(did you mean INGOT_ACCESS_LOG\?\)/);
	r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_STRICT_ENV: 'maybe' });
	assert.equal(r.code, 2, r.stderr);
	// --migrate reads only the database's settings, and checks the names all the same.
	r = await runBinary(['--migrate'], { INGOT_STRICT_ENV: 'true', INGOT_ACCES_LOG: '1' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /INGOT_ACCES_LOG is not a setting/);
	r = await runBinary(['--migrate'], { INGOT_ACCES_LOG: '1' }); // no database: exit 2 for that
	assert.match(r.stdout, /"name":"INGOT_ACCES_LOG","did_you_mean":"INGOT_ACCESS_LOG"/);
});

test('--check: 0 for a good configuration without opening a listener (a port in use is no error), 2 naming a bad setting or file', T, async () => {
	const taken = net.createServer();
	await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
	try {
		const r = await runBinary(['--check'], { PORT: String(taken.address().port), HOST: '127.0.0.1' });
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout, /configuration ok/);
		assert.doesNotMatch(r.stdout, /"msg":"listening"/);
	} finally {
		taken.close();
	}
	for (const [env, name] of [[{ PORT: 'abc' }, /PORT/], [{ INGOT_TLS_CERT: '/nonexistent/cert.pem', INGOT_TLS_KEY: '/nonexistent/key.pem' }, /nonexistent/],
		[{ INGOT_TLS_CA_FILE: '/nonexistent/ca.pem' }, /INGOT_TLS_CA_FILE/], [{ INGOT_STRICT_ENV: 'true', INGOT_ACCES_LOG: '1' }, /INGOT_ACCES_LOG/]]) {
		const r = await runBinary(['--check'], { HOST: '127.0.0.1', ...env });
		assert.equal(r.code, 2, `${JSON.stringify(env)}: ${r.stderr}`);
		assert.match(r.stderr, name);
	}
});

test('--help exits 0 and lists PORT and every INGOT_ variable', T, async () => {
	const r = await runBinary(['--help'], { PORT: 'abc' }); // --help wins over a bad env
	assert.equal(r.code, 0, r.stderr);
	for (const name of ['PORT', 'HOST', 'INGOT_THREADS', 'INGOT_MAX_BODY', 'INGOT_HEADER_TIMEOUT_MS',
		'INGOT_WRITE_TIMEOUT_MS', 'INGOT_MAX_OUTPUT', 'INGOT_GRACE_MS', 'INGOT_LOG_LEVEL'])
		assert.match(r.stdout, new RegExp(`\\b${name}\\b`), name);
	assert.match(r.stdout, /default: 8080/);
});

// One policy for every part's settings: read at startup, a bad value is one
// line on stderr and exit 2 (the client's, DNS's and the CA settings once
// warned on the first outbound call, or became port 53, and kept going).
function assertOneSettingError(r, name, what) {
	assert.equal(r.code, 2, `${what}: exit code; stderr: ${r.stderr}`);
	const lines = r.stderr.trim().split('\n');
	assert.equal(lines.length, 1, `${what}: one message; stderr: ${r.stderr}`);
	assert.match(lines[0], new RegExp(`\\b${name}\\b`), what);
}

test('a bad client, DNS or CA mode setting stops the start: exit 2, one stderr line naming it', T, async () => {
	for (const [k, v] of [['INGOT_CLIENT_CONNECTIONS', '0'], ['INGOT_CLIENT_CONNECTIONS', 'many'],
		['INGOT_CLIENT_MAX_BODY', '10x'], ['INGOT_DNS_PORT', '53x'], ['INGOT_DNS_PORT', '0'],
		['INGOT_DNS_PORT', '70000'], ['INGOT_DNS_SERVER', 'nameserver.test'], ['INGOT_RESOLV_CONF', ''],
		['INGOT_TLS_CA_MODE', 'both']]) {
		const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', [k]: v });
		assertOneSettingError(r, k, `${k}=${v}`);
	}
	const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_TLS_CA_MODE: 'replace' });
	assertOneSettingError(r, 'INGOT_TLS_CA_FILE', 'INGOT_TLS_CA_MODE=replace without a file');
});

test('INGOT_TLS_CA_FILE that is missing or holds no certificate stops the start: exit 2, one line naming it', T, async () => {
	const dir = mkdtempSync(path.join(os.tmpdir(), 'ingot-ca-'));
	try {
		const garbage = path.join(dir, 'garbage.pem');
		writeFileSync(garbage, 'not a certificate\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
		for (const file of [path.join(dir, 'missing.pem'), garbage, dir]) {
			const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_TLS_CA_FILE: file });
			assertOneSettingError(r, 'INGOT_TLS_CA_FILE', file);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test('--help lists the client, DNS and outbound TLS trust settings with their defaults', T, async () => {
	const r = await runBinary(['--help'], {});
	assert.equal(r.code, 0, r.stderr);
	for (const [name, dflt] of [['INGOT_CLIENT_CONNECTIONS', '8'], ['INGOT_CLIENT_MAX_BODY', '1048576'],
		['INGOT_DNS_PORT', '53'], ['INGOT_DNS_SERVER', 'not set'], ['INGOT_RESOLV_CONF', '/etc/resolv.conf'],
		['INGOT_HOSTS_FILE', '/etc/hosts'],
		['INGOT_TLS_CA_FILE', 'not set'], ['INGOT_TLS_CA_MODE', 'add']])
		assert.match(r.stdout, new RegExp(`\\b${name}\\b.*\\(default: ${dflt}\\)`), name);
});

test('--version: the app\'s name and version, then ingot\'s version, its commit, the TLS backend and the build time', T, async () => {
	const r = await runBinary(['--version'], {});
	assert.equal(r.code, 0, r.stderr);
	const lines = r.stdout.trimEnd().split('\n');
	assert.match(lines[0], /^ingot reference service \d+\.\d+\.\d+$/);
	assert.equal(lines[1], `ingot ${ingotVersion()}`);
	assert.match(r.stdout, /^tls (bearssl|mbedtls|none)\b/m);
	// The reference service is built from ingot's checkout: its commit (and
	// the last commit's time, not the clock, unless SOURCE_DATE_EPOCH said).
	const git = (...a) => new Promise((res) => execFile('git', ['-C', ROOT, ...a], (e, out) => res(e ? null : out.trim())));
	const head = await git('rev-parse', '--short=12', 'HEAD');
	if (head === null) {
		assert.doesNotMatch(r.stdout, /^ingot-commit/m, 'no checkout, no commit');
		return;
	}
	assert.match(r.stdout, new RegExp(`^ingot-commit ${head}(-dirty)?$`, 'm'));
	assert.doesNotMatch(r.stdout, /^app-commit/m, 'the reference service is ingot\'s own');
	const when = Number(process.env.SOURCE_DATE_EPOCH || await git('log', '-1', '--format=%ct'));
	assert.match(r.stdout, new RegExp(`^built ${new Date(when * 1000).toISOString().replace(/\.000Z$/, 'Z')}$`, 'm'));
});

test('a fatal signal from outside: one "fatal signal" error line naming it, then the process ends by it', T, async () => {
	const srv = await startServer({});
	process.kill(srv.proc.pid, 'SIGSEGV');
	await srv.exited;
	const lines = srv.logs.filter((l) => l.msg === 'fatal signal');
	assert.equal(lines.length, 1, srv.lines.join('\n'));
	assert.deepEqual({ ...lines[0], ts: undefined }, { ts: undefined, level: 'error', msg: 'fatal signal', signal: 'SIGSEGV', from: 'process' });
	// The signal then does what it did before the line: the default action.
	assert.deepEqual(srv.exit, { code: null, signal: 'SIGSEGV' });
});

test('the "listening" log line has addr, port, threads and a numeric startup_us; every stdout line is JSON', T, async () => {
	const srv = await startServer({}, { threads: '3' });
	try {
		const l = srv.listening;
		assert.equal(l.level, 'info');
		assert.equal(l.addr, srv.host);
		assert.ok(Number.isInteger(l.port) && l.port > 0 && l.port < 65536, `port ${l.port}`);
		assert.equal(l.threads, 3);
		assert.equal(typeof l.startup_us, 'number');
		assert.ok(l.startup_us >= 0);
		assert.equal(l.pid, srv.pid);
		assert.match(l.ts, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
		const res = await curlResponse(srv.port, '/health');
		assert.equal(res.text, BODY.health);
	} finally {
		assert.deepEqual(await srv.stop(), { code: 0, signal: null });
	}
	for (const line of srv.lines) {
		const o = JSON.parse(line);
		assert.ok(o.ts && o.level && o.msg, line);
	}
});

test('without INGOT_THREADS the server picks at least one loop and says so', T, async () => {
	const srv = await startServer({ INGOT_THREADS: undefined });
	try {
		assert.ok(Number.isInteger(srv.listening.threads) && srv.listening.threads >= 1);
	} finally {
		await srv.stop();
	}
});

test('INGOT_ACCESS_LOG=1 logs one "request" line per request with method, route (the template) and status', T, async () => {
	const srv = await startServer({ INGOT_ACCESS_LOG: '1' });
	try {
		const mark = srv.mark();
		await curlResponse(srv.port, '/blog/12');
		const l = await srv.waitLog((x) => x.msg === 'request', mark);
		assert.equal(l.method, 'GET');
		assert.equal(l.route, '/blog/{id}');
		assert.equal(l.status, 200);
	} finally {
		await srv.stop();
	}
});

function fileOutput(p) {
	return new Promise((resolve, reject) => {
		execFile('file', ['-L', p], (err, stdout) => (err ? reject(err) : resolve(stdout)));
	});
}

test('build/bin/service is a statically linked executable', T, async () => {
	const out = await fileOutput(BIN);
	assert.match(out, /ELF/);
	assert.match(out, /statically linked/);
});

/** dir/dev/net/tun: the TUN/TAP control device (char 10:200) in a chroot. */
function tunDevice(dir) {
	mkdirSync(path.join(dir, 'dev', 'net'), { recursive: true });
	return new Promise((resolve, reject) => {
		execFile('mknod', ['-m', '600', path.join(dir, 'dev', 'net', 'tun'), 'c', '10', '200'],
			(err, _o, stderr) => (err ? reject(new Error(`mknod: ${stderr}`)) : resolve()));
	});
}

const chroot = ['/usr/sbin/chroot', '/usr/bin/chroot', '/sbin/chroot'].find((p) => existsSync(p));
const canChroot = process.getuid && process.getuid() === 0 && chroot;

test('the binary alone in an empty chroot with an empty environment serves GET /health', { ...T, skip: !canChroot && 'needs root and chroot' }, async () => {
	const dir = mkdtempSync(path.join(os.tmpdir(), 'ingot-chroot-'));
	try {
		copyFileSync(BIN, path.join(dir, 'service'));
		chmodSync(path.join(dir, 'service'), 0o755);
		// On lwIP the one thing it needs from outside is its TAP device.
		if (LWIP) await tunDevice(dir);
		const srv = await startServer({}, { command: chroot, args: [dir, '/service'], bareEnv: true, threads: '2' });
		try {
			const res = await curlResponse(srv.port, '/health');
			assert.equal(res.status, 200);
			assert.equal(res.text, BODY.health);
			const j = await curlResponse(srv.port, '/json');
			assert.equal(j.text, BODY.json);
		} finally {
			assert.deepEqual(await srv.stop(), { code: 0, signal: null });
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

// net/cold.ld's request block (.text.request: the IG_HOT functions) in this
// binary: its address range from the section headers, or null without one
// (a build linked without net/cold.ld, such as the sanitizers').
function requestBlock() {
	return new Promise((resolve) => {
		execFile('readelf', ['-SW', BIN], (err, out) => {
			const m = !err && /\s\.text\.request\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)/.exec(out);
			resolve(m ? { lo: BigInt(`0x${m[1]}`), hi: BigInt(`0x${m[1]}`) + BigInt(`0x${m[2]}`) } : null);
		});
	});
}

// Resident KiB of the mappings that overlap [lo, hi), from /proc/PID/smaps.
function residentKiB(pid, { lo, hi }) {
	let kib = 0, inside = false;
	for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
		const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
		if (range) inside = BigInt(`0x${range[1]}`) < hi && BigInt(`0x${range[2]}`) > lo;
		const rss = /^Rss:\s+(\d+) kB/.exec(line);
		if (rss && inside) kib += Number(rss[1]);
	}
	return kib;
}

const block = await requestBlock();

// The promise of an idle process that pays no memory for code it has not
// run: nothing the start or an idle loop runs may be IG_HOT (include/ingot/base.h).
test('an idle server has none of the request path\'s code resident; its first request brings it in', {
	...T, skip: (LWIP && 'the hosted build over lwIP idles through other code') || (!block && 'no .text.request in this binary'),
}, async () => {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '2' });
	try {
		await srv.waitLog((l) => l.msg === 'admin listening');
		assert.equal(residentKiB(srv.pid, block), 0, 'idle: the request block is not resident');
		const res = await curlResponse(srv.port, '/json');
		assert.equal(res.text, BODY.json);
		assert.ok(residentKiB(srv.pid, block) > 0, 'after a request: the request block is resident');
	} finally {
		assert.deepEqual(await srv.stop(), { code: 0, signal: null });
	}
});
