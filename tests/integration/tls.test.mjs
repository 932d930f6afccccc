// HTTPS serving, against every TLS backend built: build/bin/service
// (BearSSL) and, when it exists, build/bin/service-mbedtls (INGOT_BIN and
// INGOT_BIN_MBEDTLS override them). The certificates are made here with
// openssl: a root CA, an intermediate CA, and RSA 2048 and ECDSA P-256
// leaves whose chains carry the intermediate. Real clients only: curl,
// openssl s_client, node's tls. Every wait is for an event (a log line, a
// close, an exit); timeouts bound waits, they never order events.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { ROOT, startServer, cleanup, commandRunner, needTools, curl, parseResponse, RawClient, req, within, BODY } from './lib.mjs';

const { run, must } = commandRunner({ timeoutMs: 30000 });
const T = { timeout: 60000 };

const BINARIES = [
	{ name: 'bearssl', bin: process.env.INGOT_BIN || path.join(ROOT, 'build', 'bin', 'service') },
	{ name: 'mbedtls', bin: process.env.INGOT_BIN_MBEDTLS || path.join(ROOT, 'build', 'bin', 'service-mbedtls'), optional: true },
].filter((b) => !b.optional || fs.existsSync(b.bin));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-tls-'));
const F = (name) => path.join(tmp, name);
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

// ---- certificates ----

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
async function makeCertificates() {
	await needTools('openssl', 'curl');
	fs.writeFileSync(F('ca.ext'), 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n');
	fs.writeFileSync(F('leaf.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n' +
		'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n');
	await must('openssl', ['req', '-x509', '-new', '-nodes', ...EC, '-keyout', F('root.key'), '-out', F('root.pem'),
		'-days', '2', '-subj', '/CN=ingot test root', '-addext', 'basicConstraints=critical,CA:TRUE',
		'-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
	await must('openssl', ['req', '-new', '-nodes', ...EC, '-keyout', F('inter.key'), '-out', F('inter.csr'),
		'-subj', '/CN=ingot test intermediate']);
	await must('openssl', ['x509', '-req', '-in', F('inter.csr'), '-CA', F('root.pem'), '-CAkey', F('root.key'),
		'-CAcreateserial', '-days', '2', '-extfile', F('ca.ext'), '-out', F('inter.pem')]);
	for (const [kind, keyArgs] of [['rsa', ['-newkey', 'rsa:2048']], ['ecdsa', EC]]) {
		await must('openssl', ['req', '-new', '-nodes', ...keyArgs, '-keyout', F(`${kind}.key`), '-out', F(`${kind}.csr`),
			'-subj', '/CN=localhost']);
		await must('openssl', ['x509', '-req', '-in', F(`${kind}.csr`), '-CA', F('inter.pem'), '-CAkey', F('inter.key'),
			'-CAcreateserial', '-days', '2', '-extfile', F('leaf.ext'), '-out', F(`${kind}.leaf.pem`)]);
		fs.writeFileSync(F(`${kind}.pem`), fs.readFileSync(F(`${kind}.leaf.pem`), 'utf8') + fs.readFileSync(F('inter.pem'), 'utf8'));
	}
	await must('openssl', ['req', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384', '-keyout', F('p384.key'),
		'-out', F('p384.csr'), '-subj', '/CN=localhost']);
	await must('openssl', ['x509', '-req', '-in', F('p384.csr'), '-CA', F('inter.pem'), '-CAkey', F('inter.key'),
		'-CAcreateserial', '-days', '2', '-extfile', F('leaf.ext'), '-out', F('p384.leaf.pem')]);
	await must('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', F('stray.key')]);
	fs.writeFileSync(F('garbage.pem'), '-----BEGIN CERTIFICATE-----\nthis is not base64!\n-----END CERTIFICATE-----\n');
}
const certsMade = makeCertificates();

function tlsEnv(kind, extra = {}) {
	return { INGOT_TLS_CERT: F(`${kind}.pem`), INGOT_TLS_KEY: F(`${kind}.key`), INGOT_TLS_PORT: '0', ...extra };
}

async function startTls(b, kind = 'rsa', extra = {}, opts = {}) {
	await certsMade;
	const srv = await startServer(tlsEnv(kind, extra), { command: b.bin, ...opts });
	srv.tlsPort = srv.listening.tls_port;
	assert.ok(Number.isInteger(srv.tlsPort) && srv.tlsPort > 0, `tls_port in ${JSON.stringify(srv.listening)}`);
	return srv;
}

// ---- clients ----

/** curl over HTTPS, trusting only the test root; the parsed response. */
async function curlHttps(port, target, extra = [], { head = false } = {}) {
	const r = await curl(['-i', '--raw', '--cacert', F('root.pem'), '--resolve', `localhost:${port}:127.0.0.1`,
		...(head ? ['-I'] : []), ...extra, `https://localhost:${port}${target}`]);
	if (r.code !== 0) throw new Error(`curl https ${target} failed (${r.code}): ${r.stderr}`);
	const p = parseResponse(r.stdout, { head, atEof: true });
	assert.ok(p, `complete response for ${target}`);
	assert.equal(p.used, r.stdout.length, 'nothing after the response');
	return p.response;
}

async function curlHttp(port, target, extra = [], { head = false } = {}) {
	const r = await curl(['-i', '--raw', ...(head ? ['-I'] : []), ...extra, `http://127.0.0.1:${port}${target}`]);
	if (r.code !== 0) throw new Error(`curl http ${target} failed (${r.code}): ${r.stderr}`);
	return parseResponse(r.stdout, { head, atEof: true }).response;
}

/** openssl s_client with stdin at EOF: handshakes, sends close_notify, exits. */
function sClient(port, args = [], { stdin = 'ignore' } = {}) {
	const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...args],
		{ stdio: [stdin, 'pipe', 'pipe'] });
	let out = '';
	p.stdout.setEncoding('utf8');
	p.stderr.setEncoding('utf8');
	p.stdout.on('data', (d) => { out += d; p.emit('out'); });
	p.stderr.on('data', (d) => { out += d; p.emit('out'); });
	const done = new Promise((resolve) => p.on('close', (code) => resolve({ code, out })));
	return { proc: p, done, output: () => out };
}

function sessionInfo(out) {
	const m = (re) => (re.exec(out) || [])[1] ?? null;
	return {
		protocol: m(/^\s*Protocol\s*:\s*(\S+)/m),
		cipher: m(/^\s*Cipher\s*:\s*(\S+)/m),
		alpn: m(/^ALPN protocol: (\S+)/m),
		reused: /^Reused, /m.test(out),
		verified: /Verify return code: 0 \(ok\)/.test(out),
	};
}

/** A node TLS connection, trusting the test root, as a RawClient. */
async function tlsClient(port, opts = {}) {
	const sock = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fs.readFileSync(F('root.pem')),
		ALPNProtocols: ['http/1.1'], ...opts });
	await new Promise((resolve, reject) => {
		sock.once('secureConnect', resolve);
		sock.once('error', reject);
	});
	return new RawClient(sock);
}

/** A ClientHello as node's TLS sends it (captured, never sent anywhere). */
function clientHelloBytes() {
	return new Promise((resolve) => {
		let t = null;
		const sink = new Duplex({
			read() {},
			write(chunk, enc, cb) {
				resolve(Buffer.from(chunk));
				cb();
				setImmediate(() => t.destroy());
			},
		});
		t = tls.connect({ socket: sink, servername: 'localhost', rejectUnauthorized: false });
		t.on('error', () => {});
	});
}

/** A raw connection that has sent a ClientHello and received the server's
 * first flight: a handshake under way, on the server's side. */
async function halfHandshake(port) {
	const hello = await clientHelloBytes();
	const c = await RawClient.connect(port);
	await c.write(hello);
	await within(20000, c.waitData(), "the server's first flight");
	assert.equal(c.buf[0], 0x16, 'a handshake record');
	return c;
}

/** node's TLS over a socket we hold: tcpEnd resolves on the server's TCP
 * FIN itself (node's TLS socket would report close_notify the same way).
 * After the handshake, capture() makes writes collect instead of going
 * out, and returns the TLS records collected so far; raw sends bytes. */
async function tlsOverRaw(port) {
	const raw = await new Promise((resolve, reject) => {
		const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
		s.once('error', reject);
	});
	raw.on('error', () => {});
	const tcpEnd = new Promise((resolve) => raw.once('end', resolve));
	let captured = null;
	const pipe = new Duplex({
		read() {},
		write(chunk, enc, cb) {
			if (!captured) return raw.write(chunk, cb);
			captured.push(Buffer.from(chunk));
			cb();
		},
		final(cb) { raw.end(); cb(); },
		destroy(err, cb) { raw.destroy(); cb(err); },
	});
	raw.on('data', (d) => pipe.push(d));
	raw.on('end', () => pipe.push(null));
	const sock = tls.connect({ socket: pipe, servername: 'localhost', ca: fs.readFileSync(F('root.pem')), ALPNProtocols: ['http/1.1'] });
	await new Promise((resolve, reject) => {
		sock.once('secureConnect', resolve);
		sock.once('error', reject);
	});
	sock.on('error', () => {});
	const capture = () => {
		let all = Buffer.concat(captured || []);
		captured = [];
		const records = [];
		while (all.length >= 5) {
			const len = 5 + all.readUInt16BE(3);
			records.push(all.subarray(0, len));
			all = all.subarray(len);
		}
		return records;
	};
	return { client: new RawClient(sock), tcpEnd, raw, capture };
}

/** The fetch binary beside a service binary (fetch-mbedtls beside service-mbedtls). */
function fetchBinFor(serviceBin) {
	const m = /^service(.*)$/.exec(path.basename(serviceBin));
	return path.join(path.dirname(serviceBin), `fetch${m ? m[1].replace(/^-asan$/, '') : ''}`);
}

const AEAD = /^ECDHE-(RSA|ECDSA)-(AES128-GCM-SHA256|AES256-GCM-SHA384|CHACHA20-POLY1305)$/;

// ---- requests for "every route": the same answer over HTTPS as over HTTP ----

const VALIDATE_BODY = '{"name":"Ada Lovelace","nickname":null,"ref":"A-1","status":"active",' +
	'"scores":[90,85,77,100,0],"address":{"street":"12 Main St","city":"Springfield","zip":"12345"},"active":true}';
const BLOG_BODY = '{"title":"Hello","body":"A post body.","likes":3,"tags":["c"]}';
const JSON_HDR = ['-H', 'content-type: application/json'];
const ROUTES = [
	['GET /health', '/health', []],
	['GET /json', '/json', []],
	['GET /compute', '/compute', []],
	['GET /hash', '/hash', []],
	['GET /blog?limit=3', '/blog?limit=3', []],
	['GET /blog/42', '/blog/42', []],
	['PUT /blog/7', '/blog/7', ['-X', 'PUT', ...JSON_HDR, '--data-binary', BLOG_BODY]],
	['POST /blog', '/blog', [...JSON_HDR, '--data-binary', BLOG_BODY]],
	['GET /delay/20', '/delay/20', []],
	['POST /validate', '/validate?page=2&tags=a', [...JSON_HDR, '-H', 'x-foo: bar', '--data-binary', VALIDATE_BODY]],
	['POST /novalidate', '/novalidate?page=2&tags=a', [...JSON_HDR, '-H', 'x-foo: bar', '--data-binary', VALIDATE_BODY]],
	['a 400 (bad body)', '/validate', [...JSON_HDR, '-H', 'x-foo: bar', '--data-binary', '{"name":1}']],
	['a 404', '/nowhere', []],
	['a 405', '/health', ['-X', 'DELETE']],
];
// POST /blog numbers posts: the id differs between the two answers.
const normalize = (s) => s.replace(/"id":\d+/g, '"id":N');

for (const b of BINARIES) {
	describe(`TLS (${b.name}: ${path.basename(b.bin)})`, () => {
		let srv;
		before(async () => { srv = await startTls(b, 'rsa'); });
		after(async () => { if (srv) await srv.stop(); });

		test('the "listening" line names the TLS port and the backend', T, async () => {
			assert.equal(typeof srv.listening.port, 'number');
			assert.notEqual(srv.listening.tls_port, srv.listening.port);
			assert.match(srv.listening.tls, b.name === 'mbedtls' ? /^mbedtls/ : /^bearssl/);
		});

		for (const [name, target, extra] of ROUTES) {
			test(`curl --cacert over HTTPS: ${name} answers as over plain HTTP`, T, async () => {
				// One request id for both, so that problem bodies (which carry it) match.
				const id = ['-H', `X-Request-Id: tls-${name.replace(/\W+/g, '-')}`];
				const s = await curlHttps(srv.tlsPort, target, [...extra, ...id]);
				const p = await curlHttp(srv.port, target, [...extra, ...id]);
				assert.equal(s.status, p.status);
				assert.equal(s.headers['content-type'], p.headers['content-type']);
				assert.equal(s.headers['x-request-id'], p.headers['x-request-id']);
				assert.equal(normalize(s.text), normalize(p.text));
				if (name === 'GET /health') assert.equal(s.text, BODY.health);
			});
		}

		test('curl --cacert over HTTPS: HEAD /json, and keep-alive across requests on one connection', T, async () => {
			const h = await curlHttps(srv.tlsPort, '/json', [], { head: true });
			assert.equal(h.status, 200);
			assert.equal(h.headers['content-length'], String(Buffer.byteLength(BODY.json)));
			const r = await curl(['-sS', '-v', '--cacert', F('root.pem'), '--resolve', `localhost:${srv.tlsPort}:127.0.0.1`,
				`https://localhost:${srv.tlsPort}/health`, `https://localhost:${srv.tlsPort}/json`]);
			assert.equal(r.code, 0, r.stderr);
			assert.equal(r.stdout.toString(), BODY.health + BODY.json);
			assert.match(r.stderr, /Re-using existing connection/);
		});

		test('curl refuses the server without the test root (the chain is verified)', T, async () => {
			const r = await curl(['-o', '/dev/null', '--resolve', `localhost:${srv.tlsPort}:127.0.0.1`,
				`https://localhost:${srv.tlsPort}/health`]);
			assert.equal(r.code, 60, r.stderr); // peer certificate cannot be authenticated
		});

		test('openssl s_client: TLS 1.2, an ECDHE-RSA AEAD suite, ALPN http/1.1, a verified chain', T, async () => {
			const { code, out } = await sClient(srv.tlsPort, ['-tls1_2', '-alpn', 'http/1.1', '-CAfile', F('root.pem')]).done;
			const s = sessionInfo(out);
			assert.equal(code, 0, out);
			assert.equal(s.protocol, 'TLSv1.2', out);
			assert.match(s.cipher, AEAD);
			assert.match(s.cipher, /^ECDHE-RSA-/);
			assert.equal(s.alpn, 'http/1.1', out);
			assert.ok(s.verified, out);
		});

		test('each AEAD suite, offered alone, carries GET /health (the AES-GCM and ChaCha20-Poly1305 record layers)', T, async () => {
			for (const c of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305']) {
				const s = await curlHttps(srv.tlsPort, '/health', ['--tls-max', '1.2', '--ciphers', c]);
				assert.equal(s.status, 200, c);
				assert.equal(s.text, BODY.health, c);
			}
		});

		test('TLS 1.1 and TLS 1.0 are refused', T, async () => {
			for (const v of ['-tls1_1', '-tls1']) {
				const { code, out } = await sClient(srv.tlsPort, [v, '-cipher', 'DEFAULT@SECLEVEL=0']).done;
				assert.notEqual(code, 0, out);
				assert.doesNotMatch(out, /Cipher is ECDHE/, out);
			}
		});

		test('suites without ECDHE or AEAD are refused (AES128-SHA, AES128-GCM-SHA256, ECDHE-RSA-AES128-SHA)', T, async () => {
			for (const c of ['AES128-SHA', 'AES128-GCM-SHA256', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES128-SHA256']) {
				const { code, out } = await sClient(srv.tlsPort, ['-tls1_2', '-cipher', `${c}@SECLEVEL=0`]).done;
				assert.notEqual(code, 0, `${c}: ${out}`);
				// The server says why with a fatal alert before it closes.
				assert.match(out, /alert handshake failure/, `${c}: ${out}`);
			}
		});

		test('X25519 and P-256 are offered for ECDHE; P-384 alone is refused', T, async () => {
			for (const g of ['X25519', 'P-256']) {
				const { code, out } = await sClient(srv.tlsPort, ['-tls1_2', '-groups', g]).done;
				assert.equal(code, 0, `${g}: ${out}`);
				assert.match(out, new RegExp(`Server Temp Key: ${g === 'P-256' ? 'ECDH, prime256v1' : 'X25519'}`), out);
			}
			const { code, out } = await sClient(srv.tlsPort, ['-tls1_2', '-groups', 'P-384']).done;
			assert.notEqual(code, 0, out);
			// mbedtls finds out only after its first flight, and drops the
			// alert when that flight is still being written.
			if (b.name === 'bearssl') assert.match(out, /alert handshake failure/, out);
		});

		test('pipelined requests over TLS: ten in one write, ten responses in order', T, async () => {
			const c = await tlsClient(srv.tlsPort);
			assert.equal(c.sock.alpnProtocol, 'http/1.1');
			let batch = '';
			for (let i = 1; i <= 10; i++) batch += req('GET', `/blog/${i}`);
			await c.write(batch);
			const rs = await within(20000, c.responses(10), 'ten pipelined responses');
			rs.forEach((r, i) => {
				assert.equal(r.status, 200);
				assert.equal(r.text, BODY.blog(i + 1));
			});
			c.end();
		});

		test('a large body both ways over TLS (many records)', T, async () => {
			const c = await tlsClient(srv.tlsPort);
			const title = 'x'.repeat(190);
			const posts = [];
			for (let i = 0; i < 200; i++) posts.push(req('PUT', `/blog/${i + 1}`, { headers: ['Content-Type: application/json'],
				body: `{"title":"${title}","body":"${'b'.repeat(1000)}","likes":${i},"tags":["t"]}` }));
			await c.write(posts.join(''));
			const rs = await within(30000, c.responses(200), '200 pipelined PUT responses');
			rs.forEach((r, i) => {
				assert.equal(r.status, 200, r.text);
				assert.equal(r.json().likes, i);
			});
			c.end();
		});

		test('garbage and a hang-up mid-handshake do not disturb a concurrent client', T, async () => {
			const good = await tlsClient(srv.tlsPort);
			await good.write(req('GET', '/health'));
			assert.equal((await good.response()).status, 200);

			// Plain HTTP on the TLS port: an alert, then the close.
			const junk = await RawClient.connect(srv.tlsPort);
			await junk.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
			await within(10000, junk.waitEnd(), 'the server closes a plain-HTTP client');
			assert.ok(!junk.buf.includes('HTTP/1.1'), 'no HTTP answer on the TLS port');
			// A ClientHello cut short, then a reset.
			const half = await RawClient.connect(srv.tlsPort);
			await half.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 1, 2, 3]));
			half.sock.resetAndDestroy();
			// A real handshake whose client leaves as soon as its hello is out.
			const gone = net.connect({ host: '127.0.0.1', port: srv.tlsPort });
			await new Promise((resolve) => gone.once('connect', resolve));
			const t = tls.connect({ socket: gone, servername: 'localhost', rejectUnauthorized: false });
			t.on('error', () => {});
			t.destroy();

			await good.write(req('GET', '/json'));
			const r = await good.response();
			assert.equal(r.status, 200);
			assert.equal(r.text, BODY.json);
			const fresh = await curlHttps(srv.tlsPort, '/health');
			assert.equal(fresh.text, BODY.health);
			assert.equal(srv.exit, null, 'the server runs on');
			good.end();
		});

		test('session resumption: s_client -sess_out then -sess_in reports "Reused"', T, async () => {
			// One core: the session cache is per core.
			const one = await startTls(b, 'ecdsa', {}, { threads: '1' });
			try {
				const sess = F(`sess-${b.name}.pem`);
				const first = await sClient(one.tlsPort, ['-tls1_2', '-sess_out', sess]).done;
				assert.equal(first.code, 0, first.out);
				assert.match(first.out, /^New, TLSv1\.2/m, first.out);
				const again = await sClient(one.tlsPort, ['-tls1_2', '-sess_in', sess]).done;
				assert.equal(again.code, 0, again.out);
				assert.ok(sessionInfo(again.out).reused, again.out);
				assert.match(sessionInfo(again.out).cipher, /^ECDHE-ECDSA-/);
				const x = await one.stop();
				assert.equal(x.code, 0);
				const stopped = one.logs.find((l) => l.msg === 'stopped');
				assert.equal(stopped.tls_handshakes, 2);
				assert.equal(stopped.tls_resumed, 1);
			} finally {
				one.kill();
			}
		});

		// BearSSL's backend shares one session cache among the cores: a
		// returning client resumes whichever core SO_REUSEPORT picks.
		test('session resumption across cores: two loops, every -sess_in reuses the session', { ...T, skip: b.name !== 'bearssl' && 'per-core cache' }, async () => {
			const two = await startTls(b, 'ecdsa', {}, { threads: '2' });
			try {
				const sess = F(`sess2-${b.name}.pem`);
				assert.equal((await sClient(two.tlsPort, ['-tls1_2', '-sess_out', sess]).done).code, 0);
				for (let i = 0; i < 12; i++) {
					const again = await sClient(two.tlsPort, ['-tls1_2', '-sess_in', sess]).done;
					assert.ok(sessionInfo(again.out).reused, `attempt ${i}: ${again.out}`);
				}
				await two.stop();
				const stopped = two.logs.find((l) => l.msg === 'stopped');
				assert.equal(stopped.tls_resumed, 12);
			} finally {
				two.kill();
			}
		});

		test('ECDSA P-256 chain: curl and s_client, an ECDHE-ECDSA AEAD suite', T, async () => {
			const ec = await startTls(b, 'ecdsa');
			try {
				assert.equal((await curlHttps(ec.tlsPort, '/health')).text, BODY.health);
				const { code, out } = await sClient(ec.tlsPort, ['-tls1_2', '-alpn', 'http/1.1', '-CAfile', F('root.pem')]).done;
				const s = sessionInfo(out);
				assert.equal(code, 0, out);
				assert.equal(s.protocol, 'TLSv1.2');
				assert.match(s.cipher, AEAD);
				assert.match(s.cipher, /^ECDHE-ECDSA-/);
				assert.equal(s.alpn, 'http/1.1');
				assert.ok(s.verified, out);
			} finally {
				await ec.stop();
			}
		});
	});

	describe(`TLS limits and lifecycle (${b.name})`, () => {
		// The TLS transport hands down the TCP peer's address (the rate
		// limits read it in binary): only from a known, trusted peer does
		// X-Forwarded-For name the client, so two clients' allowances
		// (10 to 12 of 40 pass, not 5 or 6) show it arrived.
		test('over TLS the rate limit knows the peer: a trusted proxy\'s X-Forwarded-For names two clients on /limited', T, async () => {
			const srv = await startTls(b, 'rsa', { INGOT_TRUSTED_PROXIES: '127.0.0.1/32' }, { threads: '1' });
			try {
				const c = await tlsClient(srv.tlsPort);
				let batch = '';
				for (const ip of ['203.0.113.1', '203.0.113.2'])
					for (let i = 0; i < 20; i++) batch += req('GET', '/limited', { headers: [`X-Forwarded-For: ${ip}`] });
				await c.write(batch);
				const rs = await within(20000, c.responses(40), '40 pipelined responses');
				assert.ok(rs.every((r) => r.status === 200 || r.status === 429), rs.map((r) => r.status).join(' '));
				const n = rs.filter((r) => r.status === 200).length;
				assert.ok(n >= 10 && n <= 12, `two clients behind a trusted proxy over TLS: ${n} passed`);
				c.end();
			} finally {
				await srv.stop();
			}
		});

		test('a handshake that never finishes is cut at INGOT_TLS_HANDSHAKE_TIMEOUT_MS', T, async () => {
			const srv = await startTls(b, 'rsa', { INGOT_TLS_HANDSHAKE_TIMEOUT_MS: '200' });
			try {
				const silent = await RawClient.connect(srv.tlsPort);
				const stalled = await RawClient.connect(srv.tlsPort);
				await stalled.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
				await within(20000, silent.waitEnd(), 'the server closes a silent client');
				await within(20000, stalled.waitEnd(), 'the server closes a client stalled mid-ClientHello');
				assert.equal(silent.buf.length, 0);
				// The next client is served as usual.
				assert.equal((await curlHttps(srv.tlsPort, '/health')).text, BODY.health);
				await srv.stop();
				const stopped = srv.logs.find((l) => l.msg === 'stopped');
				assert.equal(stopped.tls_timed_out, 2);
				assert.equal(stopped.tls_handshakes, 1);
			} finally {
				srv.kill();
			}
		});

		test('INGOT_TLS_MAX_HANDSHAKES: handshakes over the cap are closed at once, the rest go on', T, async () => {
			const srv = await startTls(b, 'rsa', { INGOT_TLS_MAX_HANDSHAKES: '2' }, { threads: '1' });
			try {
				// Two handshakes under way: a ClientHello sent, the server's answer in.
				const a = await halfHandshake(srv.tlsPort);
				const c = await halfHandshake(srv.tlsPort);
				const over = await RawClient.connect(srv.tlsPort);
				await within(20000, over.waitEnd(), 'the third concurrent handshake is closed');
				assert.equal(over.buf.length, 0);
				a.destroy();
				c.destroy();
				// Once the first two are gone, handshakes succeed again.
				const fresh = await within(20000, curlHttps(srv.tlsPort, '/health'), 'a handshake after the cap frees');
				assert.equal(fresh.text, BODY.health);
				await srv.stop();
				assert.ok(srv.logs.find((l) => l.msg === 'stopped').tls_refused >= 1);
			} finally {
				srv.kill();
			}
		});

		test('at an exhausted memory budget a new handshake is refused: closed at once, counted by cause and logged; plain HTTP still served; a closed connection gives its room back', T, async () => {
			const metric = async (srv, key) => {
				const r = await curl([`http://127.0.0.1:${srv.admin}/metrics`]);
				const line = r.stdout.toString('utf8').split('\n').find((l) => l.startsWith(`${key} `));
				return Number(line.split(' ')[1]);
			};
			const start = async (budget) => {
				const srv = await startTls(b, 'rsa', { INGOT_MEMORY_BUDGET: String(budget), INGOT_ADMIN_PORT: '0' },
					{ threads: '1' });
				srv.admin = (await srv.waitLog((x) => x.msg === 'admin listening')).port;
				await srv.waitLog((x) => x.msg === 'memory budget'); // the limit is in effect from here
				return srv;
			};
			const REFUSED = 'ingot_memory_budget_rejections_total{cause="tls_handshake"}';
			let srv = await start(1); // a byte: no TLS connection fits
			let charge;
			try {
				const over = await RawClient.connect(srv.tlsPort);
				await within(20000, over.waitEnd(), 'the connection is closed at once');
				assert.equal(over.buf.length, 0, 'no byte of a handshake');
				await assert.rejects(tlsClient(srv.tlsPort), 'a real client fails too');
				assert.equal(await metric(srv, REFUSED), 2);
				assert.equal(await metric(srv, 'ingot_memory_budget_rejections_total{cause="request_body"}'), 0);
				const line = await srv.waitLog((x) => x.msg === 'TLS handshake refused: the memory budget is spent');
				assert.equal(line.budget_bytes, 1);
				assert.ok(line.rejections_total >= 1);
				charge = line.connection_bytes;
				assert.ok(charge > 16384, `a connection is charged its buffers: ${charge} bytes`);
				assert.equal((await curlHttp(srv.port, '/health')).text, BODY.health, 'plain HTTP is served');
			} finally {
				await srv.stop();
			}
			// Room for one connection: a second is refused while the first
			// is open, and admitted once it has closed.
			srv = await start(Math.floor(charge * 1.5));
			try {
				const held = await tlsClient(srv.tlsPort);
				await held.write(req('GET', '/health'));
				assert.equal((await held.response()).text, BODY.health);
				await assert.rejects(tlsClient(srv.tlsPort), 'no room for a second');
				assert.equal(await metric(srv, REFUSED), 1);
				held.destroy();
				await held.closed;
				// The server frees it when it hears the close: until then
				// a handshake may still be refused.
				let r;
				do r = await curl(['-s', '--cacert', F('root.pem'), '--resolve', `localhost:${srv.tlsPort}:127.0.0.1`,
					`https://localhost:${srv.tlsPort}/health`]); while (r.code !== 0);
				assert.equal(r.stdout.toString(), BODY.health);
			} finally {
				await srv.stop();
			}
		});

		test('INGOT_TLS_MAX_HANDSHAKES: idle TCP connections that sent nothing make room for a TLS client', T, async () => {
			const srv = await startTls(b, 'rsa', { INGOT_TLS_MAX_HANDSHAKES: '2' }, { threads: '1' });
			try {
				// Accepted in order (one core, one accept queue) before curl's.
				const first = await RawClient.connect(srv.tlsPort);
				const second = await RawClient.connect(srv.tlsPort);
				const r = await within(20000, curlHttps(srv.tlsPort, '/health'), 'a TLS client at the cap');
				assert.equal(r.text, BODY.health);
				await within(20000, first.waitEnd(), 'the oldest silent connection is closed to make room');
				assert.equal(first.buf.length, 0);
				second.destroy();
				await srv.stop();
				const stopped = srv.logs.find((l) => l.msg === 'stopped');
				assert.equal(stopped.tls_handshakes, 1);
			} finally {
				srv.kill();
			}
		});

		test('a response while request bytes wait unread: the response, close_notify, the TCP close at once', T, async () => {
			// INGOT_WRITE_TIMEOUT_MS is also the graceful close's limit: a
			// close that waits for it would outlast the test's bound.
			const srv = await startTls(b, 'rsa', { INGOT_WRITE_TIMEOUT_MS: '600000' });
			try {
				const { client, tcpEnd } = await tlsOverRaw(srv.tlsPort);
				// The request ends the connection; more bytes follow in their
				// own records (and beyond mbedtls's 2 KiB plaintext stage), unread.
				await client.write(req('GET', '/delay/20', { headers: ['Connection: close'] }) + 'x'.repeat(6000));
				await client.write('y'.repeat(6000));
				const res = await within(20000, client.response(), 'the response');
				assert.equal(res.status, 200);
				assert.equal(res.headers.connection, 'close');
				await within(20000, client.waitEnd(), 'close_notify');
				await within(20000, tcpEnd, 'the server closes the TCP connection');
				client.destroy();
			} finally {
				await srv.stop();
			}
		});

		// BearSSL's engine has one buffer: nothing can be written while a
		// record is half in. A response that had to wait for that record
		// goes once it is complete, even if the engine above takes none of
		// it (the request before it said Connection: close).
		test('a response that waited for a half-received record leaves once the record is complete', T, async () => {
			let upstreamConn;
			const upstream = net.createServer((sock) => {
				let got = '';
				sock.on('data', (d) => {
					got += d;
					if (got.includes('\r\n\r\n')) upstreamConn(sock);
				});
				sock.on('error', () => {});
			});
			await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
			const asked = new Promise((resolve) => { upstreamConn = resolve; });
			const srv = await startTls(b, 'rsa', { UPSTREAM: `http://127.0.0.1:${upstream.address().port}`,
				INGOT_WRITE_TIMEOUT_MS: '600000' }, { threads: '1' });
			try {
				const { client, raw, capture, tcpEnd } = await tlsOverRaw(srv.tlsPort);
				capture();
				await client.write(req('GET', '/proxy/json', { headers: ['Connection: close'] }));
				await client.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
				const [first, second] = capture();
				assert.ok(first && second, 'two records');
				// The request's record and half of the next one, in one write.
				raw.write(Buffer.concat([first, second.subarray(0, 10)]));
				const up = await within(20000, asked, 'the proxied request');
				// The server answers its client (the half record is in by now:
				// it came with the request) once the upstream's answer is in,
				// in the same turn of its loop as closing the upstream
				// connection, which is what the upstream sees end.
				const upEnd = new Promise((resolve) => up.once('end', resolve));
				up.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
				await within(20000, upEnd, 'the server closes the upstream connection');
				raw.write(second.subarray(10));
				const res = await within(20000, client.response(), 'the response');
				assert.equal(res.status, 200);
				assert.equal(res.text, '{}');
				await within(20000, tcpEnd, 'the server closes the TCP connection');
				client.destroy();
			} finally {
				await srv.stop();
				upstream.close();
			}
		});

		test('the client role (fetch) talks to openssl s_server with a P-384 ECDSA certificate, host name with a trailing dot', { ...T, skip: !fs.existsSync(fetchBinFor(b.bin)) && 'no fetch binary' }, async () => {
			await certsMade;
			const s = spawn('openssl', ['s_server', '-accept', '127.0.0.1:0', '-tls1_2', '-cert', F('p384.leaf.pem'), '-cert_chain', F('inter.pem'), '-key', F('p384.key'),
				'-www', '-naccept', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
			try {
				let log = '';
				s.stdout.setEncoding('utf8');
				const port = await within(20000, new Promise((resolve, reject) => {
					s.stdout.on('data', (d) => {
						log += d;
						const m = /ACCEPT 127\.0\.0\.1:(\d+)/.exec(log);
						if (m) resolve(Number(m[1]));
					});
					s.once('close', () => reject(new Error(`s_server exited: ${log}`)));
				}), 's_server listening');
				const out = await new Promise((resolve) => execFile(fetchBinFor(b.bin),
					['--cacert', F('root.pem'), `https://localhost:${port}/`, `https://localhost.:${port}/`],
					{ env: { PATH: process.env.PATH }, timeout: 20000 }, (err, stdout, stderr) => resolve({ err, stdout, stderr })));
				const results = out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => !l.summary);
				assert.equal(results.length, 2, out.stdout + out.stderr);
				for (const r of results) assert.equal(r.status, 200, JSON.stringify(r));
			} finally {
				s.kill();
			}
		});

		test('an idle TLS connection is closed at INGOT_TLS_IDLE_TIMEOUT_MS, with close_notify', T, async () => {
			const srv = await startTls(b, 'rsa', { INGOT_TLS_IDLE_TIMEOUT_MS: '200' });
			try {
				const s = sClient(srv.tlsPort, ['-tls1_2'], { stdin: 'pipe' });
				const { code, out } = await within(20000, s.done, 's_client ends when the server closes');
				// s_client prints "closed" on close_notify (a bare FIN is an error).
				assert.match(out, /^closed$/m, out);
				assert.equal(code, 0);
				s.proc.stdin.destroy();
			} finally {
				await srv.stop();
			}
		});

		test('SIGTERM closes idle TLS connections with close_notify and exits 0', T, async () => {
			const srv = await startTls(b, 'rsa');
			const s = sClient(srv.tlsPort, ['-tls1_2'], { stdin: 'pipe' });
			await within(20000, new Promise((resolve) => {
				const check = () => { if (/Verify return code/.test(s.output())) resolve(); };
				s.proc.on('out', check);
				check();
			}), 'the handshake');
			const mid = await tlsClient(srv.tlsPort);
			await mid.write(req('GET', '/delay/300'));
			const x = srv.stop();
			const res = await mid.response();
			assert.equal(res.status, 200);
			assert.equal(res.headers.connection, 'close');
			await within(20000, mid.waitEnd(), 'the busy connection closes after its response');
			const { out } = await s.done;
			assert.match(out, /^closed$/m, out);
			assert.equal((await x).code, 0);
			s.proc.stdin.destroy();
		});

		test('INGOT_TLS_ONLY serves HTTPS and no plain HTTP; PEM text in INGOT_TLS_CERT_PEM/INGOT_TLS_KEY_PEM', T, async () => {
			await certsMade;
			const srv = await startServer({ INGOT_TLS_ONLY: 'true', INGOT_TLS_PORT: '0',
				INGOT_TLS_CERT_PEM: fs.readFileSync(F('ecdsa.pem'), 'utf8'),
				INGOT_TLS_KEY_PEM: fs.readFileSync(F('ecdsa.key'), 'utf8') }, { command: b.bin });
			try {
				assert.equal(srv.listening.port, undefined, JSON.stringify(srv.listening));
				assert.equal((await curlHttps(srv.listening.tls_port, '/health')).text, BODY.health);
			} finally {
				await srv.stop();
			}
		});

		const BAD = [
			['a key that does not match the certificate', { INGOT_TLS_CERT: 'rsa.pem', INGOT_TLS_KEY: 'stray.key' }, /match|key/i],
			['an ECDSA key for the RSA certificate', { INGOT_TLS_CERT: 'rsa.pem', INGOT_TLS_KEY: 'ecdsa.key' }, /key/i],
			['garbage PEM as the certificate', { INGOT_TLS_CERT: 'garbage.pem', INGOT_TLS_KEY: 'rsa.key' }, /certificate/i],
			['garbage PEM as the key', { INGOT_TLS_CERT: 'rsa.pem', INGOT_TLS_KEY: 'garbage.pem' }, /key/i],
			['a missing certificate file', { INGOT_TLS_CERT: 'missing.pem', INGOT_TLS_KEY: 'rsa.key' }, /missing\.pem/],
			['a missing key file', { INGOT_TLS_CERT: 'rsa.pem', INGOT_TLS_KEY: 'missing.key' }, /missing\.key/],
			['a certificate without a key', { INGOT_TLS_CERT: 'rsa.pem' }, /key/i],
			['INGOT_TLS_ONLY without a certificate', { INGOT_TLS_ONLY: '1' }, /certificate/i],
		];
		for (const [name, files, msg] of BAD) {
			test(`startup fails with a clear message and a non-zero exit: ${name}`, T, async () => {
				await certsMade;
				const env = { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', INGOT_TLS_PORT: '0', INGOT_THREADS: '1' };
				for (const [k, v] of Object.entries(files)) env[k] = k.endsWith('_ONLY') ? v : F(v);
				const r = await run(b.bin, [], { env, timeoutMs: 10000 });
				assert.ok(r.code !== 0 && r.code !== -1 && r.code !== null, `exit ${r.code}; ${r.stderr}`);
				assert.match(r.stderr, /^ingot: .*TLS|^ingot: .*INGOT_TLS/m, r.stderr);
				assert.match(r.stderr, msg);
				assert.doesNotMatch(r.stdout, /"msg":"listening"/);
			});
		}
	});
}
