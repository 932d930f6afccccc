// Shared helpers for the integration tests: start the real service binary,
// talk to it over raw sockets and curl, parse HTTP/1.1 responses byte-exact.
// Every wait is for an event (a log line, a response, a close, an exit);
// nothing here sleeps. Ports are always picked by the server (PORT=0),
// except in lwIP mode (below), where each server has its own address.
import assert from 'node:assert/strict';
import { spawn, execFile, execFileSync } from 'node:child_process';
import fs, { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = process.env.INGOT_BIN || path.join(ROOT, 'build', 'bin', 'service');

// ---- expected bodies of the reference service ----

export const BODY = {
	health: '{"status":"ok"}',
	json: '{"id":1,"name":"widget","tags":["a","b","c"],"price":12.5,' +
		'"stock":{"warehouse":"north","count":42},"active":true}',
	compute: (() => {
		let r = 0;
		for (let i = 0; i < 1e6; i++) r = (r + i * 31) % 1000000007;
		return `{"result":${r}}`;
	})(),
	hash: `{"sha256":"${createHash('sha256').update('hello world'.repeat(100)).digest('hex')}"}`,
	blog: (id) => `{"id":${id},"title":"post ${id}","body":"This is post ${id}.","likes":0}`,
	delay: (ms) => `{"delayed_ms":${ms}}`,
};

export const DATE_RE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

// ---- lwIP mode: the server on its own TCP/IP stack over a TAP device ----

/** INGOT_TEST_NET=tap: every server runs its own lwIP stack (the binary is
 * INGOT_BIN, e.g. build/bin/service-lwip) over a TAP device of its own in
 * the current network namespace (tests/run makes one per suite). Tests
 * that cannot apply to lwIP (descriptors, the host's ports, the kernel's
 * TCP) skip themselves on this. */
export const LWIP = process.env.INGOT_TEST_NET === 'tap';

// port -> the address of the server listening there. Empty outside lwIP
// mode: every server is on 127.0.0.1.
const hosts = new Map();

/** The address a client connects to for the server on `port`. */
export function hostFor(port) {
	return hosts.get(port) ?? '127.0.0.1';
}

const liveTaps = new Set();
let nextNet = 1;      // N of the next TAP igh<N>, subnet 10.232.<N>.0/24
let nextPort = 18080; // lwIP's ports are ours to choose: one per server of this process

function ip(args) {
	return new Promise((resolve, reject) => {
		execFile('ip', args, (err, _out, stderr) =>
			(err ? reject(new Error(`ip ${args.join(' ')} failed: ${stderr || err.message}`)) : resolve()));
	});
}

/** A TAP device igh<N> not in use yet, up, with 10.232.<N>.1/24 on the Linux
 * side: {dev, linuxAddr, addr (the server's: 10.232.<N>.2), prefix}. */
async function createTap() {
	let n = nextNet++;
	while (existsSync(`/sys/class/net/igh${n}`)) n = nextNet++;
	if (n > 254) throw new Error('no free TAP number igh1..igh254 left');
	const dev = `igh${n}`;
	await ip(['tuntap', 'add', 'dev', dev, 'mode', 'tap']);
	liveTaps.add(dev);
	await ip(['addr', 'add', `10.232.${n}.1/24`, 'dev', dev]);
	await ip(['link', 'set', 'dev', dev, 'up']);
	return { dev, linuxAddr: `10.232.${n}.1`, addr: `10.232.${n}.2`, prefix: 24 };
}

function deleteTap(dev) {
	return ip(['link', 'del', 'dev', dev]).catch(() => {}).then(() => liveTaps.delete(dev));
}

/** The environment and address of one lwIP server: its TAP, IP and port. */
async function lwipNet() {
	const tap = await createTap();
	const port = String(nextPort++);
	return {
		tap, host: tap.addr,
		env: {
			PORT: port, HOST: tap.addr, INGOT_NET: `tap:${tap.dev}`,
			INGOT_NET_IP: `${tap.addr}/${tap.prefix}`, INGOT_NET_GW: tap.linuxAddr,
		},
	};
}

// ---- the server process ----

const liveProcs = new Set();
const liveSockets = new Set();

/** Starts build/bin/service with PORT=0 HOST=127.0.0.1 (plus env) and
 * resolves once it has logged "listening". Nothing of the caller's
 * environment leaks in except PATH (not even that with bareEnv). An env
 * value of undefined removes the variable. `command` runs something else
 * (e.g. chroot) that execs the service with `args`. In lwIP mode the server
 * gets a TAP device, its address and a port instead (see LWIP); srv.host is
 * where it listens, srv.linuxAddr the TAP's other end, opts.lwipEnv(tap)
 * (async or not) more settings that name it ({dev, linuxAddr, addr,
 * prefix}), and the TAP goes when the server has exited. */
export function startServer(env = {}, opts = {}) {
	return LWIP ? startLwipServer(env, opts) : launchServer(env, opts, {}).listening;
}

async function startLwipServer(env, opts) {
	const where = await lwipNet();
	const { srv, listening } = launchServer({ ...env, ...await opts.lwipEnv?.(where.tap) }, opts, where.env);
	srv.host = where.host;
	srv.linuxAddr = where.tap.linuxAddr;
	srv.exited.then(() => deleteTap(where.tap.dev));
	await listening;
	hosts.set(srv.port, where.host);
	return srv;
}

// The sanitizers' own settings (tests/run sends their reports to files and
// then looks for them): a server started with a chosen environment still
// gets them, or a UBSan report would only scroll past on its stderr.
const SANITIZER_ENV = Object.fromEntries(['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']
	.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));

function launchServer(env, { args = [], threads = '2', startTimeoutMs = 10000, command = BIN, bareEnv = false }, netEnv) {
	const fullEnv = { ...(bareEnv ? {} : { PATH: process.env.PATH }), ...SANITIZER_ENV, PORT: '0', HOST: '127.0.0.1', INGOT_THREADS: threads, ...netEnv, ...env };
	for (const k of Object.keys(fullEnv)) if (fullEnv[k] === undefined) delete fullEnv[k];
	// Its own process group, so that cleanup also reaches whatever the
	// command started (unshare's child, chroot's exec is the same process).
	const proc = spawn(command, args, { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
	liveProcs.add(proc);
	const srv = new ServerProcess(proc);
	return { srv, listening: new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			reject(new Error(`server did not log "listening" within ${startTimeoutMs} ms; ` +
				`stdout: ${srv.lines.join('\n')} stderr: ${srv.stderr}`));
			srv.kill();
		}, startTimeoutMs);
		proc.on('error', (e) => { clearTimeout(timer); reject(e); });
		srv.exited.then((x) => {
			clearTimeout(timer);
			reject(new Error(`server exited before listening (code ${x.code}, signal ${x.signal}); ` +
				`stdout: ${srv.lines.join('\n')} stderr: ${srv.stderr}`));
		});
		srv.waitLog((l) => l.msg === 'listening').then((l) => {
			clearTimeout(timer);
			srv.port = l.port;
			srv.listening = l;
			resolve(srv);
		}, () => {});
	}) };
}

export class ServerProcess {
	constructor(proc) {
		this.proc = proc;
		this.pid = proc.pid;
		this.host = '127.0.0.1'; // where it listens (lwIP mode: its own address)
		this.logs = [];   // parsed JSON lines
		this.lines = [];  // every stdout line, raw
		this.stderr = '';
		this.exit = null; // {code, signal} once the process and its pipes closed
		this._waiters = [];
		let partial = '';
		proc.stdout.setEncoding('utf8');
		proc.stdout.on('data', (chunk) => {
			partial += chunk;
			let nl;
			while ((nl = partial.indexOf('\n')) >= 0) {
				const line = partial.slice(0, nl);
				partial = partial.slice(nl + 1);
				this.lines.push(line);
				let obj = null;
				try { obj = JSON.parse(line); } catch { obj = { unparsed: line }; }
				this.logs.push(obj);
				this._check();
			}
		});
		proc.stderr.setEncoding('utf8');
		proc.stderr.on('data', (c) => { this.stderr += c; });
		this.exited = new Promise((resolve) => {
			proc.on('close', (code, signal) => {
				this.exit = { code, signal };
				liveProcs.delete(proc);
				this._check();
				resolve(this.exit);
			});
		});
	}

	_check() {
		this._waiters = this._waiters.filter((w) => {
			const hit = this.logs.slice(w.from).find(w.pred);
			if (hit) { w.resolve(hit); return false; }
			if (this.exit) {
				w.reject(new Error(`server exited (${JSON.stringify(this.exit)}) without logging the awaited line; ` +
					`stdout: ${this.lines.join('\n')}`));
				return false;
			}
			return true;
		});
	}

	/** Resolves with the first log object matching pred (past or future),
	 * looking only at lines from index `from` on (see mark()). */
	waitLog(pred, from = 0) {
		return new Promise((resolve, reject) => {
			this._waiters.push({ pred, from, resolve, reject });
			this._check();
		});
	}

	/** The index of the next log line, for waitLog(pred, mark). */
	mark() {
		return this.logs.length;
	}

	signal(sig) {
		if (!this.exit) this.proc.kill(sig);
	}

	kill() {
		if (!this.exit) killGroup(this.proc);
	}

	/** SIGTERM; SIGKILL if it has not exited after killAfterMs. Returns the exit. */
	async stop(killAfterMs = 10000) {
		if (this.exit) return this.exit;
		this.signal('SIGTERM');
		const t = setTimeout(() => this.kill(), killAfterMs);
		const x = await this.exited;
		clearTimeout(t);
		return x;
	}
}

/** Kills every server still running and destroys every open client socket.
 * Call from an after() hook in each test file. */
export function cleanup() {
	for (const s of liveSockets) s.destroy();
	liveSockets.clear();
	for (const p of liveProcs) {
		killGroup(p);
		// A process outside our reach may still hold the pipes: never let
		// them keep this test process alive.
		p.stdout?.destroy();
		p.stderr?.destroy();
		p.unref();
	}
}

/** SIGKILL to the server's process group (it leads one: detached), else to it. */
function killGroup(p) {
	try { process.kill(-p.pid, 'SIGKILL'); return; } catch { /* no group */ }
	try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
}
process.on('exit', () => {
	for (const p of liveProcs) killGroup(p);
	for (const dev of liveTaps) {
		try { execFileSync('ip', ['link', 'del', 'dev', dev], { stdio: 'ignore' }); } catch { /* gone */ }
	}
});

// ---- HTTP/1.1 response parsing ----

/** Parses one response from buf. Returns {response, used} or null when
 * incomplete. head: the request was HEAD (no body follows). atEof: the
 * peer has closed, so a response without Content-Length ends here. */
export function parseResponse(buf, { head = false, atEof = false } = {}) {
	const end = buf.indexOf('\r\n\r\n');
	if (end < 0) return null;
	const headText = buf.subarray(0, end).toString('latin1');
	const [statusLine, ...fieldLines] = headText.split('\r\n');
	const m = /^HTTP\/(\d\.\d) (\d{3}) ?(.*)$/.exec(statusLine);
	if (!m) throw new Error(`malformed status line: ${JSON.stringify(statusLine)}`);
	const status = Number(m[2]);
	const headerList = [];
	const headers = {};
	for (const line of fieldLines) {
		const c = line.indexOf(':');
		if (c <= 0) throw new Error(`malformed header line: ${JSON.stringify(line)}`);
		const name = line.slice(0, c).toLowerCase();
		const value = line.slice(c + 1).trim();
		headerList.push([name, value]);
		headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
	}
	let bodyLen = 0;
	const bodyStart = end + 4;
	if (head || (status >= 100 && status < 200) || status === 204 || status === 304) {
		bodyLen = 0;
	} else if ('content-length' in headers) {
		bodyLen = Number(headers['content-length']);
		if (!Number.isSafeInteger(bodyLen)) throw new Error(`bad Content-Length ${headers['content-length']}`);
	} else if ('transfer-encoding' in headers) {
		throw new Error('chunked responses are not expected from this server');
	} else {
		if (!atEof) return null;
		bodyLen = buf.length - bodyStart;
	}
	if (buf.length < bodyStart + bodyLen) return null;
	const body = buf.subarray(bodyStart, bodyStart + bodyLen);
	const raw = buf.subarray(0, bodyStart + bodyLen);
	return {
		used: bodyStart + bodyLen,
		response: {
			version: m[1], status, reason: m[3], headers, headerList,
			head: headText, body: Buffer.from(body), raw: Buffer.from(raw),
			text: body.toString('utf8'),
			json() { return JSON.parse(this.text); },
		},
	};
}

/** Parses every complete response in buf (none of them HEAD). */
export function parseAll(buf) {
	const out = [];
	let off = 0;
	for (;;) {
		const r = parseResponse(buf.subarray(off));
		if (!r) break;
		out.push(r.response);
		off += r.used;
	}
	return { responses: out, rest: buf.subarray(off) };
}

// ---- raw socket client ----

export class RawClient {
	/** Connects to the server on port (hostFor(port)). */
	static connect(port, opts = {}) {
		return new Promise((resolve, reject) => {
			const sock = net.connect({ host: hostFor(port), port, ...opts });
			const onErr = (e) => reject(e);
			sock.once('error', onErr);
			sock.once('connect', () => {
				sock.off('error', onErr);
				resolve(new RawClient(sock));
			});
		});
	}

	constructor(sock) {
		this.sock = sock;
		this.buf = Buffer.alloc(0);
		this.received = 0;     // total bytes received
		this.ended = false;    // FIN from the server
		this.isClosed = false; // socket fully closed
		this.error = null;     // e.g. ECONNRESET
		this.events = [];      // ordered: 'data', 'end', 'error:<code>', 'close'
		this._waiters = [];
		liveSockets.add(sock);
		sock.on('data', (d) => {
			this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
			this.received += d.length;
			this.events.push('data');
			this._wake();
		});
		sock.on('end', () => { this.ended = true; this.events.push('end'); this._wake(); });
		sock.on('error', (e) => { this.error = e; this.events.push(`error:${e.code}`); this._wake(); });
		sock.on('close', () => {
			this.isClosed = true;
			this.events.push('close');
			liveSockets.delete(sock);
			this._wake();
		});
		this.closed = new Promise((resolve) => sock.once('close', () => resolve(this)));
	}

	_wake() {
		const w = this._waiters;
		this._waiters = [];
		for (const f of w) f();
	}

	_changed() {
		return new Promise((resolve) => this._waiters.push(resolve));
	}

	/** Writes data; resolves when the write callback ran. */
	write(data) {
		return new Promise((resolve, reject) => {
			this.sock.write(data, (err) => (err ? reject(err) : resolve()));
		});
	}

	/** Writes data one byte at a time, each after the previous write's callback. */
	async writeBytewise(data) {
		const b = Buffer.from(data);
		for (let i = 0; i < b.length; i++) await this.write(b.subarray(i, i + 1));
	}

	/** Resolves with the next complete response; rejects if the connection
	 * closes first. */
	async response({ head = false } = {}) {
		for (;;) {
			const r = parseResponse(this.buf, { head, atEof: this.isClosed || this.ended });
			if (r) {
				this.buf = this.buf.subarray(r.used);
				return r.response;
			}
			if (this.isClosed || this.ended) {
				throw new Error(`connection closed before a complete response ` +
					`(events ${this.events.join(',')}); buffered: ${JSON.stringify(this.buf.toString('latin1').slice(0, 500))}`);
			}
			await this._changed();
		}
	}

	/** Resolves with n responses, in order. */
	async responses(n, opts) {
		const out = [];
		for (let i = 0; i < n; i++) out.push(await this.response(opts));
		return out;
	}

	/** Resolves once the server's FIN arrived (or the socket closed/reset). */
	async waitEnd() {
		while (!this.ended && !this.isClosed) await this._changed();
		return this;
	}

	/** Resolves once some bytes are buffered (or the connection ended). */
	async waitData() {
		while (!this.buf.length && !this.ended && !this.isClosed) await this._changed();
		return this;
	}

	/** Resolves once the socket is fully closed (the server closed it: we
	 * answer its FIN with ours). */
	async waitClosed() {
		await this.waitEnd();
		if (!this.isClosed) this.sock.end();
		await this.closed;
		return this;
	}

	end() { this.sock.end(); }
	destroy() { this.sock.destroy(); }
}

/** Sends raw bytes on a new connection and returns the first response and
 * what happened after it: {res, client}. */
/** Slowloris: writes one byte of a header line to client every everyMs
 * until the client gets an answer or is closed; returns the stop function.
 * Each byte must not extend the server's header deadline. */
export function dripHeader(client, everyMs) {
	const drip = 'X-Slow: ' + 'z'.repeat(10000);
	let i = 0;
	const iv = setInterval(() => {
		if (client.received || client.ended || client.isClosed) return clearInterval(iv);
		client.sock.write(drip[i++ % drip.length]);
	}, everyMs);
	return () => clearInterval(iv);
}

export async function rawRequest(port, data, opts) {
	const c = await RawClient.connect(port);
	await c.write(data);
	const res = await c.response(opts);
	return { res, client: c };
}

/** A request with the usual head. */
/** Sends each of requests (raw strings) on its own connection, all
 * connected first and then written in one go, so that they reach the
 * server together (a limit, not the client's pace, decides what passes);
 * resolves their responses, in order. */
export async function burst(port, requests) {
	const clients = await Promise.all(requests.map(() => RawClient.connect(port)));
	clients.forEach((c, i) => c.sock.write(requests[i]));
	const res = await Promise.all(clients.map((c) => c.response()));
	clients.forEach((c) => c.destroy());
	return res;
}

export function req(method, target, { host = 'x', headers = [], body = '', version = '1.1' } = {}) {
	let s = `${method} ${target} HTTP/${version}\r\n`;
	if (host !== null) s += `Host: ${host}\r\n`;
	for (const h of headers) s += `${h}\r\n`;
	if (body.length && !headers.some((h) => /^(content-length|transfer-encoding):/i.test(h))) {
		s += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
	}
	return `${s}\r\n${body}`;
}

// ---- curl ----

/** Runs the binary to completion (for --help, config errors): resolves
 * {code, signal, stdout, stderr}. */
export function runBinary(args = [], env = {}, { timeoutMs = 10000 } = {}) {
	return new Promise((resolve) => {
		const fullEnv = { PATH: process.env.PATH, ...SANITIZER_ENV, ...env };
		execFile(BIN, args, { env: fullEnv, timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
			resolve({
				code: err ? (typeof err.code === 'number' ? err.code : null) : 0,
				signal: err ? err.signal ?? null : null,
				stdout, stderr,
			});
		});
	});
}

/** Runs curl with -sS and the given args; resolves {code, stdout (Buffer), stderr}. */
export function curl(args, { timeoutMs = 15000 } = {}) {
	return new Promise((resolve) => {
		execFile('curl', ['-sS', '--max-time', String(timeoutMs / 1000), ...args],
			{ encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
			(err, stdout, stderr) => {
				resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr: stderr.toString() });
			});
	});
}

/** curl -i --raw: the response exactly as it came off the wire, parsed. */
export async function curlResponse(port, target, extra = [], { head = false } = {}) {
	const url = `http://${hostFor(port)}:${port}${target}`;
	const r = await curl(['-i', '--raw', ...(head ? ['-I'] : []), ...extra, url]);
	if (r.code !== 0) throw new Error(`curl ${url} failed (${r.code}): ${r.stderr}`);
	const p = parseResponse(r.stdout, { head, atEof: true });
	if (!p) throw new Error(`curl ${url}: incomplete response ${JSON.stringify(r.stdout.toString('latin1'))}`);
	assertNoExtra(p.used, r.stdout);
	return p.response;
}

function assertNoExtra(used, buf) {
	if (used !== buf.length) {
		throw new Error(`unexpected bytes after the response: ${JSON.stringify(buf.subarray(used).toString('latin1'))}`);
	}
}

/** Asserts that res (curlResponse's) is a problem+json of status, and
 * returns the problem. */
export function assertProblem(res, status) {
	assert.equal(res.status, status, res.text);
	assert.equal(res.headers['content-type'], 'application/problem+json');
	const p = res.json();
	assert.equal(p.status, status);
	return p;
}

/** The admin listener's "host:port" once srv has logged it. */
export async function adminAddr(srv) {
	const l = await srv.waitLog((x) => x.msg === 'admin listening');
	return `${srv.host}:${l.port}`;
}

/** The samples of one scrape of the admin listener at addr, by
 * 'name{labels}' as written. */
export async function scrapeSamples(addr) {
	const r = await curl([`http://${addr}/metrics`]);
	assert.equal(r.code, 0, r.stderr);
	const m = new Map();
	for (const line of r.stdout.toString('utf8').split('\n')) {
		const s = /^(\S+) (\S+)$/.exec(line);
		if (s && !line.startsWith('#')) m.set(s[1], Number(s[2]));
	}
	return m;
}

/** A promise that resolves with what fn() resolves, or rejects after ms
 * with msg: a safety net so a hung wait fails with a useful message. It
 * bounds a wait; it never orders events. */
export function within(ms, promise, msg) {
	let t;
	return Promise.race([
		promise.finally(() => clearTimeout(t)),
		new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${msg}`)), ms); }),
	]);
}

// ---- external commands (the packaging and VM tests) ----

/** run(cmd, args, opts) and must(...) with the caller's defaults: timeoutMs
 * (a safety net; killed with SIGKILL) and encoding of stdout ('utf8' or
 * 'buffer'). run resolves {code, stdout, stderr}; must asserts exit 0 and
 * returns stdout. */
export function commandRunner(defaults = {}) {
	const run = (cmd, args, opts = {}) => {
		const { env, timeoutMs = 60000, encoding = 'utf8' } = { ...defaults, ...opts };
		return new Promise((resolve) => {
			execFile(cmd, args, { env: env ?? process.env, timeout: timeoutMs, killSignal: 'SIGKILL',
				maxBuffer: 64 << 20, encoding },
			(err, stdout, stderr) => resolve({
				code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr: stderr.toString(),
			}));
		});
	};
	const must = async (cmd, args, opts) => {
		const r = await run(cmd, args, opts);
		assert.equal(r.code, 0, `${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr}${typeof r.stdout === 'string' ? r.stdout : ''}`);
		return r.stdout;
	};
	return { run, must };
}

/** A missing tool fails the test: make test's setup installs them all. */
export async function needTools(...tools) {
	const { run } = commandRunner();
	for (const t of tools) {
		const r = await run('sh', ['-c', `command -v ${t}`]);
		assert.equal(r.code, 0, `${t} is not installed (tools/setup test installs it)`);
	}
}

/** A test peer whose state tests wait on: until(pred) resolves once
 * pred(peer) holds; the peer calls _wake() after every event. */
export class Watched {
	constructor() { this._waiters = []; }

	until(pred) {
		if (pred(this)) return Promise.resolve(this);
		return new Promise((resolve) => this._waiters.push({ pred, resolve }));
	}

	_wake() {
		this._waiters = this._waiters.filter((w) => (w.pred(this) ? (w.resolve(this), false) : true));
	}
}

/** A port that was free a moment ago: bind 0, read it, close. */
export function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.once('error', reject);
		s.listen(0, '127.0.0.1', () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});
}

/** ingot's own version, as include/ingot/version.h defines it. */
export function ingotVersion() {
	const h = fs.readFileSync(path.join(ROOT, 'include', 'ingot', 'version.h'), 'utf8');
	return h.match(/#define IG_VERSION "([^"]+)"/)[1];
}
