// The database tests' own PostgreSQL (pglib.mjs), checked with libpq's psql
// as the reference client: the URLs it hands out are ones libpq accepts,
// SCRAM and md5 refuse a wrong password, verify-full trusts the test CA and
// no other, a restart keeps the data, and stop() leaves no process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { postgresForSuite } from './pglib.mjs';

const start = postgresForSuite();

// Running: the PID exists and is not a zombie (the server's postmaster is
// daemonised by pg_ctl, so its parent is whatever reaps orphans here).
function running(pid) {
	try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'; } catch { return false; }
}

// psql with a connection URL only: nothing of this process's environment.
function psqlUrl(url, sql) {
	return new Promise((resolve) => {
		execFile('psql', ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql],
			{ env: { PATH: process.env.PATH, PGCONNECT_TIMEOUT: '20' }, timeout: 30000 },
			(err, stdout, stderr) => resolve({ code: err ? err.code ?? -1 : 0, stdout: stdout.trim(), stderr }));
	});
}

test('SCRAM: the role connects over TCP and the socket; a wrong password is refused', async () => {
	const pg = await start();
	const hba = fs.readFileSync(`${pg.dataDir}/pg_hba.conf`, 'utf8');
	assert.match(hba, /^host\s+all\s+all\s+127\.0\.0\.1\/32\s+scram-sha-256$/m);
	const ok = await psqlUrl(pg.url, 'SELECT current_user, current_database(), inet_server_port()');
	assert.equal(ok.code, 0, ok.stderr);
	assert.equal(ok.stdout, `ingot|ingot|${pg.port}`);
	assert.equal((await pg.psql("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'ingot'")).trim(), 't');
	const sock = await psqlUrl(pg.socketUrl, 'SELECT current_user, inet_server_port() IS NULL');
	assert.equal(sock.code, 0, sock.stderr);
	assert.equal(sock.stdout, 'ingot|t'); // NULL port: a unix socket
	assert.ok(fs.existsSync(`${pg.socketDir}/.s.PGSQL.${pg.port}`));
	const bad = await psqlUrl(pg.urlWith({ password: 'wrong' }), 'SELECT 1');
	assert.notEqual(bad.code, 0);
	assert.match(bad.stderr, /password authentication failed for user "ingot"/);
	const su = await psqlUrl(pg.superuserUrl, 'SELECT current_setting(\'is_superuser\')');
	assert.equal(su.stdout, 'on', su.stderr);
	// The role owns its database: it may create tables (the migrations do).
	assert.equal((await psqlUrl(pg.url, 'CREATE TABLE t (x int); SELECT 1')).code, 0);
});

test('md5: the role\'s password is stored as md5 and checked', async () => {
	const pg = await start({ authMethod: 'md5' });
	assert.equal((await pg.psql("SELECT left(rolpassword, 3) FROM pg_authid WHERE rolname = 'ingot'")).trim(), 'md5');
	assert.equal((await psqlUrl(pg.url, 'SELECT 1')).stdout, '1');
	const bad = await psqlUrl(pg.urlWith({ password: 'wrong' }), 'SELECT 1');
	assert.match(bad.stderr, /password authentication failed/);
});

test('trust: no password asked', async () => {
	const pg = await start({ authMethod: 'trust' });
	assert.equal((await psqlUrl(pg.urlWith({ password: null }), 'SELECT 1')).stdout, '1');
});

test('TLS: verify-full trusts the test CA, refuses another CA; the session is encrypted', async () => {
	const pg = await start({ tls: true });
	const ok = await psqlUrl(pg.url, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
	assert.equal(ok.code, 0, ok.stderr);
	assert.equal(ok.stdout, 't');
	assert.match(pg.url, /sslmode=verify-full/);
	// The certificate names localhost only: 127.0.0.1 is a name mismatch.
	const ip = await psqlUrl(pg.urlWith({ host: '127.0.0.1' }), 'SELECT 1');
	assert.notEqual(ip.code, 0);
	assert.match(ip.stderr, /does not match host name "127\.0\.0\.1"/);
	const wrong = await psqlUrl(pg.urlWith({ params: { sslrootcert: pg.wrongCaCert } }), 'SELECT 1');
	assert.notEqual(wrong.code, 0);
	assert.match(wrong.stderr, /certificate verify failed/);
	const plain = await psqlUrl(pg.urlWith({ params: { sslmode: 'disable', sslrootcert: null } }),
		'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
	assert.equal(plain.stdout, 'f', plain.stderr);
});

test('restart keeps the data and the port; stop ends the server by its PID', async () => {
	const pg = await start({ authMethod: 'trust' });
	await pg.psql('CREATE TABLE kept (v text); INSERT INTO kept VALUES (\'x\');');
	const before = pg.pid;
	await pg.restart();
	assert.notEqual(pg.pid, before);
	assert.equal(running(before), false);
	assert.equal(running(pg.pid), true);
	assert.equal((await pg.psql('SELECT v FROM kept')).trim(), 'x');
	const pid = pg.pid;
	await pg.stop();
	assert.equal(running(pid), false);
	assert.equal(fs.existsSync(pg.dir), false);
});
