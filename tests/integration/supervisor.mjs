// A socket-activation supervisor for the tests, as systemd's: it holds one
// listening TCP socket for good, and whenever a connection is pending in its
// backlog and the service is not running, starts the service with the socket
// at fd 3 (LISTEN_FDS=1, LISTEN_PID its pid). The service exits when idle
// (INGOT_IDLE_EXIT_MS); connections that came meanwhile wait in the backlog
// for the next start.
//
// Node's net.Server would accept the connections itself, so the socket is a
// bare tcp_wrap handle that libuv never polls: bound here, made to listen by
// a perl one-liner given the fd (perl-base is in every Debian). "Pending" is
// a perl select(2) on the fd, which returns once a connection is queued,
// without accepting it. Every wait is for an exit or a line; no sleeps.
import { spawn } from 'node:child_process';
import { ServerProcess, BIN } from './lib.mjs';

// The deprecation warning of process.binding is noise in the TAP output.
const { TCP, constants } = (() => {
	const emit = process.emitWarning;
	process.emitWarning = () => {};
	try { return process.binding('tcp_wrap'); } finally { process.emitWarning = emit; }
})();

const SANITIZER_ENV = Object.fromEntries(['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']
	.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));

function runPerl(code, fd) {
	return new Promise((resolve, reject) => {
		const p = spawn('perl', ['-e', code], { stdio: ['ignore', 'ignore', 'pipe', fd] });
		let err = '';
		p.stderr.on('data', (c) => { err += c; });
		p.on('error', reject);
		p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`perl failed (${code}): ${err}`))));
	});
}

/** Spawns cmd with `fds` at 3, 4, ... and LISTEN_PID set to its own pid
 * (sh's $$ survives the exec). Returns a ServerProcess. */
export function spawnActivated(fds, env, { names, cmd = BIN, args = [] } = {}) {
	const listen = { LISTEN_FDS: String(fds.length), ...(names ? { LISTEN_FDNAMES: names } : {}) };
	const fullEnv = { PATH: process.env.PATH, ...SANITIZER_ENV, ...listen, ...env };
	for (const k of Object.keys(fullEnv)) if (fullEnv[k] === undefined) delete fullEnv[k];
	const proc = spawn('sh', ['-c', 'LISTEN_PID=$$ exec "$0" "$@"', cmd, ...args],
		{ env: fullEnv, stdio: ['ignore', 'pipe', 'pipe', ...fds] });
	return new ServerProcess(proc);
}

/** A bound TCP socket that nothing polls; `listen` makes it listen. */
export async function heldSocket({ listen = true } = {}) {
	const h = new TCP(constants.SERVER);
	const rc = h.bind('127.0.0.1', 0);
	if (rc !== 0) throw new Error(`bind failed: ${rc}`);
	const addr = {};
	h.getsockname(addr);
	if (listen) await runPerl('open(my $s, "+<&=3") or die "fd 3: $!"; listen($s, 4096) or die "listen: $!"', h.fd);
	return { fd: h.fd, port: addr.port, close: () => h.close() };
}

export class Supervisor {
	/** env: the service's settings (INGOT_IDLE_EXIT_MS, ...). */
	constructor(env) {
		this.env = env;
		this.runs = []; // every ServerProcess started, in order
		this.stopped = false;
	}

	async start() {
		this.sock = await heldSocket();
		this.port = this.sock.port;
		this.done = this._loop();
		return this;
	}

	/** Resolves once run number n (1-based) has started. */
	started(n) {
		return new Promise((resolve) => {
			const check = () => (this.runs.length >= n ? resolve(this.runs[n - 1]) : this._waiters.push(check));
			check();
		});
	}

	_waiters = [];

	_woke() {
		const w = this._waiters;
		this._waiters = [];
		for (const f of w) f();
	}

	async _loop() {
		while (!this.stopped) {
			// Until a connection is queued (or stop() shut the socket).
			this.waiter = spawn('perl', ['-e', 'vec($r, 3, 1) = 1; select($r, undef, undef, undef) > 0 or exit 1'],
				{ stdio: ['ignore', 'ignore', 'ignore', this.sock.fd] });
			await new Promise((resolve) => this.waiter.on('exit', resolve));
			this.waiter = null;
			if (this.stopped)
				break;
			const srv = spawnActivated([this.sock.fd], { INGOT_THREADS: '2', ...this.env });
			this.runs.push(srv);
			this._woke();
			await srv.exited;
		}
	}

	/** Stops the loop (SIGTERM to a running service) and closes the socket. */
	async stop() {
		this.stopped = true;
		if (this.waiter) this.waiter.kill('SIGKILL');
		const last = this.runs[this.runs.length - 1];
		if (last) await last.stop();
		await this.done;
		this.sock.close();
	}
}
