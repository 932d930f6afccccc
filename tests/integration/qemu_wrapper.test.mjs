// images/qemu's choice of accelerator: KVM only when this host's KVM runs
// the probe kernel (images/kvm_probe.S, one SSE instruction), else TCG with
// one line on stderr saying why; the verdict cached under
// $XDG_CACHE_HOME/ingot; QEMU_ACCEL forcing a choice without a probe. The
// probe kernel itself is checked under TCG; the wrapper's logic against a
// stand-in qemu-system-x86_64 on PATH (one that fails or passes under KVM,
// and records its command lines), and once against this host's real qemu
// and /dev/kvm (the project's machines: KVM nested in a Firecracker guest,
// which cannot run SSE in a guest, so TCG).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, commandRunner, needTools } from './lib.mjs';

const WRAPPER = path.join(ROOT, 'images', 'qemu');
const PROBE = path.join(ROOT, 'build', 'images', 'kvm-probe.elf');
const T = { timeout: 120000 };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-qemu-wrapper-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const { run, must } = commandRunner({ timeoutMs: 60000 });

let built;
const buildProbe = () => (built ??= must('make', ['-s', '--no-print-directory', '-C', ROOT, PROBE]));

let kvmOpens = true;
try { fs.accessSync('/dev/kvm', fs.constants.R_OK | fs.constants.W_OK); } catch { kvmOpens = false; }

const LINE = /^images\/qemu: using TCG, not KVM: (.*)$/m;

/** A directory with a stand-in qemu-system-x86_64 that appends its command
 * line to calls.log; under `-accel kvm` it acts as `kvm` says: 'fail' (the
 * nested host's "KVM internal error", then hanging as qemu does) or 'pass'
 * (isa-debug-exit's status 65, the probe's end) when it boots the probe.
 * Any other run exits 0. */
function fakeQemu(name, kvm) {
	const dir = path.join(tmp, name);
	fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
	fs.mkdirSync(path.join(dir, 'images'));
	fs.writeFileSync(path.join(dir, 'images', 'kvm-probe.elf'), 'probe');
	fs.writeFileSync(path.join(dir, 'images', 'unikernel.elf'), 'image');
	const fake = path.join(dir, 'bin', 'qemu-system-x86_64');
	fs.writeFileSync(fake, `#!/bin/sh
echo "$*" >>${JSON.stringify(path.join(dir, 'calls.log'))}
case " $* " in *" -accel kvm "*kvm-probe.elf*) ;; *) exit 0 ;; esac
${kvm === 'fail'
		? 'echo "KVM internal error. Suberror: 1" >&2\nexec sleep 600'
		: 'exit 65'}
`, { mode: 0o755 });
	const env = {
		...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, IMAGES: path.join(dir, 'images'),
		XDG_CACHE_HOME: path.join(dir, 'cache'),
	};
	delete env.QEMU_ACCEL;
	const calls = () => {
		try { return fs.readFileSync(path.join(dir, 'calls.log'), 'utf8').trim().split('\n'); } catch { return []; }
	};
	return { env, calls };
}

const probes = (calls) => calls.filter((c) => c.includes('kvm-probe.elf'));
const finalRun = (calls) => calls.filter((c) => c.includes('unikernel.elf'));

test('the probe kernel runs its SSE instruction under TCG: isa-debug-exit status 65', T, async () => {
	await needTools('qemu-system-x86_64');
	await buildProbe();
	const r = await run('qemu-system-x86_64', ['-M', 'microvm', '-accel', 'tcg', '-m', '16', '-nodefaults',
		'-no-reboot', '-display', 'none', '-serial', 'stdio', '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04',
		'-kernel', PROBE]);
	assert.equal(r.code, 65, `status ${r.code}: ${r.stdout}${r.stderr}`);
});

test('a KVM that fails the probe: TCG, a line naming the reason, the verdict cached', T, async () => {
	const { env, calls } = fakeQemu('fail', 'fail');
	const r = await run(WRAPPER, ['unikernel', '8080'], { env });
	assert.equal(r.code, 0, r.stderr);
	if (!kvmOpens) {
		assert.match(r.stderr, LINE);
		assert.equal(LINE.exec(r.stderr)[1], '/dev/kvm cannot be opened');
		assert.deepEqual(probes(calls()), [], 'no probe without /dev/kvm');
		return;
	}
	assert.equal(LINE.exec(r.stderr)?.[1], "this host's KVM failed the SSE probe (KVM internal error. Suberror: 1)",
		r.stderr);
	assert.equal(probes(calls()).length, 1, calls().join('\n'));
	assert.match(probes(calls())[0], / -accel kvm /);
	assert.equal(finalRun(calls()).length, 1);
	assert.match(finalRun(calls())[0], / -accel tcg /);
	// The second run reads the cached verdict: the same line, no probe.
	const again = await run(WRAPPER, ['unikernel', '8080'], { env });
	assert.equal(LINE.exec(again.stderr)?.[1], LINE.exec(r.stderr)[1]);
	assert.equal(probes(calls()).length, 1, 'the verdict was cached');
	assert.match(finalRun(calls())[1], / -accel tcg /);
});

test('a KVM that passes the probe: KVM, no line', T, async (t) => {
	if (!kvmOpens) return t.skip('no /dev/kvm to open here: the probe is not reached');
	const { env, calls } = fakeQemu('pass', 'pass');
	const r = await run(WRAPPER, ['unikernel', '8080'], { env });
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.stderr, '');
	assert.equal(probes(calls()).length, 1);
	assert.match(finalRun(calls())[0], / -accel kvm /);
});

test('QEMU_ACCEL=tcg forces TCG without a probe or a line', T, async () => {
	const { env, calls } = fakeQemu('forced', 'fail');
	const r = await run(WRAPPER, ['unikernel', '8080'], { env: { ...env, QEMU_ACCEL: 'tcg' } });
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.stderr, '');
	assert.deepEqual(probes(calls()), []);
	assert.match(finalRun(calls())[0], / -accel tcg /);
});

test("this host's qemu and KVM: the wrapper's pick agrees with the probe run by hand", T, async () => {
	await needTools('qemu-system-x86_64');
	await buildProbe();
	const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'real-cache') };
	delete env.QEMU_ACCEL;
	const r = await run(WRAPPER, ['accel'], { env });
	assert.equal(r.code, 0, r.stderr);
	let expect = 'tcg';
	if (kvmOpens) {
		// The probe by hand, under KVM: qemu hangs after an internal error,
		// so the run is cut off; only the probe's status 65 passes.
		const byHand = await run('qemu-system-x86_64', ['-M', 'microvm', '-accel', 'kvm', '-m', '16', '-nodefaults',
			'-no-reboot', '-display', 'none', '-serial', 'stdio', '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04',
			'-kernel', PROBE], { timeoutMs: 10000 });
		if (byHand.code === 65) expect = 'kvm';
	}
	assert.equal(r.stdout.trim(), expect, r.stderr);
	if (expect === 'tcg') assert.match(r.stderr, LINE);
	else assert.equal(r.stderr, '');
});
