// boot.js: the VM part of `make bench`. Boot to the first answer under
// qemu's TCG, three kernels booted the same way through their PVH entry on
// qemu's microvm: the floor (floor_pvh.S, which prints one line and exits:
// what is left of a boot when the kernel does nothing), the unikernel
// (build/images/unikernel.elf; and its kernel without the image's unpacker,
// unikernel.kernel.elf, for what unpacking costs) and the Linux image (build/images/vmlinux +
// initramfs.cpio.gz, images/qemu's vmlinux mode); the floor and the
// unikernel again with -smp 2 (multi-threaded TCG). Each run is timed from
// just before qemu's spawn to the floor's line on the serial port, or to
// the first HTTP 200 of GET /health through the user network's hostfwd;
// the time to the "listening" log line on the console is reported beside
// (the unikernel's: the line's startup_us, from its PVH entry by its own
// clock, since it writes its console when idle, after the first answer).
// Boots interleave (floor, unikernel, Linux, rotated each round) so all
// three see the same load; medians, with ratios to the floor. Then, reported
// and not judged, the unikernel's requests per second and qemu's CPU time
// per request under wrk through the hostfwd; and /compute's requests per
// second with -smp 1 and -smp 2, alternated (issue 31: at least 1.5×). Prints a table (stdout,
// build/bench/boot.{md,json}, a section of build/bench/results.md). A
// measurement, never a test: a missed target does not fail it.
//
// Knobs (environment): BENCH_BOOT_RUNS (7, boots of each), BENCH_BOOT_LIMIT_MS
// (20000, per boot), BENCH_SECONDS (3, the wrk run), BENCH_BOOT_WRK (1; 0
// skips it), BENCH_BOOT_COMPUTE_REPS (3, /compute runs of each -smp),
// BENCH_WARMUP (1: seconds of wrk before each measured run),
// BENCH_BIN_DIR (tools/bench/run's copy of floor-pvh.elf).
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
  computeReps: Math.max(1, num(env.BENCH_BOOT_COMPUTE_REPS, 3)),
  warmup: num(env.BENCH_WARMUP, 1),
};
const TARGET_MS = 150;   // unikernel: boot to first 200, median
const TARGET_FLOOR = 2;  // unikernel ≤ 2× the floor (issue 31)
const TARGET_SMP = 1.5; // /compute, -smp 2 against -smp 1 (issue 31)
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
// smp > 1: that many vCPUs, one host thread each (multi-threaded TCG).
function contract(kernel, port, smp = 1) {
  return ['-M', 'microvm,pit=on,rtc=on', '-accel', smp > 1 ? 'tcg,thread=multi' : 'tcg', '-m', '32', '-smp', String(smp),
    '-no-reboot', '-nodefaults',
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
  // Two vCPUs: the unikernel runs a loop on each (qemu's second vCPU costs
  // the floor too).
  { name: 'floor2', image: floorImage(), args: (p) => contract(floorImage(), p, 2), line: 'floor: up' },
  { name: 'unikernel2', image: path.join(IMAGES, 'unikernel.elf'),
    args: (p) => contract(path.join(IMAGES, 'unikernel.elf'), p, 2) },
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
 * to the console's "listening" line, or null), startupUs (that line's
 * startup_us, or null: waited for up to a second after the first 200), pid,
 * proc, port }. With keep, qemu stays up for the caller (who kills it). */
async function boot(k, { keep = false } = {}) {
  const port = await freePort();
  const t0 = now();
  const proc = track(spawn('qemu-system-x86_64', k.args(port), { stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '', err = '', exited = false, lineAt = null, listening = null, startupUs = null, sawListening;
  const listeningSeen = new Promise((resolve) => { sawListening = resolve; });
  const exit = new Promise((resolve) => proc.on('exit', (code) => { exited = true; resolve(code); }));
  proc.stderr.on('data', (d) => { err += d; });
  const sawLine = new Promise((resolve) => {
    proc.stdout.on('data', (d) => {
      const t = now();
      out += d;
      const m = listening === null && /"msg":"listening".*"startup_us":(\d+).*\n/.exec(out);
      if (m) { listening = t - t0; startupUs = Number(m[1]); sawListening(); }
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
  if (ms !== null && !k.line && listening === null) {
    const waited = setTimeout(sawListening, 1000);
    await Promise.race([listeningSeen, exit]);
    clearTimeout(waited);
  }
  if (ms === null) {
    log(`${k.name}: no answer (qemu ${exited ? 'exited' : 'killed'}); console: ${out.slice(-400)} stderr: ${err.slice(-400)}`);
  }
  if (!keep || ms === null) {
    proc.kill('SIGKILL');
    await exit;
  }
  return { ms, listening, startupUs, proc, exit, port };
}

/** wrk against url for CFG.seconds while qemu (pid) serves it: requests per
 * second and qemu's CPU time per request (all its threads, /proc/PID/stat). */
async function wrkCost(pid, url, { threads = 1, conns = 10, close = false } = {}) {
  const before = cpuTicks(pid);
  const r = await run('wrk', [`-t${threads}`, `-c${conns}`, `-d${CFG.seconds}s`,
    ...(close ? ['-H', 'Connection: close'] : []), url]);
  const ticks = cpuTicks(pid) - before;
  const m = /Requests\/sec:\s*([\d.]+)/.exec(r.out);
  const total = /(\d+) requests in/.exec(r.out);
  if (r.code !== 0 || !m || !total) { log(`wrk failed: ${r.out}${r.err}`); return null; }
  const errors = /Non-2xx or 3xx responses: (\d+)|Socket errors: .*/.exec(r.out);
  if (errors) note(`wrk ${url}${close ? ' (Connection: close)' : ''}: ${errors[0]}`);
  return { rps: Number(m[1]), cpu_us_per_req: (ticks / CLK_TCK) * 1e6 / Number(total[1]) };
}

/** wrk through the hostfwd of a fresh boot of k (threads, connections,
 * path), after a warm-up run: the image's other loops start after core
 * 0's first answer (net/server/server.c), and connections opened before a
 * loop serves all go to those that do, for as long as they stay open; the
 * measured run opens its own. */
async function throughput(k, { threads = 1, conns = 10, target = '/health' } = {}) {
  const b = await boot(k, { keep: true });
  if (b.ms === null) return null;
  try {
    const url = `http://127.0.0.1:${b.port}${target}`;
    if (CFG.warmup > 0) await run('wrk', [`-t${threads}`, `-c${conns}`, `-d${CFG.warmup}s`, url]);
    return await wrkCost(b.proc.pid, url, { threads, conns });
  } finally {
    b.proc.kill('SIGKILL');
    await b.exit;
  }
}

/** unikernel-tls.elf with an entropy device and a certificate in its initrd,
 * serving plain HTTP on 8080 and HTTPS on 8443: qemu's CPU per /health
 * request over each, on kept connections and on a new connection each (a
 * full handshake per request). null when the image or a tool is missing. */
async function tlsCost() {
  if (!fs.existsSync(TLS_IMAGE)) return null;
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'ingot-boot-tls-'));
  try {
    fs.mkdirSync(path.join(dir, 'root', 'tls'), { recursive: true });
    const made = await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-days', '2', '-subj', '/CN=localhost', '-keyout', path.join(dir, 'root', 'tls', 'key.pem'),
      '-out', path.join(dir, 'root', 'tls', 'cert.pem')]);
    const archive = path.join(dir, 'initrd.cpio');
    const packed = made.code === 0 &&
      (await run('sh', ['-c', 'cd "$1" && find . -print | sort | cpio -o -H newc --quiet > "$2"', 'sh',
        path.join(dir, 'root'), archive])).code === 0;
    if (!packed) { note('HTTPS cost: openssl or cpio failed, not measured'); return null; }
    const tport = await freePort();
    const k = {
      name: 'unikernel-tls',
      args: (p) => {
        const a = contract(TLS_IMAGE, p);
        a[a.indexOf('-append') + 1] += ' INGOT_TLS_CERT=/tls/cert.pem INGOT_TLS_KEY=/tls/key.pem INGOT_TLS_PORT=8443';
        a[a.indexOf('-netdev') + 1] += `,hostfwd=tcp:127.0.0.1:${tport}-:8443`;
        return [...a, '-device', 'virtio-rng-device', '-initrd', archive];
      },
    };
    const b = await boot(k, { keep: true });
    if (b.ms === null) return null;
    try {
      const plain = `http://127.0.0.1:${b.port}/health`, tls = `https://127.0.0.1:${tport}/health`;
      return {
        plain: await wrkCost(b.proc.pid, plain), tls: await wrkCost(b.proc.pid, tls),
        plainClose: await wrkCost(b.proc.pid, plain, { close: true }),
        tlsClose: await wrkCost(b.proc.pid, tls, { close: true }),
      };
    } finally {
      b.proc.kill('SIGKILL');
      await b.exit;
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
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
  const results = Object.fromEntries(KERNELS.map((k) => [k.name, { ms: [], listening: [], startup: [], failed: 0 }]));
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
      if (b.startupUs !== null) r.startup.push(b.startupUs / 1000);
      log(`round ${i + 1}/${CFG.runs} ${k.name}: ${b.ms === null ? 'no answer' : `${b.ms.toFixed(1)} ms`}`);
    }
  }
  const uni = present.find((k) => k.name === 'unikernel');
  const uni2 = present.find((k) => k.name === 'unikernel2');
  const tput = uni && CFG.wrk ? await throughput(uni) : null;
  // /compute (CPU-bound: a loop's work, not the network's) with one vCPU
  // and with two, alternated, CFG.computeReps each.
  const compute = { smp1: [], smp2: [] };
  for (let i = 0; uni && uni2 && CFG.wrk && i < CFG.computeReps; i++) {
    for (const [key, k] of [['smp1', uni], ['smp2', uni2]]) {
      const t = await throughput(k, { threads: 2, conns: 16, target: '/compute' });
      if (t) compute[key].push(t.rps);
      log(`/compute ${key} rep ${i + 1}: ${t ? `${t.rps.toFixed(0)} req/s` : 'failed'}`);
    }
  }
  machine.loadavg_end = require('node:os').loadavg();

  const s = Object.fromEntries(KERNELS.map((k) => [k.name, {
    boot: stats(results[k.name].ms), listening: stats(results[k.name].listening),
    startup: stats(results[k.name].startup), failed: results[k.name].failed,
    kib: fs.existsSync(k.image) ? sizeKiB([k.image, ...(k.also || [])].filter((f) => fs.existsSync(f))) : null,
  }]));
  for (const k of KERNELS) if (s[k.name].failed) note(`${k.name}: ${s[k.name].failed} of ${CFG.runs} boots gave no answer within ${CFG.limitMs} ms`);
  const tls = CFG.wrk ? await tlsCost() : null;
  const md = table(s, tput, machine, { smp1: stats(compute.smp1), smp2: stats(compute.smp2) }, tls);
  process.stdout.write(md);
  fs.writeFileSync(path.join(OUT, 'boot.md'), md);
  fs.writeFileSync(path.join(OUT, 'boot.json'), JSON.stringify({ cfg: CFG, machine, results, stats: s, throughput: tput, compute, tls }, null, 2));
  intoResults(md, SECTION_BEGIN, SECTION_END);
  log(`wrote build/bench/boot.{md,json} and its section of results.md (${((now() - started) / 1000).toFixed(0)} s)`);
}

function table(s, tput, machine, compute, tlsCosts) {
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
  const f2 = s.floor2, u2 = s.unikernel2.boot;
  L.push(`| boot to first 200, -smp 2 (floor: -smp 2 too) | ms | ${c(f2.boot)} | ${c(u2)} | – | ${r(u2, f2.boot)} | – | – | ` +
    `unikernel ≤ ${TARGET_MS} ms, ≤ ${TARGET_FLOOR}× floor | ` +
    `${verdict(u2 && f2.boot ? u2.median <= TARGET_MS && u2.median <= TARGET_FLOOR * f2.boot.median : null)} |`);
  L.push(`| to "listening", by the unikernel's clock (its line's startup_us: from its PVH entry) | ms | – | ` +
    `${c(u.startup)} | – | – | – | – |  |  |`);
  L.push(`| to the "listening" line on the console (the unikernel writes its console when idle: after its first answer) | ms | – | ` +
    `${c(u.listening)} | ${c(l.listening)} | – | ${r(l.listening, f.boot)} | – |  |  |`);
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
  if (compute.smp1 && compute.smp2) {
    const x = compute.smp2.median / compute.smp1.median;
    const rc = (v) => cell(v, (n) => n.toFixed(0));
    L.push(`| /compute c16 through the hostfwd, -smp 1 → -smp 2 (multi-threaded TCG) | req/s | – | ` +
      `${rc(compute.smp1)} → ${rc(compute.smp2)} | – | – | – | – | -smp 2 ≥ ${TARGET_SMP}× -smp 1: ${fmt.x(x)} | ` +
      `${verdict(x >= TARGET_SMP)} |`);
  }
  if (tput) {
    L.push(`| /health c10 through the hostfwd (TCG) | req/s | – | ${fmt.rps(tput.rps)} | – | – | – | – | reported |  |`);
    L.push(`| the same | qemu CPU µs/req | – | ${fmt.us(tput.cpu_us_per_req)} | – | – | – | – | reported |  |`);
  }
  const t = tlsCosts;
  const us = (x) => (x ? fmt.us(x.cpu_us_per_req) : '–');
  const over = (a, b) => (a && b ? fmt.x(a.cpu_us_per_req / b.cpu_us_per_req) : '–');
  if (t) {
    L.push(`| /health c10, HTTPS (unikernel-tls.elf, kept connections) against plain HTTP on the same boot | qemu CPU µs/req | – | ` +
      `${us(t.tls)} against ${us(t.plain)} | – | – | – | – | reported: ${over(t.tls, t.plain)} |  |`);
    L.push(`| the same, a new connection each (Connection: close; HTTPS: a full handshake each) | qemu CPU µs/req | – | ` +
      `${us(t.tlsClose)} against ${us(t.plainClose)} | – | – | – | – | reported: ${over(t.tlsClose, t.plainClose)} |  |`);
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
