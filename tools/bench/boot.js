// boot.js: the VM part of `make bench`. Boot to the first answer under
// qemu's TCG, three kernels booted the same way through their PVH entry on
// qemu's microvm: the floor (floor_pvh.S, which prints one line and exits:
// what is left of a boot when the kernel does nothing), the unikernel
// (build/images/unikernel.elf; and its kernel without the image's unpacker,
// unikernel.kernel.elf, for what unpacking costs) and the Linux image (build/images/vmlinux +
// initramfs.cpio.gz, images/qemu's vmlinux mode). Each run is timed from
// just before qemu's spawn to the floor's line on the serial port, or to
// the first HTTP 200 of GET /health through the user network's hostfwd;
// the time to the "listening" log line on the console is reported beside.
// Boots interleave (floor, unikernel, Linux, rotated each round) so all
// three see the same load; medians, with ratios to the floor. Then, reported
// and not judged, the unikernel's requests per second and qemu's CPU time
// per request under wrk through the hostfwd. Prints a table (stdout,
// build/bench/boot.{md,json}, a section of build/bench/results.md). A
// measurement, never a test: a missed target does not fail it.
//
// Knobs (environment): BENCH_BOOT_RUNS (7, boots of each), BENCH_BOOT_LIMIT_MS
// (20000, per boot), BENCH_SECONDS (3, the wrk run), BENCH_BOOT_WRK (1; 0
// skips it), BENCH_BIN_DIR (tools/bench/run's copy of floor-pvh.elf).
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const {
  ROOT, OUT, num, CLK_TCK, logger, track, killAll, onSignals, run, freePort, cpuTicks, stats, fmt,
  machineBase, loadText, pushNotes, intoResults, cell,
} = require('./lib');

const env = process.env;
const IMAGES = path.join(ROOT, 'build', 'images');
const CFG = {
  runs: Math.max(1, num(env.BENCH_BOOT_RUNS, 7)),
  limitMs: num(env.BENCH_BOOT_LIMIT_MS, 20000),
  seconds: num(env.BENCH_SECONDS, 3),
  wrk: env.BENCH_BOOT_WRK !== '0',
};
const TARGET_MS = 150;   // unikernel: boot to first 200, median
const TARGET_FLOOR = 2;  // unikernel ≤ 2× the floor (issue 31)
const TARGET_KIB = 512;  // build/images/unikernel.elf, and unikernel-tls.elf (HTTPS)
const TLS_IMAGE = path.join(IMAGES, 'unikernel-tls.elf');
const SECTION_BEGIN = '<!-- tools/bench/boot.js: begin -->';
const SECTION_END = '<!-- tools/bench/boot.js: end -->';
const { notes, log, note } = logger('boot');
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms

// The host contract's command line (the issue's, verbatim but for the
// port and the kernel), and images/qemu's vmlinux mode for Linux, which
// needs more memory, an initramfs and tsc_early_khz under TCG.
const CONTRACT_APPEND = 'ingot.ip=10.0.2.15/24 ingot.gw=10.0.2.2';
function contract(kernel, port) {
  return ['-M', 'microvm,pit=on,rtc=on', '-accel', 'tcg', '-m', '32', '-smp', '1', '-no-reboot', '-nodefaults',
    '-display', 'none', '-serial', 'stdio', '-device', 'i8042', '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04',
    '-kernel', kernel, '-append', CONTRACT_APPEND,
    '-netdev', `user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:${port}-:8080`, '-device', 'virtio-net-device,netdev=n0'];
}
function linux(port) {
  return ['-M', 'microvm', '-accel', 'tcg', '-m', '256', '-smp', '1', '-no-reboot', '-nodefaults', '-display', 'none',
    '-serial', 'stdio', '-device', 'i8042', '-kernel', path.join(IMAGES, 'vmlinux'),
    '-initrd', path.join(IMAGES, 'initramfs.cpio.gz'),
    '-append', `tsc_early_khz=2000000 console=ttyS0 panic=-1 quiet ${CONTRACT_APPEND}`,
    '-netdev', `user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:${port}-:8080`, '-device', 'virtio-net-device,netdev=n0'];
}

function floorImage() {
  const given = env.BENCH_BIN_DIR && path.join(env.BENCH_BIN_DIR, 'floor-pvh.elf');
  if (given && fs.existsSync(given)) return given;
  return path.join(ROOT, 'build', 'tools', 'bench', 'floor-pvh.elf');
}
const KERNELS = [
  { name: 'floor', image: floorImage(), args: (p) => contract(floorImage(), p), line: 'floor: up' },
  { name: 'unikernel', image: path.join(IMAGES, 'unikernel.elf'), args: (p) => contract(path.join(IMAGES, 'unikernel.elf'), p) },
  // The same kernel as linked, without the image's unpacker (images/unpack.S):
  // what unpacking costs a boot.
  { name: 'unpacked', image: path.join(IMAGES, 'unikernel.kernel.elf'),
    args: (p) => contract(path.join(IMAGES, 'unikernel.kernel.elf'), p) },
  { name: 'linux', image: path.join(IMAGES, 'vmlinux'), args: linux,
    also: [path.join(IMAGES, 'initramfs.cpio.gz')] },
];

/** One GET /health on a fresh connection; true on a 200. qemu's user
 * network accepts at once and then sends the guest a SYN, which it retries
 * with a growing backoff while the guest is not up: a probe gives up after
 * giveUpMs, and a new one starts every everyMs meanwhile, so the first 200
 * is seen within a few ms of the guest's first answer. */
function probe(port, giveUpMs) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const t = setTimeout(() => done(false), giveUpMs);
    function done(ok) { clearTimeout(t); s.destroy(); resolve(ok); }
    s.on('connect', () => s.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    s.on('data', (d) => { buf += d; if (buf.includes('\r\n')) done(buf.startsWith('HTTP/1.1 200')); });
    s.on('error', () => done(false));
    s.on('close', () => done(false));
  });
}
function firstOk(port, stopped, { everyMs = 5, giveUpMs = 100 } = {}) {
  return new Promise((resolve) => {
    let over = false;
    const finish = (v) => { if (!over) { over = true; clearInterval(iv); resolve(v); } };
    const tryOnce = () => probe(port, giveUpMs).then((ok) => { if (ok) finish(now()); });
    const iv = setInterval(() => { if (stopped()) finish(null); else tryOnce(); }, everyMs);
    tryOnce();
  });
}

/** Boots k once: { ms (to the floor's line or the first 200), listening (ms
 * to the console's "listening" line, or null), pid, proc, port }. With
 * keep, qemu stays up for the caller (who kills it). */
async function boot(k, { keep = false } = {}) {
  const port = await freePort();
  const t0 = now();
  const proc = track(spawn('qemu-system-x86_64', k.args(port), { stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '', err = '', exited = false, lineAt = null, listening = null;
  const exit = new Promise((resolve) => proc.on('exit', (code) => { exited = true; resolve(code); }));
  proc.stderr.on('data', (d) => { err += d; });
  const sawLine = new Promise((resolve) => {
    proc.stdout.on('data', (d) => {
      const t = now();
      out += d;
      if (listening === null && out.includes('"msg":"listening"')) listening = t - t0;
      if (k.line && lineAt === null && out.includes(k.line)) { lineAt = t - t0; resolve(); }
    });
    exit.then(resolve);
  });
  const limit = setTimeout(() => proc.kill('SIGKILL'), CFG.limitMs);
  let ms = null;
  if (k.line) {
    await sawLine;
    ms = lineAt;
  } else {
    const at = await firstOk(port, () => exited);
    ms = at === null ? null : at - t0;
  }
  clearTimeout(limit);
  if (ms === null) {
    log(`${k.name}: no answer (qemu ${exited ? 'exited' : 'killed'}); console: ${out.slice(-400)} stderr: ${err.slice(-400)}`);
  }
  if (!keep || ms === null) {
    proc.kill('SIGKILL');
    await exit;
  }
  return { ms, listening, proc, exit, port };
}

/** wrk through the hostfwd for CFG.seconds: requests per second and qemu's
 * CPU time per request (all its threads, /proc/PID/stat). */
async function throughput(k) {
  const b = await boot(k, { keep: true });
  if (b.ms === null) return null;
  try {
    const before = cpuTicks(b.proc.pid);
    const r = await run('wrk', ['-t1', '-c10', `-d${CFG.seconds}s`, `http://127.0.0.1:${b.port}/health`]);
    const ticks = cpuTicks(b.proc.pid) - before;
    const m = /Requests\/sec:\s*([\d.]+)/.exec(r.out);
    const total = /(\d+) requests in/.exec(r.out);
    if (r.code !== 0 || !m || !total) { log(`wrk failed: ${r.out}${r.err}`); return null; }
    const errors = /Non-2xx or 3xx responses: (\d+)|Socket errors: .*/.exec(r.out);
    if (errors) note(`wrk against the unikernel: ${errors[0]}`);
    return { rps: Number(m[1]), cpu_us_per_req: (ticks / CLK_TCK) * 1e6 / Number(total[1]) };
  } finally {
    b.proc.kill('SIGKILL');
    await b.exit;
  }
}

function sizeKiB(files) {
  return files.reduce((n, f) => n + fs.statSync(f).size, 0) / 1024;
}

async function main() {
  onSignals(log, () => killAll('SIGKILL'));
  fs.mkdirSync(OUT, { recursive: true });
  const machine = machineBase();
  const present = KERNELS.filter((k) => {
    const missing = [k.image, ...(k.also || [])].filter((f) => !fs.existsSync(f));
    if (missing.length) note(`${k.name}: ${missing.map((f) => path.relative(ROOT, f)).join(', ')} missing, not measured`);
    return !missing.length;
  });
  const results = Object.fromEntries(KERNELS.map((k) => [k.name, { ms: [], listening: [], failed: 0 }]));
  const started = now();
  for (let i = 0; i < CFG.runs; i++) {
    // Rotated, so that no kernel always boots first after a pause.
    const order = present.map((_, j) => present[(i + j) % present.length]);
    for (const k of order) {
      const b = await boot(k);
      const r = results[k.name];
      if (b.ms === null) r.failed++;
      else r.ms.push(b.ms);
      if (b.listening !== null) r.listening.push(b.listening);
      log(`round ${i + 1}/${CFG.runs} ${k.name}: ${b.ms === null ? 'no answer' : `${b.ms.toFixed(1)} ms`}`);
    }
  }
  const uni = present.find((k) => k.name === 'unikernel');
  const tput = uni && CFG.wrk ? await throughput(uni) : null;
  machine.loadavg_end = require('node:os').loadavg();

  const s = Object.fromEntries(KERNELS.map((k) => [k.name, {
    boot: stats(results[k.name].ms), listening: stats(results[k.name].listening), failed: results[k.name].failed,
    kib: fs.existsSync(k.image) ? sizeKiB([k.image, ...(k.also || [])].filter((f) => fs.existsSync(f))) : null,
  }]));
  for (const k of KERNELS) if (s[k.name].failed) note(`${k.name}: ${s[k.name].failed} of ${CFG.runs} boots gave no answer within ${CFG.limitMs} ms`);
  const md = table(s, tput, machine);
  process.stdout.write(md);
  fs.writeFileSync(path.join(OUT, 'boot.md'), md);
  fs.writeFileSync(path.join(OUT, 'boot.json'), JSON.stringify({ cfg: CFG, machine, results, stats: s, throughput: tput }, null, 2));
  intoResults(md, SECTION_BEGIN, SECTION_END);
  log(`wrote build/bench/boot.{md,json} and its section of results.md (${((now() - started) / 1000).toFixed(0)} s)`);
}

function table(s, tput, machine) {
  const c = (x) => cell(x, (v) => v.toFixed(1));
  const r = (a, b) => (a && b ? fmt.x(a.median / b.median) : '–');
  const f = s.floor, u = s.unikernel, l = s.linux;
  const verdict = (ok) => (ok === null ? '–' : ok ? 'PASS' : 'MISS');
  const ub = u.boot;
  const L = [];
  L.push(`Boot to the first answer under qemu TCG (tools/bench/boot.js), ${new Date().toISOString().slice(0, 16).replace('T', ' ')}: ` +
    `${machine.cpu}, ${machine.nproc} CPUs, ${machine.kernel}; ${loadText(machine)}. Medians (min–max) of ${CFG.runs} ` +
    'interleaved boots each, from qemu\'s spawn: the floor to its line on the serial port, the others to the first ' +
    'HTTP 200 of GET /health through the hostfwd. The floor and the unikernel boot with the host contract\'s command ' +
    'line (-M microvm,pit=on,rtc=on -m 32), Linux with images/qemu\'s vmlinux mode (-m 256, initramfs).');
  L.push('');
  L.push('| test | metric | floor | unikernel | Linux | unikernel/floor | Linux/floor | Linux/unikernel | target | verdict |');
  L.push('|---|---|--:|--:|--:|--:|--:|--:|---|---|');
  L.push(`| boot to first 200 | ms | ${c(f.boot)} | ${c(ub)} | ${c(l.boot)} | ${r(ub, f.boot)} | ${r(l.boot, f.boot)} | ` +
    `${r(l.boot, ub)} | unikernel ≤ ${TARGET_MS} ms, ≤ ${TARGET_FLOOR}× floor | ` +
    `${verdict(ub && f.boot ? ub.median <= TARGET_MS && ub.median <= TARGET_FLOOR * f.boot.median : null)} |`);
  L.push(`| to the "listening" line | ms | – | ${c(u.listening)} | ${c(l.listening)} | ${r(u.listening, f.boot)} | ` +
    `${r(l.listening, f.boot)} | ${r(l.listening, u.listening)} |  |  |`);
  const p = s.unpacked;
  L.push(`| the same kernel unpacked (unikernel.kernel.elf: no unpacker) | ms to first 200 | – | ${c(p.boot)} | – | ` +
    `${r(p.boot, f.boot)} | – | – | reported |  |`);
  const kib = (x) => (x === null ? '–' : x.toFixed(1));
  L.push(`| image | KiB | ${kib(f.kib)} | ${kib(u.kib)} | ${kib(l.kib)} | – | – | ${u.kib && l.kib ? fmt.x(l.kib / u.kib) : '–'} | ` +
    `unikernel.elf ≤ ${TARGET_KIB} KiB | ${verdict(u.kib === null ? null : u.kib <= TARGET_KIB)} |`);
  const tls = fs.existsSync(TLS_IMAGE) ? sizeKiB([TLS_IMAGE]) : null;
  L.push(`| image with HTTPS (unikernel-tls.elf) | KiB | – | ${kib(tls)} | – | – | – | – | ` +
    `≤ ${TARGET_KIB} KiB | ${verdict(tls === null ? null : tls <= TARGET_KIB)} |`);
  const bin = path.join(IMAGES, 'unikernel.kernel.bin');
  L.push(`| the kernel's bytes, unpacked (unikernel.kernel.bin) | KiB | – | ` +
    `${kib(fs.existsSync(bin) ? sizeKiB([bin]) : null)} | – | – | – | – | reported |  |`);
  if (tput) {
    L.push(`| /health c10 through the hostfwd (TCG) | req/s | – | ${fmt.rps(tput.rps)} | – | – | – | – | reported |  |`);
    L.push(`| the same | qemu CPU µs/req | – | ${fmt.us(tput.cpu_us_per_req)} | – | – | – | – | reported |  |`);
  }
  pushNotes(L, notes);
  L.push('');
  return L.join('\n');
}

main().catch((e) => {
  log(`failed: ${e.stack || e}`);
  killAll('SIGKILL');
  process.exit(1);
});
