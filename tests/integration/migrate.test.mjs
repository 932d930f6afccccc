// `service --migrate` against a real PostgreSQL (pglib): the embedded
// migrations applied in order and recorded; a second run applies nothing
// and changes no row; two runs at once both exit 0 and apply each
// migration once; a failing migration is rolled back and none after it
// runs (exit 1); bad or missing settings exit 2; no listener is opened.
// Records carry each file's SHA-256: a changed file, another name under a
// version, a foreign version or an out-of-order one stops --migrate (exit 2,
// naming the recorded and the local file) and keeps a server not ready; a
// table from before checksums is upgraded in place.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, cleanup, curlResponse, freePort, runBinary, startServer } from './lib.mjs';
import { startPostgres } from './pglib.mjs';
import { migrate, waitReady } from './dbservice.mjs';

let pg;
const T = { timeout: 120000 };
const MIGRATIONS = ['001_posts', '002_world', '003_fortune', '004_heartbeat', '005_post_stats'];

before(async () => { pg = await startPostgres(); });
after(async () => {
	if (pg) await pg.stop();
	cleanup();
});

let databases = 0;
/** A new empty database owned by the test role; resolves its URL. */
async function freshDatabase() {
	const name = `m${++databases}`;
	await pg.psql(`CREATE DATABASE ${name} OWNER ingot;`, { database: 'postgres' });
	return { name, url: pg.urlWith({ database: name }) };
}

const applied = (r) => r.logs.filter((l) => l.msg === 'migration applied').map((l) => l.migration);
const done = (r) => r.logs.find((l) => l.msg === 'migrations done');

// Everything a run could change: the records and every row of every table.
const snapshot = (database) => pg.psql(`
	SELECT version || ' ' || name || ' ' || applied_at FROM ingot_migrations ORDER BY version;
	SELECT md5(string_agg(id || ':' || randomnumber || ':' || xmin, ',' ORDER BY id)) FROM world;
	SELECT md5(string_agg(id || ':' || message || ':' || xmin, ',' ORDER BY id)) FROM fortune;
	SELECT count(*) FROM posts;`, { database });

test('a first run applies every migration in order, each recorded; a second applies nothing and changes no row', T, async () => {
	const db = await freshDatabase();
	const first = await migrate(db.url);
	assert.equal(first.code, 0, `${first.stdout}${first.stderr}`);
	assert.deepEqual(applied(first), MIGRATIONS);
	assert.equal(done(first)?.applied, MIGRATIONS.length);
	assert.ok(!first.logs.some((l) => l.msg === 'listening'), 'no listener');
	assert.equal((await pg.psql('SELECT string_agg(version || name, \',\' ORDER BY version) FROM ingot_migrations;',
		{ database: db.name })).trim(), '1001_posts,2002_world,3003_fortune,4004_heartbeat,5005_post_stats');
	// Each record holds its file's SHA-256, as sha256sum gives it.
	assert.equal((await pg.psql('SELECT string_agg(checksum, \',\' ORDER BY version) FROM ingot_migrations;',
		{ database: db.name })).trim(), MIGRATIONS.map(sha256).join(','));
	assert.equal((await pg.psql('SELECT count(*) FROM world; SELECT count(*) FROM fortune;', { database: db.name }))
		.trim(), '10000\n12');
	// In the connection's default schema (public here).
	assert.equal((await pg.psql("SELECT schemaname FROM pg_tables WHERE tablename = 'ingot_migrations';",
		{ database: db.name })).trim(), 'public');

	const before = await snapshot(db.name);
	const second = await migrate(db.url);
	assert.equal(second.code, 0, `${second.stdout}${second.stderr}`);
	assert.deepEqual(applied(second), []);
	assert.equal(done(second)?.applied, 0);
	assert.equal(await snapshot(db.name), before);
});

test('two runs at once both exit 0 and apply each migration once between them', T, async () => {
	const db = await freshDatabase();
	const [a, b] = await Promise.all([migrate(db.url), migrate(db.url)]);
	assert.equal(a.code, 0, `${a.stdout}${a.stderr}`);
	assert.equal(b.code, 0, `${b.stdout}${b.stderr}`);
	assert.deepEqual([...applied(a), ...applied(b)].sort(), MIGRATIONS);
	assert.equal((await pg.psql('SELECT count(*) FROM ingot_migrations; SELECT count(*) FROM world;',
		{ database: db.name })).trim(), `${MIGRATIONS.length}\n10000`);
});

test('a failing migration is rolled back, none after it runs, the run exits 1; the next run resumes there', T, async () => {
	const db = await freshDatabase();
	// world exists already: 002 fails on CREATE TABLE.
	await pg.psql('CREATE TABLE world (id integer);', { database: db.name, user: 'ingot' });
	const r = await migrate(db.url);
	assert.equal(r.code, 1, `${r.stdout}${r.stderr}`);
	assert.deepEqual(applied(r), ['001_posts']);
	const failed = r.logs.find((l) => l.level === 'error');
	assert.equal(failed?.migration, '002_world', JSON.stringify(r.logs));
	assert.equal(failed?.sqlstate, '42P07', 'duplicate_table');
	assert.equal((await pg.psql(`SELECT string_agg(name, ',' ORDER BY version) FROM ingot_migrations;
		SELECT count(*) FROM pg_tables WHERE tablename = 'fortune';`, { database: db.name })).trim(), '001_posts\n0');

	await pg.psql('DROP TABLE world;', { database: db.name, user: 'ingot' });
	const again = await migrate(db.url);
	assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
	assert.deepEqual(applied(again), ['002_world', '003_fortune', '004_heartbeat', '005_post_stats']);
});

test('a bad DATABASE_URL or none exits 2; an unreachable database exits 1', T, async () => {
	const bad = await migrate('postgres://u@h:notaport/db');
	assert.equal(bad.code, 2, `${bad.stdout}${bad.stderr}`);
	const none = await migrate(undefined, { DATABASE_URL: undefined });
	assert.equal(none.code, 2, `${none.stdout}${none.stderr}`);
	assert.match(none.stderr, /no database configured/);
	const secret = 'sekrit-pass-42';
	const gone = await migrate(pg.urlWith({ port: await freePort(), password: secret }));
	assert.equal(gone.code, 1, `${gone.stdout}${gone.stderr}`);
	assert.ok(!`${gone.stdout}${gone.stderr}`.includes(secret), 'the password is in no message');
	const wrong = await migrate(pg.urlWith({ password: secret }));
	assert.equal(wrong.code, 1, `${wrong.stdout}${wrong.stderr}`);
	assert.ok(!`${wrong.stdout}${wrong.stderr}`.includes(secret), 'the password is in no message');
});

test('--help lists --migrate among the commands; --migrate --help lists the database settings and touches nothing', T, async () => {
	const help = await runBinary(['--help'], {});
	assert.equal(help.code, 0, help.stderr);
	const commands = help.stdout.slice(help.stdout.indexOf('\ncommands:\n'));
	assert.match(commands, /^\s+--migrate\s+apply the embedded migrations/m);
	// Only the database's rows: the command reads no other part's settings.
	const own = await runBinary(['--migrate', '--help'], { DATABASE_URL: undefined });
	assert.equal(own.code, 0, own.stderr);
	assert.match(own.stdout, /INGOT_PG_POOL_SIZE/);
	assert.doesNotMatch(own.stdout, /INGOT_MAX_BODY/);
	assert.match(own.stdout, /^\s+--migrate\s/m);
});

/** The SHA-256 of schemas/migrations/NAME.sql's bytes, in hex. */
function sha256(name) {
	return crypto.createHash('sha256').update(fs.readFileSync(path.join(ROOT, 'schemas', 'migrations', `${name}.sql`)))
		.digest('hex');
}

/** A database with every migration applied. */
async function migratedDatabase() {
	const db = await freshDatabase();
	const r = await migrate(db.url);
	assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
	return db;
}

const errors = (r) => r.logs.filter((l) => l.level === 'error');

/** --migrate refuses: exit 2, one error line, nothing applied. */
async function refused(db, env = {}) {
	const r = await migrate(db.url, env);
	assert.equal(r.code, 2, `${r.stdout}${r.stderr}`);
	assert.deepEqual(applied(r), []);
	assert.equal(errors(r).length, 1, JSON.stringify(r.logs));
	return errors(r)[0];
}

test('an applied migration whose file changed: --migrate exits 2 naming the recorded and the local file and both checksums', T, async () => {
	const db = await migratedDatabase();
	// The record of a file that was edited after it was applied.
	const old = crypto.createHash('sha256').update('CREATE TABLE posts (id int);\n').digest('hex');
	await pg.psql(`UPDATE ingot_migrations SET checksum = '${old}' WHERE version = 2;`, { database: db.name });
	const e = await refused(db);
	assert.match(e.msg, /an applied migration's file changed/);
	assert.equal(e.recorded, '002_world.sql');
	assert.equal(e.local, '002_world.sql');
	assert.equal(e.recorded_sha256, old);
	assert.equal(e.local_sha256, sha256('002_world'));
});

test('another name under an applied version (another app\'s migrations): --migrate exits 2 naming both files', T, async () => {
	const db = await migratedDatabase();
	await pg.psql("UPDATE ingot_migrations SET name = '001_links' WHERE version = 1;", { database: db.name });
	const e = await refused(db);
	assert.match(e.msg, /another name under the same version/);
	assert.equal(e.recorded, '001_links.sql');
	assert.equal(e.local, '001_posts.sql');
});

test('a recorded version among the files\' that none of them has is refused; one above the newest file (a later release\'s) is not', T, async () => {
	const db = await migratedDatabase();
	await pg.psql("INSERT INTO ingot_migrations (version, name, checksum) VALUES (900, '900_later', 'ab');",
		{ database: db.name });
	const later = await migrate(db.url);
	assert.equal(later.code, 0, `${later.stdout}${later.stderr}`);
	await pg.psql("INSERT INTO ingot_migrations (version, name, checksum) VALUES (0, '000_other', 'ab');",
		{ database: db.name });
	const e = await refused(db);
	assert.match(e.msg, /not among this binary's files/);
	assert.equal(e.recorded, '000_other.sql');
	assert.equal(e.local, undefined);
});

test('a pending migration below the newest applied one is refused, and applied with INGOT_MIGRATE_OUT_OF_ORDER=true', T, async () => {
	const db = await migratedDatabase();
	// 002 as if it came after 003, 004 and 005 had been applied.
	await pg.psql('DROP TABLE world; DELETE FROM ingot_migrations WHERE version = 2;', { database: db.name, user: 'ingot' });
	const e = await refused(db);
	assert.match(e.msg, /pending migration is numbered below the newest applied one/);
	assert.equal(e.local, '002_world.sql');
	assert.equal(e.recorded, '005_post_stats.sql');
	assert.match((await migrate(db.url, { INGOT_MIGRATE_OUT_OF_ORDER: 'no' })).stdout, /numbered below/);
	const r = await migrate(db.url, { INGOT_MIGRATE_OUT_OF_ORDER: 'true' });
	assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
	assert.deepEqual(applied(r), ['002_world']);
	assert.equal((await pg.psql('SELECT count(*) FROM world;', { database: db.name })).trim(), '10000');
});

test('a record table from before checksums is upgraded in place: the column added, each record given its file\'s checksum, nothing applied again', T, async () => {
	const db = await freshDatabase();
	// The table as --migrate made it before, with the records it wrote.
	await pg.psql(`CREATE TABLE ingot_migrations (version integer PRIMARY KEY, name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO ingot_migrations (version, name) VALUES (1, '001_posts'), (2, '002_world');`,
	{ database: db.name, user: 'ingot' });
	const sql = (n) => fs.readFileSync(path.join(ROOT, 'schemas', 'migrations', `${n}.sql`), 'utf8');
	await pg.psql(sql('001_posts') + sql('002_world'), { database: db.name, user: 'ingot' });
	const r = await migrate(db.url);
	assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
	assert.deepEqual(applied(r), ['003_fortune', '004_heartbeat', '005_post_stats']);
	assert.deepEqual(r.logs.filter((l) => l.msg.startsWith('migration checksum recorded')).map((l) => l.migration),
		['001_posts', '002_world']);
	assert.equal((await pg.psql('SELECT string_agg(checksum, \',\' ORDER BY version) FROM ingot_migrations;',
		{ database: db.name })).trim(), MIGRATIONS.map(sha256).join(','));
	const again = await migrate(db.url);
	assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
	assert.ok(!again.logs.some((l) => l.msg.startsWith('migration checksum recorded')), 'recorded once');
});

test('a server on a database whose records disagree logs one error at its first connection and stays not ready; on a matching one it is ready', T, async () => {
	const good = await migratedDatabase();
	const srv = await startServer({ DATABASE_URL: good.url });
	try {
		await waitReady(srv);
		assert.equal(srv.logs.filter((l) => l.level === 'error').length, 0, srv.lines.join('\n'));
	} finally {
		await srv.stop();
	}
	const bad = await migratedDatabase();
	await pg.psql("UPDATE ingot_migrations SET checksum = repeat('0', 64) WHERE version = 1;", { database: bad.name });
	const stuck = await startServer({ DATABASE_URL: bad.url });
	try {
		const e = await stuck.waitLog((l) => l.level === 'error');
		assert.match(e.msg, /an applied migration's file changed/);
		assert.equal(e.recorded, '001_posts.sql');
		assert.equal(e.local, '001_posts.sql');
		// Answers, but not ready: the pool is connected (the check ran on it).
		for (let i = 0; i < 3; i++) assert.equal((await curlResponse(stuck.port, '/readyz')).status, 503);
		assert.equal((await curlResponse(stuck.port, '/livez')).status, 200);
		assert.equal(stuck.logs.filter((l) => l.level === 'error').length, 1, stuck.lines.join('\n'));
	} finally {
		await stuck.stop();
	}
});

test('a server on a database never migrated, or with migrations pending, warns once and is ready, as before the check', T, async () => {
	const empty = await freshDatabase();
	const srv = await startServer({ DATABASE_URL: empty.url });
	try {
		await waitReady(srv);
		// Lines leave through the log's writer thread: wait for it, not only for /readyz.
		await srv.waitLog((l) => l.level === 'warn' && /no ingot_migrations table/.test(l.msg));
	} finally {
		await srv.stop();
	}
	const partial = await migratedDatabase();
	await pg.psql('DELETE FROM ingot_migrations WHERE version = 5;', { database: partial.name });
	const srv2 = await startServer({ DATABASE_URL: partial.url });
	try {
		await waitReady(srv2);
		await srv2.waitLog((l) => l.level === 'warn' && /pending/.test(l.msg));
		assert.equal(srv2.logs.filter((l) => l.level === 'warn' && /pending/.test(l.msg)).length, 1, srv2.lines.join('\n'));
		assert.equal(srv2.logs.filter((l) => l.level === 'error').length, 0, srv2.lines.join('\n'));
	} finally {
		await srv2.stop();
	}
});
