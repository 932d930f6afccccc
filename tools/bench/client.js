// client.js: the outbound client's part of `make bench`. Requests per
// second and CPU time per request of one HTTP client on one core, in the
// shape of undici's published table: 50 connections, pipelining 10, 500
// requests kept in flight, GET /health from the floor server (floor.c) on
// the other core. Clients: ingot's request API (ig_fetch) and dispatch API
// (clientbench.c), undici.request, undici's dispatch and fetch (npm undici,
// the same Pool options). Each client runs alone, pinned, in its own
// process, measures itself over its window after a warm-up (getrusage /
// process.cpuUsage) and prints one JSON line; this script runs them, checks
// the client core had no company, and prints a table with ratios to
// undici.request (stdout, build/bench/client.{md,json}, a section of
// build/bench/results.md). A measurement, never a test: a missed target
// does not fail it.
//
// Knobs (environment): BENCH_SECONDS (3), BENCH_WARMUP (1), BENCH_REPS (3),
// BENCH_CLIENTBENCH_CPU (0: the measured client's core), BENCH_UPSTREAM_CPU
// (1: floor's), BENCH_CLIENT_CONNS (50), BENCH_CLIENT_PIPELINE (10),
// BENCH_CLIENT_INFLIGHT (500), BENCH_CLIENTBENCH (build/bin/clientbench),
// BENCH_BIN_DIR (tools/bench/run's copy of floor; else build/tools/bench/floor),
// BENCH_CLIENTS (a comma list of the client names below).
//
//   node tools/bench/client.js                      the bench
//   node tools/bench/client.js --worker NAME URL    one node client (internal)
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  ROOT, OUT, num, FOREIGN_MAX, CLK_TCK, sleep, logger, killAll, onSignals, run, freePort,
  cpuTicks, coreTicks, launch, stopServer, floorBinary, stats, fmt, machineBase, loadText, warnLoad, rotate, pushNotes, intoResults,
} = require('./lib');

const env = process.env;
const CFG = {
  seconds: num(env.BENCH_SECONDS, 3),
  warmup: num(env.BENCH_WARMUP, 1),
  reps: num(env.BENCH_REPS, 3),
  clientCpu: num(env.BENCH_CLIENTBENCH_CPU, 0),
  upstreamCpu: num(env.BENCH_UPSTREAM_CPU, 1),
  conns: num(env.BENCH_CLIENT_CONNS, 50),
  pipelining: num(env.BENCH_CLIENT_PIPELINE, 10),
  inflight: num(env.BENCH_CLIENT_INFLIGHT, 500),
};
const TARGET_CPU = 1 / 3; // ingot's CPU per request ≤ 1/3 of undici.request's
const TARGET_RPS = 3;     // ingot's requests per second ≥ 3× undici.request's
const BASELINE = 'undici.request';
const SECTION_BEGIN = '<!-- tools/bench/client.js: begin -->';
const SECTION_END = '<!-- tools/bench/client.js: end -->';

// ---- the node clients (run as: node client.js --worker NAME URL) --------

function loadUndici() {
  // tools/bench's own copy (package.json), else the integration tests'.
  for (const dir of [__dirname, path.join(ROOT, 'tests')]) {
    try { return require(require.resolve('undici', { paths: [dir] })); } catch { /* next */ }
  }
  throw new Error('npm undici is not installed (cd tools/bench && npm ci)');
}

// Each returns lane(): one request after another until stopped, each
// counted through done(ok, status).
const NODE_CLIENTS = {
  'undici.request': (undici, pool, url, done, running) => async () => {
    while (running()) {
      try {
        const { statusCode, body } = await undici.request(url, { dispatcher: pool });
        await body.text();
        done(true, statusCode);
      } catch { done(false, 0); }
    }
  },
  'undici dispatch': (undici, pool, url, done, running) => {
    const u = new URL(url);
    const opts = { origin: u.origin, path: u.pathname + u.search, method: 'GET' };
    return () => {
      const one = () => {
        let status = 0;
        pool.dispatch(opts, {
          onConnect() {},
          onHeaders(s) { status = s; return true; },
          onData() { return true; },
          onComplete() { done(true, status); if (running()) one(); },
          onError() { done(false, 0); if (running()) one(); },
          onUpgrade() {},
          onBodySent() {},
        });
      };
      one();
    };
  },
  'undici fetch': (undici, pool, url, done, running) => async () => {
    while (running()) {
      try {
        const res = await undici.fetch(url, { dispatcher: pool });
        await res.text();
        done(true, res.status);
      } catch { done(false, 0); }
    }
  },
};

function worker(name, url) {
  const undici = loadUndici();
  const pool = new undici.Pool(new URL(url).origin, { connections: CFG.conns, pipelining: CFG.pipelining });
  let completed = 0, errors = 0, badStatus = 0, stopped = false;
  const done = (ok, status) => {
    completed++;
    if (!ok) errors++;
    else if (status !== 200) badStatus++;
  };
  const lane = NODE_CLIENTS[name](undici, pool, url, done, () => !stopped);
  for (let i = 0; i < CFG.inflight; i++) lane();
  let t0, cpu0, done0, err0;
  setTimeout(() => {
    t0 = process.hrtime.bigint();
    cpu0 = process.cpuUsage();
    done0 = completed;
    err0 = errors;
    setTimeout(() => {
      stopped = true;
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const c = process.cpuUsage(cpu0);
      const cpu = (c.user + c.system) / 1e6;
      const n = completed - done0;
      process.stdout.write(`${JSON.stringify({
        client: name, requests: n, errors: errors - err0, bad_status: badStatus, seconds: secs, rps: n / secs,
        cpu_s: cpu, cpu_us_per_req: n ? (cpu * 1e6) / n : 0, connections: CFG.conns, pipelining: CFG.pipelining,
        inflight: CFG.inflight,
      })}\n`, () => process.exit(0));
    }, CFG.seconds * 1000);
  }, CFG.warmup * 1000);
}

// ---- the bench -------------------------------------------------------------

const { notes, log, note } = logger('bench client');

// npm undici from tools/bench/package-lock.json, which `tools/setup bench`
// (run by make bench) installs.
function ensureUndici() {
  try { loadUndici(); return true; } catch {
    note('npm undici is not installed in tools/bench (tools/setup bench installs it): no undici numbers');
    return false;
  }
}

function clientTable() {
  const clientbench = env.BENCH_CLIENTBENCH || path.join(ROOT, 'build', 'bin', 'clientbench');
  const shape = ['--connections', String(CFG.conns), '--pipelining', String(CFG.pipelining),
    '--inflight', String(CFG.inflight), '--seconds', String(CFG.seconds), '--warmup', String(CFG.warmup)];
  const all = [
    { name: 'ingot request', cmd: (url) => [clientbench, '--mode', 'request', ...shape, url], native: true },
    { name: 'ingot dispatch', cmd: (url) => [clientbench, '--mode', 'dispatch', ...shape, url], native: true },
    ...Object.keys(NODE_CLIENTS).map((name) => ({ name, cmd: (url) => [process.execPath, __filename, '--worker', name, url] })),
  ];
  const want = env.BENCH_CLIENTS ? env.BENCH_CLIENTS.split(',').map((s) => s.trim()) : null;
  const haveUndici = (!want || want.some((n) => NODE_CLIENTS[n])) && ensureUndici();
  return all.filter((c) => {
    if (want && !want.includes(c.name)) return false;
    if (!c.native && !haveUndici) return false;
    if (c.native && !fs.existsSync(clientbench)) {
      note(`${clientbench} is not built: no ingot rows (make clientbench)`);
      return false;
    }
    return true;
  });
}

// The client runs under a shell that, once it has reaped it, prints its own
// /proc/PID/stat: cutime+cstime there is the client's whole CPU time, which
// with the core's busy time tells how much other processes took.
const SH = '"$@"; s=$?; echo; echo "@@stat $(cat /proc/$$/stat)"; exit $s';
function childTicks(out) {
  const line = out.split('\n').find((l) => l.startsWith('@@stat '));
  if (!line) return null;
  const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return Number(f[13]) + Number(f[14]);
}

async function measure(client, url, floorPid) {
  const core0 = coreTicks(CFG.clientCpu);
  const up0 = cpuTicks(floorPid);
  const t0 = Date.now();
  const r = await run('taskset', ['-c', String(CFG.clientCpu), 'sh', '-c', SH, 'sh', ...client.cmd(url)]);
  const wallTicks = ((Date.now() - t0) / 1000) * CLK_TCK;
  const core1 = coreTicks(CFG.clientCpu);
  const up1 = cpuTicks(floorPid);
  const line = r.out.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`${client.name} printed no result (exit ${r.code}): ${r.err.slice(-300)}`);
  const m = JSON.parse(line);
  const own = childTicks(r.out);
  // Other processes on the client's core, as a share of the run.
  m.foreign_share = own === null ? null : Number((Math.max(0, core1.busy - core0.busy - own) / wallTicks).toFixed(3));
  // How busy the upstream's core was: near 1, floor (not the client) set the pace.
  m.upstream_busy = Number(((up1 - up0) / wallTicks).toFixed(3));
  return m;
}

async function main() {
  onSignals(log, () => killAll('SIGKILL'));
  const machine = machineBase();
  warnLoad(machine, note);
  if (machine.nproc < 2) note('one CPU: the client and the upstream share it; numbers are not comparable to the table');
  const clients = clientTable();
  const floor = floorBinary();
  const runs = Object.fromEntries(clients.map((c) => [c.name, []]));
  const t0 = Date.now();
  try {
    for (let rep = 0; rep < CFG.reps; rep++) {
      const port = await freePort();
      let srv;
      try {
        srv = await launch('floor', port, { argv: [floor.bin], env: { PORT: String(port), HOST: '127.0.0.1' } },
          path.join(OUT, 'logs', 'client-floor.log'), { cpu: CFG.upstreamCpu, timeoutMs: 5000, pollMs: 20 });
      } catch (e) { note(`rep ${rep + 1}: ${e.message}`); continue; }
      const url = `http://127.0.0.1:${port}/health`;
      for (const c of rotate(clients, rep)) {
        try {
          let m = await measure(c, url, srv.pid);
          // A run that shared its core is redone once; the quieter is kept.
          if (m.foreign_share !== null && m.foreign_share > FOREIGN_MAX) {
            log(`  ${c.name}: ${(m.foreign_share * 100).toFixed(0)}% of the client core went to other processes; again`);
            await sleep(1000);
            const again = await measure(c, url, srv.pid);
            if (again.foreign_share < m.foreign_share) m = again;
          }
          runs[c.name].push(m);
          log(`  rep ${rep + 1} ${c.name.padEnd(16)} ${fmt.rps(m.rps).padStart(7)} req/s ${m.cpu_us_per_req.toFixed(2).padStart(6)} µs/req` +
            ` upstream core ${(m.upstream_busy * 100).toFixed(0)}%${m.errors ? ` errors=${m.errors}` : ''}`);
        } catch (e) { note(`rep ${rep + 1}: ${c.name}: ${e.message}`); }
      }
      await stopServer(srv, note);
    }
  } finally {
    floor.cleanup();
    killAll('SIGKILL');
  }
  machine.loadavg_end = os.loadavg();
  const res = { config: CFG, machine, results: {}, notes, elapsed_s: (Date.now() - t0) / 1000 };
  for (const [name, ms] of Object.entries(runs)) {
    res.results[name] = {
      rps: stats(ms.map((m) => m.rps)), cpu_us_per_req: stats(ms.map((m) => m.cpu_us_per_req)),
      upstream_busy: stats(ms.map((m) => m.upstream_busy)), errors: ms.reduce((a, m) => a + m.errors + m.bad_status, 0),
      disturbed: ms.filter((m) => m.foreign_share > FOREIGN_MAX).length, runs: ms,
    };
  }
  const md = table(res);
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'client.md'), md);
  fs.writeFileSync(path.join(OUT, 'client.json'), `${JSON.stringify(res, null, 1)}\n`);
  intoResults(md, SECTION_BEGIN, SECTION_END);
  process.stdout.write(`\n${md}`);
  log(`wrote build/bench/client.{md,json} and its section of results.md (${res.elapsed_s.toFixed(0)} s)`);
}

function table(res) {
  const base = res.results[BASELINE];
  const L = [];
  L.push('## Outbound client: one core, 50 connections, pipelining 10');
  L.push('');
  L.push(`GET /health from floor (tools/bench/floor.c) on CPU ${CFG.upstreamCpu}; each client alone on CPU ${CFG.clientCpu}, ` +
    `${CFG.inflight} requests in flight, ${CFG.seconds} s after ${CFG.warmup} s of warm-up, median of ${CFG.reps} ` +
    '(min–max). CPU per request is the client process\'s own (user + system). "upstream core": how busy floor\'s ' +
    'CPU was; near 100% the upstream, not the client, set the pace, and only CPU per request compares.');
  L.push('');
  L.push('| client | req/s | CPU µs/req | req/s vs undici.request | CPU/req vs undici.request | upstream core |');
  L.push('|---|---:|---:|---:|---:|---:|');
  const c = (s, f) => (!s ? '–' : s.n > 1 && s.min !== s.max ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : f(s.median));
  for (const [name, r] of Object.entries(res.results)) {
    const rr = base && r.rps && base.rps ? r.rps.median / base.rps.median : null;
    const cr = base && r.cpu_us_per_req && base.cpu_us_per_req ? r.cpu_us_per_req.median / base.cpu_us_per_req.median : null;
    L.push(`| ${name}${r.errors ? ' †' : ''}${r.disturbed ? ' ‡' : ''} | ${c(r.rps, fmt.rps)} | ${c(r.cpu_us_per_req, fmt.us)} | ` +
      `${rr === null ? '–' : fmt.x(rr)} | ${cr === null ? '–' : fmt.x(cr)} | ${c(r.upstream_busy, (x) => `${(x * 100).toFixed(0)}%`)} |`);
  }
  L.push('');
  L.push('† some requests failed or had another status; ‡ some runs had other processes on the client core ' +
    `(> ${FOREIGN_MAX * 100}%).`);
  const ingot = res.results['ingot request'];
  if (ingot && base && ingot.rps && base.rps) {
    const cr = ingot.cpu_us_per_req.median / base.cpu_us_per_req.median;
    const rr = ingot.rps.median / base.rps.median;
    L.push('');
    L.push(`Targets (ingot's request API against undici.request): CPU per request ≤ 1/3: ${fmt.x(cr)} ` +
      `(${cr <= TARGET_CPU ? 'met' : 'missed'}); requests per second ≥ 3×: ${fmt.x(rr)} (${rr >= TARGET_RPS ? 'met' : 'missed'}` +
      `${rr < TARGET_RPS && ingot.upstream_busy && ingot.upstream_busy.median > 0.9 ? ': the upstream\'s core was saturated' : ''}).`);
  }
  L.push('');
  L.push(`Machine: ${res.machine.cpu}, ${res.machine.nproc} CPUs, ${res.machine.kernel}; ${loadText(res.machine)}.`);
  pushNotes(L, res.notes);
  return `${L.join('\n')}\n`;
}

if (process.argv[2] === '--worker') {
  worker(process.argv[3], process.argv[4]);
} else {
  main().catch((e) => { log(e.stack || String(e)); killAll('SIGKILL'); process.exit(1); });
}
