// make run's database (tools/pg-local run BIN): a PostgreSQL of its own
// under the build directory, or under /var/tmp when the postgres user cannot
// reach that (here a private temporary directory, as a clone under /root
// is), on a unix socket and a free loopback port that is not 5432; migrated;
// the service serves with it; the end of the service stops it (by PID). A
// DATABASE_URL the user set wins: then nothing is started. Runs at once
// share the cluster, each in its own database (PG_LOCAL_DB).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, BIN, curlResponse, within } from './lib.mjs';

const PG_LOCAL = path.join(ROOT, 'tools', 'pg-local');
const dirs = [];
const procs = [];
after(() => {
	for (const p of procs) { try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ } }
	for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

// tools/pg-local run BIN in a process group of its own; resolves once the
// service logged "listening" (with its port), or rejects when it exits first.
function runLocal(build, env = {}) {
	const p = spawn(PG_LOCAL, ['run', BIN], {
		detached: true, stdio: ['ignore', 'pipe', 'pipe'],
		env: { PATH: process.env.PATH, BUILD: build, PORT: '0', HOST: '127.0.0.1', INGOT_ADMIN_PORT: '-1', INGOT_THREADS: '2', ...env },
	});
	procs.push(p);
	const r = { proc: p, stdout: '', stderr: '' };
	r.exited = new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal })));
	r.listening = new Promise((resolve, reject) => {
		p.stdout.on('data', (d) => {
			r.stdout += d;
			const line = r.stdout.split('\n').find((l) => l.includes('"msg":"listening"'));
			if (line) resolve(JSON.parse(line).port);
		});
		r.exited.then((x) => reject(new Error(`exited (${JSON.stringify(x)}) before listening: ${r.stderr}${r.stdout}`)));
	});
	// stderr is another pipe: what it says may arrive after "listening".
	const waiters = [];
	p.stderr.on('data', (d) => {
		r.stderr += d;
		for (const w of waiters.splice(0)) (w.re.test(r.stderr) ? w.resolve() : waiters.push(w));
	});
	r.stderrSays = (re) => new Promise((resolve) => (re.test(r.stderr) ? resolve() : waiters.push({ re, resolve })));
	return r;
}

// Readiness comes after "listening": once a pool has connected and the
// migrations' record was checked. Asked again as a probe would, until 200.
function ready(port) {
	return within(30000, (async () => {
		for (;;) {
			const res = await curlResponse(port, '/readyz');
			if (res.status === 200) return;
		}
	})(), `/readyz 200 on port ${port}`);
}

const running = (pid) => {
	try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'; } catch { return false; }
};

test('make run: a local PostgreSQL, migrated, served with, stopped when the service ends', { timeout: 120000 }, async () => {
	const build = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-run-'));
	dirs.push(build);
	const r = runLocal(build);
	const port = await within(90000, r.listening, 'the service listening');
	const datadir = fs.readFileSync(path.join(build, 'pg', 'datadir'), 'utf8').trim();
	if (process.getuid() === 0) {
		// mkdtemp's 0700 directory is out of the postgres user's reach.
		assert.match(datadir, /^\/var\/tmp\/ingot-pg-\d+$/);
	}
	dirs.push(datadir);
	const pgPort = Number(fs.readFileSync(path.join(build, 'pg', 'port'), 'utf8'));
	assert.notEqual(pgPort, 5432);
	assert.ok(fs.existsSync(path.join(datadir, `.s.PGSQL.${pgPort}`)), 'its unix socket');
	const pid = Number(fs.readFileSync(path.join(datadir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
	assert.ok(running(pid));
	await within(30000, r.stderrSays(/starting PostgreSQL/), 'pg-local saying it starts PostgreSQL');
	assert.match(r.stdout, /"msg":"migrations done"/);
	assert.ok(!r.stderr.includes(fs.readFileSync(path.join(build, 'pg', 'password'), 'utf8').trim()), 'the password is not printed');
	await ready(port);
	const db = await curlResponse(port, '/db');
	assert.equal(db.status, 200, db.body.toString());
	assert.match(db.body.toString(), /^\{"id":\d+,"randomNumber":\d+\}$/);
	// ^C: the terminal's SIGINT reaches the process group (not PostgreSQL,
	// in a session of its own); the service drains and the script stops the database.
	process.kill(-r.proc.pid, 'SIGINT');
	const x = await within(30000, r.exited, 'make run ended');
	assert.equal(x.code, 0, r.stderr);
	assert.equal(running(pid), false, 'PostgreSQL was stopped');
	assert.match(r.stderr, /stopping PostgreSQL/);
});

test('make run with DATABASE_URL set: that database, nothing started', { timeout: 60000 }, async () => {
	const build = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-run-'));
	dirs.push(build);
	// Nothing listens on port 1: the start goes on, /readyz stays 503.
	const r = runLocal(build, { DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db?sslmode=disable' });
	const port = await within(30000, r.listening, 'the service listening');
	await within(30000, r.stderrSays(/DATABASE_URL is set/), 'pg-local saying DATABASE_URL is set');
	assert.equal(fs.existsSync(path.join(build, 'pg')), false, 'no local cluster');
	assert.equal((await curlResponse(port, '/readyz')).status, 503);
	assert.equal((await curlResponse(port, '/health')).status, 200);
	const db = await curlResponse(port, '/db');
	assert.equal(db.status, 503);
	process.kill(-r.proc.pid, 'SIGINT');
	await within(30000, r.exited, 'the service ended');
});

test('three runs at once on one cluster, each in its own database (PG_LOCAL_DB; ingot without it), each migrated there; only the run that started the cluster stops it', { timeout: 180000 }, async () => {
	const build = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-run-'));
	dirs.push(build);
	const runs = [runLocal(build), runLocal(build, { PG_LOCAL_DB: 'app-one' }), runLocal(build, { PG_LOCAL_DB: 'app-two' })];
	const ports = await within(120000, Promise.all(runs.map((r) => r.listening)), 'the three services listening');
	const datadir = fs.readFileSync(path.join(build, 'pg', 'datadir'), 'utf8').trim();
	dirs.push(datadir);
	for (const [i, r] of runs.entries()) {
		// Each database had no record: the five files applied in each.
		assert.match(r.stdout, /"msg":"migrations done","applied":5,"known":5/, `run ${i}: ${r.stdout}`);
		await ready(ports[i]);
	}
	assert.match(runs[0].stderr, /database ingot;/);
	assert.match(runs[1].stderr, /database app-one;/);
	assert.match(runs[2].stderr, /database app-two;/);
	const starters = runs.filter((r) => /starting PostgreSQL/.test(r.stderr));
	assert.equal(starters.length, 1, 'one run started the cluster, the others found it running');
	const pid = Number(fs.readFileSync(path.join(datadir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
	for (const r of runs.filter((x) => x !== starters[0])) {
		process.kill(-r.proc.pid, 'SIGINT');
		assert.equal((await within(30000, r.exited, 'a run ended')).code, 0, r.stderr);
		assert.doesNotMatch(r.stderr, /stopping PostgreSQL/);
	}
	assert.ok(running(pid), 'the cluster serves on for the run that started it');
	const last = ports[runs.indexOf(starters[0])];
	assert.equal((await curlResponse(last, '/db')).status, 200);
	process.kill(-starters[0].proc.pid, 'SIGINT');
	assert.equal((await within(30000, starters[0].exited, 'the last run ended')).code, 0);
	assert.equal(running(pid), false, 'PostgreSQL was stopped by the run that started it');
});

test('PG_LOCAL_DB must be a plain database name', { timeout: 30000 }, async () => {
	const build = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-run-'));
	dirs.push(build);
	for (const bad of ['Bad', 'a b', "x';drop", 'postgres', 'template1']) {
		const r = runLocal(build, { PG_LOCAL_DB: bad });
		r.listening.catch(() => {});
		const x = await within(20000, r.exited, 'pg-local refusing');
		assert.equal(x.code, 2, r.stderr);
		assert.match(r.stderr, /PG_LOCAL_DB/);
	}
	assert.equal(fs.existsSync(path.join(build, 'pg')), false, 'nothing started');
});
