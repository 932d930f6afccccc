// testssl.sh (Debian's testssl.sh package) against the service's TLS port,
// once per TLS backend (build/bin/service: BearSSL; build/bin/service-mbedtls
// when built; only INGOT_BIN when that is set) and per certificate the test
// makes with openssl (ECDSA P-256, RSA 2048): no weak protocol, only AEAD
// suites with ECDHE, nothing testssl.sh rates LOW or worse, no vulnerability.
// testssl.sh talks to 127.0.0.1 only: --ip, --nodns none, and without
// --phone-out it fetches no CRL or OCSP. Its text output and JSON findings
// are kept in build/test/testssl-<backend>.{txt,json}.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, commandRunner, needTools } from './lib.mjs';

const { run, must } = commandRunner({ timeoutMs: 240000 });
const REPORTS = path.join(ROOT, 'build', 'test');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-testssl-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

// The sanitizer pass of tests/run sets INGOT_BIN: then that binary only.
const BACKENDS = process.env.INGOT_BIN
	? [{ name: path.basename(process.env.INGOT_BIN).replace(/^service-?/, '') || 'bearssl', bin: process.env.INGOT_BIN }]
	: [
		{ name: 'bearssl', bin: path.join(ROOT, 'build', 'bin', 'service') },
		{ name: 'mbedtls', bin: path.join(ROOT, 'build', 'bin', 'service-mbedtls'), optional: 'make TLS=mbedtls bin' },
	];

const CERTS = {
	ecdsa: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
	rsa: ['-newkey', 'rsa:2048'],
};
const certFiles = {};
async function certificate(kind) {
	if (!certFiles[kind]) {
		const cert = path.join(tmp, `${kind}-cert.pem`);
		const key = path.join(tmp, `${kind}-key.pem`);
		await must('openssl', ['req', '-x509', ...CERTS[kind], '-nodes', '-keyout', key, '-out', cert, '-days', '2',
			'-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
		certFiles[kind] = { cert, key };
	}
	return certFiles[kind];
}

// -p protocols, -s cipher categories, -f forward secrecy, -E every suite per
// protocol, -U every vulnerability check. --warnings batch: never a prompt.
const TESTSSL_ARGS = ['--quiet', '--color', '0', '--warnings', 'batch', '--nodns', 'none', '--ip', '127.0.0.1',
	'--connect-timeout', '10', '--openssl-timeout', '10', '-p', '-s', '-f', '-E', '-U'];

// One scan per backend and certificate, shared by the tests that read it.
const scans = new Map();
const reports = new Map(); // backend -> {text: [], json: {}}
function scan(backend, kind) {
	const k = `${backend.name}/${kind}`;
	if (!scans.has(k)) scans.set(k, runScan(backend, kind));
	return scans.get(k);
}

async function runScan(backend, kind) {
	await needTools('testssl', 'openssl');
	const { cert, key } = await certificate(kind);
	const srv = await startServer({ INGOT_TLS_CERT: cert, INGOT_TLS_KEY: key, INGOT_TLS_PORT: '0' },
		{ command: backend.bin, threads: '1' });
	try {
		const port = srv.listening.tls_port;
		assert.ok(Number.isInteger(port) && port > 0,
			`no tls_port in the "listening" line: ${JSON.stringify(srv.listening)}`);
		const jsonFile = path.join(tmp, `${backend.name}-${kind}.json`);
		const r = await run('testssl', [...TESTSSL_ARGS, '--jsonfile', jsonFile, `127.0.0.1:${port}`],
			{ env: { PATH: process.env.PATH, HOME: tmp, TERM: 'dumb', LC_ALL: 'C.UTF-8' } });
		assert.ok(fs.existsSync(jsonFile), `testssl wrote no findings (exit ${r.code}): ${r.stderr}${r.stdout}`);
		const findings = JSON.parse(fs.readFileSync(jsonFile, 'utf8'));
		const rep = reports.get(backend.name) || { text: [], json: {} };
		reports.set(backend.name, rep);
		rep.text.push(`==== ${backend.name}, ${kind} certificate: testssl ${TESTSSL_ARGS.join(' ')} 127.0.0.1:${port}\n` +
			`==== the server's "listening" line: ${JSON.stringify(srv.listening)}\n${r.stdout}${r.stderr}`);
		rep.json[kind] = findings;
		fs.mkdirSync(REPORTS, { recursive: true });
		fs.writeFileSync(path.join(REPORTS, `testssl-${backend.name}.txt`), rep.text.join('\n'));
		fs.writeFileSync(path.join(REPORTS, `testssl-${backend.name}.json`), JSON.stringify(rep.json, null, 1));
		return { findings, byId: new Map(findings.map((f) => [f.id, f])) };
	} finally {
		await srv.stop();
	}
}

const show = (f) => `${f.id} [${f.severity}] ${f.finding}`;
const WEAK_PROTOCOLS = ['SSLv2', 'SSLv3', 'TLS1', 'TLS1_1'];
const WEAK_CIPHERS = ['cipherlist_NULL', 'cipherlist_aNULL', 'cipherlist_EXPORT', 'cipherlist_LOW',
	'cipherlist_3DES_IDEA', 'cipherlist_AVERAGE'];
const VULNERABILITIES = ['heartbleed', 'CCS', 'ticketbleed', 'ROBOT', 'secure_renego', 'secure_client_renego',
	'CRIME_TLS', 'BREACH', 'POODLE_SSL', 'fallback_SCSV', 'SWEET32', 'FREAK', 'DROWN', 'LOGJAM', 'BEAST',
	'LUCKY13', 'RC4'];
// testssl.sh's own scale; WARN means a check could not be done.
const BAD_SEVERITY = new Set(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL', 'WARN', 'FATAL']);

for (const backend of BACKENDS) {
	const absent = !fs.existsSync(backend.bin);
	const opts = { timeout: 300000, ...(absent && backend.optional ? { skip: `${backend.bin} not built (${backend.optional})` } : {}) };
	for (const kind of Object.keys(CERTS)) {
		const name = `${backend.name}, ${kind} certificate`;

		test(`${name}: testssl.sh completes a scan of the TLS port (build/test/testssl-${backend.name}.txt)`, opts, async () => {
			const { byId } = await scan(backend, kind);
			for (const id of ['TLS1_2', 'cipherlist_STRONG', 'heartbleed', 'LUCKY13', 'scanTime']) {
				assert.ok(byId.has(id), `no "${id}" finding: the scan stopped early`);
			}
		});

		test(`${name}: no SSLv2, SSLv3, TLS 1.0 or TLS 1.1; TLS 1.2 offered`, opts, async () => {
			const { byId } = await scan(backend, kind);
			for (const id of WEAK_PROTOCOLS) {
				assert.match(byId.get(id)?.finding ?? 'missing', /^not offered/, show(byId.get(id) ?? { id }));
			}
			assert.match(byId.get('TLS1_2').finding, /^offered/, show(byId.get('TLS1_2')));
		});

		test(`${name}: only AEAD suites with ECDHE (no NULL, export, LOW, 3DES, CBC, RC4, static RSA)`, opts, async () => {
			const { findings, byId } = await scan(backend, kind);
			for (const id of WEAK_CIPHERS) {
				assert.match(byId.get(id)?.finding ?? 'missing', /^not offered/, show(byId.get(id) ?? { id }));
			}
			// -E: "TLS 1.2   xc02b   ECDHE-ECDSA-AES128-GCM-SHA256   ECDH 253   AESGCM   128   TLS_ECDHE_..."
			const suites = findings.filter((f) => f.id.startsWith('cipher-')).map((f) => f.finding.trim().split(/\s+/).pop());
			assert.ok(suites.length > 0, 'testssl -E listed no suite');
			const bad = suites.filter((s) => !/^TLS_ECDHE_(ECDSA|RSA)_WITH_\w*(_GCM_|CHACHA20_POLY1305|_CCM)/.test(s));
			assert.deepEqual(bad, [], `offered: ${suites.join(', ')}`);
		});

		test(`${name}: no vulnerability (Heartbleed, CCS, Ticketbleed, ROBOT, renegotiation, CRIME, BREACH, POODLE, ...)`, opts, async () => {
			const { byId } = await scan(backend, kind);
			const flagged = VULNERABILITIES.map((id) => byId.get(id) ?? { id, severity: 'missing', finding: '' })
				.filter((f) => !['OK', 'INFO'].includes(f.severity) || /VULNERABLE/.test(f.finding));
			assert.deepEqual(flagged.map(show), []);
		});

		test(`${name}: no finding testssl.sh rates LOW or worse, no check it could not do`, opts, async () => {
			const { findings } = await scan(backend, kind);
			assert.deepEqual(findings.filter((f) => BAD_SEVERITY.has(f.severity)).map(show), []);
		});
	}
}
