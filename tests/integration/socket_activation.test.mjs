// Socket activation (LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES) through
// Debian's systemd-socket-activate, which binds the sockets, waits for the
// first connection and execs the service with them from fd 3: requests
// are served on them, the service binds no port of its own (PORT and
// INGOT_ADMIN_PORT are ignored), and every core's epoll watches the one
// shared socket with EPOLLEXCLUSIVE. Then what is refused, with exit 2 and
// the fd named: no certificate for an https socket, a descriptor that is
// not a listening stream socket, a bad count, two sockets of one name.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BIN, BODY, ServerProcess, cleanup, commandRunner, curl, freePort, needTools, startServer } from './lib.mjs';
import { heldSocket, spawnActivated } from './supervisor.mjs';

const T = { timeout: 60000 };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-sockact-'));
const F = (n) => path.join(tmp, n);
const procs = [];
after(() => {
	for (const p of procs) p.kill();
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { must } = commandRunner();

const SANITIZER_ENV = ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS'].filter((k) => process.env[k] !== undefined);

const certMade = must('openssl', ['req', '-x509', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
	'-keyout', F('key.pem'), '-out', F('cert.pem'), '-days', '2', '-subj', '/CN=localhost',
	'-addext', 'subjectAltName=DNS:localhost']);

/** systemd-socket-activate on `listens` (ADDR strings) with the service's
 * env (passed with -E: it gives the child nothing else). Resolves once it
 * listens, with the ServerProcess (its pid is the service's, after the exec). */
async function activate(listens, env, { fdnames, extra = [] } = {}) {
	await needTools('systemd-socket-activate');
	const args = [...extra, ...listens.flatMap((l) => ['-l', l]), ...(fdnames ? [`--fdname=${fdnames}`] : [])];
	for (const [k, v] of Object.entries({ INGOT_THREADS: '2', ...env })) args.push('-E', `${k}=${v}`);
	for (const k of SANITIZER_ENV) args.push('-E', `${k}=${process.env[k]}`);
	const proc = spawn('systemd-socket-activate', [...args, BIN], { stdio: ['ignore', 'pipe', 'pipe'] });
	const srv = new ServerProcess(proc);
	procs.push(srv);
	// "Listening on ADDR as N." on stderr, one per socket, before it waits.
	await new Promise((resolve, reject) => {
		const check = () => {
			if ((srv.stderr.match(/Listening on /g) || []).length === listens.length) resolve();
		};
		proc.stderr.on('data', check);
		srv.exited.then(() => reject(new Error(`systemd-socket-activate exited: ${srv.stderr}`)));
		check();
	});
	return srv;
}

/** The listening TCP sockets' inodes by port, from /proc/net/tcp{,6}. */
function listeningInodes() {
	const byPort = new Map();
	for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
		for (const line of fs.readFileSync(f, 'utf8').split('\n').slice(1)) {
			const c = line.trim().split(/\s+/);
			if (c.length < 10 || c[3] !== '0A') continue; // 0A: LISTEN
			byPort.set(parseInt(c[1].split(':').at(-1), 16), c[9]);
		}
	}
	return byPort;
}

/** Every socket inode pid holds, and what each of its epoll fds watches
 * (target inode -> events, from fdinfo). */
function processView(pid) {
	const sockets = new Set(), epolls = [];
	for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
		let link;
		try { link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
		const m = /^socket:\[(\d+)\]$/.exec(link);
		if (m) sockets.add(m[1]);
		if (link === 'anon_inode:[eventpoll]') {
			const watched = new Map();
			for (const l of fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n')) {
				const e = /^tfd:\s*\d+\s+events:\s*([0-9a-f]+).*\sino:([0-9a-f]+)/.exec(l);
				if (e) watched.set(String(parseInt(e[2], 16)), parseInt(e[1], 16));
			}
			epolls.push(watched);
		}
	}
	return { sockets, epolls };
}

/** The ports pid listens on, of every listening socket it holds. */
function portsListenedBy(pid) {
	const { sockets } = processView(pid);
	return [...listeningInodes()].filter(([, ino]) => sockets.has(ino)).map(([port]) => port).sort((a, b) => a - b);
}

const EPOLLEXCLUSIVE = 1 << 28;

function get(port, target = '/health') {
	return new Promise((resolve, reject) => {
		const s = net.connect(port, '127.0.0.1', () => s.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
		const chunks = [];
		s.on('data', (c) => chunks.push(c));
		s.on('error', reject);
		s.on('close', () => resolve(Buffer.concat(chunks).toString()));
	});
}

test('--listen: served on the socket given by every core, and no port of its own', T, async () => {
	const [port, ownPort, adminPort] = await Promise.all([freePort(), freePort(), freePort()]);
	const srv = await activate([`127.0.0.1:${port}`], { PORT: String(ownPort), HOST: '0.0.0.0', INGOT_ADMIN_PORT: String(adminPort) });
	const answers = await Promise.all(Array.from({ length: 50 }, () => get(port)));
	for (const a of answers) assert.match(a, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"status":"ok"\}$/);
	const listening = await srv.waitLog((l) => l.msg === 'listening');
	assert.equal(listening.port, port);
	assert.equal(listening.addr, '127.0.0.1'); // the socket's, not HOST's
	assert.equal(listening.sockets, 'LISTEN_FDS');
	assert.equal(listening.pid, srv.pid);
	assert.deepEqual(portsListenedBy(srv.pid), [port], 'the service listens on the given socket only');
	assert.ok(!listeningInodes().has(ownPort), 'PORT was bound');
	assert.ok(!listeningInodes().has(adminPort), 'INGOT_ADMIN_PORT was bound');
	// Both cores' loops watch the one socket, each with EPOLLEXCLUSIVE.
	const ino = listeningInodes().get(port);
	const watching = processView(srv.pid).epolls.filter((w) => w.has(ino));
	assert.equal(watching.length, 2, 'one epoll per core watches the socket');
	for (const w of watching) assert.ok(w.get(ino) & EPOLLEXCLUSIVE, `events ${w.get(ino).toString(16)} lack EPOLLEXCLUSIVE`);
	const activation = srv.logs.filter((l) => l.msg === 'socket activation');
	assert.deepEqual(activation.map((l) => [l.name, l.fd, l.port]), [['http', 3, port]]);
	assert.deepEqual(await srv.stop(), { code: 0, signal: null });
});

test('--fdname http:https:admin: plain HTTP, HTTPS and the admin listener on the sockets given', T, async () => {
	await certMade;
	const [http, https, admin] = await Promise.all([freePort(), freePort(), freePort()]);
	const srv = await activate([`127.0.0.1:${http}`, `127.0.0.1:${https}`, `127.0.0.1:${admin}`],
		{ INGOT_TLS_CERT: F('cert.pem'), INGOT_TLS_KEY: F('key.pem'), INGOT_TLS_PORT: '0' }, { fdnames: 'http:https:admin' });
	const tlsAnswer = await curl(['-sS', '--cacert', F('cert.pem'), '--resolve', `localhost:${https}:127.0.0.1`,
		`https://localhost:${https}/health`]);
	assert.equal(tlsAnswer.stdout.toString(), BODY.health, tlsAnswer.stderr);
	assert.match(await get(http), /\r\n\r\n\{"status":"ok"\}$/);
	const metrics = await get(admin, '/metrics');
	assert.match(metrics, /^HTTP\/1\.1 200 OK/);
	assert.match(metrics, /\nhttp_server_request_duration_seconds_count\{[^}]*http_route="\/health"[^}]*\} 2\n/);
	// The API's port does not serve the admin's paths: the sockets were told apart.
	assert.match(await get(http, '/metrics'), /^HTTP\/1\.1 404/);
	const listening = await srv.waitLog((l) => l.msg === 'listening');
	assert.deepEqual([listening.port, listening.tls_port], [http, https]);
	assert.equal((await srv.waitLog((l) => l.msg === 'admin listening')).port, admin);
	assert.deepEqual(portsListenedBy(srv.pid), [http, https, admin].sort((a, b) => a - b));
	assert.deepEqual(await srv.stop(), { code: 0, signal: null });
});

test('--fdname https without a TLS certificate: exit 2, naming the fd', T, async () => {
	const [http, https] = await Promise.all([freePort(), freePort()]);
	const srv = await activate([`127.0.0.1:${http}`, `127.0.0.1:${https}`], {}, { fdnames: 'http:https' });
	net.connect(http, '127.0.0.1').on('error', () => {}); // the connection that starts it
	assert.equal((await srv.exited).code, 2);
	assert.match(srv.stderr, /LISTEN_FDS: fd 4 is named https, but no TLS certificate is set/);
});

test('a datagram socket (--datagram): exit 2, naming the fd', T, async () => {
	const port = await freePort();
	const srv = await activate([`127.0.0.1:${port}`], {}, { extra: ['--datagram'] });
	const d = dgram.createSocket('udp4');
	d.send('x', port, '127.0.0.1', () => d.close()); // what starts it
	assert.equal((await srv.exited).code, 2);
	assert.match(srv.stderr, /LISTEN_FDS: fd 3 \(http\) is not a stream \(TCP\) socket/);
});

for (const [name, make, names, want, env = {}] of [
	['a file (/dev/null)', async () => [fs.openSync('/dev/null', 'r')], undefined, /LISTEN_FDS: fd 3 \(http\) is not a socket/],
	['a connected socket (node\'s "pipe", a socketpair)', async () => ['pipe'], 'https',
		/LISTEN_FDS: fd 3 \(https\) is not listening/],
	['a bound socket that does not listen', async () => [(await heldSocket({ listen: false })).fd], 'admin',
		/LISTEN_FDS: fd 3 \(admin\) is not listening/],
	['two sockets named http', async () => [(await heldSocket()).fd, (await heldSocket()).fd], 'http:unknown',
		/LISTEN_FDS: fd 3 and fd 4 are both named http/],
	['an http socket with INGOT_TLS_ONLY', async () => [(await heldSocket()).fd], 'http',
		/LISTEN_FDS: fd 3 is named http \(or has no name\), but INGOT_TLS_ONLY is set/, {
			INGOT_TLS_ONLY: 'true', INGOT_TLS_CERT: F('cert.pem'), INGOT_TLS_KEY: F('key.pem'),
		}],
]) {
	test(`${name} at fd 3: exit 2, naming the fd`, T, async () => {
		await certMade;
		const srv = spawnActivated(await make(), { PORT: '0', ...env }, { names });
		procs.push(srv);
		assert.equal((await srv.exited).code, 2, srv.stderr);
		assert.match(srv.stderr, want);
	});
}

test('LISTEN_FDS that is not a count: exit 2', T, async () => {
	const srv = spawnActivated([], { LISTEN_FDS: '2x' });
	procs.push(srv);
	assert.equal((await srv.exited).code, 2);
	assert.match(srv.stderr, /LISTEN_FDS "2x" is not a count of descriptors/);
});

test('LISTEN_PID of another process: not ours, the service binds its own port', T, async () => {
	const srv = await startServer({ LISTEN_PID: '1', LISTEN_FDS: '1', LISTEN_FDNAMES: 'https' });
	assert.ok(srv.port > 0);
	assert.equal(srv.listening.sockets, undefined);
	assert.match(await get(srv.port), /\r\n\r\n\{"status":"ok"\}$/);
	assert.deepEqual(portsListenedBy(srv.pid), [srv.port]);
});

test('a Unix stream socket: served over it', T, async () => {
	const sock = F('api.sock');
	const srv = await activate([sock], {});
	const r = await curl(['-sS', '--unix-socket', sock, 'http://x/health']);
	assert.equal(r.stdout.toString(), BODY.health, r.stderr);
	assert.deepEqual(await srv.stop(), { code: 0, signal: null });
});
