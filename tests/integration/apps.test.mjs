// Apps outside the tree (tools/make/app.mk, tools/new-service): the
// scaffold written into a temporary directory outside the repository, built,
// served by `make run` and curled, its handler test run by `make test` (and
// with --db, its database example's test against a real PostgreSQL), its
// image inspected by skopeo; a non-empty directory refused; and the todo app
// (tests/apps/todo) copied out of the tree, built there against this ingot
// (INGOT_ROOT) and exercised over HTTP, its outbound call to a loopback
// upstream of the test's. The runtime's objects are ingot's own (build/).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT, curl, within, commandRunner, needTools, freePort, ingotVersion, startServer } from './lib.mjs';
import { startPostgres } from './pglib.mjs';
import { memoryMap } from '../../tools/linkmap.js';

const T = { timeout: 300000 };
// The apps are built here, static; the sanitizer pass of tests/run
// (INGOT_BIN) would build and test the same again.
const SKIP = process.env.INGOT_BIN ? { skip: 'the apps build their own binaries; tested in the plain pass' } : {};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-apps-'));
const servers = new Set();
after(() => {
	for (const s of servers) s.stop();
	fs.rmSync(tmp, { recursive: true, force: true });
});

const { run, must } = commandRunner({ timeoutMs: 240000 });
const make = (dir, ...args) => must('make', ['--no-print-directory', '-j2', '-C', dir, ...args],
	{ env: { ...process.env, INGOT_ROOT: ROOT } });

// `make -C dir run` (or command) on a free port, in a process group of its own so that
// it is stopped (make and the service under it) by its PID; ready once the
// service logs "listening" with that port.
async function makeRun(dir, env = {}, command = ['make', '--no-print-directory', '-C', dir, 'run']) {
	const port = await freePort();
	const child = spawn(command[0], command.slice(1), {
		env: { ...process.env, INGOT_ROOT: ROOT, PORT: String(port), HOST: '127.0.0.1', INGOT_ADMIN_PORT: '-1', ...env },
		detached: true, stdio: ['ignore', 'pipe', 'pipe'],
	});
	let out = '';
	// 'close', not 'exit': make ends at once on SIGTERM, the service under it
	// after its drain, and its last lines come after make's exit.
	const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
	const ready = new Promise((resolve, reject) => {
		const look = (chunk) => {
			out += chunk;
			for (const line of out.split('\n')) {
				if (!line.startsWith('{')) continue;
				try {
					const j = JSON.parse(line);
					if (j.msg === 'listening' && j.port === port) resolve(j);
				} catch { /* a line still arriving */ }
			}
		};
		child.stdout.on('data', look);
		child.stderr.on('data', look);
		exited.then(() => reject(new Error(`make run ended before listening:\n${out}`)));
	});
	const server = {
		port, ready, exited,
		stop() { try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone already */ } },
		output: () => out,
	};
	servers.add(server);
	await within(120000, ready, `make -C ${dir} run listening on ${port}`);
	return server;
}

async function stopServer(s) {
	s.stop();
	await within(30000, s.exited, 'make run ending on SIGTERM');
	servers.delete(s);
	assert.match(s.output(), /"msg":"stopped"/, 'the service drained and stopped');
}

async function call(port, method, target, body) {
	const args = ['-i', '-X', method, `http://127.0.0.1:${port}${target}`];
	if (body !== undefined) args.push('-H', 'Content-Type: application/json', '--data-binary', body);
	const r = await curl(args);
	assert.equal(r.code, 0, r.stderr);
	const text = r.stdout.toString();
	const split = text.indexOf('\r\n\r\n');
	const head = text.slice(0, split).split('\r\n');
	const headers = Object.fromEntries(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(),
		l.slice(l.indexOf(':') + 1).trim()]));
	const raw = text.slice(split + 4);
	return { status: Number(head[0].split(' ')[1]), headers, raw, json: raw ? JSON.parse(raw) : undefined };
}

const scaffold = path.join(tmp, 'hello-app');

test('tools/new-service writes an app outside the tree that builds to build/bin/NAME', { ...T, ...SKIP }, async () => {
	await must(path.join(ROOT, 'tools', 'new-service'), [scaffold, 'hello']);
	for (const f of ['Makefile', 'handlers.c', 'README.md', '.gitignore', 'tests/handlers_test.c'])
		assert.ok(fs.existsSync(path.join(scaffold, f)), `${f} written`);
	assert.ok(fs.existsSync(path.join(scaffold, 'openapi.yaml')), 'the document is YAML');
	assert.equal(fs.readFileSync(path.join(scaffold, '.gitignore'), 'utf8'), 'build/\n');
	assert.ok(fs.readFileSync(path.join(scaffold, 'README.md'), 'utf8').trim().split('\n').length <= 10);
	await make(scaffold);
	const bin = path.join(scaffold, 'build', 'bin', 'hello');
	const v = (await must(bin, ['--version'])).split('\n');
	assert.equal(v[0], 'hello 0.1.0');
	assert.equal(v[1], `ingot ${ingotVersion()}`);
	// The runtime's objects are ingot's: nothing of it was compiled into the app's build/.
	assert.ok(!fs.existsSync(path.join(scaffold, 'build', 'obj', 'net')), 'no runtime objects in the app');
});

test('make run serves the scaffold: GET, POST, and a body without the required property is 400 problem+json', { ...T, ...SKIP }, async () => {
	const s = await makeRun(scaffold);
	let r = await call(s.port, 'GET', '/hello');
	assert.equal(r.status, 200);
	assert.deepEqual(r.json, { message: 'hello, world' });
	r = await call(s.port, 'GET', '/hello?name=ingot');
	assert.deepEqual(r.json, { message: 'hello, ingot' });
	r = await call(s.port, 'POST', '/greetings', '{"name":"ann"}');
	assert.equal(r.status, 201);
	assert.deepEqual(r.json, { message: 'hello, ann' });
	r = await call(s.port, 'POST', '/greetings', '{}');
	assert.equal(r.status, 400);
	assert.equal(r.headers['content-type'], 'application/problem+json');
	assert.equal(r.json.errors[0].pointer, '/name');
	assert.equal(r.json.errors[0].keyword, 'required');
	await stopServer(s);
});

// An operationId is the handler's C name, not its symbol (schemac's asm
// label makes it ig_op_<id>): a handler called recv no longer replaces
// libc's recv(), which net/sock reads every request with.
test('a handler named like a libc function (recv) builds, passes its test and answers: it does not replace libc\'s', { ...T, ...SKIP }, async () => {
	const app = path.join(tmp, 'recv-app');
	await must(path.join(ROOT, 'tools', 'new-service'), [app, 'hello']);
	for (const f of ['openapi.yaml', 'handlers.c']) {
		const file = path.join(app, f);
		const text = fs.readFileSync(file, 'utf8');
		assert.match(text, /\bgetHello\b/, `${f} names getHello`);
		// The operationId, the handler and its getHello_in/_out structs.
		fs.writeFileSync(file, text.replaceAll('getHello', 'recv'));
	}
	await make(app);
	// The handler test's build (host compiler, ASan) honours the label too.
	assert.match(await make(app, 'test'), /handler tests passed/);
	const s = await makeRun(app);
	const r = await call(s.port, 'GET', '/hello?name=recv');
	assert.equal(r.status, 200);
	assert.deepEqual(r.json, { message: 'hello, recv' });
	await stopServer(s);
});

// A handler that crashes: one error line names the signal and the request
// the thread was running, then the process ends by that signal, as it did
// without the line. Reuses the app above, its handler made to fault.
test('a handler that faults: one "fatal signal" line with the signal, request id, method, route and operation, then the process ends by SIGSEGV', { ...T, ...SKIP }, async () => {
	const app = path.join(tmp, 'recv-app');
	const file = path.join(app, 'handlers.c');
	const text = fs.readFileSync(file, 'utf8');
	const at = text.indexOf('{', text.indexOf('int recv(')) + 1;
	assert.ok(at > 0, 'handlers.c defines recv');
	fs.writeFileSync(file, `${text.slice(0, at)}
	int *volatile nowhere = NULL; /* volatile, and the store too: gcc may drop neither */
	if (in->has_name && in->name.len == 5 && memcmp(in->name.ptr, "crash", 5) == 0)
		*(volatile int *)nowhere = 1;${text.slice(at)}`);
	await make(app);
	const port = await freePort();
	const child = spawn(path.join(app, 'build', 'bin', 'hello'), [], {
		env: { PORT: String(port), HOST: '127.0.0.1', INGOT_ADMIN_PORT: '-1', INGOT_THREADS: '2' },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let out = '';
	const listening = new Promise((resolve) => child.stdout.on('data', (d) => {
		out += d;
		if (/"msg":"listening"/.test(out)) resolve();
	}));
	const ended = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
	await within(30000, listening, 'listening');
	assert.equal((await call(port, 'GET', '/hello?name=ok')).status, 200);
	const r = await curl(['-s', '-H', 'X-Request-Id: crash-test-1', `http://127.0.0.1:${port}/hello?name=crash`]);
	assert.notEqual(r.code, 0, 'no answer: the process died');
	const { code, signal } = await within(30000, ended, 'the process ending');
	assert.deepEqual({ code, signal }, { code: null, signal: 'SIGSEGV' });
	const lines = out.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.msg === 'fatal signal');
	assert.equal(lines.length, 1, out);
	assert.deepEqual({ ...lines[0], ts: undefined }, { ts: undefined, level: 'error', msg: 'fatal signal',
		signal: 'SIGSEGV', from: 'fault', request_id: 'crash-test-1', method: 'GET', route: '/hello', operation: 'recv' });
});

// The parts an app links only when its code calls them, by the objects the
// link map (build/bin/NAME.map) places in the binary: its memory map names
// every input section kept, with its address, size and object (an archive
// member pulled in but left out by --gc-sections shows only its .comment).
const OPTIONAL_PARTS = { 'net/pg': /\/net\/pg\/[^/\s]+\.o$/, 'net/client': /\/net\/client\/[^/\s]+\.o$/,
	'trust anchors': /\/gen\/anchors\.o$/, 'the TLS client handshake': /libbearssl\.a\(ssl_hs_client\.o\)$/,
	'SQS and push delivery': /\/net\/pubsub\/(sqs|push)[a-z_]*\.o$/ };
function linkedParts(map) {
	const kept = new Set(memoryMap(map).filter((s) => s.start && s.size && !/^\.(comment|note|debug|gnu)/.test(s.input))
		.map((s) => s.object));
	assert.ok(kept.size > 20, `${map}: objects found`);
	return Object.keys(OPTIONAL_PARTS).filter((part) => [...kept].some((o) => OPTIONAL_PARTS[part].test(o)));
}

test('the scaffold links neither the database client, the outbound client, the trust anchors, the TLS client nor Pub/Sub\'s SQS and push delivery', { ...T, ...SKIP }, async () => {
	assert.deepEqual(linkedParts(path.join(scaffold, 'build', 'bin', 'hello.map')), []);
	// The reference service calls both: the same check finds them there.
	await must('make', ['--no-print-directory', '-C', ROOT, 'bin']);
	assert.deepEqual(linkedParts(path.join(ROOT, 'build', 'bin', 'service.map')), Object.keys(OPTIONAL_PARTS));
});

test('the scaffold starts with the database\'s settings set: one warning names them; an unknown INGOT_ name gets one of its own; strict mode still starts for the unlinked ones', { ...T, ...SKIP }, async () => {
	const bin = path.join(scaffold, 'build', 'bin', 'hello');
	const help = await must(bin, ['--help']);
	assert.doesNotMatch(help, /DATABASE_URL|INGOT_PG_|INGOT_CLIENT_|INGOT_DNS_PORT|INGOT_TLS_CA_FILE/,
		'--help lists only what is linked');
	assert.match(help, /INGOT_THREADS/);
	const unlinked = { DATABASE_URL: 'postgres://u@127.0.0.1:1/db', INGOT_PG_POOL_SIZE: '3', INGOT_CLIENT_CONNECTIONS: '2' };
	const warningsOf = (s) => s.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
		.filter((j) => j.level === 'warn');
	let s = await makeRun(scaffold, { ...unlinked, INGOT_NOT_A_SETTING: '1' });
	assert.equal((await call(s.port, 'GET', '/hello')).status, 200);
	await stopServer(s);
	let warnings = warningsOf(s);
	assert.equal(warnings.length, 2, s.output());
	assert.equal(warnings.find((w) => w.ignored).ignored, 'INGOT_CLIENT_CONNECTIONS,DATABASE_URL,INGOT_PG_POOL_SIZE');
	// A name no part declares, linked or not: no suggestion this far from any.
	const unknown = warnings.find((w) => w.name);
	assert.deepEqual([unknown.name, unknown.did_you_mean], ['INGOT_NOT_A_SETTING', undefined]);
	// Strict mode refuses unknown names only: those of unlinked parts still warn.
	s = await makeRun(scaffold, { ...unlinked, INGOT_STRICT_ENV: 'true' });
	assert.equal((await call(s.port, 'GET', '/hello')).status, 200);
	await stopServer(s);
	warnings = warningsOf(s);
	assert.equal(warnings.length, 1, s.output());
	assert.ok(warnings[0].ignored);
});

test('the names warned about are the settings of the parts that may be left out, as the reference service lists them', { ...T, ...SKIP }, async () => {
	// net/unlinked.c's lists against the rows of the binary that links every part.
	const src = fs.readFileSync(path.join(ROOT, 'net', 'unlinked.c'), 'utf8');
	const listed = (name) => src.match(new RegExp(`${name}\\[\\] =([^;]*);`))[1].replace(/"\s*"/g, '')
		.match(/"([^"]*)"/)[1].split(' ');
	await must('make', ['--no-print-directory', '-C', ROOT, 'bin']);
	const help = await must(path.join(ROOT, 'build', 'bin', 'service'), ['--help']);
	const rows = (part) => {
		const block = help.split('\n\n').find((b) => b.startsWith(`${part}:`));
		assert.ok(block, `--help has ${part}`);
		return [...block.matchAll(/^ {2}--\S+\s+([A-Z_]+)\s/gm)].map((m) => m[1]);
	};
	assert.deepEqual(listed('client_names'), rows('client'));
	assert.deepEqual(listed('dns_names'), rows('DNS'));
	assert.deepEqual(listed('trust_names'), rows('TLS trust (outbound https)'));
	assert.deepEqual(listed('pg_names'), rows('database (PostgreSQL)'));
});

test('make test runs the scaffold\'s handler test under ASan and UBSan, and fails when a handler is wrong', { ...T, ...SKIP }, async () => {
	const out = await make(scaffold, 'test');
	assert.match(out, /handler tests passed/);
	// The same test against a broken handler must fail: it checks the answers.
	const broken = path.join(tmp, 'broken-app');
	fs.cpSync(scaffold, broken, { recursive: true });
	fs.rmSync(path.join(broken, 'build'), { recursive: true, force: true });
	const h = path.join(broken, 'handlers.c');
	const source = fs.readFileSync(h, 'utf8');
	assert.ok(source.includes('", ", 2'), 'the line to break is there');
	fs.writeFileSync(h, source.replace('", ", 2', '"; ", 2'));
	const r = await run('make', ['--no-print-directory', '-C', broken, 'test'], { env: { ...process.env, INGOT_ROOT: ROOT } });
	assert.notEqual(r.code, 0);
	assert.match(r.stderr + r.stdout, /FAIL GET \/hello/);
	// Responses are checked against the document, as in the reference
	// service's ASan build: a message declared a date-time that the handler
	// fills with something else is a 500 there, so the test fails.
	const offDoc = path.join(tmp, 'off-document-app');
	fs.cpSync(scaffold, offDoc, { recursive: true });
	fs.rmSync(path.join(offDoc, 'build'), { recursive: true, force: true });
	const y = path.join(offDoc, 'openapi.yaml');
	const doc = fs.readFileSync(y, 'utf8');
	assert.ok(doc.includes('message: { type: string }'), 'the scaffold\'s Greeting');
	fs.writeFileSync(y, doc.replace('message: { type: string }', 'message: { type: string, format: date-time }'));
	const d = await run('make', ['--no-print-directory', '-C', offDoc, 'test'], { env: { ...process.env, INGOT_ROOT: ROOT } });
	assert.notEqual(d.code, 0, d.stdout + d.stderr);
	assert.match(d.stderr + d.stdout, /FAIL GET \/hello/);
	assert.match(d.stderr + d.stdout, /response does not match its schema/);
});

test('tools/new-service --db: a migration, notes.c\'s two routes and their test, which make test runs against a migrated database: the local cluster\'s throwaway one, or a fresh one on DATABASE_URL\'s server', { ...T, ...SKIP }, async () => {
	for (const f of ['migrations', 'queries', 'notes.c', 'tests/notes_test.c'])
		assert.ok(!fs.existsSync(path.join(scaffold, f)), `no ${f} without --db`);
	const app = path.join(tmp, 'notes-app');
	await must(path.join(ROOT, 'tools', 'new-service'), ['--db', app, 'notes']);
	for (const f of ['migrations/001_notes.sql', 'queries/notes.sql', 'notes.c', 'tests/notes_test.c', 'tests/handlers_test.c'])
		assert.ok(fs.existsSync(path.join(app, f)), `${f} written`);
	const doc = YAML.parse(fs.readFileSync(path.join(app, 'openapi.yaml'), 'utf8'));
	assert.deepEqual(Object.keys(doc.paths), ['/hello', '/greetings', '/notes', '/notes/{id}']);
	assert.deepEqual([doc.paths['/notes'].post.operationId, doc.paths['/notes/{id}'].get.operationId], ['createNote', 'getNote']);
	// No DATABASE_URL: tools/pg-local's cluster, a database made for the run.
	const env = { ...process.env, INGOT_ROOT: ROOT };
	delete env.DATABASE_URL;
	const local = await run('make', ['--no-print-directory', '-C', app, 'test'], { env });
	assert.equal(local.code, 0, local.stdout + local.stderr);
	assert.match(local.stdout, /notes tests passed/);
	assert.match(local.stdout, /handler tests passed/);
	// DATABASE_URL set: a fresh database on its server, made by its role,
	// migrated by the app's binary, tested, dropped; the URL's own database
	// is never touched.
	const pg = await startPostgres();
	try {
		const without = await run('make', ['--no-print-directory', '-C', app, 'test'], { env: { ...env, DATABASE_URL: pg.url } });
		assert.notEqual(without.code, 0, 'a role without CREATEDB cannot make the test database');
		assert.match(without.stderr, /could not create the test database \(it needs CREATEDB\)/);
		await pg.psql('ALTER ROLE ingot CREATEDB;');
		const r = await run('make', ['--no-print-directory', '-C', app, 'test'], { env: { ...env, DATABASE_URL: pg.url } });
		assert.equal(r.code, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /notes tests passed/);
		const made = /testing in a fresh database on its server, (\w+)/.exec(r.stderr);
		assert.ok(made, r.stderr);
		assert.equal((await pg.psql(`SELECT count(*) FROM pg_database WHERE datname = '${made[1]}';`)).trim(), '0',
			'the test database is dropped');
		assert.equal((await pg.psql("SELECT to_regclass('notes') IS NULL;", { database: 'ingot' })).trim(), 't',
			"the URL's own database is not migrated");
		// The test checks the answers: against a database without the table it fails.
		const bin = path.join(app, 'build', 'test', 'notes_test');
		const bad = await run(bin, [], { env: { ...env, DATABASE_URL: pg.url } });
		assert.notEqual(bad.code, 0);
		assert.match(bad.stderr, /FAIL POST \/notes/);
	} finally {
		await pg.stop();
	}
});

test('two --db apps, both with a 001 migration, served at once beside the reference service: each migrated in a database of its own, named after it; one taken to another\'s database is refused', { ...T, ...SKIP }, async () => {
	const apps = ['notes-one', 'notes-two'].map((name) => ({ name, dir: path.join(tmp, name) }));
	for (const a of apps) {
		await must(path.join(ROOT, 'tools', 'new-service'), ['--db', a.dir, a.name]);
		await make(a.dir);
	}
	const pgLocal = path.join(ROOT, 'tools', 'pg-local');
	const env = { ...process.env, INGOT_ROOT: ROOT };
	delete env.DATABASE_URL;
	// The reference service as its make run serves it (tools/pg-local run, its database ingot), and
	// the two apps' make run, all at once on the one local cluster.
	const ref = makeRun(ROOT, {}, [pgLocal, 'run', path.join(ROOT, 'build', 'bin', 'service')]);
	const servers = await Promise.all([ref, ...apps.map((a) => makeRun(a.dir))]);
	try {
		for (const [i, a] of apps.entries()) {
			const srv = servers[i + 1];
			// Its own 001 applied in its own database, not taken for the reference service's 001_posts.
			assert.match(srv.output(), new RegExp(`database ${a.name}; migrating`));
			assert.match(srv.output(), /"msg":"migration applied","migration":"001_notes"/);
			const made = await call(srv.port, 'POST', '/notes', JSON.stringify({ text: `from ${a.name}` }));
			assert.equal(made.status, 201, made.raw);
			const got = await call(srv.port, 'GET', `/notes/${made.json.id}`);
			assert.equal(got.status, 200, got.raw);
			assert.equal(got.json.text, `from ${a.name}`);
		}
		assert.match(servers[0].output(), /database ingot; migrating/);
		assert.equal((await call(servers[0].port, 'GET', '/posts')).status, 200);
		const url = async (db) => (await must(pgLocal, ['url'], { env: { ...env, PG_LOCAL_DB: db } })).trim();
		// The records of each database: its own files only.
		const records = async (db) => {
			const r = await run(path.join(apps[0].dir, 'build', 'bin', apps[0].name), ['--migrate'],
				{ env: { ...env, DATABASE_URL: await url(db) } });
			return r;
		};
		for (const a of apps) {
			const again = await records(a.name);
			assert.equal(again.code, 0, again.stdout + again.stderr);
			assert.match(again.stdout, /"msg":"migrations done","applied":0,"known":1/);
		}
		// notes-one's binary on the reference service's database: its 001 is
		// 001_posts there; refused (exit 2) naming both files, nothing applied.
		const wrong = await records('ingot');
		assert.equal(wrong.code, 2, wrong.stdout + wrong.stderr);
		assert.match(wrong.stdout, /"recorded":"001_posts.sql","local":"001_notes.sql"/);
		assert.doesNotMatch(wrong.stdout, /migration applied/);
	} finally {
		// The apps first: the run that started the cluster stops it at its end.
		for (const srv of servers.slice(1)) await stopServer(srv);
		await stopServer(servers[0]);
	}
});

test('LDLIBS go to both links, TEST_LDLIBS (when set) to the handler tests\' instead', { ...T, ...SKIP }, async () => {
	// Each from its test programs removed: a change of make variables alone relinks nothing.
	const makeWith = (...a) => {
		fs.rmSync(path.join(scaffold, 'build', 'test'), { recursive: true, force: true });
		return run('make', ['--no-print-directory', '-C', scaffold, ...a], { env: { ...process.env, INGOT_ROOT: ROOT } });
	};
	// A library the host's link does not have: the tests cannot link with it...
	const bad = await makeWith('test', 'LDLIBS=-lingot-no-such-lib');
	assert.notEqual(bad.code, 0);
	assert.match(bad.stderr + bad.stdout, /ingot-no-such-lib/);
	// ...and link without it when TEST_LDLIBS says theirs are none.
	const own = await makeWith('test', 'LDLIBS=-lingot-no-such-lib', 'TEST_LDLIBS=-lm');
	assert.equal(own.code, 0, own.stderr + own.stdout);
	assert.match(own.stdout, /handler tests passed/);
});

test('make image: an OCI layout in the app\'s build/images/oci titled with its name and version, labelled with its own revision', { ...T, ...SKIP }, async () => {
	await needTools('skopeo', 'git');
	const layout = path.join(scaffold, 'build', 'images', 'oci');
	const labels = async () => JSON.parse(await must('skopeo', ['inspect', `oci:${layout}:latest`])).Labels;
	// Outside any checkout: nothing of ingot's own git in it.
	await make(scaffold, 'image');
	let l = await labels();
	assert.equal(l['org.opencontainers.image.title'], 'hello');
	assert.equal(l['org.opencontainers.image.version'], '0.1.0');
	assert.equal(l['org.opencontainers.image.revision'], 'unknown');
	assert.equal(l['org.opencontainers.image.source'], undefined, 'no source outside a checkout');
	// Its docker-archive is named after it, not after ingot.
	assert.deepEqual(fs.readdirSync(path.join(scaffold, 'build', 'images')).filter((f) => f.endsWith('-docker.tar')), ['hello-docker.tar']);
	// Its Knative and Cloud Run files, for its own image.
	for (const f of ['knative-service.yaml', 'cloudrun-service.yaml']) {
		const doc = YAML.parse(fs.readFileSync(path.join(scaffold, 'build', 'images', f), 'utf8'));
		assert.equal(doc.metadata.name, 'hello', f);
		assert.equal(doc.spec.template.spec.containers[0].image, 'REGISTRY/hello:0.1.0', f);
		assert.equal(doc.spec.template.spec.containers[0].startupProbe.httpGet.path, '/readyz', f);
	}
	const bin = path.join(scaffold, 'build', 'bin', 'hello');
	assert.doesNotMatch(await must(bin, ['--version']), /^app-commit/m);
	// In a checkout of its own: that checkout's commit, remote and time; a
	// remote that is a path of this machine is no source.
	const git = (...a) => must('git', ['-C', scaffold, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...a]);
	await git('init', '-q');
	await git('add', '-A'); // its .gitignore keeps build/ out
	await git('commit', '-q', '-m', 'hello');
	await git('remote', 'add', 'origin', tmp);
	await make(scaffold, 'image');
	l = await labels();
	assert.equal(l['org.opencontainers.image.source'], undefined, 'a path is no source');
	const commit = (await git('rev-parse', '--short=12', 'HEAD')).trim();
	assert.match(await must(bin, ['--version']), new RegExp(`^app-commit ${commit}$`, 'm'));
	await git('remote', 'set-url', 'origin', 'https://example.com/hello.git');
	await make(scaffold, 'image');
	l = await labels();
	assert.equal(l['org.opencontainers.image.revision'], (await git('rev-parse', 'HEAD')).trim());
	assert.equal(l['org.opencontainers.image.source'], 'https://example.com/hello.git');
	const when = Number((await git('log', '-1', '--format=%ct')).trim());
	assert.equal(l['org.opencontainers.image.created'], new Date(when * 1000).toISOString().replace(/\.000Z$/, 'Z'));
});

test('tools/new-service refuses a directory that is not empty and writes nothing', { ...T, ...SKIP }, async () => {
	const dir = path.join(tmp, 'taken');
	fs.mkdirSync(dir);
	fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine\n');
	const r = await run(path.join(ROOT, 'tools', 'new-service'), [dir]);
	assert.notEqual(r.code, 0);
	assert.match(r.stderr, /not an empty directory/);
	assert.deepEqual(fs.readdirSync(dir), ['notes.txt']);
	assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'mine\n');
});

test('a path with a space: tools/new-service refuses it and writes nothing, app.mk stops with why', { ...T, ...SKIP }, async () => {
	const spaced = path.join(tmp, 'my apps');
	const r = await run(path.join(ROOT, 'tools', 'new-service'), [path.join(spaced, 'hello')]);
	assert.equal(r.code, 2);
	assert.match(r.stderr, /has a space in its path/);
	assert.ok(!fs.existsSync(spaced), 'nothing written');
	// An app moved there afterwards: make names the problem instead of
	// building from other files.
	fs.mkdirSync(spaced);
	fs.cpSync(path.join(ROOT, 'tests', 'apps', 'todo'), path.join(spaced, 'todo'), { recursive: true });
	const m = await run('make', ['--no-print-directory', '-C', path.join(spaced, 'todo')], { env: { ...process.env, INGOT_ROOT: ROOT } });
	assert.notEqual(m.code, 0);
	assert.match(m.stderr, /has a space in its path; make cannot build there/);
	assert.ok(!fs.existsSync(path.join(spaced, 'todo', 'build')), 'nothing built');
});

test('two apps built at once while ingot\'s shared objects are still to build: both build, one after the other', { ...T, ...SKIP }, async () => {
	// A build/ of ingot's with nothing built but its dependencies (the
	// ones this run has, linked): the runtime's objects and tools are made
	// by whichever build takes the lock first, and found by the other.
	const shared = path.join(tmp, 'ingot-build');
	fs.mkdirSync(shared);
	fs.symlinkSync(path.resolve(ROOT, process.env.BUILD || 'build', 'deps'), path.join(shared, 'deps'));
	const apps = ['one', 'two'].map((n) => path.join(tmp, `todo-${n}`));
	for (const dir of apps) fs.cpSync(path.join(ROOT, 'tests', 'apps', 'todo'), dir, { recursive: true });
	const results = await Promise.all(apps.map((dir) => run('make', ['--no-print-directory', '-j2', '-C', dir],
		{ env: { ...process.env, INGOT_ROOT: ROOT, BUILD: shared } })));
	for (const [i, r] of results.entries()) {
		assert.equal(r.code, 0, `${apps[i]}: ${r.stderr}${r.stdout}`);
		const bin = path.join(apps[i], 'build', 'bin', 'todo-api');
		assert.match(await must(bin, ['--version']), /todo/i);
	}
});

test('the todo app, built out of the tree: path, query and body parameters, and an outbound call', { ...T, ...SKIP }, async () => {
	const dir = path.join(tmp, 'todo');
	fs.cpSync(path.join(ROOT, 'tests', 'apps', 'todo'), dir, {
		recursive: true, filter: (src) => path.basename(src) !== 'build',
	});
	await make(dir);
	// NAME unset: the binary is named after info.title, "Todo API".
	assert.ok(fs.existsSync(path.join(dir, 'build', 'bin', 'todo-api')));

	const seen = [];
	const upstream = http.createServer((rq, rs) => {
		let body = '';
		rq.on('data', (c) => { body += c; });
		rq.on('end', () => {
			seen.push({ method: rq.method, url: rq.url, type: rq.headers['content-type'], body });
			rs.writeHead(202, { 'Content-Type': 'text/plain' });
			rs.end(`noted ${JSON.parse(body).title}`);
		});
	});
	await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
	after(() => upstream.close());
	const s = await makeRun(dir, { TODO_UPSTREAM: `http://127.0.0.1:${upstream.address().port}` });

	let r = await call(s.port, 'POST', '/todos', '{"title":"write tests"}');
	assert.equal(r.status, 201);
	assert.deepEqual(r.json, { id: 1, title: 'write tests', done: false });
	assert.equal(r.headers.location, '/todos/1');
	r = await call(s.port, 'POST', '/todos', '{"title":"ship","done":true}');
	assert.deepEqual(r.json, { id: 2, title: 'ship', done: true });
	r = await call(s.port, 'POST', '/todos', '{"done":true}');
	assert.equal(r.status, 400, 'title is required');
	r = await call(s.port, 'POST', '/todos', '{"title":"x","extra":1}');
	assert.equal(r.status, 400, 'no other properties');

	r = await call(s.port, 'GET', '/todos/2');
	assert.deepEqual(r.json, { id: 2, title: 'ship', done: true });
	r = await call(s.port, 'GET', '/todos/0');
	assert.equal(r.status, 400, 'ids start at 1');
	r = await call(s.port, 'GET', '/todos/9');
	assert.equal(r.status, 404);
	assert.equal(r.headers['content-type'], 'application/problem+json');

	r = await call(s.port, 'GET', '/todos');
	assert.deepEqual(r.json.items.map((t) => t.id), [1, 2]);
	r = await call(s.port, 'GET', '/todos?done=true');
	assert.deepEqual(r.json.items.map((t) => t.id), [2]);
	r = await call(s.port, 'GET', '/todos?done=false');
	assert.deepEqual(r.json.items.map((t) => t.id), [1]);
	r = await call(s.port, 'GET', '/todos?limit=1');
	assert.deepEqual(r.json.items.map((t) => t.id), [1]);
	r = await call(s.port, 'GET', '/todos?limit=0');
	assert.equal(r.status, 400, 'limit is at least 1');

	r = await call(s.port, 'POST', '/todos/1/notify');
	assert.equal(r.status, 200);
	assert.deepEqual(r.json, { id: 1, upstream_status: 202, upstream_body: 'noted write tests' });
	assert.deepEqual(seen, [{ method: 'POST', url: '/notify', type: 'application/json',
		body: '{"id":1,"title":"write tests","done":false}' }]);
	r = await call(s.port, 'POST', '/todos/7/notify');
	assert.equal(r.status, 404);

	r = await call(s.port, 'DELETE', '/todos/1');
	assert.equal(r.status, 204);
	r = await call(s.port, 'DELETE', '/todos/1');
	assert.equal(r.status, 404);
	r = await call(s.port, 'GET', '/todos');
	assert.deepEqual(r.json.items.map((t) => t.id), [2]);
	await stopServer(s);
});

// Every 5xx is logged (net/http/error_log.c): a handler's own 502 is one
// error line with the request id, route, status and its cause; a storm of
// the same one on the same route is one line a second, then the count of
// those left out (written when the second ends, or at the exit: the sum is
// asserted, not when each came).
test('the todo app: a handler\'s 5xx is one error line with its request id; a storm of it is a line a second and the count left out', { ...T, ...SKIP }, async () => {
	const dir = path.join(tmp, 'todo');
	const bin = path.join(dir, 'build', 'bin', 'todo-api');
	if (!fs.existsSync(bin)) {
		fs.cpSync(path.join(ROOT, 'tests', 'apps', 'todo'), dir, { recursive: true, filter: (src) => path.basename(src) !== 'build' });
		await make(dir);
	}
	// No TODO_UPSTREAM: notify answers 502 itself, with ig_respond_problem.
	const srv = await startServer({ INGOT_ACCESS_LOG: '1' }, { command: bin, threads: '1' });
	assert.equal((await call(srv.port, 'POST', '/todos', '{"title":"a"}')).status, 201);
	const N = 20;
	for (let i = 0; i < N; i++) {
		const r = await curl(['-s', '-X', 'POST', '-H', `X-Request-Id: storm-${i}`, '-w', '\n%{http_code}', `http://127.0.0.1:${srv.port}/todos/1/notify`]);
		const [body, code] = r.stdout.toString().split('\n');
		assert.equal(code, '502', body);
		assert.equal(JSON.parse(body).request_id, `storm-${i}`);
	}
	// The access line of the last one comes after every error line before it.
	await srv.waitLog((l) => l.msg === 'request' && l.request_id === `storm-${N - 1}`);
	const first = srv.logs.find((l) => l.level === 'error');
	assert.deepEqual([first.msg, first.request_id, first.route, first.status, first.cause],
		['server error', 'storm-0', '/todos/{id}/notify', 502, 'TODO_UPSTREAM is not set to an origin']);
	assert.match(first.trace_id, /^[0-9a-f]{32}$/);
	assert.equal((await srv.stop()).code, 0);
	const lines = srv.logs.filter((l) => l.msg === 'server error');
	const counts = srv.logs.filter((l) => l.msg === 'server errors suppressed');
	assert.ok(lines.length < N, `a storm is not a line per request: ${lines.length} of ${N}`);
	assert.equal(lines.length + counts.reduce((n, c) => n + c.suppressed, 0), N, JSON.stringify(counts));
	for (const c of counts) assert.deepEqual([c.level, c.route, c.status], ['error', '/todos/{id}/notify', 502]);
	assert.deepEqual(srv.logs.filter((l) => l.level === 'error' && !lines.includes(l) && !counts.includes(l)), [],
		'nothing else at error level');
});
