// Upstream servers for the outbound client's tests (client*.test.mjs): a
// scriptable HTTP/1.1 upstream on raw sockets (it counts connections and
// requests, sees pipelining, and can misbehave on purpose), nginx as a real
// upstream, a TLS upstream with a test CA made by openssl, a DNS server on
// UDP, and an address whose connect never completes. Everything listens on
// 127.0.0.1 at a port the kernel picks; nothing here sleeps to synchronise.
import { spawn, execFile } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BIN, BODY, Watched } from './lib.mjs';

const REASONS = { 200: 'OK', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 304: 'Not Modified',
	307: 'Temporary Redirect', 400: 'Bad Request', 404: 'Not Found', 500: 'Internal Server Error',
	502: 'Bad Gateway', 503: 'Service Unavailable' };

/** The bytes of a well-formed response with Content-Length. */
export function response(status, body = '', headers = {}) {
	const b = Buffer.from(body);
	let head = `HTTP/1.1 ${status} ${REASONS[status] || 'Status'}\r\n`;
	const names = Object.keys(headers).map((k) => k.toLowerCase());
	if (!names.includes('content-type') && b.length) head += 'Content-Type: application/json\r\n';
	if (!names.includes('content-length') && !names.includes('transfer-encoding')) head += `Content-Length: ${b.length}\r\n`;
	for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
	return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), b]);
}

// Every process and server started here, ended by stopAll() (by PID).
const live = new Set();
/** Ends every upstream this module started. Call from an after() hook. */
export async function stopAll() {
	await Promise.all([...live].map((x) => x.close()));
}

// ---- the scriptable HTTP/1.1 upstream ----

/* What a route returns, for one request (or a promise of it):
 *   {status, headers, body}       a well-formed response
 *   {raw: bytes, then}            bytes written as they are; then (after
 *                                 writing) 'keep' (default), 'close' (FIN),
 *                                 'reset' (RST) or 'stall' (nothing more is
 *                                 ever sent on this connection)
 *   {reset: true}                 RST at once, no response
 *   {stall: true}                 never answer (and answer nothing after)
 * The route gets (req, upstream): req = {conn, index, method, target, path,
 * query, headers, body, at}; conn = {id, requests, socket}. */
export class Upstream extends Watched {
	/** routes: { '/path': fn(req) } matched on the path without the query;
	 * fallback(req) for the rest (default 404); host: where it listens. */
	static async start(routes = {}, { fallback, host = '127.0.0.1' } = {}) {
		const u = new Upstream(routes, fallback);
		await new Promise((resolve, reject) => {
			u.server.once('error', reject);
			u.server.listen(0, host, resolve);
		});
		u.port = u.server.address().port;
		u.origin = `http://${host}:${u.port}`;
		live.add(u);
		return u;
	}

	constructor(routes, fallback) {
		super();
		this.routes = { ...routes };
		this.fallback = fallback || (() => ({ status: 404, body: '{"error":"not found"}' }));
		this.conns = [];    // every connection, in accept order
		this.requests = []; // every request, in arrival order
		this.hits = {};     // path -> count
		this.sockets = new Set();
		this.server = net.createServer((s) => this._accept(s));
	}

	_accept(socket) {
		const conn = { id: this.conns.length + 1, requests: [], socket, closed: false, buf: Buffer.alloc(0),
			chain: Promise.resolve(), stalled: false };
		this.conns.push(conn);
		this.sockets.add(socket);
		socket.on('data', (d) => {
			conn.buf = Buffer.concat([conn.buf, d]);
			this._parse(conn);
		});
		socket.on('error', () => {});
		socket.on('close', () => {
			conn.closed = true;
			this.sockets.delete(socket);
			this._wake();
		});
		this._wake();
	}

	_parse(conn) {
		for (;;) {
			const end = conn.buf.indexOf('\r\n\r\n');
			if (end < 0) return;
			const lines = conn.buf.subarray(0, end).toString('latin1').split('\r\n');
			const [method, target] = lines[0].split(' ');
			const headers = {};
			for (const l of lines.slice(1)) {
				const c = l.indexOf(':');
				if (c > 0) headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim();
			}
			const len = Number(headers['content-length'] || 0);
			if (conn.buf.length < end + 4 + len) return;
			const body = conn.buf.subarray(end + 4, end + 4 + len);
			conn.buf = conn.buf.subarray(end + 4 + len);
			const q = target.indexOf('?');
			const req = {
				conn, index: conn.requests.length, method, target, headers, body,
				path: q < 0 ? target : target.slice(0, q), query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)),
				at: process.hrtime.bigint(),
			};
			conn.requests.push(req);
			this.requests.push(req);
			this.hits[req.path] = (this.hits[req.path] || 0) + 1;
			this._wake();
			// Answers leave in request order even if a route is asynchronous.
			const reply = Promise.resolve().then(() => (this.routes[req.path] || this.fallback)(req, this));
			conn.chain = conn.chain.then(() => reply).then((r) => this._answer(conn, r));
		}
	}

	_answer(conn, r) {
		const s = conn.socket;
		if (conn.stalled || conn.closed || s.destroyed) return;
		if (!r || r.stall) { conn.stalled = true; return; }
		if (r.reset) { s.resetAndDestroy(); return; }
		const bytes = r.raw !== undefined ? Buffer.from(r.raw) : response(r.status, r.body, r.headers);
		switch (r.then || 'keep') {
		case 'keep': s.write(bytes); break;
		case 'close': s.end(bytes); break;
		case 'reset': s.write(bytes, () => s.resetAndDestroy()); break;
		case 'stall': s.write(bytes); conn.stalled = true; break;
		default: throw new Error(`unknown then: ${r.then}`);
		}
	}

	/** Connections opened so far. */
	get connections() { return this.conns.length; }

	async close() {
		live.delete(this);
		for (const s of this.sockets) s.destroy();
		await new Promise((resolve) => this.server.close(resolve));
	}
}

/** Routes every upstream has: the reference service's bodies, exactly. */
export const serviceRoutes = {
	'/json': () => ({ status: 200, body: BODY.json }),
	'/health': () => ({ status: 200, body: BODY.health }),
};

/** Answers the first `fails` hits of a route with fail(req, i), then ok(req):
 * per route, counted across connections. */
export function failFirst(fails, fail, ok) {
	let n = 0;
	return (req) => (n++ < fails ? fail(req, n - 1) : ok(req));
}

/** A route that holds every request until `count` of them have arrived on
 * its connection, then answers them all: proof that the client pipelines
 * that deep. Each body names its request: {"path": ..., "seq": i}. */
export function gateRoute(count) {
	const gates = new Map(); // conn -> {n, open, resolve}
	return (req) => {
		let g = gates.get(req.conn);
		if (!g) {
			g = { n: 0 };
			g.open = new Promise((r) => { g.resolve = r; });
			gates.set(req.conn, g);
		}
		if (++g.n >= count) g.resolve();
		return g.open.then(() => ({ status: 200, body: JSON.stringify({ path: req.target, seq: req.index }) }));
	};
}

// ---- misbehaving responses (each a route reply) ----

const BIG_HEADER = `X-Filler: ${'a'.repeat(20000)}\r\n`;
export const hostile = {
	/** Both Content-Length and Transfer-Encoding: chunked (RFC 9112 6.3: a
	 * request-smuggling vector; a strict client refuses it). */
	clAndChunked: () => ({ raw: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n' +
		'5\r\nhello\r\n0\r\n\r\n' }),
	/** A chunk size that is not hex. */
	badChunkSize: () => ({ raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n' }),
	/** A response head of 20 KB, over the client's 16 KiB default. */
	hugeHead: () => ({ raw: `HTTP/1.1 200 OK\r\n${BIG_HEADER}Content-Length: 2\r\n\r\n{}` }),
	/** The head promises 100 bytes; 10 come, then FIN. */
	closeMidBody: () => ({ raw: `HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n${'x'.repeat(10)}`, then: 'close' }),
	/** A correct answer followed by a second response nobody asked for. */
	unsolicited: () => ({ raw: Buffer.concat([response(200, BODY.json), response(200, '{"evil":true}')]) }),
	/** A status line that is not HTTP. */
	garbage: () => ({ raw: 'SSH-2.0-OpenSSH_9.2\r\n\r\n', then: 'close' }),
	/** The head, then nothing: the body timeout's case. */
	stallMidBody: () => ({ raw: `HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n${'x'.repeat(10)}`, then: 'stall' }),
};

// ---- an address whose TCP connect never completes ----

/** A listening socket on 127.0.0.1 that nobody accepts on, its one-slot
 * backlog (of one) already filled: a SYN to it is dropped, so a connect to it hangs
 * until the caller's own timeout (a connect timeout without leaving
 * loopback). The socket is held by a child process (cat) that never calls
 * accept; this process has closed its own copy. */
export async function blackhole() {
	const srv = net.createServer();
	await new Promise((resolve, reject) => {
		srv.once('error', reject);
		srv.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, resolve);
	});
	const port = srv.address().port;
	// Before the loop turns again no one can have connected (no one knows
	// the port), so this process accepts nothing before it lets go.
	const child = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore', srv._handle.fd] });
	await new Promise((resolve) => srv.close(resolve));
	// backlog 1 (node reads 0 as "the default"): two queued connections
	// fill it.
	const fillers = [];
	for (let i = 0; i < 2; i++) {
		fillers.push(await new Promise((resolve, reject) => {
			const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
			s.once('error', reject);
		}));
	}
	const h = {
		port, origin: `http://127.0.0.1:${port}`,
		async close() {
			live.delete(h);
			for (const s of fillers) s.destroy();
			const gone = new Promise((r) => child.once('close', r));
			try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ }
			await gone;
		},
	};
	live.add(h);
	return h;
}

// ---- nginx as a real upstream ----

/** nginx (a master and one worker, in the foreground) serving the
 * reference service's /json and /health as files, plus
 * a 503 with Retry-After and redirects, on a listening socket this process
 * made at port 0 and handed over (nginx adopts inherited sockets named in
 * $NGINX, as in its binary upgrade). The access log has one line per
 * request: "<connection> <connection_requests> <request_uri> <status>", so
 * a test can count the connections the client opened. */
export async function startNginx({ keepaliveRequests = 1000 } = {}) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-nginx-'));
	const root = path.join(dir, 'www');
	fs.mkdirSync(root);
	fs.writeFileSync(path.join(root, 'json'), BODY.json);
	fs.writeFileSync(path.join(root, 'health'), BODY.health);
	const big = Buffer.alloc(256 * 1024);
	for (let i = 0; i < big.length; i++) big[i] = 97 + (i * 7) % 26;
	fs.writeFileSync(path.join(root, 'big'), big);

	const srv = net.createServer();
	await new Promise((resolve, reject) => {
		srv.once('error', reject);
		srv.listen({ port: 0, host: '127.0.0.1', backlog: 511 }, resolve);
	});
	const port = srv.address().port;
	const log = path.join(dir, 'access.log');
	// /redirect/N answers 302 to /redirect/N-1; /redirect/0 is /json.
	const chain = [];
	for (let i = 1; i <= 20; i++) chain.push(`location = /redirect/${i} { return 302 /redirect/${i - 1}; }`);
	fs.mkdirSync(path.join(dir, 'tmp'));
	const tmp = path.join(dir, 'tmp');
	fs.writeFileSync(path.join(dir, 'nginx.conf'), `
daemon off;
master_process on;
worker_processes 1;
${process.getuid() === 0 ? 'user root;' : ''}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
	default_type application/json;
	log_format conns '$connection $connection_requests $request_uri $status';
	access_log ${log} conns;
	keepalive_requests ${keepaliveRequests};
	keepalive_timeout 60s;
	client_body_temp_path ${tmp};
	proxy_temp_path ${tmp};
	fastcgi_temp_path ${tmp};
	uwsgi_temp_path ${tmp};
	scgi_temp_path ${tmp};
	server {
		listen 127.0.0.1:${port} backlog=511;
		root ${root};
		location = /json { types { } default_type application/json; }
		location = /health { types { } default_type application/json; }
		location = /big { types { } default_type application/octet-stream; }
		location = /unavailable { add_header Retry-After 1 always; return 503; }
		location = /redirect/0 { types { } default_type application/json; alias ${root}/json; }
		${chain.join('\n\t\t')}
	}
}
`);
	const bin = fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
	const child = spawn(bin, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], {
		stdio: ['ignore', 'ignore', 'pipe', srv._handle.fd], env: { PATH: process.env.PATH, NGINX: '3;' },
	});
	// The child holds the socket from here on; ours must not accept.
	await new Promise((resolve) => srv.close(resolve));
	let stderr = '';
	child.stderr.on('data', (d) => { stderr += d; });
	// nginx writes its pid file once set up (the inherited socket adopted):
	// a failure to start shows as its exit instead.
	await fileOrExit(path.join(dir, 'nginx.pid'), child);
	if (child.exitCode !== null) {
		const err = fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '';
		throw new Error(`nginx exited ${child.exitCode}: ${stderr} ${err}`);
	}
	const h = {
		port, origin: `http://127.0.0.1:${port}`, dir, pid: child.pid,
		/** Parsed access log: [{conn, n, uri, status}]. */
		accessLog() {
			if (!fs.existsSync(log)) return [];
			return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => {
				const [conn, n, uri, status] = l.split(' ');
				return { conn: Number(conn), n: Number(n), uri, status: Number(status) };
			});
		},
		/** Distinct connections in the access log. */
		connections() { return new Set(this.accessLog().map((e) => e.conn)).size; },
		/** Resolves with the access log once it has n lines. nginx logs a
		 * request after sending its response, so a client can hold the
		 * answer before the line is written: wait for it, never assume. */
		untilLog(n) {
			return new Promise((resolve) => {
				const check = () => {
					const entries = this.accessLog();
					if (entries.length < n) return false;
					w.close();
					resolve(entries);
					return true;
				};
				const w = fs.watch(dir, () => { check(); });
				check();
			});
		},
		/** SIGTERM: the master stops its worker and exits. */
		async close() {
			live.delete(h);
			const gone = new Promise((r) => (child.exitCode !== null || child.signalCode ? r() : child.once('exit', r)));
			try { process.kill(child.pid, 'SIGTERM'); } catch { /* gone */ }
			await gone;
			fs.rmSync(dir, { recursive: true, force: true });
		},
	};
	live.add(h);
	return h;
}

/* Resolves once file exists or child has exited, whichever is first:
 * watched, not polled. */
function fileOrExit(file, child) {
	return new Promise((resolve) => {
		const done = () => { w.close(); child.off('exit', done); resolve(); };
		const w = fs.watch(path.dirname(file), () => { if (fs.existsSync(file)) done(); });
		child.once('exit', done);
		if (fs.existsSync(file) || child.exitCode !== null) done();
	});
}

// ---- TLS: a test CA and an HTTPS upstream ----

function openssl(args, cwd) {
	return new Promise((resolve, reject) => {
		execFile('openssl', args, { cwd }, (err, stdout, stderr) => {
			if (err) reject(new Error(`openssl ${args.join(' ')}: ${stderr}`));
			else resolve(stdout);
		});
	});
}

/** A test CA and a server certificate it signed for `names` (DNS names;
 * IP addresses are deliberately left out, so https://127.0.0.1 is a host
 * name mismatch). Returns the file paths and PEM texts. Also a second,
 * unrelated CA (otherCa) that trusts nothing here. */
export async function makeTestPki(names = ['upstream.test']) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-pki-'));
	const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
	await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
		'-subj', '/CN=ingot test CA', '-addext', 'basicConstraints=critical,CA:TRUE',
		'-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
	await openssl(['req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.pem', '-days', '2',
		'-subj', '/CN=ingot unrelated CA', '-addext', 'basicConstraints=critical,CA:TRUE'], dir);
	await openssl(['req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${names[0]}`], dir);
	fs.writeFileSync(path.join(dir, 'ext.cnf'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n` +
		'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n');
	await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
		'-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf'], dir);
	const f = (n) => path.join(dir, n);
	return {
		dir, caFile: f('ca.pem'), otherCaFile: f('other.pem'), certFile: f('server.pem'), keyFile: f('server.key'),
		ca: fs.readFileSync(f('ca.pem')), cert: fs.readFileSync(f('server.pem')), key: fs.readFileSync(f('server.key')),
		cleanup() { fs.rmSync(dir, { recursive: true, force: true }); },
	};
}

/** Node's https server with the test certificate, answering the service's
 * /json and /health; counts TLS connections and handshake failures. */
export async function startTlsUpstream(pki) {
	const h = { connections: 0, failures: [], requests: 0 };
	const server = https.createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
		h.requests++;
		const body = req.url === '/json' ? BODY.json : req.url === '/health' ? BODY.health : null;
		res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
		res.end(body || '{}');
	});
	server.on('secureConnection', () => { h.connections++; });
	server.on('tlsClientError', (e) => { h.failures.push(e.code || e.message); });
	await new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', resolve);
	});
	h.port = server.address().port;
	h.close = async () => {
		live.delete(h);
		server.closeAllConnections?.();
		await new Promise((resolve) => server.close(resolve));
	};
	live.add(h);
	return h;
}

// ---- DNS on loopback ----

/** A DNS server on `host` (default 127.0.0.1; UDP, random port): A records
 * from `names` (name -> IPv4; h.names may be changed later), an empty
 * answer for other types of a known name, NXDOMAIN for the rest, with TTL
 * `ttl` seconds. Keeps every query (h.queries, with its sender in from and
 * fromPort) and hands each to onQuery. */
export async function startDns(names, { ttl = 60, host = '127.0.0.1', onQuery = () => {} } = {}) {
	const sock = dgram.createSocket('udp4');
	const h = { queries: [], names: { ...names }, ttl };
	sock.on('message', (msg, rinfo) => {
		const q = parseQuery(msg);
		if (!q) return;
		q.from = rinfo.address;
		q.fromPort = rinfo.port;
		h.queries.push(q);
		onQuery(q);
		const ip = h.names[q.name.toLowerCase()];
		sock.send(answer(msg, q, ip, h.ttl), rinfo.port, rinfo.address);
	});
	await new Promise((resolve) => sock.bind(0, host, resolve));
	h.port = sock.address().port;
	h.close = async () => {
		live.delete(h);
		await new Promise((resolve) => sock.close(resolve));
	};
	live.add(h);
	return h;
}

function parseQuery(msg) {
	if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null;
	let off = 12;
	const labels = [];
	for (;;) {
		if (off >= msg.length) return null;
		const n = msg[off++];
		if (n === 0) break;
		if (n > 63 || off + n > msg.length) return null;
		labels.push(msg.subarray(off, off + n).toString('latin1'));
		off += n;
	}
	if (off + 4 > msg.length) return null;
	return { id: msg.readUInt16BE(0), name: labels.join('.'), type: msg.readUInt16BE(off), qclass: msg.readUInt16BE(off + 2), end: off + 4 };
}

function answer(msg, q, ip, ttl) {
	const question = msg.subarray(12, q.end);
	const header = Buffer.alloc(12);
	header.writeUInt16BE(q.id, 0);
	const rd = msg[2] & 1;
	const found = ip !== undefined;
	const records = found && q.type === 1 ? [ip] : [];
	header.writeUInt16BE(0x8000 | 0x0400 | (rd << 8) | 0x0080 | (found ? 0 : 3), 2); // QR AA RD RA, rcode
	header.writeUInt16BE(1, 4);
	header.writeUInt16BE(records.length, 6);
	const rrs = records.map((a) => {
		const rr = Buffer.alloc(16);
		rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
		rr.writeUInt16BE(1, 2);      // A
		rr.writeUInt16BE(1, 4);      // IN
		rr.writeUInt32BE(ttl, 6);
		rr.writeUInt16BE(4, 10);
		a.split('.').forEach((x, i) => { rr[12 + i] = Number(x); });
		return rr;
	});
	return Buffer.concat([header, question, ...rrs]);
}

/** A hosts file and a resolv.conf in a temp dir, for the resolver's
 * INGOT_HOSTS_FILE / INGOT_RESOLV_CONF. */
export function resolverFiles({ hosts = '', resolv = '' } = {}) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-resolv-'));
	fs.writeFileSync(path.join(dir, 'hosts'), hosts);
	fs.writeFileSync(path.join(dir, 'resolv.conf'), resolv);
	return { dir, hosts: path.join(dir, 'hosts'), resolv: path.join(dir, 'resolv.conf'),
		cleanup() { fs.rmSync(dir, { recursive: true, force: true }); } };
}

// ---- the client's command-line tool (tests/client/fetch.c) ----

/** The fetch binary beside the service binary under test: build/bin/fetch
 * (fetch-mbedtls beside service-mbedtls); INGOT_FETCH_BIN overrides. */
export function fetchBin(serviceBin = BIN) {
	if (process.env.INGOT_FETCH_BIN) return process.env.INGOT_FETCH_BIN;
	const m = /^service(.*)$/.exec(path.basename(serviceBin));
	const suffix = m ? m[1].replace(/^-asan$/, '') : '';
	return path.join(path.dirname(serviceBin), `fetch${suffix}`);
}

/** Runs fetch with args (options, then URLs) and env; resolves {code,
 * results (one per request, by index i), summary, stderr}. */
export function runFetch(args, { env = {}, bin = fetchBin(), timeoutMs = 30000 } = {}) {
	return new Promise((resolve) => {
		execFile(bin, args, { env: { PATH: process.env.PATH, ...env }, timeout: timeoutMs, killSignal: 'SIGKILL',
			maxBuffer: 64 << 20 },
		(err, stdout, stderr) => {
			const lines = stdout.split('\n').filter(Boolean).map((l) => {
				try { return JSON.parse(l); } catch { return { unparsed: l }; }
			});
			const results = lines.filter((l) => !l.summary).sort((a, b) => a.i - b.i);
			resolve({
				code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
				signal: err?.signal ?? null,
				results, summary: lines.find((l) => l.summary), stdout, stderr,
			});
		});
	});
}
