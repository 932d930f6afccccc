// A guest under qemu for the VM tests (vm.test.mjs: the Linux image;
// unikernel.test.mjs: the unikernel): images/qemu with TCG, the console on
// our pipe, the monitor on a unix socket. JSON log lines are picked out of
// the console (a kernel's own messages share it). Every wait is for an
// event (a console line, qemu's exit), bounded by a safety net.
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { ROOT, within } from './lib.mjs';

export const IMAGES = path.join(ROOT, 'build', 'images');
// Safety net only (a Linux boot under TCG takes a few seconds here); no
// test asserts a duration.
export const BOOT_MS = 180000;

const guests = new Set();
/** Kills every guest still running (from an after() hook). */
export function killGuests() {
	for (const g of guests) g.kill();
}

export class Guest {
	/** images/qemu MODE PORT; env: more of images/qemu's knobs (QEMU_APPEND,
	 * QEMU_MODERN, QEMU_TAP); dir: where the monitor's socket goes; wrap: a
	 * command and its arguments that run images/qemu (ip netns exec NS),
	 * exec'ing it so that the PID stays qemu's. */
	constructor(mode, port, { dir, env = {}, wrap = [] } = {}) {
		this.mode = mode;
		this.port = port;
		this.monitor = path.join(dir, `monitor-${mode}-${port}.sock`);
		const qemu = [path.join(ROOT, 'images', 'qemu'), mode, String(port)];
		const [cmd, ...args] = [...wrap, ...qemu];
		this.proc = spawn(cmd, args, {
			env: { ...process.env, IMAGES, QEMU_ACCEL: 'tcg', QEMU_MONITOR: this.monitor, ...env },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		this.pid = this.proc.pid;
		guests.add(this);
		this.console = '';
		this.lines = []; // every console line, \r removed
		this.logs = [];
		this.stderr = '';
		this.exit = null;
		this._waiters = [];
		let partial = '';
		this.proc.stdout.setEncoding('latin1');
		this.proc.stdout.on('data', (d) => {
			this.console += d;
			partial += d;
			for (let nl; (nl = partial.indexOf('\n')) >= 0; partial = partial.slice(nl + 1)) {
				const line = partial.slice(0, nl).replace(/\r/g, '');
				this.lines.push(line);
				const at = line.indexOf('{"ts":');
				if (at >= 0) try { this.logs.push(JSON.parse(line.slice(at))); } catch { /* cut by a kernel message */ }
			}
			this._check();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.exited = new Promise((resolve) => this.proc.on('close', (code, signal) => {
			this.exit = { code, signal };
			guests.delete(this);
			this._check();
			resolve(this.exit);
		}));
	}

	describe() {
		return `qemu ${this.mode}; stderr: ${this.stderr}\nconsole (last 3000 chars):\n${this.console.slice(-3000)}`;
	}

	_check() {
		this._waiters = this._waiters.filter((w) => {
			const hit = this.logs.find(w.pred);
			if (hit) w.resolve(hit);
			else if (this.exit) w.reject(new Error(`qemu exited ${JSON.stringify(this.exit)} first; ${this.describe()}`));
			else return true;
			return false;
		});
	}

	waitLog(pred, ms = BOOT_MS) {
		return within(ms, new Promise((resolve, reject) => {
			this._waiters.push({ pred, resolve, reject });
			this._check();
		}), `a log line on the console; ${this.describe()}`);
	}

	/** qemu's exit, within the safety net. */
	waitExit(ms = BOOT_MS) {
		return within(ms, this.exited, `qemu to exit; ${this.describe()}`);
	}

	/** Ctrl-Alt-Del through the monitor, as a host asks a VM to shut down. */
	ctrlAltDel() {
		return new Promise((resolve, reject) => {
			const s = net.connect(this.monitor);
			s.once('error', reject);
			s.once('connect', () => s.write('sendkey ctrl-alt-delete\n', () => resolve()));
			// qemu closes the monitor when it exits.
			s.on('data', () => {});
			this.exited.then(() => s.destroy());
		});
	}

	kill() {
		if (!this.exit) try { process.kill(this.proc.pid, 'SIGKILL'); } catch { /* gone */ }
	}
}
