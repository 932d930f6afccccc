// The bootable VM image (`make boot`, images/boot): the initramfs's contents,
// boots under qemu with TCG (a microVM with the kernel + initramfs, the
// extracted vmlinux through PVH, the ISO on q35), each serving through
// user networking forwarded to 127.0.0.1 and ended by Ctrl-Alt-Del from the
// qemu monitor: PID 1 drains, powers off, and qemu exits by itself. Also:
// PID 1 of a mere PID namespace is not mistaken for a VM's init.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { ROOT, BIN, BODY, RawClient, req, curlResponse, within, startServer, cleanup, commandRunner, needTools, freePort } from './lib.mjs';
import { Guest, IMAGES, BOOT_MS, killGuests } from './guest.mjs';

const STATIC_BIN = path.join(ROOT, 'build', 'bin', 'service');
// The Makefile's build of tools/vmlinux ($(VMLINUX_TOOL)), made if missing or stale.
async function vmlinuxTool() {
	await must('make', ['-s', '--no-print-directory', '-C', ROOT, 'build/tools/vmlinux']);
	return path.join(ROOT, 'build', 'tools', 'vmlinux');
}
const OTHER_BIN = process.env.INGOT_BIN && path.resolve(process.env.INGOT_BIN) !== STATIC_BIN;
const SKIP = OTHER_BIN ? { skip: 'the VM image holds build/bin/service; booted in the plain pass' } : {};
const T = { timeout: 400000 };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-vm-'));
after(() => {
	killGuests();
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});

// ---- small helpers ----

const { run, must } = commandRunner({ timeoutMs: 120000, encoding: 'buffer' });
const need = needTools;

function needBoot(...files) {
	for (const f of files) assert.ok(fs.existsSync(path.join(IMAGES, f)), `no ${f} in ${IMAGES}: run make boot`);
}

/** The entries of a newc cpio archive: name, mode, data. */
function cpioEntries(buf) {
	const out = [];
	const pad4 = (n) => (n + 3) & ~3;
	for (let off = 0; off + 110 <= buf.length;) {
		assert.equal(buf.toString('latin1', off, off + 6), '070701', `newc magic at ${off}`);
		const field = (i) => parseInt(buf.toString('latin1', off + 6 + i * 8, off + 14 + i * 8), 16);
		const mode = field(1), uid = field(2), gid = field(3), mtime = field(5), size = field(6), namesize = field(11);
		const name = buf.toString('latin1', off + 110, off + 110 + namesize - 1);
		const dataOff = pad4(off + 110 + namesize);
		if (name === 'TRAILER!!!') break;
		out.push({ name, mode, uid, gid, mtime, data: buf.subarray(dataOff, dataOff + size) });
		off = pad4(dataOff + size);
	}
	return out;
}

/** The kernel tree images/kernel extracted (the one make boot used). */
function kernelModulesDir() {
	const name = fs.readFileSync(path.join(IMAGES, 'kernel.txt'), 'utf8').trim();
	return path.join(ROOT, 'build', 'kernel', name, 'modules');
}

/** modules.dep as {name: [dependency names]} (names with '_'). */
function modulesDep(dir) {
	const deps = {};
	const base = (p) => path.basename(p, '.ko').replace(/-/g, '_');
	for (const line of fs.readFileSync(path.join(dir, 'modules.dep'), 'utf8').split('\n')) {
		if (!line.trim()) continue;
		const [mod, rest] = line.split(':');
		deps[base(mod)] = rest.trim() ? rest.trim().split(/\s+/).map(base) : [];
	}
	return deps;
}

/** The first child of pid (unshare's forked child: PID 1 inside). */
function childOf(pid) {
	for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
		const kids = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
		if (kids) return Number(kids.split(/\s+/)[0]);
	}
	throw new Error(`no child of ${pid}`);
}

// ---- a guest under qemu (guest.mjs) ----

const guest = (mode, port, append) => new Guest(mode, port, { dir: tmp, env: { QEMU_APPEND: append } });

/** Boots, serves the given routes, drains on Ctrl-Alt-Del, powers off. */
async function bootServeAndPowerOff(mode, append, { inFlight = false } = {}) {
	const g = guest(mode, await freePort(), append);
	const listening = await g.waitLog((l) => l.msg === 'listening');
	assert.equal(listening.pid, 1, 'the service is the machine\'s init');
	assert.equal(listening.port, 8080);
	const ready = g.logs.find((l) => l.msg === 'vm: ready');
	assert.ok(ready, `"vm: ready" before listening; ${g.describe()}`);
	const up = g.logs.find((l) => l.msg === 'vm: network up');
	assert.deepEqual([up?.if, up?.addr, up?.netmask, up?.gw], ['eth0', '10.0.2.15', '255.255.255.0', '10.0.2.2']);

	assert.equal((await curlResponse(g.port, '/health')).text, BODY.health);
	let client;
	if (inFlight) {
		assert.equal((await curlResponse(g.port, '/json')).text, BODY.json);
		assert.equal((await curlResponse(g.port, '/blog/1')).text, BODY.blog(1));
		// /health first: once its answer is back, /delay is in flight.
		client = await RawClient.connect(g.port);
		await client.write(req('GET', '/health') + req('GET', '/delay/1000'));
		assert.equal((await client.response()).text, BODY.health);
	}
	await g.ctrlAltDel();
	const draining = await g.waitLog((l) => l.msg === 'draining');
	assert.equal(draining.signal, 'SIGINT', 'Ctrl-Alt-Del arrives as SIGINT (RB_DISABLE_CAD)');
	if (client) {
		const r = await client.response();
		assert.equal(r.text, BODY.delay(1000), 'the in-flight request finished');
		assert.equal(r.headers.connection, 'close');
	}
	const off = await g.waitLog((l) => l.msg === 'vm: power off');
	assert.equal(off.status, 0);
	assert.equal(off.by, 'poweroff');
	const x = await within(BOOT_MS, g.exited, `qemu to exit after the power-off; ${g.describe()}`);
	assert.deepEqual(x, { code: 0, signal: null }, g.describe());
	const stopped = g.logs.find((l) => l.msg === 'stopped');
	assert.equal(stopped?.cut, 0);
	assert.match(g.console, /reboot: Power down/);
	return g;
}

// ---- the initramfs ----

test('the initramfs holds /init (build/bin/service) and exactly the closure of virtio_net, virtio_mmio and virtio_pci in modules.dep, numbered so that dependencies load first', { timeout: 60000, ...SKIP }, async () => {
	needBoot('initramfs.cpio.gz', 'kernel.txt');
	const gz = fs.readFileSync(path.join(IMAGES, 'initramfs.cpio.gz'));
	assert.equal(gz[0], 0x1f, 'gzip');
	const entries = cpioEntries(zlib.gunzipSync(gz));
	const init = entries.find((e) => e.name === 'init');
	assert.ok(init, 'an /init');
	assert.ok(init.data.equals(fs.readFileSync(STATIC_BIN)), '/init is build/bin/service as built');
	assert.equal(init.mode & 0o777, 0o755);

	const deps = modulesDep(kernelModulesDir());
	const want = new Set();
	for (const m of ['virtio_net', 'virtio_mmio', 'virtio_pci']) {
		assert.ok(m in deps, `${m} is a module of this kernel`);
		want.add(m);
		for (const d of deps[m]) want.add(d);
	}
	for (const m of ['virtio', 'virtio_ring', 'failover', 'net_failover']) assert.ok(want.has(m), `${m} in the closure`);
	const mods = entries.filter((e) => e.name.startsWith('modules/')).map((e) => e.name);
	const names = mods.map((n) => /^modules\/(\d\d)-(.+)\.ko$/.exec(n)?.[2]);
	assert.ok(names.every(Boolean), `modules named NN-name.ko: ${mods}`);
	assert.deepEqual([...names].sort(), [...want].sort());
	assert.deepEqual(entries.map((e) => e.name).sort(), ['init', 'modules', ...mods].sort(), 'nothing else');
	// The load order is the name order: every dependency comes earlier.
	for (const [i, m] of names.entries()) {
		for (const d of deps[m]) assert.ok(names.indexOf(d) < i, `${d} loads before ${m}`);
	}
	assert.ok(entries.every((e) => e.uid === 0 && e.gid === 0), 'owned by root');
});

test('the initramfs build is reproducible: the same inputs and SOURCE_DATE_EPOCH give the same bytes', { timeout: 60000, ...SKIP }, async () => {
	await need('cpio', 'gzip');
	needBoot('kernel.txt');
	const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };
	const build = async (name) => {
		const out = path.join(tmp, name);
		await must(path.join(ROOT, 'images', 'initramfs'), [STATIC_BIN, kernelModulesDir(), out], { env });
		return fs.readFileSync(out);
	};
	const a = await build('a.cpio.gz');
	const b = await build('b.cpio.gz');
	assert.ok(a.equals(b));
	assert.ok(cpioEntries(zlib.gunzipSync(a)).every((e) => e.mtime === 1700000000));
});

// ---- boots ----

test('microVM under TCG: the kernel + initramfs boot, /health, /json and /blog/1 answer through user networking; Ctrl-Alt-Del drains an in-flight request, powers off, and qemu exits by itself', { ...T, ...SKIP }, async () => {
	await need('qemu-system-x86_64');
	needBoot('vmlinuz', 'initramfs.cpio.gz');
	// A module parameter on the kernel command line reaches finit_module.
	const g = await bootServeAndPowerOff('microvm', 'virtio_net.napi_tx=1', { inFlight: true });
	const params = g.logs.find((l) => l.msg === 'vm: module parameters');
	assert.deepEqual([params?.module, params?.params], ['virtio_net', 'napi_tx=1']);
	assert.doesNotMatch(g.console, /unknown parameter/);
	assert.match(g.console, /i8042/, 'the keyboard controller that carries Ctrl-Alt-Del');
});

test('tools/vmlinux: the bzImage\'s payload is a 64-bit x86 ELF kernel, and it boots in a microVM (PVH entry), serves (with INGOT_ACCESS_LOG=1 from the kernel command line) and powers off', { ...T, ...SKIP }, async () => {
	await need('qemu-system-x86_64');
	needBoot('vmlinuz', 'vmlinux', 'initramfs.cpio.gz');
	const fd = fs.openSync(path.join(IMAGES, 'vmlinux'), 'r');
	const h = Buffer.alloc(64);
	fs.readSync(fd, h, 0, 64, 0);
	fs.closeSync(fd);
	assert.equal(h.toString('latin1', 0, 4), '\x7fELF');
	assert.equal(h[4], 2, 'ELFCLASS64');
	assert.equal(h.readUInt16LE(18), 62, 'EM_X86_64');
	// The tool itself: the same output again, and a clear refusal of a non-bzImage.
	const tool = await vmlinuxTool();
	const again = path.join(tmp, 'vmlinux');
	await must(tool, [path.join(IMAGES, 'vmlinuz'), again]);
	assert.ok(fs.readFileSync(again).equals(fs.readFileSync(path.join(IMAGES, 'vmlinux'))));
	const bad = await run(tool, [STATIC_BIN, path.join(tmp, 'not-a-kernel')]);
	assert.notEqual(bad.code, 0);
	assert.match(bad.stderr, /not a bzImage/);
	assert.ok(!fs.existsSync(path.join(tmp, 'not-a-kernel')), 'no partial output left');
	// An undotted name=value on the kernel command line is init's environment.
	const g = await bootServeAndPowerOff('vmlinux', 'INGOT_ACCESS_LOG=1');
	assert.ok(g.logs.some((l) => l.msg === 'request'), 'INGOT_ACCESS_LOG=1 from the command line took effect');
});

test('INGOT_IDLE_EXIT_MS on the kernel command line: idle after a request, the machine drains and powers off with 0', { ...T, ...SKIP }, async () => {
	await need('qemu-system-x86_64');
	needBoot('vmlinuz', 'initramfs.cpio.gz');
	const g = guest('microvm', await freePort(), 'INGOT_IDLE_EXIT_MS=500');
	await g.waitLog((l) => l.msg === 'listening');
	assert.equal((await curlResponse(g.port, '/health')).text, BODY.health);
	const draining = await g.waitLog((l) => l.msg === 'draining');
	assert.equal(draining.reason, 'idle', g.describe());
	const off = await g.waitLog((l) => l.msg === 'vm: power off');
	assert.deepEqual([off.status, off.by], [0, 'poweroff']);
	const x = await within(BOOT_MS, g.exited, `qemu to exit after the power-off; ${g.describe()}`);
	assert.deepEqual(x, { code: 0, signal: null }, g.describe());
	assert.equal(g.logs.find((l) => l.msg === 'stopped')?.requests, 1);
});

test('a kernel command line word that is no setting (the kernel passes it to init as an argument) is ignored: the machine serves', { ...T, ...SKIP }, async () => {
	await need('qemu-system-x86_64');
	needBoot('vmlinuz', 'initramfs.cpio.gz');
	// Neither "=" nor ".": not the kernel's, so it is init's argv[1].
	await bootServeAndPowerOff('microvm', 'ingotnosuchword');
});

test('tools/vmlinux reads other kernel compressions through the usual tools: gzip, xz and bzip2 payloads (with the build\'s size suffix) give back the ELF', { timeout: 60000, ...SKIP }, async () => {
	await need('make', 'gzip', 'xz', 'bzip2');
	const tool = await vmlinuxTool();
	const elf = Buffer.concat([Buffer.from('\x7fELF\x02', 'latin1'), Buffer.alloc(200000, 'kernel')]);
	fs.writeFileSync(path.join(tmp, 'fake.elf'), elf);
	for (const [name, cmd, suffix] of [['gzip', 'gzip -9 -c', false], ['xz', 'xz --check=crc32 -c', true], ['bzip2', 'bzip2 -c', true]]) {
		let payload = await must('sh', ['-c', `${cmd} < ${path.join(tmp, 'fake.elf')}`]);
		if (suffix) { const n = Buffer.alloc(4); n.writeUInt32LE(elf.length); payload = Buffer.concat([payload, n]); }
		// A minimal boot protocol header: one setup sector, version 2.15,
		// the payload right after the setup code.
		const setup = Buffer.alloc(1024);
		setup[0x1f1] = 1;
		setup.write('HdrS', 0x202, 'latin1');
		setup.writeUInt16LE(0x20f, 0x206);
		setup.writeUInt32LE(0, 0x248);
		setup.writeUInt32LE(payload.length, 0x24c);
		const img = path.join(tmp, `fake-${name}.bz`), out = path.join(tmp, `fake-${name}.elf`);
		fs.writeFileSync(img, Buffer.concat([setup, payload]));
		await must(tool, [img, out]);
		assert.ok(fs.readFileSync(out).equals(elf), name);
	}
});

test('a bad ingot.ip is logged on the console and ends the machine (status 1) rather than leaving it up without a network', { ...T, ...SKIP }, async () => {
	await need('qemu-system-x86_64');
	needBoot('vmlinuz', 'initramfs.cpio.gz');
	// The last ingot.ip wins, as kernel parameters do: this one overrides images/qemu's.
	const g = guest('microvm', await freePort(), 'ingot.ip=10.0.2.300/24');
	const bad = await g.waitLog((l) => l.msg.startsWith('vm: bad ingot.ip') || l.msg === 'listening');
	assert.equal(bad.msg, 'vm: bad ingot.ip (want A.B.C.D/N)', g.describe());
	assert.equal(bad.ip, '10.0.2.300/24');
	const off = await g.waitLog((l) => l.msg === 'vm: power off');
	assert.equal(off.status, 1);
	const x = await within(BOOT_MS, g.exited, `qemu to exit; ${g.describe()}`);
	assert.deepEqual(x, { code: 0, signal: null }, g.describe());
	assert.ok(!g.logs.some((l) => l.msg === 'listening'), 'it never served');
});

test('the ISO boots on q35 under TCG (isolinux, the same kernel + initramfs): /health answers; Ctrl-Alt-Del powers off and qemu exits by itself', { ...T, ...SKIP }, async () => {
	await need('qemu-system-x86_64');
	needBoot('ingot.iso');
	const g = await bootServeAndPowerOff('iso', '');
	assert.match(g.console, /ISOLINUX/);
});

// ---- not a VM ----

test('PID 1 of a PID namespace (its own /proc, or none mounted) is not taken for a VM\'s init: no mounts, no modules, SIGTERM exits 0', { timeout: 60000 }, async () => {
	await need('unshare');
	// Private mount namespaces: had the detection failed, its mounts would
	// stay there rather than reach the host.
	const variants = [['--pid', '--fork', '--mount', '--mount-proc', BIN]];
	// No /proc at all: the binary mounts one to look, then unmounts it. The
	// sanitizer build cannot run so (it reads its options and threads from
	// /proc), so this one runs in the plain pass only.
	if (!OTHER_BIN) variants.push(['--pid', '--fork', '--mount', '--propagation', 'private', 'sh', '-c', `umount -l /proc && exec ${BIN}`]);
	for (const args of variants) {
		const srv = await startServer({}, { command: 'unshare', args });
		assert.equal(srv.listening.pid, 1);
		assert.equal((await curlResponse(srv.port, '/health')).text, BODY.health);
		assert.ok(!srv.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('vm:')), srv.lines.join('\n'));
		// unshare forwards no signal: the service itself gets SIGTERM.
		process.kill(childOf(srv.pid), 'SIGTERM');
		const x = await within(30000, srv.exited, 'the service to exit');
		assert.deepEqual(x, { code: 0, signal: null }, srv.lines.join('\n'));
	}
});
