// The unikernel (build/images/unikernel.elf, `make unikernel`) under qemu's
// TCG with the host contract's command line (images/qemu unikernel: -M
// microvm,pit=on,rtc=on -m 32, isa-debug-exit, the i8042, user networking
// with a hostfwd from a free port; the monitor on a unix socket for
// sendkey). Each boot costs seconds under TCG, so the checks are grouped per
// boot: one machine serves the HTTP checks (every reference route byte for
// byte against the process build started beside it, a validation error,
// Date, 2,000 requests pipelined 10 deep through undici, the body limit,
// slowloris, idle CPU) and then stops on Ctrl-Alt-Del with a request in
// flight, once with one vCPU and once with two (-smp 2 under multi-threaded
// TCG: a loop on each, every loop serving); with two vCPUs, one on a TAP in
// a namespace answers ping and 500 concurrent
// connections (qemu's user network carries neither); one on a TAP in
// another resolves UPSTREAM's and DATABASE_URL's names through a DNS
// server of the test's there (INGOT_DNS_SERVER), each loop's pool; one boot each for
// DHCP, a name with no nameserver, the modern virtio-mmio device, an app's setting (UPSTREAM) from the
// command line, an idle exit (INGOT_IDLE_EXIT_MS), a
// bad ingot.ip, a forced CPU exception, a coroutine's stack overflow (its
// guard page), and the database routes against a
// real PostgreSQL on the host (qemu's guestfwd to its loopback port), whose
// SCRAM login needs an entropy device (-device virtio-rng-device) and is
// refused without one; the initrd's files, seen at / (a JWKS file); and
// HTTPS from the image built with BearSSL (make unikernel-tls), the
// certificate in the initrd, refused without an entropy device; the image's
// unpacker (images/unpack.S) refusing a damaged payload. A missing image or platform part fails; nothing skips.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import * as jose from 'jose';
import {
	BODY, DATE_RE, RawClient, req, rawRequest, dripHeader, startServer, cleanup, commandRunner, needTools, freePort, within,
} from './lib.mjs';
import { Guest, IMAGES, killGuests } from './guest.mjs';
import { startPostgres } from './pglib.mjs';
import { migrate } from './dbservice.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const IMAGE = path.join(IMAGES, 'unikernel.elf');
const T = { timeout: 120000 };
const CLK_TCK = 100; // USER_HZ: /proc/PID/stat's unit on Linux
// Settings words on the kernel command line, and the same as the process's
// environment: a short header timeout keeps the slowloris check short.
const SETTINGS = { INGOT_HEADER_TIMEOUT_MS: '2000' };
const WORDS = Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-unikernel-'));
after(() => {
	killGuests();
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { run, must } = commandRunner({ timeoutMs: 60000 });

function needImage() {
	assert.ok(fs.existsSync(IMAGE), `${IMAGE} is missing: make unikernel builds it`);
}

/** Boots the unikernel; addr: its address words (images/qemu's QEMU_ADDR,
 * '' for DHCP); more: words after them. */
async function boot({ addr, more = WORDS, modern = false, tap, guestfwd, wrap, rng = false, initrd, image, smp = 1 } = {}) {
	needImage();
	await needTools('qemu-system-x86_64');
	const env = { QEMU_APPEND: more, QEMU_SMP: String(smp) };
	if (rng) env.QEMU_RNG = '1';
	if (initrd) env.QEMU_INITRD = initrd;
	if (image) env.QEMU_UNIKERNEL = image;
	if (addr !== undefined) env.QEMU_ADDR = addr;
	if (modern) env.QEMU_MODERN = '1';
	if (tap) env.QEMU_TAP = tap;
	if (guestfwd) env.QEMU_GUESTFWD = guestfwd;
	return new Guest('unikernel', await freePort(), { dir: tmp, env, wrap });
}

const listening = (g) => g.waitLog((l) => l.msg === 'listening');
/** The source the platform's start line names (kernel/metal/entry.c: a
 * line without "ts", printed before musl starts, so not among g.logs). */
function entropySource(g) {
	const line = g.lines.find((l) => l.includes('"msg":"metal: entropy"'));
	return line ? JSON.parse(line.slice(line.indexOf('{'))).source : undefined;
}
const isOdd = (code) => Number.isInteger(code) && code % 2 === 1;
/** The console's last line, parsed (a JSON log line, or null): it tells a
 * clean stop (status 0) from a failure (an error, or a non-zero status). */
function lastWords(g) {
	const line = g.lines.filter((l) => l.trim()).pop() ?? '';
	try { return JSON.parse(line.slice(line.indexOf('{'))); } catch { return null; }
}
const cleanStop = (w) => w !== null && w.level === 'info' && w.status === 0;
const failure = (w) => w !== null && (w.level === 'error' || (Number.isInteger(w.status) && w.status !== 0));

/** The response to data as raw bytes, with the Date field's value blanked
 * (the two servers answer at different moments). */
async function rawAnswer(port, data, head) {
	const { res, client } = await rawRequest(port, data, { head });
	client.destroy();
	return { res, bytes: res.raw.toString('latin1').replace(/\r\nDate: [^\r]*/i, '\r\nDate: -') };
}

// Asks /readyz as a probe would until it answers 200 (bounded).
const ready = (g, why) => within(60000, (async () => {
	for (;;) {
		const { res } = await rawAnswer(g.port, req('GET', '/readyz', { headers: ['Connection: close'] }));
		if (res.status === 200) return;
		await new Promise((resolve) => setImmediate(resolve));
	}
})(), `/readyz never 200: ${why}; ${g.describe()}`);

// ---- the reference service's requests, for the byte-for-byte comparison ----
const VALIDATE_BODY = '{"name":"Ada Lovelace","nickname":null,"ref":"A-1","status":"active",' +
	'"scores":[90,85,77,100,0],"address":{"street":"12 Main St","city":"Springfield","zip":"12345"},"active":true}';
const BLOG_BODY = '{"title":"Hello","body":"A post body.","likes":3,"tags":["c"]}';
const JSON_HDR = ['content-type: application/json'];
// opts with an X-Request-Id of its own added to its headers.
const withId = (opts, id) => ({ ...opts, headers: [...(opts.headers || []), `X-Request-Id: ${id}`] });
const VALIDATION_ERROR = ['POST', '/validate', { headers: [...JSON_HDR, 'x-foo: bar'], body: '{"name":1}' }];
const ROUTES = [
	['GET', '/health'], ['GET', '/json'], ['GET', '/compute'], ['GET', '/hash'],
	['GET', '/blog?limit=3'], ['GET', '/blog/1'], ['GET', '/blog/42'], ['GET', '/blog/9223372036854775807'],
	['PUT', '/blog/7', { headers: JSON_HDR, body: BLOG_BODY }], ['POST', '/blog', { headers: JSON_HDR, body: BLOG_BODY }],
	['GET', '/delay/0'], ['GET', '/delay/20'],
	['POST', '/validate?page=2&tags=a', { headers: [...JSON_HDR, 'x-foo: bar'], body: VALIDATE_BODY }],
	['POST', '/novalidate?page=2&tags=a', { headers: [...JSON_HDR, 'x-foo: bar'], body: VALIDATE_BODY }],
	VALIDATION_ERROR,
	['GET', '/blog/0'], ['GET', '/blog/x'], ['GET', '/nowhere'], ['DELETE', '/health'], ['OPTIONS', '/blog'],
	['HEAD', '/json'], ['HEAD', '/nowhere'],
	// Through the outbound client, to the service itself (lwIP's loopback in the unikernel).
	['GET', '/proxy/json'], ['GET', '/fanout?n=10'],
];
// /fanout reports its slowest call's latency.
const normalize = (s) => s.replace(/"slowest_ms":[\d.]+/, '"slowest_ms":N').replace(/Content-Length: \d+/i, 'Content-Length: N');
const newPost = (s) => s.replace(/Location: \/blog\/\d+/, 'Location: /blog/N').replace(/"id":\d+/, '"id":N');

// One vCPU, then two under multi-threaded TCG (-smp 2 -accel
// tcg,thread=multi): a loop on each, the connections dealt to them in turn.
for (const smp of [1, 2]) describe(`the unikernel serving under TCG with -smp ${smp}, then Ctrl-Alt-Del`, () => {
	let g, proc, up;
	before(async () => {
		needImage();
		g = await boot({ smp });
		up = await listening(g);
		proc = await startServer(SETTINGS, { threads: '1' });
	});
	after(async () => { await proc?.stop(); g?.kill(); });

	test(`it boots to the "listening" line on the console, port 8080, on lwIP with the static address, a loop per vCPU (${smp})`, T, () => {
		assert.equal(up.port, 8080, g.describe());
		assert.equal(up.threads, smp);
		assert.equal(up.cpus, smp);
		const net = g.logs.find((l) => l.msg === 'net: up');
		assert.deepEqual([net?.dhcp, net?.ip, net?.gw], ['no', '10.0.2.15', '10.0.2.2'], g.describe());
	});

	test('no entropy source fit for keys (no virtio-rng device, and qemu64 has no RDRAND): the start says none', T, () => {
		assert.equal(entropySource(g), 'none', g.describe());
	});

	test('the memory budget comes from the machine\'s RAM (-m 32): no /proc there, the platform answers sysinfo', T, async () => {
		const b = await g.waitLog((l) => l.msg === 'memory budget');
		assert.equal(b.source, 'MemTotal', g.describe());
		// The RAM the program may use: under 32 MiB (the image and the boot
		// structures take their share), most of it.
		assert.ok(b.memory_limit_bytes > 16 << 20 && b.memory_limit_bytes <= 32 << 20, `${b.memory_limit_bytes}`);
		// Half of it less 8 MiB, at least 4 MiB (the README's rule).
		const half = Math.floor(b.memory_limit_bytes / 2);
		assert.equal(b.request_body_bytes, half > (12 << 20) ? half - (8 << 20) : 4 << 20);
	});

	test('every reference route answers byte for byte as the process build does (but Date)', T, async () => {
		const diffs = [];
		for (const [i, [method, target, opts = {}]] of ROUTES.entries()) {
			// One id to both, so that the echoed X-Request-Id (and a
			// problem's request_id) can be compared byte for byte too.
			const data = req(method, target, withId(opts, `route-${i}`));
			const vm = await rawAnswer(g.port, data, method === 'HEAD');
			const pr = await rawAnswer(proc.port, data, method === 'HEAD');
			// A new post's id says which core made it (app/service.c): with
			// more than one, the process's core need not be the machine's.
			const fix = target.startsWith('/fanout') ? normalize
				: smp > 1 && method === 'POST' && target === '/blog' ? newPost : (s) => s;
			if (fix(vm.bytes) !== fix(pr.bytes)) diffs.push(`${method} ${target}:\n  unikernel ${JSON.stringify(vm.bytes)}\n  process   ${JSON.stringify(pr.bytes)}`);
			if (target.startsWith('/fanout')) assert.equal(vm.res.json().succeeded, 10, 'every fan-out call succeeded');
		}
		assert.deepEqual(diffs, []);
	});

	test('a validation error is a 400 problem+json naming the field, as from the process', T, async () => {
		const [method, target, opts] = VALIDATION_ERROR;
		const data = req(method, target, withId(opts, 'validation-1'));
		const vm = await rawAnswer(g.port, data);
		assert.equal(vm.res.status, 400);
		assert.equal(vm.res.headers['content-type'], 'application/problem+json');
		assert.match(vm.res.text, /name/);
		assert.equal(vm.res.json().request_id, 'validation-1');
		assert.equal(vm.bytes, (await rawAnswer(proc.port, data)).bytes);
	});

	test('Date is within 2 s of the host\'s clock', T, async () => {
		const before = Date.now();
		const { res } = await rawAnswer(g.port, req('GET', '/health'));
		const after = Date.now();
		assert.match(res.headers.date, DATE_RE);
		const d = Date.parse(res.headers.date); // whole seconds
		assert.ok(d >= Math.floor(before / 1000) * 1000 - 2000 && d <= after + 2000,
			`Date ${res.headers.date} against the host's ${new Date(before).toUTCString()}`);
	});

	test('2,000 requests pipelined 10 deep through undici keep their bodies and order', T, async () => {
		const client = new Client(`http://127.0.0.1:${g.port}`, { pipelining: 10 });
		try {
			const pick = (i) => (i % 3 === 0 ? ['/health', BODY.health] : i % 3 === 1 ? ['/json', BODY.json]
				: [`/blog/${i}`, BODY.blog(i)]);
			const results = await Promise.all(Array.from({ length: 2000 }, async (_, i) => {
				const [p, body] = pick(i);
				const res = await client.request({ path: p, method: 'GET' });
				return { ok: res.statusCode === 200 && (await res.body.text()) === body, p };
			}));
			assert.deepEqual(results.filter((r) => !r.ok).map((r) => r.p), []);
		} finally {
			await client.close();
		}
	});

	test('a body over INGOT_MAX_BODY (1 MiB) is a 413 and the connection closes: by its Content-Length, and chunked as it grows', T, async () => {
		const c = await RawClient.connect(g.port);
		await c.write(`POST /blog HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${(1 << 20) + 1}\r\n\r\n{`);
		const res = await c.response();
		assert.equal(res.status, 413);
		assert.equal(res.headers['content-type'], 'application/problem+json');
		await within(30000, c.closed, 'the close after the 413');
		const k = await RawClient.connect(g.port);
		const chunk = Buffer.alloc(65536, 0x63);
		const parts = [Buffer.from('POST /blog HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')];
		for (let i = 0; i < 17; i++) parts.push(Buffer.from('10000\r\n'), chunk, Buffer.from('\r\n'));
		parts.push(Buffer.from('0\r\n\r\n'));
		k.sock.write(Buffer.concat(parts), () => {});
		assert.equal((await k.response()).status, 413);
		await within(30000, k.closed, 'the close after the chunked 413');
	});

	test('slowloris: a head trickled byte by byte is cut with 408 at the header timeout; another client is served meanwhile', T, async () => {
		const slow = await RawClient.connect(g.port);
		await slow.write('GET /health HTTP/1.1\r\nHost: x\r\n');
		const stopDrip = dripHeader(slow, 20);
		try {
			const { res: other } = await rawAnswer(g.port, req('GET', '/json'));
			assert.equal(other.text, BODY.json);
			assert.equal(slow.received, 0, 'the other client is answered before the 408');
			const res = await slow.response();
			assert.equal(res.status, 408);
			await within(30000, slow.closed, 'the close after the 408');
		} finally {
			stopDrip();
		}
	});

	test('idle, qemu uses under 5% of a host core (its CPU time over 10 s)', { timeout: 60000 }, async () => {
		const ticks = () => {
			const st = fs.readFileSync(`/proc/${g.pid}/stat`, 'utf8');
			const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
			return Number(f[11]) + Number(f[12]); // utime + stime, every thread
		};
		const t0 = ticks(), w0 = Date.now();
		await new Promise((r) => setTimeout(r, 10000)); // the measuring window itself, not a wait for an event
		const used = (ticks() - t0) / CLK_TCK, wall = (Date.now() - w0) / 1000;
		assert.ok(used / wall < 0.05, `qemu used ${(used * 1000).toFixed(0)} ms of CPU in ${wall.toFixed(1)} s idle`);
	});

	test(`Ctrl-Alt-Del with a request in flight on each of ${smp} connection(s), dealt to the loops in turn: each is answered, the drain ends, qemu exits by itself with 0; every loop served requests`, T, async () => {
		const conns = [];
		for (let i = 0; i < smp; i++) {
			const c = await RawClient.connect(g.port);
			await c.write(req('GET', '/health') + req('GET', '/delay/1000'));
			assert.equal((await c.response()).text, BODY.health); // /delay is in flight now
			conns.push(c);
		}
		const mark = g.logs.length;
		await g.ctrlAltDel();
		await g.waitLog((l, i) => l.msg === 'draining' && i >= mark);
		for (const c of conns) {
			const r = await c.response();
			assert.equal(r.text, BODY.delay(1000), 'the in-flight request was answered');
			assert.equal(r.headers.connection, 'close');
		}
		const x = await g.waitExit();
		assert.deepEqual(x, { code: 0, signal: null }, g.describe());
		const stopped = g.logs.find((l) => l.msg === 'stopped');
		assert.ok(stopped, `a "stopped" line; ${g.describe()}`);
		assert.equal(stopped.cut, 0, g.describe());
		if (smp > 1) {
			const per = stopped.requests_per_core.split(',').map(Number);
			assert.equal(per.length, smp);
			assert.ok(per.every((n) => n > 0), `every loop served requests: ${stopped.requests_per_core}`);
			assert.equal(per.reduce((a, b) => a + b), stopped.requests);
		}
		assert.ok(cleanStop(lastWords(g)), `the last console line says a clean stop; ${g.describe()}`);
	});
});

test('an app\'s setting from the command line: UPSTREAM=... sends /proxy/json to the host\'s upstream', T, async () => {
	// The user network lets the guest reach nothing but this: 10.0.2.100:80
	// piped to the upstream on the host's loopback. Without the word,
	// /proxy/json would call the service itself and answer its /json.
	const upstream = http.createServer((rq, rs) => {
		rs.setHeader('Content-Type', 'application/json');
		rs.end(`{"from":"the host","path":"${rq.url}"}`);
	});
	await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
	try {
		const fwd = `tcp:10.0.2.100:80-cmd:${process.execPath} ${path.join(here, 'tcp_pipe.mjs')} ${upstream.address().port}`;
		const g = await boot({ more: `${WORDS} UPSTREAM=http://10.0.2.100:80/up`, guestfwd: fwd });
		await listening(g);
		const { res } = await rawAnswer(g.port, req('GET', '/proxy/json', { headers: ['Connection: close'] }));
		assert.equal(res.status, 200, `${res.text}; ${g.describe()}`);
		assert.deepEqual(JSON.parse(res.text), { from: 'the host', path: '/up/json' });
		g.kill();
	} finally {
		upstream.close();
	}
});

test('JWTs on the machine: keys fetched over lwIP from the host (INGOT_JWKS_URL through a guestfwd), /readyz 200 once they are in, /me admits HS256 and ES256 tokens and refuses a tampered one', T, async () => {
	const es = await jose.generateKeyPair('ES256', { extractable: true });
	const secret = Buffer.from('a secret of thirty-two bytes, ok');
	const jwks = JSON.stringify({ keys: [
		{ ...(await jose.exportJWK(es.publicKey)), kid: 'ES256', alg: 'ES256', use: 'sig' },
		{ kty: 'oct', k: secret.toString('base64url'), kid: 'HS256', alg: 'HS256' },
	] });
	let fetches = 0;
	const keys = http.createServer((rq, rs) => {
		fetches++;
		rs.setHeader('Content-Type', 'application/json');
		rs.end(jwks);
	});
	await new Promise((resolve) => keys.listen(0, '127.0.0.1', resolve));
	try {
		const fwd = `tcp:10.0.2.100:80-cmd:${process.execPath} ${path.join(here, 'tcp_pipe.mjs')} ${keys.address().port}`;
		const g = await boot({ more: `${WORDS} INGOT_JWKS_URL=http://10.0.2.100:80/jwks.json`, guestfwd: fwd });
		await listening(g);
		await ready(g, 'the keys were not fetched');
		assert.ok(fetches >= 1);
		const mint = (alg, key) => new jose.SignJWT({ scope: 'profile' }).setProtectedHeader({ alg, kid: alg })
			.setSubject(`by-${alg}`).setIssuedAt().setExpirationTime('10m').sign(key);
		const me = (token) => rawAnswer(g.port, req('GET', '/me', { headers: ['Connection: close', `Authorization: Bearer ${token}`] }));
		for (const [alg, key] of [['HS256', secret], ['ES256', es.privateKey]]) {
			const { res } = await me(await mint(alg, key));
			assert.equal(res.status, 200, `${alg}: ${res.text}; ${g.describe()}`);
			assert.equal(JSON.parse(res.text).sub, `by-${alg}`);
		}
		const t = await mint('ES256', es.privateKey);
		const { res } = await me(t.slice(0, -4) + (t.endsWith('AAAA') ? 'BBBB' : 'AAAA'));
		assert.equal(res.status, 401, res.text);
		g.kill();
	} finally {
		keys.close();
	}
});

test('the initrd (-initrd: a cpio newc archive as cpio -o -H newc writes it) is seen at /: INGOT_JWKS_FILE=/keys/jwks.json reads keys/jwks.json from it, and /me admits a token signed with its key and refuses another', T, async () => {
	await needTools('cpio');
	const secret = Buffer.from('a secret of thirty-two bytes, ok');
	const root = path.join(tmp, 'initrd');
	fs.mkdirSync(path.join(root, 'keys'), { recursive: true });
	fs.writeFileSync(path.join(root, 'keys', 'jwks.json'),
		JSON.stringify({ keys: [{ kty: 'oct', k: secret.toString('base64url'), kid: 'HS256', alg: 'HS256' }] }));
	fs.writeFileSync(path.join(root, 'odd-size'), 'abcde'); // the next entry is padded
	const archive = path.join(tmp, 'initrd.cpio');
	const c = await run('sh', ['-c', 'cd "$1" && find . -print | sort | cpio -o -H newc --quiet > "$2"', 'sh', root, archive]);
	assert.equal(c.code, 0, c.stderr);
	const g = await boot({ more: `${WORDS} INGOT_JWKS_FILE=/keys/jwks.json`, initrd: archive });
	await listening(g);
	const mint = (key) => new jose.SignJWT({ scope: 'profile' }).setProtectedHeader({ alg: 'HS256', kid: 'HS256' })
		.setSubject('from-the-initrd').setIssuedAt().setExpirationTime('10m').sign(key);
	const me = async (key) => (await rawAnswer(g.port, req('GET', '/me', {
		headers: ['Connection: close', `Authorization: Bearer ${await mint(key)}`] }))).res;
	const ok = await me(secret);
	assert.equal(ok.status, 200, `${ok.text}; ${g.describe()}`);
	assert.equal(JSON.parse(ok.text).sub, 'from-the-initrd');
	assert.equal((await me(Buffer.from('another secret of thirty-two b!!'))).status, 401);
	g.kill();
});

test('HTTPS on the machine (make unikernel-tls): with virtio-rng and the certificate and key in the initrd, curl and openssl s_client verify it over the hostfwd (-smp 2: one connection to each loop); without an entropy device TLS refuses to start, saying why: HTTPS alone fails the start, beside plain HTTP the plain port still serves', T, async () => {
	const image = path.join(IMAGES, 'unikernel-tls.elf');
	assert.ok(fs.existsSync(image), `${image} is missing: make unikernel-tls builds it`);
	await needTools('curl', 'openssl', 'cpio');
	const root = path.join(tmp, 'tls-initrd');
	fs.mkdirSync(path.join(root, 'tls'), { recursive: true });
	const cert = path.join(root, 'tls', 'cert.pem');
	await must('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
		'-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', path.join(root, 'tls', 'key.pem'),
		'-out', cert]);
	const archive = path.join(tmp, 'tls-initrd.cpio');
	const c = await run('sh', ['-c', 'cd "$1" && find . -print | sort | cpio -o -H newc --quiet > "$2"', 'sh', root, archive]);
	assert.equal(c.code, 0, c.stderr);
	const words = `${WORDS} INGOT_TLS_CERT=/tls/cert.pem INGOT_TLS_KEY=/tls/key.pem INGOT_TLS_ONLY=1 INGOT_TLS_PORT=8080`;

	// Two vCPUs: curl's connection and s_client's go to one loop each.
	const g = await boot({ more: words, initrd: archive, rng: true, image: 'unikernel-tls.elf', smp: 2 });
	try {
		const up = await listening(g);
		assert.equal(up.tls_port, 8080, g.describe());
		assert.equal(up.threads, 2, g.describe());
		assert.equal(entropySource(g), 'virtio-rng', g.describe());
		const curl = await must('curl', ['-sS', '--cacert', cert, '--resolve', `localhost:${g.port}:127.0.0.1`,
			`https://localhost:${g.port}/health`]);
		assert.equal(curl, BODY.health);
		const s = await run('sh', ['-c', 'openssl s_client -connect "127.0.0.1:$1" -servername localhost -CAfile "$2" </dev/null',
			'sh', String(g.port), cert]);
		assert.match(s.stdout, /Verify return code: 0 \(ok\)/, `${s.stdout}${s.stderr}`);
	} finally {
		g.kill();
	}

	// Without an entropy device TLS refuses, saying why: HTTPS alone
	// (INGOT_TLS_ONLY) is then a failed start ...
	const bare = await boot({ more: words, initrd: archive, image: 'unikernel-tls.elf' });
	const exit = await bare.waitExit();
	assert.ok(isOdd(exit.code) && exit.code > 1, `a failed start's status; ${bare.describe()}`);
	assert.ok(bare.lines.some((l) => l.includes('metal: getrandom refused: no entropy source fit for keys')), bare.describe());
	assert.ok(bare.lines.some((l) => /TLS: TLS needs getrandom\(2\)/.test(l)), bare.describe());
	assert.ok(!bare.logs.some((l) => l.msg === 'listening'), bare.describe());

	// ... and beside plain HTTP, plain HTTP still serves, with an error line.
	const plainWords = `${WORDS} INGOT_TLS_CERT=/tls/cert.pem INGOT_TLS_KEY=/tls/key.pem INGOT_TLS_PORT=8443`;
	const plain = await boot({ more: plainWords, initrd: archive, image: 'unikernel-tls.elf' });
	try {
		const up = await listening(plain);
		assert.equal(up.port, 8080, plain.describe());
		assert.equal(up.tls_port, undefined, `no HTTPS listener; ${plain.describe()}`);
		const off = plain.logs.find((l) => l.msg === 'HTTPS off: TLS refused to start; plain HTTP serves');
		assert.ok(off && off.level === 'error' && /getrandom\(2\)/.test(off.reason), plain.describe());
		const { res } = await rawAnswer(plain.port, req('GET', '/health', { headers: ['Connection: close'] }));
		assert.equal(res.text, BODY.health, plain.describe());
	} finally {
		plain.kill();
	}
});

test('INGOT_IDLE_EXIT_MS: idle after a request, the unikernel drains and powers off by itself with 0', T, async () => {
	const g = await boot({ more: `${WORDS} INGOT_IDLE_EXIT_MS=300` });
	await listening(g);
	const { res } = await rawAnswer(g.port, req('GET', '/health', { headers: ['Connection: close'] }));
	assert.equal(res.text, BODY.health);
	assert.deepEqual(await g.waitExit(), { code: 0, signal: null }, g.describe());
	assert.equal(g.logs.find((l) => l.msg === 'draining')?.reason, 'idle', g.describe());
	assert.equal(g.logs.find((l) => l.msg === 'stopped')?.requests, 1, g.describe());
	assert.ok(cleanStop(lastWords(g)), `the last console line says a clean stop; ${g.describe()}`);
});

test('PostgreSQL from the machine: without an entropy device its SCRAM login is refused (getrandom refuses the nonce, saying so); with virtio-rng its pool connects over lwIP to a real database on the host (through a guestfwd) once DHCP has given the address, without a warning, and /db, /queries and /updates answer from it', T, async () => {
	const pg = await startPostgres();
	try {
		const m = await migrate(pg.url);
		assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
		// Every number 0 (outside 1..10000): a row the machine wrote says otherwise.
		await pg.psql('UPDATE world SET randomnumber = 0;');
		// The user network lets the guest reach nothing but this: 10.0.2.100:5432
		// piped to the database's port on the host's loopback.
		const url = pg.urlWith({ host: '10.0.2.100', port: 5432 });
		const fwd = `tcp:10.0.2.100:5432-cmd:${process.execPath} ${path.join(here, 'tcp_pipe.mjs')} ${pg.port}`;
		// DHCP: the pool's first connect waits for the lease (net/stack.h's
		// when_up) instead of failing and warning while the network comes up.
		// SCRAM's nonce is a key. Without an entropy device (and no RDRAND
		// here) getrandom refuses it, saying so, rather than hand out a
		// TSC-seeded one: the login fails.
		const bare = await boot({ more: `${WORDS} DATABASE_URL=${url} INGOT_PG_POOL_SIZE=1`, guestfwd: fwd });
		try {
			const refused = await bare.waitLog((l) => l.msg === 'database connection refused');
			assert.match(refused.reason, /no random bytes for SCRAM's nonce/, bare.describe());
			assert.ok(bare.lines.some((l) => l.includes('"msg":"metal: getrandom refused: no entropy source fit for keys')),
				bare.describe());
		} finally {
			bare.kill();
		}
		// With the device: its bytes make the nonce.
		const g = await boot({ addr: '', more: `${WORDS} DATABASE_URL=${url} INGOT_PG_POOL_SIZE=2`, guestfwd: fwd, rng: true });
		await listening(g);
		assert.equal(entropySource(g), 'virtio-rng', g.describe());
		await ready(g, 'the pool did not connect');
		const json = async (target) => {
			const { res } = await rawAnswer(g.port, req('GET', target, { headers: ['Connection: close'] }));
			assert.equal(res.status, 200, `${target}: ${res.text}`);
			return JSON.parse(res.text);
		};
		const one = await json('/db');
		assert.deepEqual(Object.keys(one), ['id', 'randomNumber']);
		assert.equal(one.randomNumber, 0, 'the row as the database holds it');
		assert.equal((await json('/queries?queries=5')).filter((w) => w.randomNumber === 0).length, 5);
		const written = await json('/updates?queries=5');
		const ids = [...new Set(written.map((w) => w.id))];
		const stored = await pg.psql(`SELECT id || ':' || randomnumber FROM world WHERE randomnumber <> 0 ORDER BY id;`);
		const want = new Map(written.map((w) => [w.id, w.randomNumber]));
		assert.deepEqual(stored.trim().split('\n'), ids.sort((a, b) => a - b).map((id) => `${id}:${want.get(id)}`),
			'the rows /updates answered are the rows it wrote, and no other');
		assert.ok(!g.lines.join('\n').includes(pg.password), 'no password on the console');
		assert.ok(g.logs.some((l) => l.msg === 'net: address' && l.dhcp === 'yes'), g.describe());
		assert.deepEqual(g.logs.filter((l) => l.level === 'warn' || l.level === 'error'), [],
			`no "database unreachable" (nor any warning) while the network came up; ${g.describe()}`);
		g.kill();
	} finally {
		await pg.stop();
	}
});

test('DHCP: with no ingot.ip the unikernel takes its address from qemu\'s user network and serves', T, async () => {
	const g = await boot({ addr: '' });
	await listening(g);
	// lwIP logs the address once the DHCP server has given it.
	const got = await g.waitLog((l) => l.msg === 'net: address');
	assert.deepEqual([got.dhcp, got.ip, got.netmask], ['yes', '10.0.2.15', '255.255.255.0'], g.describe());
	const { res } = await rawAnswer(g.port, req('GET', '/health'));
	assert.equal(res.text, BODY.health);
	g.kill();
});

test('a name under the user network\'s restrict=on: its DHCP names no nameserver (nor a router), so without INGOT_DNS_SERVER a lookup fails at once, saying so', T, async () => {
	const g = await boot({ addr: '', more: `${WORDS} UPSTREAM=http://up.test` });
	await listening(g);
	const lease = await g.waitLog((l) => l.msg === 'net: address');
	assert.equal(lease.gw, '0.0.0.0', `restricted slirp offers no router; ${g.describe()}`);
	const { res } = await rawAnswer(g.port, req('GET', '/proxy/json', { headers: ['Connection: close'] }));
	assert.equal(res.status, 502, res.text);
	assert.equal(JSON.parse(res.text).error, 'dns', res.text);
	const why = await g.waitLog((l) => l.msg === 'upstream error');
	assert.match(why.message, /^up\.test: no nameserver/, g.describe());
	g.kill();
});

test('the modern (v2) virtio-mmio device (-global virtio-mmio.force-legacy=false) serves as the legacy one does', T, async () => {
	const g = await boot({ modern: true });
	await listening(g);
	const { res } = await rawAnswer(g.port, req('GET', '/json'));
	assert.equal(res.text, BODY.json);
	g.kill();
});

/** Makes the network namespace ns with the TAP device tap in it, up, at
 * 10.0.2.2/24 (the guest's gateway). */
async function tapNamespace(ns, tap) {
	const inNs = (...a) => ['netns', 'exec', ns, ...a];
	await must('ip', ['netns', 'add', ns]);
	await must('ip', inNs('ip', 'link', 'set', 'lo', 'up'));
	await must('ip', inNs('ip', 'tuntap', 'add', tap, 'mode', 'tap'));
	await must('ip', inNs('ip', 'addr', 'add', '10.0.2.2/24', 'dev', tap));
	await must('ip', inNs('ip', 'link', 'set', tap, 'up'));
}

describe('the unikernel with -smp 2 on a TAP device (-netdev tap) in a namespace of its own', () => {
	// qemu's user network carries no ICMP to the guest, and its hostfwd
	// takes a burst of connections only slowly (the Linux image's kernel TCP
	// gets no more than about 240 of 500 answered in 60 s through it): ping
	// and the 500 connections go straight to the guest's stack over a TAP,
	// and to both of its loops.
	const ns = `igu${process.pid % 100000}`, tap = `igu${process.pid % 100000}t`;
	const inNs = (...a) => ['netns', 'exec', ns, ...a];
	let g, made = false;
	before(async () => {
		await needTools('ip', 'ping', 'curl');
		made = true; // after() deletes it whatever part of it was made
		await tapNamespace(ns, tap);
		g = await boot({ tap, wrap: ['ip', 'netns', 'exec', ns], smp: 2 });
		assert.equal((await listening(g)).threads, 2);
	});
	after(async () => {
		if (g) { g.kill(); await g.exited; }
		if (made) await run('ip', ['netns', 'delete', ns]);
	});

	test('it answers ping (ICMP echo)', T, async () => {
		const p = await run('ip', inNs('ping', '-c', '3', '-i', '0.2', '-w', '30', '10.0.2.15'));
		assert.equal(p.code, 0, `ping: ${p.stdout}${p.stderr}`);
		assert.match(p.stdout, /3 received/);
	});

	test('500 concurrent keep-alive connections are all answered, twice on the same connections', T, async () => {
		const r = await new Promise((resolve) => {
			execFile('ip', inNs('bash', '-c', 'ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"', 'bash',
				process.execPath, path.join(here, 'clients', 'many_conns.mjs'), '8080', '500', '10.0.2.15'),
			{ timeout: 100000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
				let out = null;
				try { out = JSON.parse(stdout.trim().split('\n').pop()); } catch { /* below */ }
				resolve({ err, out, stdout, stderr });
			});
		});
		assert.ok(r.out && !r.out.error, `client failed: ${r.err} ${r.stdout} ${r.stderr}`);
		assert.deepEqual(r.out, { n: 500, first: 500, second: 500, openAfterFirst: 500, openAfterSecond: 500 });
		const h = await run('ip', inNs('curl', '-sS', '--max-time', '30', 'http://10.0.2.15:8080/health'));
		assert.equal(h.stdout, BODY.health, `and it serves on: ${h.stderr}`);
	});
});

describe('names on a TAP in a namespace: the resolver over lwIP asks a DNS server of the test\'s (INGOT_DNS_SERVER)', () => {
	// The namespace holds the guest's peers (ns_peers.mjs): a DNS server, the
	// upstream and a pipe to the database's unix socket, all on 10.0.2.2.
	const ns = `igd${process.pid % 100000}`, tap = `igd${process.pid % 100000}t`;
	const inNs = (...a) => ['netns', 'exec', ns, ...a];
	let made = false, peers, pg;
	const queries = [];
	before(async () => {
		await needTools('ip', 'curl');
		pg = await startPostgres();
		const m = await migrate(pg.url);
		assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
		made = true; // after() deletes it whatever part of it was made
		await tapNamespace(ns, tap);
		const names = { 'up.test': '10.0.2.2', 'db.test': '10.0.2.2' };
		peers = spawn('ip', inNs(process.execPath, path.join(here, 'ns_peers.mjs'), '10.0.2.2', JSON.stringify(names),
			path.join(pg.socketDir, `.s.PGSQL.${pg.port}`)), { stdio: ['pipe', 'pipe', 'inherit'] });
		const lines = readline.createInterface({ input: peers.stdout });
		peers.ports = await within(30000, new Promise((resolve) => {
			lines.on('line', (l) => {
				const o = JSON.parse(l);
				if (o.query) queries.push(o.query);
				else resolve(o);
			});
		}), 'ns_peers.mjs never said its ports');
	});
	after(async () => {
		if (peers) { peers.stdin.end(); await new Promise((resolve) => peers.once('exit', resolve)); }
		if (made) await run('ip', ['netns', 'delete', ns]);
		await pg?.stop();
	});
	const inside = (target) => run('ip', inNs('curl', '-sS', '--max-time', '30', '-o', '-', '-w', '\n%{http_code}',
		`http://10.0.2.15:8080${target}`));
	const answer = async (target) => {
		const r = await inside(target);
		const nl = r.stdout.lastIndexOf('\n');
		return { status: Number(r.stdout.slice(nl + 1)), text: r.stdout.slice(0, nl), err: r.stderr };
	};

	test('UPSTREAM and DATABASE_URL by name, with -smp 2: /proxy/json calls the upstream, each loop\'s pool connects, /db answers on both', T, async () => {
		const { dns, up, pg: pgPort } = peers.ports;
		const url = pg.urlWith({ host: 'db.test', port: pgPort });
		const g = await boot({
			tap, wrap: ['ip', 'netns', 'exec', ns], rng: true, smp: 2,
			more: `${WORDS} INGOT_DNS_SERVER=10.0.2.2 INGOT_DNS_PORT=${dns} UPSTREAM=http://up.test:${up} DATABASE_URL=${url} INGOT_PG_POOL_SIZE=1`,
		});
		try {
			await listening(g);
			const proxied = await answer('/proxy/json');
			assert.equal(proxied.status, 200, `${proxied.text}${proxied.err}; ${g.describe()}`);
			assert.equal(proxied.text, BODY.json);
			await within(60000, (async () => {
				while ((await answer('/readyz')).status !== 200); // each try a curl run
			})(), `/readyz never 200: the pool did not connect; ${g.describe()}`);
			for (let i = 0; i < 2; i++) { // a connection each: one to each loop, in turn
				const db = await answer('/db');
				assert.equal(db.status, 200, `${db.text}${db.err}; ${g.describe()}`);
				assert.deepEqual(Object.keys(JSON.parse(db.text)), ['id', 'randomNumber']);
			}
			for (const name of ['up.test', 'db.test'])
				assert.ok(queries.some((q) => q.name === name && q.type === 1 && q.from === '10.0.2.15'),
					`${name} was asked from the guest: ${JSON.stringify(queries)}`);
		} finally {
			g.kill();
			await g.exited;
		}
	});
});

test('the image is the kernel packed (images/unpack.S): smaller than the kernel it unpacks, and one whose payload is damaged ends the machine with the unpacker\'s line and an odd status, never running the kernel', T, async () => {
	needImage();
	const image = fs.readFileSync(IMAGE);
	const unpacked = path.join(IMAGES, 'unikernel.kernel.bin');
	assert.ok(fs.existsSync(unpacked), `${unpacked}: make unikernel writes the kernel's bytes beside the image`);
	assert.ok(image.length < fs.statSync(unpacked).size, `the image (${image.length} bytes) is smaller than the kernel's bytes`);
	// The payload follows the unpacker's line (lz4's legacy magic, 4-aligned).
	const line = Buffer.from('size)"}\r\n\0');
	const at = image.indexOf(line);
	assert.ok(at > 0, 'the unpacker\'s line is in the image');
	const magic = image.indexOf(Buffer.from([0x02, 0x21, 0x4c, 0x18]), at);
	assert.ok(magic > at && magic - at < line.length + 4, 'lz4\'s legacy magic right after it');
	const dir = fs.mkdtempSync(path.join(tmp, 'damaged-'));
	const damaged = Buffer.from(image);
	damaged[magic] ^= 0xff;
	fs.writeFileSync(path.join(dir, 'unikernel.elf'), damaged);
	await needTools('qemu-system-x86_64');
	const g = new Guest('unikernel', await freePort(), { dir: tmp, env: { IMAGES: dir, QEMU_APPEND: WORDS } });
	const x = await g.waitExit();
	assert.ok(isOdd(x.code), `status ${x.code}; ${g.describe()}`);
	assert.match(g.console, /"msg":"unpack: the image's payload is damaged/, g.describe());
	assert.ok(!g.lines.some((l) => l.includes('metal: entropy')), `the kernel never started; ${g.describe()}`);
});

test('a bad ingot.ip ends the machine at boot: one line on the console, an odd non-zero status, never listening', T, async () => {
	const g = await boot({ addr: 'ingot.ip=10.0.2.300/24 ingot.gw=10.0.2.2' });
	const x = await g.waitExit();
	assert.ok(isOdd(x.code), `status ${x.code}; ${g.describe()}`);
	assert.ok(!g.logs.some((l) => l.msg === 'listening'), 'it never served');
	assert.match(g.console, /ingot\.ip|INGOT_NET_IP/, `a line names the bad setting; ${g.describe()}`);
	assert.ok(failure(lastWords(g)), `the last console line says a failure; ${g.describe()}`);
});

test('a forced CPU exception (ingot.test_fault=ud) prints the registers on the console and ends with an odd status', T, async () => {
	const g = await boot({ more: 'ingot.test_fault=ud' });
	const x = await g.waitExit();
	assert.ok(isOdd(x.code), `status ${x.code}; ${g.describe()}`);
	assert.match(g.console, /rip/i, `a register dump; ${g.describe()}`);
	assert.match(g.console, /rsp/i);
	assert.ok(failure(lastWords(g)), `the last console line says a failure; ${g.describe()}`);
	assert.ok(!g.logs.some((l) => l.msg === 'listening'), 'it stopped before serving');
});

test('a coroutine that overflows its stack (ingot.test_fault=coro) ends with one "stack overflow" line naming the stack size, and an odd status', T, async () => {
	const g = await boot({ more: 'ingot.test_fault=coro' });
	const x = await g.waitExit();
	assert.ok(isOdd(x.code), `status ${x.code}; ${g.describe()}`);
	const w = lastWords(g);
	assert.equal(w?.msg, 'stack overflow', `the last console line; ${g.describe()}`);
	assert.equal(w.level, 'error');
	assert.equal(w.stack_bytes, 16384, 'the coroutine\'s stack size');
	assert.ok(!g.console.includes('cpu exception"'), `not the generic exception line; ${g.describe()}`);
	assert.ok(!g.logs.some((l) => l.msg === 'listening'), 'it stopped before serving');
});
