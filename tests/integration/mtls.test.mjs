// Mutual TLS (the mutualTLS security scheme, INGOT_TLS_CLIENT_CA), through
// the mtls app (tests/apps/mtls, built out of the tree against this
// ingot) on every TLS backend built: BearSSL, and mbedtls when
// build/bin/service-mbedtls exists (the app is then built with
// TLS=mbedtls too). The certificates are made here with openssl: a client
// CA, a client certificate from it, one from another CA, a server
// certificate. A client with the right certificate is admitted and its
// handler reads the CN as the subject, which the access log carries; one
// without a certificate, or with another CA's, completes the handshake
// (open routes serve it) and gets 401 from the operation that needs the
// certificate. A session in which a certificate was verified is not
// resumed (the next handshake is full and verifies it again); one without
// is. And the setting's checks at the start: on the reference service, and
// on the app, whose document's mutualTLS needs it when HTTPS is on.
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { execFile } from 'node:child_process';
import { ROOT, BIN, startServer, cleanup, commandRunner, needTools, runBinary, parseResponse } from './lib.mjs';

const T = { timeout: 120000 };
// Built here, static; the sanitizer pass of tests/run (INGOT_BIN) would
// build the same again.
const SKIP = process.env.INGOT_BIN ? { skip: 'the app builds its own binary; tested in the plain pass' } : {};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-mtls-'));
const F = (name) => path.join(tmp, name);
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { must } = commandRunner({ timeoutMs: 240000 });

const mbedBin = process.env.INGOT_BIN_MBEDTLS || path.join(ROOT, 'build', 'bin', 'service-mbedtls');
const BACKENDS = [
	{ name: 'bearssl', tls: 'bearssl', present: true },
	{ name: 'mbedtls', tls: 'mbedtls', present: fs.existsSync(mbedBin) },
];

// ---- certificates ----

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
async function ca(name, cn) {
	await must('openssl', ['req', '-x509', '-new', '-nodes', ...EC, '-keyout', F(`${name}.key`), '-out', F(`${name}.pem`),
		'-days', '2', '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE',
		'-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
}
async function leaf(name, issuer, subj, ext) {
	fs.writeFileSync(F(`${name}.ext`), ext);
	await must('openssl', ['req', '-new', '-nodes', ...EC, '-keyout', F(`${name}.key`), '-out', F(`${name}.csr`), '-subj', subj]);
	await must('openssl', ['x509', '-req', '-in', F(`${name}.csr`), '-CA', F(`${issuer}.pem`), '-CAkey', F(`${issuer}.key`),
		'-CAcreateserial', '-days', '2', '-extfile', F(`${name}.ext`), '-out', F(`${name}.pem`)]);
}
const CLIENT_EXT = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n';
let certs;
function makeCertificates() {
	certs ??= (async () => {
		await needTools('openssl', 'make');
		await ca('clientca', 'ingot test client CA');
		await ca('otherca', 'ingot test other CA');
		await ca('serverca', 'ingot test server CA');
		await leaf('server', 'serverca', '/CN=localhost', 'basicConstraints=critical,CA:FALSE\n' +
			'keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n');
		await leaf('alice', 'clientca', '/O=Example/OU=Billing/CN=alice.example', CLIENT_EXT);
		await leaf('mallory', 'otherca', '/CN=mallory', CLIENT_EXT);
		fs.writeFileSync(F('empty.pem'), 'no certificate here\n');
	})();
	return certs;
}

// ---- the app ----

const built = new Map();
function buildApp(backend) {
	if (!built.has(backend)) {
		built.set(backend, (async () => {
			const dir = path.join(tmp, `app-${backend}`);
			fs.cpSync(path.join(ROOT, 'tests', 'apps', 'mtls'), dir, { recursive: true, filter: (src) => path.basename(src) !== 'build' });
			await must('make', ['--no-print-directory', '-C', dir, `TLS=${backend}`], { env: { ...process.env, INGOT_ROOT: ROOT } });
			return path.join(dir, 'build', 'bin', backend === 'bearssl' ? 'mtls' : `mtls-${backend}`);
		})());
	}
	return built.get(backend);
}

async function startApp(backend, extra = {}) {
	await makeCertificates();
	const command = await buildApp(backend);
	const srv = await startServer({
		INGOT_TLS_CERT: F('server.pem'), INGOT_TLS_KEY: F('server.key'), INGOT_TLS_PORT: '0',
		INGOT_TLS_CLIENT_CA: F('clientca.pem'), INGOT_ADMIN_PORT: '-1', INGOT_ACCESS_LOG: '1',
		INGOT_THREADS: '1', ...extra,
	}, { command });
	srv.tlsPort = srv.listening.tls_port;
	return srv;
}

/** One HTTPS request over a fresh connection with node's TLS (client
 * certificate `who`, a session to offer): resolves {status, headers, json,
 * reused, session} or rejects if the handshake fails. */
function get(port, target, { who, session, requestId } = {}) {
	return new Promise((resolve, reject) => {
		const opts = { host: '127.0.0.1', port, servername: 'localhost', ca: fs.readFileSync(F('serverca.pem')), session };
		if (who) Object.assign(opts, { cert: fs.readFileSync(F(`${who}.pem`)), key: fs.readFileSync(F(`${who}.key`)) });
		const sock = tls.connect(opts);
		let newSession = null, buf = Buffer.alloc(0);
		sock.on('session', (s) => { newSession = s; });
		sock.on('secureConnect', () => {
			const id = requestId ? `X-Request-Id: ${requestId}\r\n` : '';
			sock.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n${id}Connection: close\r\n\r\n`);
		});
		sock.on('data', (d) => { buf = Buffer.concat([buf, d]); });
		sock.on('error', reject);
		sock.on('end', () => {
			const parsed = parseResponse(buf, { atEof: true });
			if (!parsed) return reject(new Error(`no response: ${buf.toString()}`));
			const r = parsed.response;
			resolve({ status: r.status, headers: r.headers, text: r.text, json: r.text ? JSON.parse(r.text) : null,
				reused: sock.isSessionReused(), session: newSession || sock.getSession() });
		});
	});
}

const header = (r, name) => r.headers[name.toLowerCase()];

for (const b of BACKENDS) {
	const skip = SKIP.skip ? SKIP : b.present ? {} : { skip: `${mbedBin} was not built (make TLS=mbedtls bin)` };
	describe(`mutual TLS (${b.name})`, skip, () => {
		let srv;
		before(async () => { srv = await startApp(b.tls); });

		test('the right client certificate is admitted: the handler reads its CN, the access log names it', T, async () => {
			const r = await get(srv.tlsPort, '/whoami', { who: 'alice', requestId: `mtls-alice-${b.name}` });
			assert.equal(r.status, 200, r.text);
			assert.deepEqual(r.json, { subject: 'alice.example', scheme: 'cert' });
			const line = await srv.waitLog((l) => l.msg === 'request' && l.request_id === `mtls-alice-${b.name}`);
			assert.equal(line.subject, 'alice.example');
			assert.equal(line.status, 200);
		});

		test('without a certificate: the handshake completes, open routes answer, the secured one is 401', T, async () => {
			const open = await get(srv.tlsPort, '/open');
			assert.equal(open.status, 204);
			const r = await get(srv.tlsPort, '/whoami', { requestId: `mtls-none-${b.name}` });
			assert.equal(r.status, 401, r.text);
			assert.equal(header(r, 'WWW-Authenticate'), 'MutualTLS realm="api"');
			assert.match(header(r, 'Content-Type'), /^application\/problem\+json/);
			const line = await srv.waitLog((l) => l.msg === 'request' && l.request_id === `mtls-none-${b.name}`);
			assert.equal(line.subject, undefined);
		});

		test("another CA's certificate is refused: 401, never its subject", T, async () => {
			const r = await get(srv.tlsPort, '/whoami', { who: 'mallory' });
			assert.equal(r.status, 401, r.text);
			assert.doesNotMatch(r.text, /mallory/);
			// The handshake went on without it: an open route still answers.
			assert.equal((await get(srv.tlsPort, '/open', { who: 'mallory' })).status, 204);
		});

		test('a session with a verified certificate is not resumed; one without is', T, async () => {
			const first = await get(srv.tlsPort, '/whoami', { who: 'alice' });
			assert.equal(first.status, 200);
			assert.ok(first.session, 'the server gave a session id');
			const again = await get(srv.tlsPort, '/whoami', { who: 'alice', session: first.session });
			assert.equal(again.reused, false, 'a certificate session must not resume');
			assert.equal(again.status, 200, again.text);
			assert.equal(again.json.subject, 'alice.example');
			// The cache works (so the refusal above is the certificate's): a
			// session without one resumes, and stays without a principal.
			const anon = await get(srv.tlsPort, '/open');
			const resumed = await get(srv.tlsPort, '/whoami', { session: anon.session });
			assert.equal(resumed.reused, true, 'a session without a certificate resumes');
			assert.equal(resumed.status, 401);
		});
	});
}

describe('INGOT_TLS_CLIENT_CA at the start', () => {
	test("a document with mutualTLS: HTTPS without it stops the start (exit 2); plain HTTP alone starts", { ...T, ...SKIP }, async () => {
		await makeCertificates();
		const command = await buildApp('bearssl');
		const env = { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', INGOT_ADMIN_PORT: '-1', INGOT_TLS_PORT: '0',
			INGOT_TLS_CERT: F('server.pem'), INGOT_TLS_KEY: F('server.key') };
		const r = await new Promise((resolve) => execFile(command, [], { env, timeout: 10000 },
			(err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr })));
		assert.equal(r.code, 2, r.out);
		assert.match(r.out, /the document's mutualTLS scheme needs INGOT_TLS_CLIENT_CA/);
		const plain = await startServer({ INGOT_ADMIN_PORT: '-1' }, { command });
		assert.equal(plain.listening.tls_port, undefined);
		await plain.stop();
	});


	test('without HTTPS it stops the start (exit 2)', T, async () => {
		await makeCertificates();
		const r = await runBinary([], { PORT: '0', INGOT_TLS_CLIENT_CA: F('clientca.pem') });
		assert.equal(r.code, 2, r.stdout + r.stderr);
		assert.match(r.stdout + r.stderr, /INGOT_TLS_CLIENT_CA needs HTTPS/);
	});

	test('a file without a certificate, or none at all, stops the start (exit 2) naming the setting', T, async () => {
		await makeCertificates();
		const base = { PORT: '0', INGOT_TLS_PORT: '0', INGOT_TLS_CERT: F('server.pem'), INGOT_TLS_KEY: F('server.key') };
		for (const file of [F('empty.pem'), F('missing.pem')]) {
			const r = await runBinary([], { ...base, INGOT_TLS_CLIENT_CA: file });
			assert.equal(r.code, 2, r.stdout + r.stderr);
			assert.match(r.stdout + r.stderr, /INGOT_TLS_CLIENT_CA/);
		}
	});
});
