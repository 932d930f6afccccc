// The metrics of TLS, the outbound client and the process, scraped from the
// admin listener (INGOT_ADMIN_PORT=0: the port comes from the "admin
// listening" line): exact handshake counts after full, resumed and failed
// handshakes (openssl s_client, a raw socket with a bad ClientHello); the
// reference app's /proxy/json against a raw upstream (tests/integration/
// upstreams.mjs) in http_client_request_duration_seconds with its labels,
// the pool's connections, and a refused connect in ingot_client_errors_total;
// the process_* values against /proc/PID of the server; promtool over the
// whole exposition. Every wait is for an event (a log line, an exit, a close).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, commandRunner, needTools, curl, freePort, runBinary } from './lib.mjs';
import { Upstream, serviceRoutes, stopAll } from './upstreams.mjs';

const { must } = commandRunner({ timeoutMs: 30000 });
const T = { timeout: 60000 };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-metrics-more-'));
const F = (name) => path.join(tmp, name);
after(async () => {
	cleanup();
	await stopAll();
	fs.rmSync(tmp, { recursive: true, force: true });
});

const BINARIES = [
	{ name: 'bearssl', bin: process.env.INGOT_BIN || path.join(ROOT, 'build', 'bin', 'service') },
	{ name: 'mbedtls', bin: process.env.INGOT_BIN_MBEDTLS || path.join(ROOT, 'build', 'bin', 'service-mbedtls'), optional: true },
].filter((b) => !b.optional || fs.existsSync(b.bin));

// ---- the admin listener and the exposition ----

/** A server with the admin listener on a free port; srv.admin is that port. */
async function startWithAdmin(env = {}, opts = {}) {
	const srv = await startServer({ INGOT_ADMIN_PORT: '0', ...env }, opts);
	const line = await srv.waitLog((l) => l.msg === 'admin listening');
	srv.admin = line.port;
	assert.ok(Number.isInteger(srv.admin) && srv.admin > 0, JSON.stringify(line));
	return srv;
}

function scrape(port, agent = false) {
	return new Promise((resolve, reject) => {
		http.get({ host: '127.0.0.1', port, path: '/metrics', agent }, (res) => {
			let body = '';
			res.setEncoding('utf8');
			res.on('data', (d) => { body += d; });
			res.on('end', () => {
				if (res.statusCode !== 200) reject(new Error(`GET /metrics: ${res.statusCode} ${body}`));
				else resolve(body);
			});
		}).on('error', reject);
	});
}

/** The samples of an exposition: [{name, labels, value}]. */
function parse(text) {
	const out = [];
	for (const line of text.split('\n')) {
		if (!line || line.startsWith('#')) continue;
		const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
		assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
		const labels = {};
		for (const l of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
		out.push({ name: m[1], labels, value: Number(m[3]) });
	}
	return out;
}

/** The samples named name whose labels include want. */
function find(samples, name, want = {}) {
	return samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
}

/** The value of the one sample named name with labels want. */
function value(samples, name, want = {}) {
	const hits = find(samples, name, want);
	assert.equal(hits.length, 1, `one ${name}${JSON.stringify(want)}, got ${JSON.stringify(hits)}`);
	return hits[0].value;
}

async function promtoolCheck(text) {
	await needTools('promtool');
	const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
	let out = '';
	p.stdout.on('data', (d) => { out += d; });
	p.stderr.on('data', (d) => { out += d; });
	p.stdin.end(text);
	const code = await new Promise((r) => p.on('close', r));
	assert.equal(code, 0, `promtool check metrics: ${out}`);
}

// ---- TLS ----

let certs = null;
function makeCert() {
	certs ||= (async () => {
		await needTools('openssl');
		await must('openssl', ['req', '-x509', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
			'-keyout', F('key.pem'), '-out', F('cert.pem'), '-days', '2', '-subj', '/CN=localhost',
			'-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
	})();
	return certs;
}

/** openssl s_client with stdin at EOF: handshakes, closes, exits. */
function sClient(port, args) {
	const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-tls1_2', ...args],
		{ stdio: ['ignore', 'pipe', 'pipe'] });
	let out = '';
	p.stdout.on('data', (d) => { out += d; });
	p.stderr.on('data', (d) => { out += d; });
	return new Promise((resolve) => p.on('close', (code) => resolve({ code, out })));
}

/** A TCP connection that sends a record that is no ClientHello; resolves
 * when the server has closed it. */
function badHello(port) {
	return new Promise((resolve, reject) => {
		const s = net.connect(port, '127.0.0.1', () => {
			// A handshake record (22) of version 3.1 holding a message of type 99.
			s.write(Buffer.from([22, 3, 1, 0, 8, 99, 0, 0, 4, 1, 2, 3, 4]));
		});
		s.on('error', () => {}); // a reset is a close too
		s.on('close', resolve);
		s.setTimeout(20000, () => { s.destroy(); reject(new Error('the server kept a bad ClientHello open')); });
		s.resume();
	});
}

for (const b of BINARIES) {
	test(`TLS (${b.name}): 3 full, 2 resumed, 2 failed handshakes counted exactly, durations of the 5 completed`, T, async () => {
		await makeCert();
		// BearSSL shares its session cache among the cores; mbedtls keeps one
		// per core, where a resumption needs the same core.
		const srv = await startWithAdmin({ INGOT_TLS_CERT: F('cert.pem'), INGOT_TLS_KEY: F('key.pem'), INGOT_TLS_PORT: '0' },
			{ command: b.bin, threads: b.name === 'bearssl' ? '2' : '1' });
		const port = srv.listening.tls_port;
		const before = parse(await scrape(srv.admin));
		assert.equal(value(before, 'ingot_tls_handshakes_total', { result: 'ok' }), 0);
		assert.equal(value(before, 'ingot_tls_handshake_duration_seconds_count'), 0);
		const sess = F(`sess-${b.name}.pem`);
		const first = await sClient(port, ['-sess_out', sess]);
		assert.match(first.out, /^New, TLSv1\.2/m, first.out);
		for (let i = 0; i < 2; i++) {
			const r = await sClient(port, []);
			assert.match(r.out, /^New, TLSv1\.2/m, r.out);
		}
		for (let i = 0; i < 2; i++) {
			const r = await sClient(port, ['-sess_in', sess]);
			assert.match(r.out, /^Reused, TLSv1\.2/m, r.out);
		}
		await badHello(port);
		await badHello(port);
		const s = parse(await scrape(srv.admin));
		assert.equal(value(s, 'ingot_tls_handshakes_total', { result: 'ok' }), 3);
		assert.equal(value(s, 'ingot_tls_handshakes_total', { result: 'resumed' }), 2);
		assert.equal(value(s, 'ingot_tls_handshakes_total', { result: 'failed' }), 2);
		assert.equal(value(s, 'ingot_tls_handshake_duration_seconds_count'), 5);
		assert.equal(value(s, 'ingot_tls_handshake_duration_seconds_bucket', { le: '+Inf' }), 5);
		const sum = value(s, 'ingot_tls_handshake_duration_seconds_sum');
		assert.ok(sum > 0 && sum < 60, `sum ${sum}`);
		assert.equal(value(s, 'ingot_build_info', { version: '0.1.0', tls: srv.listening.tls }), 1);
		const x = await srv.stop();
		assert.equal(x.code, 0);
		const stopped = srv.logs.find((l) => l.msg === 'stopped');
		assert.equal(stopped.tls_handshakes, 5, 'the "stopped" line counts the same');
		assert.equal(stopped.tls_resumed, 2);
		assert.equal(stopped.tls_failed, 2);
	});
}

test('without a TLS listener there are no TLS families; the version is --version\'s', T, async () => {
	const srv = await startWithAdmin();
	const text = await scrape(srv.admin);
	assert.doesNotMatch(text, /ingot_tls_/);
	const v = await runBinary(['--version']);
	const version = v.stdout.split('\n')[0].trim().split(' ').pop();
	assert.equal(value(parse(text), 'ingot_build_info', { version }), 1);
	// The same series carries what --version says the binary was built from.
	const detail = v.stdout.split('\n').slice(1).join('\n');
	const field = (k) => (detail.match(new RegExp(`^${k} (.*)$`, 'm')) || [])[1];
	const labels = { version, ingot_version: field('ingot') };
	if (field('ingot-commit')) labels.ingot_commit = field('ingot-commit');
	if (field('built')) labels.built = field('built');
	assert.ok(labels.ingot_version, v.stdout);
	assert.equal(value(parse(text), 'ingot_build_info', labels), 1);
	await srv.stop();
});

// ---- the outbound client ----

test('client: /proxy/json against a raw upstream: durations by address, port, method and status; idle connections', T, async () => {
	let n = 0;
	const up = await Upstream.start({
		...serviceRoutes,
		// The fourth call gets a 503, the rest the service's body.
		'/json': (req) => (++n === 4 ? { status: 503, body: '{}' } : serviceRoutes['/json'](req)),
	});
	const srv = await startWithAdmin({ UPSTREAM: up.origin, INGOT_CLIENT_KEEP_ALIVE_MS: '600000' });
	const statuses = [];
	for (let i = 0; i < 5; i++) {
		const r = await curl(['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${srv.port}/proxy/json`]);
		statuses.push(r.stdout.toString());
	}
	assert.deepEqual(statuses, ['200', '200', '200', '502', '200']);
	const text = await scrape(srv.admin);
	const s = parse(text);
	const labels = { server_address: '127.0.0.1', server_port: String(up.port), http_request_method: 'GET' };
	assert.equal(value(s, 'http_client_request_duration_seconds_count', { ...labels, http_response_status_code: '200' }), 4);
	assert.equal(value(s, 'http_client_request_duration_seconds_count', { ...labels, http_response_status_code: '503' }), 1);
	assert.equal(value(s, 'http_client_request_duration_seconds_bucket',
		{ ...labels, http_response_status_code: '200', le: '+Inf' }), 4);
	assert.equal(find(s, 'http_client_request_duration_seconds_count').length, 2, 'no other series');
	// The upstream's connections all stay open (keep-alive of 10 minutes):
	// each is one of the pool's, and none has a call in flight.
	const open = up.conns.filter((c) => !c.closed).length;
	assert.ok(open >= 1 && open <= 2, `${open} connections (one per core at most)`);
	const at = { server_address: '127.0.0.1', server_port: String(up.port) };
	assert.equal(value(s, 'ingot_client_connections', { ...at, state: 'idle' }), open);
	assert.equal(value(s, 'ingot_client_connections', { ...at, state: 'active' }), 0);
	assert.equal(find(s, 'ingot_client_errors_total').length, 0, 'a 503 is an answer, not an error');
	await promtoolCheck(text);
	await srv.stop();
});

test('client: a refused connect counts as ingot_client_errors_total{kind="connect"}, with no duration series', T, async () => {
	const closed = await freePort(); // nothing listens there
	const srv = await startWithAdmin({ UPSTREAM: `http://127.0.0.1:${closed}` });
	for (let i = 0; i < 3; i++) {
		const r = await curl(['-s', `http://127.0.0.1:${srv.port}/proxy/json`]);
		assert.match(r.stdout.toString(), /"connect"/, r.stdout.toString());
	}
	const s = parse(await scrape(srv.admin));
	assert.equal(value(s, 'ingot_client_errors_total', { server_address: '127.0.0.1', kind: 'connect' }), 3);
	assert.equal(find(s, 'ingot_client_errors_total').length, 1, 'no other kind');
	assert.equal(find(s, 'http_client_request_duration_seconds_count').length, 0);
	for (const state of ['active', 'idle']) {
		assert.equal(value(s, 'ingot_client_connections', { server_address: '127.0.0.1', server_port: String(closed), state }), 0);
	}
	await srv.stop();
});

// ---- the process ----

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
function procStat(pid) {
	const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const f = st.slice(st.lastIndexOf(')') + 2).split(' '); // f[0] is field 3
	return { cpu: (Number(f[11]) + Number(f[12])) / CLK_TCK, start: Number(f[19]) / CLK_TCK };
}
function statusKiB(pid, key) {
	return Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
}

test('process_* against /proc/PID: CPU time, memory, descriptors, their limit, the start time', T, async () => {
	const srv = await startWithAdmin();
	const pid = srv.pid;
	// Some work first, so that CPU time and memory are not all zero.
	for (let i = 0; i < 20; i++) await curl(['-s', '-o', '/dev/null', `http://127.0.0.1:${srv.port}/compute`]);
	const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
	await scrape(srv.admin, agent); // the admin connection, open from here on
	// A connection curl closed may still linger on the server's side (a
	// graceful close reads the peer's last bytes for a while), so a scrape
	// counts only when no descriptor came or went around it.
	let cpu0, rss0, vsz0, fds, s, cpu1, rss1, vsz1, stable = false;
	for (let tries = 0; tries < 100 && !stable; tries++) {
		cpu0 = procStat(pid).cpu;
		rss0 = statusKiB(pid, 'VmRSS');
		vsz0 = statusKiB(pid, 'VmSize');
		fds = fs.readdirSync(`/proc/${pid}/fd`).length;
		s = parse(await scrape(srv.admin, agent));
		cpu1 = procStat(pid).cpu;
		rss1 = statusKiB(pid, 'VmRSS');
		vsz1 = statusKiB(pid, 'VmSize');
		stable = fs.readdirSync(`/proc/${pid}/fd`).length === fds;
	}
	assert.ok(stable, 'a scrape with no descriptor coming or going around it, within 100 tries');
	agent.destroy();

	const cpu = value(s, 'process_cpu_seconds_total');
	assert.ok(cpu > 0 && cpu >= cpu0 && cpu <= cpu1, `cpu ${cpu} in [${cpu0}, ${cpu1}]`);
	// /proc/PID/stat and status read the same counters, but the kernel
	// batches each thread's share (up to 64 pages a thread), hence the slack.
	const rss = value(s, 'process_resident_memory_bytes');
	const slack = 512 * 1024;
	assert.ok(rss >= Math.min(rss0, rss1) - slack && rss <= Math.max(rss0, rss1) + slack, `rss ${rss} vs ${rss0}..${rss1}`);
	const vsz = value(s, 'process_virtual_memory_bytes');
	assert.ok(vsz >= Math.min(vsz0, vsz1) && vsz <= Math.max(vsz0, vsz1), `vsz ${vsz} vs ${vsz0}..${vsz1}`);
	assert.equal(value(s, 'process_open_fds'), fds);
	const soft = /^Max open files\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'))[1];
	assert.equal(value(s, 'process_max_fds'), Number(soft));
	const btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))[1]);
	const start = value(s, 'process_start_time_seconds');
	assert.ok(Math.abs(start - (btime + procStat(pid).start)) < 0.001, `start ${start} vs ${btime} + ${procStat(pid).start}`);
	assert.ok(Math.abs(start - Date.now() / 1000) < 120, 'started a moment ago');
	await srv.stop();
});
