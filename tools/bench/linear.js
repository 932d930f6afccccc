// linear.js: issue 26's benchmark (handlers on coroutines, typed SQL), a
// part of `make bench`: this tree's reference service against the commit
// before the issue (BENCH_LINEAR_BASE, 391a9c4: handlers as callbacks),
// built once from `git archive` (lib.js's baseBinary). Each server has one
// core (INGOT_THREADS=1) on the server CPU; wrk and PostgreSQL are on the
// client CPU. Two parts:
//   1. CPU per request, interleaved: both servers run side by side and
//      take turns in short wrk runs (ABAB, then BABA), and each run's
//      server CPU time (schedstat ns) per request is paired with the other
//      side's of the same round. The verdict is the median of the rounds'
//      ratios, which a burst of other work in one round moves less than the
//      pooled sums (also shown), with the median's 95% interval (a
//      bootstrap, seeded: the same rounds give the same interval). On a
//      shared 2-vCPU VM single rounds vary by tens of percent, so a
//      verdict within a few percent needs dozens of rounds. Tests: GET
//      /health c100 pipelined x16, POST /blog x16, and on a PostgreSQL of
//      the bench's own (lib.js's benchDatabase) /db, /queries?queries=20,
//      /fortunes and /updates?queries=20 at c64 with a pool of 4. Target:
//      +3% at most.
//   2. Memory per waiting request: the RSS growth while 1,000 requests are
//      parked on /delay/60000 (target: 12 KiB each), both servers. Parked
//      means read: every connection is established at the server's port
//      with nothing left in its receive queue (/proc/net/tcp), and a
//      request that has been read has run its handler up to its wait.
// tools/bench/run starts it (BENCH_LINEAR=0 skips it); `node
// tools/bench/linear.js` runs it alone. Its table goes to stdout,
// build/bench/linear.{md,json} and build/bench/results.md. A measurement,
// never a test.
//
// Knobs: BENCH_SERVICE, BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1),
// BENCH_WARMUP (1); its own: BENCH_LINEAR_BASE (391a9c4), BENCH_LINEAR_ROUNDS
// (48), BENCH_LINEAR_SECONDS (1 per run), BENCH_LINEAR_TESTS (health,blog,db,
// queries,fortunes,updates), BENCH_LINEAR_PARKED (1000), BENCH_LINEAR_PARTS
// (cpu,memory).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const {
  ROOT, OUT, num, sharedCfg, sleep, logger, killAll, run, freePort, httpRequest, alive, launch, stopServer,
  wrkRun, disturbance, stats, fmt, machineBase, loadText, pushNotes, publish, benchMain, baseBinary,
  benchDatabase, benchDatabaseStop, benchCleanup, scratchDir,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
const { timing, cores } = sharedCfg(0);
const CFG = {
  warmupSeconds: timing.warmupSeconds,
  ...cores,
  base: env.BENCH_LINEAR_BASE || '391a9c4',
  rounds: num(env.BENCH_LINEAR_ROUNDS, 48),
  seconds: num(env.BENCH_LINEAR_SECONDS, 1),
  parked: num(env.BENCH_LINEAR_PARKED, 1000),
  tests: (env.BENCH_LINEAR_TESTS || 'health,blog,db,queries,fortunes,updates').split(','),
  parts: (env.BENCH_LINEAR_PARTS || 'cpu,memory').split(','),
  pool: 4,
};
const TARGET_CPU = 0.03;
const TARGET_PARKED_KIB = 12;
const SECTION_BEGIN = '<!-- tools/bench/linear.js: begin -->';
const SECTION_END = '<!-- tools/bench/linear.js: end -->';
const { notes, log, note } = logger('bench linear');

let tmpDir = null;
const cleanup = benchCleanup;
process.on('exit', cleanup);

const BLOG_BODY = '{"title":"Hello, coroutines","body":"A post body of a few words.","likes":3,"tags":["c","bench"]}';
const wrkGet = (c, target) => (port, s) => ['-t1', '-c', String(c), '-d', `${s}s`, '--timeout', '10s',
  `http://127.0.0.1:${port}${target}`];
const ALL_TESTS = [
  { id: 'health', label: 'GET /health c100 ×16', db: false, args: (port, s) => ['-t1', '-c100', '-d', `${s}s`,
    '--timeout', '10s', '-s', path.join(HERE, 'pipeline.lua'), `http://127.0.0.1:${port}/`, '--', '16', '/health'] },
  { id: 'blog', label: 'POST /blog c100 ×16', db: false, args: (port, s) => ['-t1', '-c100', '-d', `${s}s`,
    '--timeout', '10s', '-s', path.join(HERE, 'post.lua'), `http://127.0.0.1:${port}/blog`, '--',
    path.join(tmpDir, 'blog.json'), 'pipeline=16'] },
  { id: 'db', label: 'GET /db c64', db: true, args: wrkGet(64, '/db') },
  { id: 'queries', label: 'GET /queries?queries=20 c64', db: true, args: wrkGet(64, '/queries?queries=20') },
  { id: 'fortunes', label: 'GET /fortunes c64', db: true, args: wrkGet(64, '/fortunes') },
  { id: 'updates', label: 'GET /updates?queries=20 c64', db: true, args: wrkGet(64, '/updates?queries=20') },
];
const TESTS = ALL_TESTS.filter((t) => CFG.tests.includes(t.id));

// A server: one core, access lines off (a log line per request would be
// measured too), no admin listener (two side by side would want one port).
async function start(name, bin, dbUrl) {
  const port = await freePort();
  const extra = { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', INGOT_LOG_LEVEL: 'warn',
    INGOT_ADMIN_PORT: '-1' };
  if (dbUrl) Object.assign(extra, { DATABASE_URL: dbUrl, INGOT_PG_POOL_SIZE: String(CFG.pool) });
  const logFile = path.join(OUT, 'logs', `linear-${name}.log`);
  const srv = await launch(name, port, { argv: [bin], env: extra }, logFile, { cpu: CFG.serverCpu, timeoutMs: 15000, pollMs: 5 });
  // Listening comes before the pool has connected: /db answers once it has.
  for (let t0 = Date.now(); dbUrl && (await httpRequest(port, '/db')).status !== 200;) {
    if (Date.now() - t0 > 10000 || !alive(srv.pid)) throw new Error(`${name}: GET /db never answered 200 (see ${logFile})`);
    await sleep(50);
  }
  return srv;
}

// A database of the cluster's for one side, made afresh and migrated by
// that side's binary: the two commits' migrations need not agree.
async function ownDatabase(cluster, name, bin) {
  for (const sql of [`DROP DATABASE IF EXISTS ${name}`, `CREATE DATABASE ${name}`]) {
    const r = await run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', cluster, '-c', sql]);
    if (r.code !== 0) throw new Error(`psql: ${r.err.trim()}`);
  }
  const u = new URL(cluster);
  u.pathname = `/${name}`;
  const url = u.toString();
  const m = await run(bin, ['--migrate'], { env: { PATH: env.PATH, DATABASE_URL: url } });
  if (m.code !== 0) throw new Error(`${bin} --migrate failed: ${(m.err + m.out).slice(0, 300)}`);
  return url;
}

// ---- 1: CPU per request, interleaved -------------------------------------------
async function measure(srv, test) {
  const m = await wrkRun(srv.pid, CFG, test.args(srv.port, CFG.seconds), true);
  return { requests: m.w.requests, rps: m.w.rps, ns: m.ns, bad: m.w.errors + m.w.non2xx,
    disturbance: disturbance(m), died: !m.ok };
}

async function cpuPart(base, tree, urls) {
  const res = { tests: {} };
  let sa;
  let sb;
  try {
    sa = await start('base', base, urls.base);
    sb = await start('tree', tree, urls.tree);
    for (const srv of [sa, sb]) {
      for (const t of TESTS) await run('taskset', ['-c', String(CFG.clientCpu), 'wrk', ...t.args(srv.port, CFG.warmupSeconds)]);
    }
    log(`cpu: ${CFG.rounds} rounds of ${CFG.seconds} s runs per test, ${CFG.base} and this tree alternated`);
    for (const t of TESTS) res.tests[t.id] = { label: t.label, rounds: [] };
    for (let i = 0; i < CFG.rounds; i++) {
      for (const t of TESTS) {
        const order = i % 4 === 1 || i % 4 === 2 ? [sb, sa] : [sa, sb]; // ABBA ABBA: each side first as often
        const r = {};
        for (const srv of order) r[srv.name] = await measure(srv, t);
        const per = (m) => (m.requests && m.ns !== null ? m.ns / m.requests : null);
        const ra = per(r.base);
        const rb = per(r.tree);
        const round = { ...r, ratio: ra && rb ? rb / ra - 1 : null };
        res.tests[t.id].rounds.push(round);
        log(`  round ${i + 1} ${t.label}: ${CFG.base} ${ra ? (ra / 1e3).toFixed(2) : '?'} µs/req, this tree ` +
          `${rb ? (rb / 1e3).toFixed(2) : '?'} µs/req: ${round.ratio === null ? '?' : fmt.pct(round.ratio)}` +
          `${r.base.bad || r.tree.bad ? ' (errors/non-2xx)' : ''}`);
      }
    }
    for (const t of TESTS) {
      const T = res.tests[t.id];
      for (const side of ['base', 'tree']) {
        const ms = T.rounds.map((r) => r[side]);
        const total = (k) => ms.reduce((s, m) => s + (m[k] || 0), 0);
        T[side] = { requests: total('requests'), ns: total('ns'), bad: total('bad'),
          disturbed: ms.filter((m) => m.disturbance > 0.05).length };
        T[side].us = T[side].requests ? T[side].ns / 1e3 / T[side].requests : null;
      }
      T.pooled = T.base.us && T.tree.us ? T.tree.us / T.base.us - 1 : null;
      T.spread = stats(T.rounds.map((r) => r.ratio));
      T.interval = medianInterval(T.rounds.map((r) => r.ratio).filter(Number.isFinite));
    }
  } catch (e) {
    note(`cpu: ${e.message}`);
  } finally {
    await stopServer(sa, note);
    await stopServer(sb, note);
  }
  return res;
}

// The 95% interval of the median of xs: 4,000 bootstrap resamples drawn by
// a seeded generator (mulberry32), so a table can be recomputed.
function medianInterval(xs) {
  if (xs.length < 8) return null;
  let seed = 0x1badf00d;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const meds = [];
  for (let i = 0; i < 4000; i++) meds.push(stats(xs.map(() => xs[Math.floor(rand() * xs.length)])).median);
  meds.sort((p, q) => p - q);
  return { low: meds[100], high: meds[3899] };
}

// ---- 2: memory per waiting request -----------------------------------------------
function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : null;
}
// Connections established at port whose receive queue is empty: what the
// server has accepted (or has in its backlog) and read to the end.
function readAt(port) {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let n = 0;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let txt = '';
    try { txt = fs.readFileSync(f, 'utf8'); } catch { continue; }
    for (const line of txt.split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 4 && c[1].endsWith(hex) && c[3] === '01' && c[4].endsWith(':00000000')) n++;
    }
  }
  return n;
}
async function parked(name, bin) {
  let srv;
  const socks = [];
  try {
    srv = await start(`${name}-parked`, bin, null);
    const warm = await httpRequest(srv.port, '/delay/1');
    if (warm.status !== 200) throw new Error(`GET /delay/1: ${warm.status}`);
    const before = rssKiB(srv.pid);
    const req = 'GET /delay/60000 HTTP/1.1\r\nHost: bench\r\n\r\n';
    await Promise.all(Array.from({ length: CFG.parked }, () => new Promise((resolve, reject) => {
      const s = net.connect(srv.port, '127.0.0.1', () => s.write(req, resolve));
      s.on('error', reject);
      socks.push(s);
    })));
    for (let t0 = Date.now(); readAt(srv.port) < CFG.parked;) {
      if (Date.now() - t0 > 20000 || !alive(srv.pid)) throw new Error(`only ${readAt(srv.port)} of ${CFG.parked} requests read`);
      await sleep(20);
    }
    const after = rssKiB(srv.pid);
    const early = socks.filter((s) => s.bytesRead > 0).length; // an answer before 60 s: not parked
    if (early) note(`${name}: ${early} of the parked requests were answered early`);
    return { before_kib: before, after_kib: after, per_request_kib: (after - before) / CFG.parked };
  } catch (e) {
    note(`memory (${name}): ${e.message}`);
    return null;
  } finally {
    for (const s of socks) s.destroy();
    await stopServer(srv, note);
  }
}

// ---- the table ----------------------------------------------------------------
function renderMarkdown(res) {
  const L = [`## Handlers on coroutines and typed SQL (issue 26): this tree against ${CFG.base}`, ''];
  if (res.cpu) {
    L.push(`Server CPU per request (schedstat), ${CFG.rounds} interleaved rounds of ${CFG.seconds} s per side, ` +
      'one core each side by side; the verdict is the median of the rounds\' paired ratios ' +
      `(target: at most +${TARGET_CPU * 100}%), shown with its 95% interval (bootstrap):`, '',
      `| test | ${CFG.base} µs/req | this tree µs/req | pooled | rounds: median (min..max) | median's 95% interval | target |`,
      '|---|---|---|---|---|---|---|');
    for (const t of TESTS) {
      const T = res.cpu.tests[t.id];
      if (!T || !T.spread) { L.push(`| ${t.label} | — | — | — | — | — | — |`); continue; }
      const flag = T.base.bad || T.tree.bad ? ' (errors)' : '';
      L.push(`| ${t.label}${flag} | ${T.base.us.toFixed(2)} | ${T.tree.us.toFixed(2)} | ${fmt.pct(T.pooled)} | ` +
        `${fmt.pct(T.spread.median)} (${fmt.pct(T.spread.min)}..${fmt.pct(T.spread.max)}) | ` +
        `${T.interval ? `${fmt.pct(T.interval.low)}..${fmt.pct(T.interval.high)}` : '—'} | ` +
        `${T.spread.median <= TARGET_CPU ? 'met' : 'missed'} |`);
    }
    L.push('');
  }
  if (res.memory) {
    L.push(`Memory per waiting request: RSS growth with ${CFG.parked} requests parked on /delay/60000 ` +
      `(target: ${TARGET_PARKED_KIB} KiB each):`, '', '| server | idle RSS KiB | parked RSS KiB | KiB per request |',
    '|---|---|---|---|');
    for (const [name, m] of Object.entries(res.memory)) {
      L.push(m ? `| ${name} | ${m.before_kib} | ${m.after_kib} | ${m.per_request_kib.toFixed(2)} |` : `| ${name} | — | — | — |`);
    }
    L.push('');
  }
  L.push(loadText(res.machine), '');
  pushNotes(L, notes);
  return L.join('\n');
}

async function main() {
  const started = Date.now();
  const machine = machineBase();
  tmpDir = scratchDir('ingot-bench-linear-');
  fs.writeFileSync(path.join(tmpDir, 'blog.json'), BLOG_BODY);
  const tree = env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service');
  const base = baseBinary(CFG.base, log);
  const res = { base: CFG.base, machine };
  if (CFG.parts.includes('cpu')) {
    const cluster = TESTS.some((t) => t.db) ? (await benchDatabase()).url : null;
    const urls = cluster ? { base: await ownDatabase(cluster, 'linear_base', base),
      tree: await ownDatabase(cluster, 'linear_tree', tree) } : {};
    res.cpu = await cpuPart(base, tree, urls);
    benchDatabaseStop();
  }
  if (CFG.parts.includes('memory')) {
    res.memory = { [CFG.base]: await parked(CFG.base, base), 'this tree': await parked('tree', tree) };
  }
  machine.loadavg_end = os.loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  publish('linear', `${renderMarkdown(res)}\n`, res, SECTION_BEGIN, SECTION_END, log);
  return res;
}

benchMain(module, main, { clientCpu: cores.clientCpu, log, cleanup });
