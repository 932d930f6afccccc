// SIGHUP re-reads the HTTPS certificate and key (issue 25, item 9), against
// every TLS backend built, as tls.test.mjs runs them: build/bin/service
// (BearSSL) and, when it exists, build/bin/service-mbedtls. Two self-signed
// certificates with known serials are made here with openssl; the files are
// replaced under the running server. Every wait is for an event (a log
// line, a handshake, an exit); timeouts bound waits, they never order them.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { ROOT, startServer, cleanup, commandRunner, needTools, RawClient, req, within } from './lib.mjs';

const { must } = commandRunner({ timeoutMs: 30000 });
const T = { timeout: 60000 };

const BINARIES = [
	{ name: 'bearssl', bin: process.env.INGOT_BIN || path.join(ROOT, 'build', 'bin', 'service') },
	{ name: 'mbedtls', bin: process.env.INGOT_BIN_MBEDTLS || path.join(ROOT, 'build', 'bin', 'service-mbedtls'), optional: true },
].filter((b) => !b.optional || fs.existsSync(b.bin));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-tls-reload-'));
const F = (name) => path.join(tmp, name);
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

// Serials as openssl x509 -serial prints them.
const SERIALS = { one: '1111AAAA', two: '2222BBBB' };

async function makeCertificates() {
	await needTools('openssl');
	for (const [name, serial] of Object.entries(SERIALS)) {
		await must('openssl', ['req', '-x509', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
			'-keyout', F(`${name}.key`), '-out', F(`${name}.pem`), '-days', '2', '-subj', `/CN=localhost ${name}`,
			'-set_serial', `0x${serial}`, '-addext', 'basicConstraints=critical,CA:FALSE',
			'-addext', 'keyUsage=critical,digitalSignature', '-addext', 'extendedKeyUsage=serverAuth',
			'-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
	}
}
const certsMade = makeCertificates();

/** The server's files, which each test replaces: a directory of its own. */
function liveFiles(dir, name) {
	fs.mkdirSync(dir, { recursive: true });
	const cert = path.join(dir, 'cert.pem'), key = path.join(dir, 'key.pem');
	const put = (n) => {
		fs.copyFileSync(F(`${n}.pem`), cert);
		fs.copyFileSync(F(`${n}.key`), key);
	};
	put(name);
	return { cert, key, put };
}

/** The serial of the leaf certificate a new connection is shown, read by
 * openssl s_client (stdin at EOF: it handshakes and leaves). */
async function servedSerial(port, where) {
	const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost'],
		{ stdio: ['ignore', 'pipe', 'pipe'] });
	let out = '';
	p.stdout.setEncoding('utf8');
	p.stderr.setEncoding('utf8');
	p.stdout.on('data', (d) => { out += d; });
	p.stderr.on('data', (d) => { out += d; });
	await within(20000, new Promise((resolve) => p.on('close', resolve)), 'openssl s_client');
	const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/.exec(out);
	assert.ok(pem, `a certificate in s_client's output: ${out}`);
	fs.writeFileSync(where, pem[0]);
	const stdout = await must('openssl', ['x509', '-in', where, '-noout', '-serial']);
	return /serial=(\S+)/.exec(stdout)[1].toUpperCase();
}

/** A node TLS connection (the certificates are self-signed: not verified
 * here, s_client tells which one was served). */
async function tlsConnect(port, opts = {}) {
	const sock = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false,
		ALPNProtocols: ['http/1.1'], ...opts });
	await new Promise((resolve, reject) => {
		sock.once('secureConnect', resolve);
		sock.once('error', reject);
	});
	return sock;
}

/** One request on a connection, then the TLS session it resumed or made. */
async function sessionOf(port, session) {
	const sock = await tlsConnect(port, session ? { session } : {});
	const c = new RawClient(sock);
	await c.write(req('GET', '/json', { headers: ['Connection: close'] }));
	const r = await c.response();
	assert.equal(r.status, 200);
	const reused = sock.isSessionReused();
	const got = sock.getSession();
	await c.waitClosed();
	return { reused, session: got };
}

for (const b of BINARIES) {
	describe(`reload (${b.name})`, () => {
		test('SIGHUP: new connections get the new certificate and a new session cache, an open one keeps working; a broken file keeps the old', T, async () => {
			await certsMade;
			const dir = F(`live-${b.name}`);
			const files = liveFiles(dir, 'one');
			// Two cores where the session cache is shared (BearSSL), so that
			// each must adopt the new certificate; one where it is per core
			// (mbedtls), so that a session resumes whichever core answers.
			const threads = b.name === 'bearssl' ? '2' : '1';
			const srv = await startServer({ INGOT_TLS_CERT: files.cert, INGOT_TLS_KEY: files.key, INGOT_TLS_PORT: '0' },
				{ command: b.bin, threads });
			const port = srv.listening.tls_port;
			assert.equal(await servedSerial(port, path.join(dir, 'seen.pem')), SERIALS.one);
			// A session that resumes: the check below, that it no longer
			// does after the reload, could fail.
			const first = await sessionOf(port);
			assert.equal((await sessionOf(port, first.session)).reused, true, 'a session resumes before the reload');

			const open = new RawClient(await tlsConnect(port));
			await open.write(req('GET', '/json'));
			assert.equal((await open.response()).status, 200);

			files.put('two');
			let mark = srv.mark();
			srv.signal('SIGHUP');
			const done = await within(20000, srv.waitLog((l) => l.msg === 'TLS certificate reloaded', mark), 'the reload line');
			assert.equal(done.level, 'info');
			assert.equal(done.cert, files.cert);
			assert.equal(done.serial, SERIALS.two);
			assert.equal(await servedSerial(port, path.join(dir, 'seen.pem')), SERIALS.two);
			assert.equal((await sessionOf(port, first.session)).reused, false, 'an old session does not resume');

			await open.write(req('GET', '/json'));
			assert.equal((await open.response()).status, 200, 'the connection opened before the reload still serves');

			fs.writeFileSync(files.cert, '-----BEGIN CERTIFICATE-----\nthis is not base64!\n-----END CERTIFICATE-----\n');
			mark = srv.mark();
			srv.signal('SIGHUP');
			const failed = await within(20000, srv.waitLog((l) => l.msg.startsWith('TLS reload failed'), mark), 'the error line');
			assert.equal(failed.level, 'error');
			assert.match(failed.error, /certificate/);
			assert.equal(await servedSerial(port, path.join(dir, 'seen.pem')), SERIALS.two, 'the old certificate stays');

			// A key that is not the certificate's: refused the same way.
			fs.copyFileSync(F('two.pem'), files.cert);
			fs.copyFileSync(F('one.key'), files.key);
			mark = srv.mark();
			srv.signal('SIGHUP');
			const mismatch = await within(20000, srv.waitLog((l) => l.msg.startsWith('TLS reload failed'), mark), 'the error line');
			assert.match(mismatch.error, /private key/);
			assert.equal(await servedSerial(port, path.join(dir, 'seen.pem')), SERIALS.two);

			await open.write(req('GET', '/json', { headers: ['Connection: close'] }));
			assert.equal((await open.response()).status, 200);
			const x = await srv.stop();
			assert.equal(x.code, 0, srv.lines.join('\n'));
		});

		test('SIGHUP with the material given as _PEM variables: one line says it cannot change', T, async () => {
			await certsMade;
			const srv = await startServer({ INGOT_TLS_CERT_PEM: fs.readFileSync(F('one.pem'), 'utf8'),
				INGOT_TLS_KEY_PEM: fs.readFileSync(F('one.key'), 'utf8'), INGOT_TLS_PORT: '0' }, { command: b.bin });
			const mark = srv.mark();
			srv.signal('SIGHUP');
			const l = await within(20000, srv.waitLog((x) => x.msg === 'SIGHUP: TLS material not reloaded', mark), 'the line');
			assert.match(l.reason, /INGOT_TLS_CERT_PEM/);
			assert.equal(await servedSerial(srv.listening.tls_port, F(`pem-${b.name}.pem`)), SERIALS.one);
			assert.equal((await srv.stop()).code, 0);
		});
	});
}

test('SIGHUP without TLS: one line, nothing to reload, and the server goes on', T, async () => {
	const srv = await startServer({});
	const mark = srv.mark();
	srv.signal('SIGHUP');
	const l = await within(20000, srv.waitLog((x) => x.msg === 'SIGHUP: nothing to reload', mark), 'the line');
	assert.equal(l.reason, 'TLS is off');
	const c = await RawClient.connect(srv.port);
	await c.write(req('GET', '/json', { headers: ['Connection: close'] }));
	assert.equal((await c.response()).status, 200);
	assert.equal((await srv.stop()).code, 0);
});
