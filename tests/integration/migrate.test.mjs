// `service --migrate` against a real PostgreSQL (pglib): the embedded
// migrations applied in order and recorded; a second run applies nothing
// and changes no row; two runs at once both exit 0 and apply each
// migration once; a failing migration is rolled back and none after it
// runs (exit 1); bad or missing settings exit 2; no listener is opened.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, freePort, runBinary } from './lib.mjs';
import { startPostgres } from './pglib.mjs';
import { migrate } from './dbservice.mjs';

let pg;
const T = { timeout: 120000 };
const MIGRATIONS = ['001_posts', '002_world', '003_fortune'];

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
	assert.equal(done(first)?.applied, 3);
	assert.ok(!first.logs.some((l) => l.msg === 'listening'), 'no listener');
	assert.equal((await pg.psql('SELECT string_agg(version || name, \',\' ORDER BY version) FROM ingot_migrations;',
		{ database: db.name })).trim(), '1001_posts,2002_world,3003_fortune');
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
		{ database: db.name })).trim(), '3\n10000');
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
	assert.deepEqual(applied(again), ['002_world', '003_fortune']);
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
