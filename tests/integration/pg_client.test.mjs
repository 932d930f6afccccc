// net/pg, the runtime's PostgreSQL client, against a real PostgreSQL 15
// that the test starts (pglib.mjs): driven by tests/pg/pgcheck.c (the
// client on its own loops, no app), which prints one JSON line per query.
// Every type both ways, pipelining with a failure in the middle, 1,000
// queries in flight over two loops, a query timeout that cancels, a
// transaction rolled back on error, LISTEN/NOTIFY, the authentications and
// TLS, a statement prepared again after a schema change, LISTEN again after
// the listening connection is lost, and the errors.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { ROOT, freePort, startServer, curlResponse, within } from './lib.mjs';
import { postgresForSuite } from './pglib.mjs';

const PGCHECK = process.env.INGOT_PGCHECK_BIN || path.join(ROOT, 'build', 'bin', 'pgcheck');

const start = postgresForSuite();

// pgcheck's environment: DATABASE_URL=url (unless env overrides it) and
// nothing else of this process's environment that names a database.
function pgcheckEnv(url, env) {
	const base = { PATH: process.env.PATH, INGOT_LOG_LEVEL: 'warn' };
	for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS']) if (process.env[k]) base[k] = process.env[k];
	if (url) base.DATABASE_URL = url;
	return { ...base, ...env };
}
const isResultLine = (l) => l.startsWith('{"i"') || l.startsWith('{"notify"') || l.startsWith('{"summary"');

// Runs pgcheck to its end.
function pgcheck(url, args, env = {}) {
	return new Promise((resolve) => {
		execFile(PGCHECK, args, { env: pgcheckEnv(url, env), timeout: 60000, maxBuffer: 64 << 20 },
			(err, stdout, stderr) => {
				const lines = stdout.split('\n').filter(isResultLine).map((l) => JSON.parse(l));
				resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr, lines });
			});
	});
}

// Starts pgcheck and hands its JSON lines over as they come, while the test
// acts on the server: next(ms, what) resolves the next line (fails after
// ms); exited resolves {code, stderr}; kill() ends it by its PID.
function pgcheckLive(url, args, env = {}) {
	const child = spawn(PGCHECK, args, { env: pgcheckEnv(url, env), stdio: ['ignore', 'pipe', 'pipe'] });
	const lines = [];
	let wake = null;
	let stderr = '';
	child.stderr.setEncoding('utf8');
	child.stderr.on('data', (d) => { stderr += d; });
	readline.createInterface({ input: child.stdout }).on('line', (l) => {
		if (!isResultLine(l)) return;
		lines.push(JSON.parse(l));
		wake?.();
	});
	const exited = new Promise((resolve) => child.on('close', (code) => { wake?.(); resolve({ code, stderr }); }));
	const next = (ms, what) => within(ms, (async () => {
		while (!lines.length) {
			if (child.exitCode !== null) throw new Error(`pgcheck ended (${child.exitCode}) before ${what}: ${stderr}`);
			await new Promise((resolve) => { wake = resolve; });
			wake = null;
		}
		return lines.shift();
	})(), what);
	const kill = () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); return exited; };
	return { next, exited, kill };
}
const byIndex = (lines) => [...lines].sort((a, b) => a.i - b.i);

let pg; // SCRAM over TCP and the socket, no TLS
before(async () => {
	assert.ok(fs.existsSync(PGCHECK), `${PGCHECK} is not built (make pgcheck)`);
	pg = await start();
	await pg.psql('CREATE TABLE items (id int PRIMARY KEY, name text CONSTRAINT items_name_key UNIQUE); ' +
		'ALTER TABLE items OWNER TO ingot; CREATE TABLE shape (x int); ALTER TABLE shape OWNER TO ingot');
});

const TYPED = 'SELECT $1::bool a, $2::int2 b, $3::int4 c, $4::int8 d, $5::float4 e, $6::float8 f, $7::numeric g, ' +
	'$8::text h, $9::varchar i, $10::bytea j, $11::uuid k, $12::date l, $13::timestamp m, $14::timestamptz n, ' +
	'$15::json o, $16::jsonb p, $17::int4 q';
const PARAMS = ['%bool:t', '%int2:-32768', '%int4:2147483647', '%int8:9007199254740993', '%float4:1.5',
	'%float8:-2.25', '%numeric:-123.4500', '%text:tab\there "quoted" é', '%varchar:vé', '%bytea:00ff10',
	'%uuid:0123456789abcdef0123456789abcdef', '%date:8825', '%ts:-1234567', '%tstz:86400000001',
	'%json:{"a": [1, 2]}', '%jsonb:{"b": {"c": null}}', '%null:int4'];
const EXPECTED = [true, -32768, 2147483647, 9007199254740993, 1.5, -2.25, '-123.4500', 'tab\there "quoted" é', 'vé',
	'00ff10', '0123456789abcdef0123456789abcdef', 8825, -1234567, 86400000001, '{"a": [1, 2]}',
	'{"b": {"c": null}}', null];

test('every type as a parameter and back, in text (first execution) and binary (later) results', async () => {
	const r = await pgcheck(pg.url, ['--repeat', '3', 'seq', TYPED, ...PARAMS]);
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.lines.length, 3);
	for (const l of r.lines) {
		assert.equal(l.ok, true, JSON.stringify(l));
		assert.deepEqual(l.oids, [16, 21, 23, 20, 700, 701, 1700, 25, 1043, 17, 2950, 1082, 1114, 1184, 114, 3802, 23]);
		// 9007199254740993 is not a double: compare the digits printed
		assert.match(r.stdout, /,9007199254740993,/);
		assert.deepEqual(l.rows[0].map((v, i) => (i === 3 ? 9007199254740993 : v)), EXPECTED);
	}
});

test('values the server makes decode the same both ways (dates, infinities, NaN, numeric as text)', async () => {
	const sql = "SELECT '2024-02-29'::date a, 'infinity'::date b, '1999-12-31 23:59:59.5'::timestamp c, " +
		"'2000-01-02 01:00:00+01'::timestamptz d, 'NaN'::numeric e, 1.50::numeric f, '\\x0102'::bytea g, " +
		"'{\"k\":1}'::jsonb h, 'x'::name i, NULL::text j";
	const r = await pgcheck(pg.url, ['--repeat', '2', 'seq', sql]);
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.lines.length, 2);
	for (const l of r.lines) {
		assert.equal(l.ok, true, JSON.stringify(l));
		assert.deepEqual(l.rows[0], [8825, 2147483647, -500000, 86400000000, 'NaN', '1.50', '0102', '{"k": 1}', 'x', null]);
		// the second execution sends no Describe: its names come from the statement's cache
		assert.deepEqual(l.cols, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']);
	}
});

test('pipelined on one connection: the failing query in the middle fails alone', async () => {
	const r = await pgcheck(pg.url, ['pipeline', 'SELECT 1 AS one', 'SELECT 1/0', 'SELECT $1::text || \'!\'', '%text:three',
		'SELECT * FROM no_such_table', 'SELECT 5'], { INGOT_PG_POOL_SIZE: '1' });
	assert.equal(r.code, 0, r.stderr);
	const l = byIndex(r.lines);
	assert.equal(l.length, 5);
	assert.deepEqual(l[0].rows, [[1]]);
	assert.equal(l[1].ok, false);
	assert.equal(l[1].kind, 'server');
	assert.equal(l[1].sqlstate, '22012');
	assert.equal(l[1].message, 'division by zero');
	assert.deepEqual(l[2].rows, [['three!']]);
	assert.equal(l[3].sqlstate, '42P01');
	assert.deepEqual(l[4].rows, [[5]]);
	// One connection carried them all, in order: answers came in order.
	assert.deepEqual(r.lines.map((x) => x.i), [0, 1, 2, 3, 4]);
});

test('reads under one Sync: the failing one fails alone, the reads after it are sent again alone and answer', async () => {
	const r = await pgcheck(pg.url, ['reads', 'SELECT 1 AS one', 'SELECT 1/0', 'SELECT $1::text || \'!\'', '%text:three',
		'SELECT * FROM no_such_table', 'SELECT 5', 'SELECT 6'], { INGOT_PG_POOL_SIZE: '1' });
	assert.equal(r.code, 0, r.stderr);
	const l = byIndex(r.lines);
	assert.equal(l.length, 6);
	assert.deepEqual(l[0].rows, [[1]]);
	assert.equal(l[1].sqlstate, '22012');
	assert.deepEqual(l[2].rows, [['three!']]);
	assert.equal(l[3].sqlstate, '42P01');
	assert.deepEqual(l[4].rows, [[5]]);
	assert.deepEqual(l[5].rows, [[6]]);
	assert.deepEqual(r.lines.map((x) => x.i), [0, 1, 2, 3, 4, 5]);
});

test('1,000 queries in flight across two loops, each answered with its own value', async () => {
	const r = await pgcheck(pg.url, ['--threads', '2', 'inflight', '1000'], { INGOT_PG_POOL_SIZE: '2' });
	assert.equal(r.code, 0, r.stderr);
	const s = r.lines.find((x) => x.summary);
	assert.deepEqual(s, { summary: true, queries: 1000, good: 1000, threads: 2 });
});

test('a query over INGOT_PG_QUERY_TIMEOUT_MS fails with timeout and is cancelled on the server', async () => {
	const probe = "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'";
	const r = await pgcheck(pg.url, ['seq', 'SELECT pg_sleep(60)', probe],
		{ INGOT_PG_QUERY_TIMEOUT_MS: '300', INGOT_PG_POOL_SIZE: '1' });
	assert.equal(r.code, 0, r.stderr);
	const [slow, after] = byIndex(r.lines);
	assert.equal(slow.ok, false);
	assert.equal(slow.kind, 'timeout');
	// The next query on the same connection runs once the server has
	// ended the cancelled one: nothing of it is left.
	assert.deepEqual(after.rows, [[0]], JSON.stringify(after));
	assert.equal((await pg.psql(probe)).trim(), '0');
	assert.equal((await pg.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()")).trim(), '0');
});

test('a transaction: an error inside aborts it, COMMIT reports aborted, nothing is kept; a good one commits', async () => {
	const bad = await pgcheck(pg.url, ['tx', "INSERT INTO items VALUES (1, 'one')", 'SELECT 1/0',
		"INSERT INTO items VALUES (2, 'two')", 'commit']);
	assert.equal(bad.code, 0, bad.stderr);
	const l = bad.lines;
	assert.equal(l[0].tag, 'INSERT 0 1');
	assert.equal(l[1].sqlstate, '22012');
	assert.equal(l[2].sqlstate, '25P02');
	assert.equal(l[3].i, -1);
	assert.equal(l[3].kind, 'aborted');
	assert.equal((await pg.psql('SELECT count(*) FROM items')).trim(), '0');

	const rolled = await pgcheck(pg.url, ['tx', "INSERT INTO items VALUES (3, 'three')", 'rollback']);
	assert.equal(rolled.lines.at(-1).tag, 'ROLLBACK');
	assert.equal((await pg.psql('SELECT count(*) FROM items')).trim(), '0');

	const good = await pgcheck(pg.url, ['tx', "INSERT INTO items VALUES (4, 'four')", 'SELECT count(*) FROM items', 'commit']);
	assert.deepEqual(good.lines[1].rows, [[1]]);
	assert.equal(good.lines.at(-1).tag, 'COMMIT');
	assert.equal((await pg.psql('SELECT name FROM items WHERE id = 4')).trim(), 'four');
});

test('errors carry SQLSTATE, message, detail and constraint', async () => {
	await pg.psql("INSERT INTO items VALUES (10, 'taken')");
	const r = await pgcheck(pg.url, ['seq', 'INSERT INTO items VALUES ($1, $2)', '%int4:11', '%text:taken']);
	const [e] = r.lines;
	assert.equal(e.ok, false);
	assert.equal(e.kind, 'server');
	assert.equal(e.sqlstate, '23505');
	assert.match(e.message, /duplicate key value violates unique constraint "items_name_key"/);
	assert.equal(e.detail, 'Key (name)=(taken) already exists.');
	assert.equal(e.constraint, 'items_name_key');
});

test('a cached statement whose result type changed (0A000) is prepared again once', async () => {
	const r = await pgcheck(pg.url, ['seq', 'SELECT * FROM shape', 'ALTER TABLE shape ADD COLUMN y text',
		'SELECT * FROM shape'], { INGOT_PG_POOL_SIZE: '1' });
	const l = byIndex(r.lines);
	assert.equal(l.length, 3);
	assert.equal(l[0].ok, true);
	assert.deepEqual(l[0].cols, ['x']);
	assert.equal(l[2].ok, true, JSON.stringify(l[2]));
	assert.deepEqual(l[2].cols, ['x', 'y']);
});

test('LISTEN/NOTIFY: the notification reaches the callback', async () => {
	const r = await pgcheck(pg.url, ['listen', 'ingot_events', 'payload "with" quotes']);
	assert.equal(r.code, 0, r.stderr);
	const n = r.lines.find((x) => x.notify);
	assert.deepEqual(n, { notify: true, channel: 'ingot_events', payload: 'payload "with" quotes' });
});

test('LISTEN again after the listening connection is lost (ended by the server, then a restart): later NOTIFYs still arrive', async () => {
	const channel = 'ingot_again';
	// The listening connection's backend, once its LISTEN has gone through
	// (its last query, finished); another one than old after a reconnect.
	const listening = (old) => pg.waitFor("SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE usename = 'ingot' " +
		`AND query = 'LISTEN "${channel}"' AND state = 'idle'`, (v) => Number(v) > 0 && v !== old,
	{ what: `a connection that LISTENs on ${channel}${old ? ` (not ${old})` : ''}` });
	const run = pgcheckLive(pg.url, ['notifications', channel, '3'], { INGOT_PG_POOL_SIZE: '1' });
	try {
		const notify = async (payload) => {
			await pg.psql(`NOTIFY ${channel}, '${payload}'`);
			return run.next(20000, `the notification "${payload}"`);
		};
		const first = await listening();
		assert.deepEqual(await notify('one'), { notify: true, channel, payload: 'one' });
		// The server ends the listening connection: the runtime connects
		// again and LISTENs again, by itself.
		assert.equal((await pg.psql(`SELECT pg_terminate_backend(${first})`)).trim(), 't');
		const second = await listening(first);
		assert.deepEqual(await notify('two'), { notify: true, channel, payload: 'two' });
		// A restart ends every connection, and refuses new ones for a while.
		await pg.restart();
		await listening(second);
		assert.deepEqual(await notify('three'), { notify: true, channel, payload: 'three' });
		// Three notifications, each once: pgcheck is done.
		const end = await within(20000, run.exited, 'pgcheck did not end after 3 notifications');
		assert.equal(end.code, 0, end.stderr);
	} finally {
		await run.kill();
	}
});

test('the unix socket (host= a directory) connects', async () => {
	const r = await pgcheck(pg.socketUrl, ['seq', 'SELECT inet_server_port() IS NULL']);
	assert.deepEqual(r.lines[0].rows, [[true]], r.stdout + r.stderr);
});

test('SCRAM with a wrong password: a clear auth error, and the password appears nowhere', async () => {
	const secret = 'not-the-password-4711';
	const r = await pgcheck(pg.urlWith({ password: secret }), ['seq', 'SELECT 1']);
	assert.equal(r.code, 0, r.stderr);
	const [e] = r.lines;
	assert.equal(e.ok, false);
	assert.equal(e.kind, 'auth');
	assert.match(e.message, /password authentication failed for user "ingot"/);
	assert.ok(!(r.stdout + r.stderr).includes(secret));
	assert.ok(!(r.stdout + r.stderr).includes(pg.password));
});

test('md5 and trust authentication', async () => {
	const md5 = await start({ authMethod: 'md5' });
	const ok = await pgcheck(md5.url, ['seq', 'SELECT current_user']);
	assert.deepEqual(ok.lines[0].rows, [['ingot']], ok.stdout + ok.stderr);
	const bad = await pgcheck(md5.urlWith({ password: 'wrong' }), ['seq', 'SELECT 1']);
	assert.equal(bad.lines[0].kind, 'auth');
	const trust = await start({ authMethod: 'trust' });
	const t = await pgcheck(trust.urlWith({ password: null }), ['seq', 'SELECT 2']);
	assert.deepEqual(t.lines[0].rows, [[2]], t.stdout + t.stderr);
});

test('TLS: verify-full trusts the test CA, refuses another CA and a name mismatch; require/prefer encrypt unchecked; disable stays plain', async () => {
	const tls = await start({ tls: true });
	const ok = await pgcheck(tls.url, ['seq', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()']);
	assert.deepEqual(ok.lines[0].rows, [[true]], ok.stdout + ok.stderr);
	const wrong = await pgcheck(tls.urlWith({ params: { sslrootcert: tls.wrongCaCert } }), ['seq', 'SELECT 1']);
	assert.equal(wrong.lines[0].kind, 'tls', JSON.stringify(wrong.lines));
	assert.match(wrong.lines[0].message, /certificate not trusted/);
	const byIp = await pgcheck(tls.urlWith({ host: '127.0.0.1' }), ['seq', 'SELECT 1']);
	assert.equal(byIp.lines[0].kind, 'tls', JSON.stringify(byIp.lines));
	// require and prefer encrypt without checking: no CA, an IP, still TLS.
	for (const sslmode of ['require', 'prefer']) {
		const r = await pgcheck(tls.urlWith({ host: '127.0.0.1', params: { sslmode, sslrootcert: null } }),
			['seq', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()']);
		assert.deepEqual(r.lines[0].rows, [[true]], sslmode + ': ' + r.stdout + r.stderr);
	}
	// prefer against a server without TLS: plain.
	const noTls = await pgcheck(pg.urlWith({ params: { sslmode: 'prefer' } }),
		['seq', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()']);
	assert.deepEqual(noTls.lines[0].rows, [[false]], noTls.stdout + noTls.stderr);
	const required = await pgcheck(pg.urlWith({ params: { sslmode: 'require' } }), ['seq', 'SELECT 1']);
	assert.equal(required.lines[0].kind, 'tls');
	assert.match(required.lines[0].message, /does not support SSL/);
	const plain = await pgcheck(tls.urlWith({ params: { sslmode: 'disable', sslrootcert: null } }),
		['seq', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()']);
	assert.deepEqual(plain.lines[0].rows, [[false]], plain.stdout + plain.stderr);
});

test('no database configured: every query fails at once with not_configured', async () => {
	const r = await pgcheck(null, ['seq', 'SELECT 1']);
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.lines[0].kind, 'not_configured');
});

test('a bad DATABASE_URL stops the start with exit 2, without the password', async () => {
	const r = await pgcheck('mysql://u:hunter2secret@localhost/db', ['seq', 'SELECT 1']);
	assert.equal(r.code, 2);
	assert.match(r.stderr, /DATABASE_URL/);
	assert.ok(!r.stderr.includes('hunter2secret'));
	const unknown = await pgcheck(`${pg.url}&nonsense=1`, ['seq', 'SELECT 1']);
	assert.equal(unknown.code, 2);
	assert.ok(!unknown.stderr.includes(pg.password));
});

test('nothing listening: a query waits INGOT_PG_ACQUIRE_TIMEOUT_MS, then fails with unavailable', async () => {
	const port = await freePort();
	const r = await pgcheck(pg.urlWith({ port }), ['seq', 'SELECT 1'], { INGOT_PG_ACQUIRE_TIMEOUT_MS: '300' });
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.lines[0].kind, 'unavailable');
});

test('a server that accepts and never answers: the connect timeout, then unavailable', async () => {
	const sockets = [];
	const silent = net.createServer((s) => sockets.push(s));
	await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
	try {
		const r = await pgcheck(pg.urlWith({ port: silent.address().port }), ['seq', 'SELECT 1'],
			{ INGOT_PG_ACQUIRE_TIMEOUT_MS: '500', INGOT_PG_CONNECT_TIMEOUT_MS: '100' });
		assert.equal(r.lines[0].kind, 'unavailable');
		assert.ok(sockets.length >= 1); // it did connect, and gave up
	} finally {
		for (const s of sockets) s.destroy();
		silent.close();
	}
});

test('the startup line about max_connections counts the LISTEN connection of a core whose Pub/Sub consumer listens', async () => {
	// Two pools of 2 fill max_connections (4) exactly, with no slots held
	// for superusers; Pub/Sub's consumer listens on core 0, a fifth
	// connection: over by one, said with the listeners counted.
	const small = await start({ maxConnections: 4, settings: { superuser_reserved_connections: '0' } });
	const srv = await startServer({ DATABASE_URL: small.url, INGOT_PG_POOL_SIZE: '2' }, { threads: '2' });
	try {
		const line = await within(30000, srv.waitLog((l) => /max_connections is below/.test(l.msg)),
			'the startup line about max_connections');
		assert.equal(line.max_connections, 4);
		assert.equal(line.pool_size, 2);
		assert.equal(line.cores, 2);
		assert.equal(line.listeners, 1);
		assert.match(line.msg, /LISTEN connections/);
	} finally {
		await srv.stop();
	}
});

test('the service: /readyz goes 200 once the pool has connected; a pool over max_connections is said at startup', async () => {
	// One slot for ordinary roles (3 are reserved for superusers) and eight
	// connections wanted: one core connects and the other gets none.
	// Pub/Sub's consumer is off: its LISTEN connection would race the
	// pools for the one slot (and, winning it, leave no pool a connection
	// to learn max_connections on).
	const small = await start({ maxConnections: 4 });
	const srv = await startServer({ DATABASE_URL: small.url, INGOT_PG_POOL_SIZE: '4', INGOT_PUBSUB_CONSUME: 'false' }, { threads: '2' });
	try {
		// Said by whichever core connects: when only core 0 checked, this
		// waited forever whenever core 1 won the slot. Bounded, so that a
		// missing line fails instead of hanging.
		const line = await within(30000, srv.waitLog((l) => /max_connections is below/.test(l.msg)),
			'the startup line about max_connections');
		assert.equal(line.max_connections, 4);
		assert.equal(line.pool_size, 4);
		assert.equal(line.cores, 2);
		// The first connection is up (it answered SHOW): ready.
		assert.equal((await curlResponse(srv.port, '/readyz')).status, 200);
	} finally {
		await srv.stop();
	}
});
