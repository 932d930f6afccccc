// A real PostgreSQL for the database tests: initdb into a temporary
// directory, a free loopback port and a unix socket there, password auth
// (SCRAM by default), TLS with a test CA in one variant; run as an
// unprivileged user (postgres, else nobody) when the tests run as root.
// Every wait is for an event (pg_ctl -w, pg_isready, a query); it is stopped
// by its own PID, and whatever is left at exit is killed by PID too.
import { after } from 'node:test';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, freePort } from './lib.mjs';
import { makeTestPki } from './upstreams.mjs';

/** The bin directory of the newest PostgreSQL installed (Debian's layout). */
export function pgBinDir() {
	const base = '/usr/lib/postgresql';
	const versions = fs.existsSync(base)
		? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
			.sort((a, b) => Number(b) - Number(a))
		: [];
	return versions.length ? path.join(base, versions[0], 'bin') : null;
}

// PostgreSQL when missing: tools/setup test installs it (as root).
function ensureInstalled() {
	let bin = pgBinDir();
	if (bin) return bin;
	execFileSync(path.join(ROOT, 'tools', 'setup'), ['test'], { stdio: ['ignore', 'ignore', 'inherit'] });
	bin = pgBinDir();
	if (!bin) throw new Error('PostgreSQL is not installed and tools/setup test did not install it');
	return bin;
}

// The account the server runs as: PostgreSQL refuses to run as root.
function serverAccount() {
	if (process.getuid() !== 0) return null; // ourselves
	const passwd = fs.readFileSync('/etc/passwd', 'utf8').split('\n').map((l) => l.split(':'));
	for (const name of ['postgres', 'nobody']) {
		const e = passwd.find((f) => f[0] === name);
		if (e) return { name, uid: Number(e[2]), gid: Number(e[3]) };
	}
	throw new Error('no unprivileged account (postgres or nobody) to run PostgreSQL as');
}

function run(cmd, args, { account, cwd, env, input, timeoutMs = 60000 } = {}) {
	return new Promise((resolve) => {
		const child = execFile(cmd, args, {
			cwd, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 << 20,
			env: { PATH: process.env.PATH, LC_ALL: 'C', ...env },
			...(account ? { uid: account.uid, gid: account.gid } : {}),
		}, (err, stdout, stderr) => resolve({
			code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr,
		}));
		if (input !== undefined) child.stdin.end(input);
	});
}

async function must(cmd, args, opts) {
	const r = await run(cmd, args, opts);
	if (r.code !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.code}): ${r.stderr}${r.stdout}`);
	return r.stdout;
}

// Every server started here and not stopped yet: killed (by PID) at exit.
const live = new Set();
process.on('exit', () => {
	for (const pg of live) {
		try { process.kill(pg.pid, 'SIGQUIT'); } catch { /* gone */ }
		try { fs.rmSync(pg.dir, { recursive: true, force: true }); } catch { /* left */ }
		try { pg.pki?.cleanup(); } catch { /* left */ }
	}
});

const enc = encodeURIComponent;

/**
 * Starts a PostgreSQL of its own and resolves once it accepts connections:
 *   tls: true          ssl=on with a test CA (caCert; wrongCaCert is another CA); the
 *                      certificate names localhost only (127.0.0.1 is a mismatch)
 *   authMethod         'scram-sha-256' (default), 'md5' or 'trust', for TCP and the socket
 *   maxConnections     max_connections (default 200)
 *   settings           more postgresql.conf lines: { name: value }
 *   host               the loopback address it listens on (default 127.0.0.1)
 *   port               its port (default: a free one)
 * Resolves {
 *   port, host, socketDir (its unix socket <socketDir>/.s.PGSQL.<port>),
 *   user, password, database ('ingot', a role that owns the database),
 *   url            DATABASE_URL for that role over TCP (sslmode=verify-full with
 *                  the CA and host localhost when tls, else sslmode=disable),
 *   socketUrl      the same over the unix socket (?host=<socketDir>),
 *   superuserUrl   the superuser (postgres) over TCP,
 *   urlWith(o)     url with changes: {user, password, host, port, database, params: {k: v}}
 *                  (a param of null is dropped),
 *   caCert, wrongCaCert (tls only), dir, dataDir, logFile, pid,
 *   psql(sql, {database, user})  -> stdout (unaligned, tuples only, ON_ERROR_STOP);
 *                  as the superuser over the socket unless user says otherwise,
 *   waitFor(sql, accept, {ms, what})  asks psql(sql) again and again until accept(its
 *                  trimmed answer) is true, and resolves that answer; fails after ms
 *                  (default 20000), naming what,
 *   restart()      pg_ctl restart -m fast (the same port; pid changes),
 *   halt(), resume()  pg_ctl stop -m fast, and start again on the same port
 *                  and data (a server that is down for a while),
 *   stop()         a fast shutdown by PID, waits for it, removes the directory }
 */
export async function startPostgres({ tls = false, authMethod = 'scram-sha-256', maxConnections = 200,
	settings = {}, host = '127.0.0.1', port = 0 } = {}) {
	const bin = ensureInstalled();
	const account = serverAccount();
	// Under the system's temporary directory, never the clone: the server's
	// account must reach it even when the clone sits under /root. Short, for
	// the socket's path limit (108 bytes).
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-pg-'));
	const dataDir = path.join(dir, 'data');
	const logFile = path.join(dir, 'server.log');
	const superPassword = `su-${process.pid}-${Math.random().toString(36).slice(2)}`;
	const password = `pw-${process.pid}-${Math.random().toString(36).slice(2)}`;
	const pwfile = path.join(dir, 'pwfile');
	fs.writeFileSync(pwfile, `${superPassword}\n`, { mode: 0o600 });
	// The test CA of the client tests: a certificate for localhost (no IP
	// address: 127.0.0.1 is a name mismatch) and an unrelated CA.
	const pki = tls ? await makeTestPki(['localhost']) : null;
	const owned = [dir, pwfile];
	if (pki) {
		fs.chmodSync(pki.dir, 0o755);
		owned.push(pki.certFile, pki.keyFile);
	}
	if (account) {
		for (const f of owned) fs.chownSync(f, account.uid, account.gid);
		fs.chmodSync(dir, 0o755); // the tests' psql and the service reach the socket
	}
	const as = { account, cwd: dir };
	await must(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', `--auth=${authMethod}`,
		`--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], as);

	const conf = {
		listen_addresses: `'${host}'`,
		unix_socket_directories: `'${dir}'`,
		max_connections: String(maxConnections),
		// A test database: durability buys nothing, speed does.
		fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off',
		shared_buffers: "'32MB'",
		// md5 auth needs md5-hashed passwords (a SCRAM one would make it SCRAM).
		password_encryption: authMethod === 'md5' ? "'md5'" : "'scram-sha-256'",
		...(pki ? { ssl: 'on', ssl_cert_file: `'${pki.certFile}'`, ssl_key_file: `'${pki.keyFile}'` } : {}),
		...settings,
	};
	fs.appendFileSync(path.join(dataDir, 'postgresql.conf'),
		`\n# ingot tests\n${Object.entries(conf).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`);

	const pg = {
		host, dir, dataDir, logFile, socketDir: dir, user: 'ingot', password, database: 'ingot',
		caCert: pki?.caFile, wrongCaCert: pki?.otherCaFile, pki, pid: 0, port: 0,
	};
	const pidOf = () => Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
	const pgctl = (args) => must(path.join(bin, 'pg_ctl'), ['-D', dataDir, ...args], as);

	// A port that was free a moment ago may be taken by the time the server
	// binds it: then another one.
	for (let attempt = 0; ; attempt++) {
		pg.port = port || await freePort();
		const r = await run(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60',
			'-o', `-p ${pg.port}`, 'start'], as);
		if (r.code === 0) break;
		const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
		if (!port && attempt < 4 && /could not (bind|create listen)|Address already in use/.test(log)) continue;
		fs.rmSync(dir, { recursive: true, force: true });
		pki?.cleanup();
		throw new Error(`PostgreSQL did not start (${r.code}): ${r.stderr}${r.stdout}\n${log}`);
	}
	pg.pid = pidOf();
	live.add(pg);
	await must(path.join(bin, 'pg_isready'), ['-h', dir, '-p', String(pg.port), '-t', '30']);

	pg.psql = (sql, { database = pg.database, user = 'postgres' } = {}) =>
		must(path.join(bin, 'psql'), ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', dir,
			'-p', String(pg.port), '-U', user, '-d', database, '-f', '-'], {
			env: { PGPASSWORD: user === 'postgres' ? superPassword : password, PGCONNECT_TIMEOUT: '30' },
			input: sql,
		});
	// The role and its database; the role may create schemas and tables in it.
	await pg.psql(`CREATE ROLE ingot LOGIN PASSWORD '${password}';`, { database: 'postgres' });
	await pg.psql('CREATE DATABASE ingot OWNER ingot;', { database: 'postgres' });

	const build = ({ user = pg.user, password: pw = user === 'postgres' ? superPassword : pg.password,
		host = pki ? 'localhost' : pg.host, port = pg.port, database = pg.database, params = {} } = {}) => {
		const p = { ...(pki ? { sslmode: 'verify-full', sslrootcert: pki.caFile } : { sslmode: 'disable' }), ...params };
		const q = Object.entries(p).filter(([, v]) => v !== null && v !== undefined)
			.map(([k, v]) => `${k}=${enc(v)}`).join('&');
		const h = host.includes(':') ? `[${host}]` : host;
		return `postgres://${enc(user)}${pw === null ? '' : `:${enc(pw)}`}@${h}:${port}/${enc(database)}${q ? `?${q}` : ''}`;
	};
	pg.urlWith = build;
	pg.url = build();
	pg.superuserUrl = build({ user: 'postgres' });
	pg.socketUrl = `postgresql://${enc(pg.user)}:${enc(password)}@/${enc(pg.database)}` +
		`?host=${enc(dir)}&port=${pg.port}`;

	pg.waitFor = async (sql, accept, { ms = 20000, what = sql } = {}) => {
		const deadline = Date.now() + ms;
		for (;;) {
			const v = (await pg.psql(sql)).trim();
			if (accept(v)) return v;
			if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what} (last answer: ${v})`);
		}
	};

	pg.restart = async () => {
		await pgctl(['-l', logFile, '-w', '-t', '60', '-m', 'fast', '-o', `-p ${pg.port}`, 'restart']);
		pg.pid = pidOf();
	};
	pg.halt = async () => {
		await pgctl(['-w', '-t', '60', 'stop', '-m', 'fast']);
	};
	pg.resume = async () => {
		await pgctl(['-l', logFile, '-w', '-t', '60', '-o', `-p ${pg.port}`, 'start']);
		pg.pid = pidOf();
	};
	pg.stop = async () => {
		if (!live.has(pg)) return;
		live.delete(pg);
		// A fast shutdown by PID; pg_ctl stop waits until that PID is gone.
		try { process.kill(pg.pid, 'SIGINT'); } catch { /* gone already */ }
		await run(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-w', '-t', '60', 'stop', '-m', 'fast'], as);
		fs.rmSync(dir, { recursive: true, force: true });
		pki?.cleanup();
	};
	return pg;
}

/** For a suite that starts servers as it goes: call it at the top of the
 * test file; it returns start(opts), startPostgres's, and every server so
 * started is stopped after the suite (node:test's after()). */
export function postgresForSuite() {
	const started = [];
	after(async () => { await Promise.all(started.map((pg) => pg.stop())); });
	return async (opts) => {
		const pg = await startPostgres(opts);
		started.push(pg);
		return pg;
	};
}
