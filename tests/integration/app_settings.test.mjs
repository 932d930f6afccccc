// An app's own settings, secrets and lifecycle hooks, through real binaries:
// the scaffold (tools/new-service, written and built in a temporary
// directory outside the repository; its settings.c declares GREETING and
// the secret API_KEY and all four hooks) and the reference service (its
// UPSTREAM, the runtime's secrets' NAME_FILE forms). --help, a flag, the
// environment, the _FILE form, a bad value, an init that fails, a secret
// never logged at debug level, and the hooks' order.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, runBinary, curlResponse, commandRunner, cleanup, freePort } from './lib.mjs';

const T = { timeout: 300000 };
// The scaffold builds its own binary; the sanitizer pass of tests/run
// (INGOT_BIN) would build the same again.
const SKIP = process.env.INGOT_BIN ? { skip: 'the scaffold builds its own binary; tested in the plain pass' } : {};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-appset-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

const { must } = commandRunner({ timeoutMs: 240000 });
const app = path.join(tmp, 'greeter');
const appBin = path.join(app, 'build', 'bin', 'greeter');
// A secret no log line may hold, and one the init refuses (too short).
const KEY = 'k3y-that-must-never-be-logged-7f1c';
const SHORT = 'sh0rt-k3y';

let built;
function buildApp() {
	built ??= (async () => {
		await must(path.join(ROOT, 'tools', 'new-service'), [app, 'greeter']);
		await must('make', ['--no-print-directory', '-C', app], { env: { ...process.env, INGOT_ROOT: ROOT } });
	})();
	return built;
}

function runApp(args, env = {}) {
	return new Promise((resolve) => {
		execFile(appBin, args, { env: { PATH: process.env.PATH, ...env }, timeout: 10000 }, (err, stdout, stderr) =>
			resolve({ code: err ? err.code : 0, stdout, stderr }));
	});
}

const startApp = (env = {}, opts = {}) => startServer(env, { command: appBin, threads: '1', ...opts });
const helloOf = async (srv) => JSON.parse((await curlResponse(srv.port, '/hello')).body).message;

test('--help lists the app\'s settings under its name, after the runtime\'s parts: the secret as "(secret)", with its _FILE row', { ...T, ...SKIP }, async () => {
	await buildApp();
	const r = await runApp(['--help']);
	assert.equal(r.code, 0, r.stderr);
	const blocks = r.stdout.split('\n\n');
	const heading = blocks.findIndex((b) => b.startsWith('greeter:\n'));
	assert.ok(heading > blocks.findIndex((b) => b.startsWith('server:\n')), 'after the runtime\'s parts');
	assert.ok(blocks[heading + 1].startsWith('commands:'), 'the last part, before the commands');
	const block = blocks[heading];
	assert.match(block, /^ {2}--greeting\s+GREETING\s+.*\(default: hello\)$/m);
	assert.match(block, /^ {2}--api-key\s+API_KEY\s+.*\(secret\)$/m);
	assert.match(block, /^ {2}--api-key-file\s+API_KEY_FILE\s+a file holding API_KEY \(secret\)$/m);
	assert.doesNotMatch(block, /INGOT_/, 'the app\'s names are its own');
});

test('a setting from the environment, from its flag (which wins), and the defaults with no environment at all', { ...T, ...SKIP }, async () => {
	await buildApp();
	let srv = await startApp({}, { bareEnv: true });
	assert.equal(await helloOf(srv), 'hello, world');
	assert.ok(srv.logs.some((l) => l.msg === 'app init' && l.api_key === 'not set'));
	await srv.stop();
	srv = await startApp({ GREETING: 'hi' });
	assert.equal(await helloOf(srv), 'hi, world');
	await srv.stop();
	srv = await startApp({ GREETING: 'hi' }, { args: ['--greeting', 'hey'] });
	assert.equal(await helloOf(srv), 'hey, world');
	await srv.stop();
});

test('a secret from API_KEY_FILE and from --api-key-file; never in a log line at debug level', { ...T, ...SKIP }, async () => {
	await buildApp();
	const file = path.join(tmp, 'api_key');
	fs.writeFileSync(file, `${KEY}\n`);
	const srv = await startApp({ API_KEY_FILE: file, INGOT_LOG_LEVEL: 'debug', INGOT_ACCESS_LOG: '1' });
	assert.ok(srv.logs.some((l) => l.msg === 'app init' && l.api_key === 'set'), srv.lines.join('\n'));
	assert.equal((await curlResponse(srv.port, `/hello?name=${KEY}x`)).status, 200);
	await srv.stop();
	const text = srv.lines.join('\n').replaceAll(`${KEY}x`, '') + srv.stderr;
	assert.ok(srv.logs.some((l) => l.level === 'debug'), 'debug lines were written');
	assert.ok(!text.includes(KEY), 'the secret is in no line');
	// --api-key-file: what the file holds reaches the init, which refuses
	// a short key without showing it.
	fs.writeFileSync(file, `${SHORT}\n`);
	const r = await runApp(['--api-key-file', file], { PORT: '0', HOST: '127.0.0.1' });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /API_KEY/);
	assert.ok(!(r.stdout + r.stderr).includes(SHORT));
});

test('a bad value exits 2 naming the setting, a secret\'s without its value; an init that fails exits 2 with the app\'s message and opens no listener', { ...T, ...SKIP }, async () => {
	await buildApp();
	let r = await runApp(['--greeting='], { PORT: '0', HOST: '127.0.0.1' });
	assert.equal(r.code, 2);
	assert.match(r.stderr, /--greeting/);
	r = await runApp([], { API_KEY: '', PORT: '0', HOST: '127.0.0.1' });
	assert.equal(r.code, 2);
	assert.match(r.stderr, /API_KEY/);
	r = await runApp([], { API_KEY: 'x', API_KEY_FILE: '/dev/null', PORT: '0', HOST: '127.0.0.1' });
	assert.equal(r.code, 2);
	assert.match(r.stderr, /API_KEY_FILE/);
	r = await runApp([], { API_KEY: SHORT, PORT: '0', HOST: '127.0.0.1', INGOT_LOG_LEVEL: 'debug' });
	assert.equal(r.code, 2);
	assert.match(r.stderr, /the app's init failed: API_KEY must have at least 16 characters/);
	assert.ok(!(r.stdout + r.stderr).includes(SHORT), 'not the value');
	assert.doesNotMatch(r.stdout, /"msg":"listening"/);
	r = await runApp(['--api-kye=' + KEY], { PORT: '0', HOST: '127.0.0.1' });
	assert.equal(r.code, 2);
	assert.match(r.stderr, /unknown flag "--api-kye"/);
	assert.ok(!r.stderr.includes(KEY), 'a mistyped flag\'s value is not echoed');
});

test('the hooks\' order: init, each core\'s core_init, "listening", "draining", drain, stopped, "stopped"', { ...T, ...SKIP }, async () => {
	await buildApp();
	const srv = await startApp({ INGOT_LOG_LEVEL: 'debug' }, { threads: '2' });
	assert.equal((await curlResponse(srv.port, '/hello')).status, 200);
	const x = await srv.stop();
	assert.equal(x.code, 0, srv.stderr);
	const at = (msg, pred = () => true) => srv.logs.findIndex((l) => l.msg === msg && pred(l));
	const cores = srv.logs.filter((l) => l.msg === 'app core init');
	assert.deepEqual(cores.map((l) => l.core).sort(), [0, 1], 'core_init once on each core');
	assert.ok(cores.every((l) => l.cores === 2));
	const order = [at('app init'), at('app core init', (l) => l.core === 0), at('listening'), at('draining'),
		at('app drain'), at('app stopped'), at('stopped')];
	assert.ok(order.every((i) => i >= 0), srv.lines.join('\n'));
	assert.deepEqual([...order].sort((a, b) => a - b), order, srv.lines.join('\n'));
	assert.ok(at('app core init', (l) => l.core === 1) < at('app drain'));
});

test('the reference service: UPSTREAM is the app\'s (no INGOT_ prefix, flag --upstream); INGOT_ADMIN_TOKEN_FILE (its newline stripped: the token matches) and DATABASE_URL_FILE are read, never shown', T, async () => {
	const help = await runBinary(['--help']);
	assert.match(help.stdout, /^ {2}--upstream\s+UPSTREAM\s/m);
	for (const name of ['INGOT_ADMIN_TOKEN', 'DATABASE_URL', 'INGOT_TLS_KEY_PEM'])
		assert.match(help.stdout, new RegExp(`^ {2}--\\S+\\s+${name}_FILE\\s+a file holding ${name} \\(secret\\)$`, 'm'));
	const token = path.join(tmp, 'admin_token');
	fs.writeFileSync(token, `${KEY}\n`);
	const srv = await startServer({ INGOT_ADMIN_TOKEN_FILE: token, INGOT_ADMIN_PORT: '0', INGOT_LOG_LEVEL: 'debug' });
	const admin = (await srv.waitLog((l) => l.msg === 'admin listening')).port;
	assert.equal((await curlResponse(admin, '/metrics')).status, 401);
	assert.equal((await curlResponse(admin, '/metrics', ['-H', `Authorization: Bearer ${KEY}`])).status, 200);
	await srv.stop();
	assert.ok(!(srv.lines.join('\n') + srv.stderr).includes(KEY), 'the token is in no line');
	const url = path.join(tmp, 'database_url');
	fs.writeFileSync(url, `mysql://u:${KEY}@127.0.0.1/db\n`);
	const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', DATABASE_URL_FILE: url });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /DATABASE_URL/);
	assert.ok(!(r.stdout + r.stderr).includes(KEY), 'the password is in no message');
	// A database that cannot be reached, at debug level: its lines name
	// the host and port, never the password.
	fs.writeFileSync(url, `postgres://u:${KEY}@127.0.0.1:${await freePort()}/db\n`);
	const db = await startServer({ DATABASE_URL_FILE: url, INGOT_LOG_LEVEL: 'debug' });
	await db.waitLog((l) => l.msg === 'database unreachable');
	assert.equal((await curlResponse(db.port, '/readyz')).status, 503, 'the database is a backend /readyz waits for');
	await db.stop();
	assert.ok(!(db.lines.join('\n') + db.stderr).includes(KEY), 'the password is in no line');
});

test('an app setting named with the runtime\'s INGOT_ prefix stops the start (exit 2), naming it', { ...T, ...SKIP }, async () => {
	await buildApp();
	const misnamed = path.join(tmp, 'misnamed');
	fs.cpSync(app, misnamed, { recursive: true });
	fs.rmSync(path.join(misnamed, 'build'), { recursive: true, force: true });
	const file = path.join(misnamed, 'settings.c');
	const source = fs.readFileSync(file, 'utf8');
	assert.ok(source.includes('IG_SETTING_STR("GREETING"'));
	fs.writeFileSync(file, source.replace('IG_SETTING_STR("GREETING"', 'IG_SETTING_STR("INGOT_GREETING"'));
	await must('make', ['--no-print-directory', '-C', misnamed], { env: { ...process.env, INGOT_ROOT: ROOT } });
	const bin = path.join(misnamed, 'build', 'bin', 'greeter');
	const r = await new Promise((resolve) => execFile(bin, [], { env: { PATH: process.env.PATH, PORT: '0' } },
		(err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr })));
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /INGOT_GREETING starts with INGOT_, the runtime's prefix/);
	assert.doesNotMatch(r.stdout, /"msg":"listening"/);
});
