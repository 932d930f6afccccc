// metrics.js: the metrics half of `make bench` (issue 13). Four parts, each
// on ingot alone (INGOT_THREADS=1 on one CPU, wrk -t1 on the other):
//   1. metrics on (INGOT_ADMIN_PORT set) against off (unset): both servers
//      run side by side and take turns, short runs in ABAB/BABA order, so
//      the drift of a shared machine falls on both alike; the server's CPU
//      time per request (utime+stime from /proc/PID/stat, and schedstat's
//      ns) over all of one side's runs, for GET /health c100 and POST /blog
//      x16 pipelined;
//   2. the same for this tree (admin port set) against the commit before
//      issue 13 (BENCH_METRICS_BASE, 1db2470), built once from `git archive`
//      into build/bench/base-<commit>/ and kept there;
//   3. the time one scrape of /metrics takes, with the server's counters
//      populated over 20 routes x 5 statuses (>= 100 series);
//   4. idle RSS with the admin listener on, and off.
// tools/bench/run starts it (BENCH_METRICS=0 skips it); `node tools/bench/metrics.js`
// runs it alone. Its table goes to stdout, build/bench/metrics.{md,json} and
// into build/bench/results.md. A measurement, never a test: the targets
// (+2% metrics, +3% all of issue 13, <= 256 KiB idle) are reported, not enforced.
//
// Knobs (environment): BENCH_SERVICE, BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1),
// BENCH_WARMUP (1); its own: BENCH_METRICS_ROUNDS (6), BENCH_METRICS_SECONDS (2 per run),
// BENCH_METRICS_SCRAPES (200), BENCH_METRICS_BASE (1db2470; "" skips part 2), BENCH_METRICS_PARTS
// (onoff,issue,scrape,idle: which parts run), BENCH_METRICS_TESTS (health,blog: which tests parts 1 and 2 run),
// BENCH_METRICS_ADMIN (1; 0: part 2's service without the admin port, for a build that has none).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const { execFileSync } = require('node:child_process');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, sleep, logger, killAll, onSignals, run, freePort, alive,
  isListening, cpuTicks, cpuNs, launch, stopServer, wrkRun, disturbance, stats, fmt, machineBase, loadText,
  pushNotes, intoResults, baseBinary,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
const { timing, cores } = sharedCfg(0);
const CFG = {
  warmupSeconds: timing.warmupSeconds,
  ...cores,
  rounds: num(env.BENCH_METRICS_ROUNDS, 6),
  seconds: num(env.BENCH_METRICS_SECONDS, 2),
  scrapes: num(env.BENCH_METRICS_SCRAPES, 200),
  base: env.BENCH_METRICS_BASE !== undefined ? env.BENCH_METRICS_BASE : '1db2470',
  conns: 100,
  pipeline: 16,
  parts: (env.BENCH_METRICS_PARTS || 'onoff,issue,scrape,idle').split(','),
  tests: env.BENCH_METRICS_TESTS ? env.BENCH_METRICS_TESTS.split(',') : null,
};
const TARGET_METRICS = 0.02;
const TARGET_ISSUE = 0.03;
const TARGET_IDLE_KIB = 256;
const SECTION_BEGIN = '<!-- tools/bench/metrics.js: begin -->';
const SECTION_END = '<!-- tools/bench/metrics.js: end -->';
const { notes, log, note } = logger('bench metrics');

let tmpDir = null;
process.on('exit', () => {
  killAll('SIGKILL');
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
});
onSignals(log, () => killAll('SIGKILL'));

const BLOG_BODY = '{"title":"Hello, metrics","body":"A post body of a few words.","likes":3,"tags":["c","bench"]}';
const ALL_TESTS = [
  { id: 'health', label: 'GET /health c100', args: (port, s) => ['-t1', '-c', String(CFG.conns), '-d', `${s}s`,
    '--timeout', '10s', `http://127.0.0.1:${port}/health`] },
  { id: 'blog', label: `POST /blog ×${CFG.pipeline} c${CFG.conns}`, args: (port, s) => ['-t1', '-c', String(CFG.conns),
    '-d', `${s}s`, '--timeout', '10s', '-s', path.join(HERE, 'post.lua'), `http://127.0.0.1:${port}/blog`, '--',
    path.join(tmpDir, 'blog.json'), `pipeline=${CFG.pipeline}`] },
];
const TESTS = ALL_TESTS.filter((t) => !CFG.tests || CFG.tests.includes(t.id));

// ---- servers ------------------------------------------------------------------
// A server: the binary and whether the admin listener is on. Ports are
// picked here, so readiness is "both ports listening" (lib.js's /proc read,
// which costs the server no connection).
async function start(name, bin, admin) {
  const port = await freePort();
  const adminPort = admin ? await freePort() : null;
  const extra = { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', INGOT_LOG_LEVEL: 'warn' };
  if (admin) extra.INGOT_ADMIN_PORT = String(adminPort);
  const srv = await launch(name, port, { argv: [bin], env: extra }, path.join(OUT, 'logs', `metrics-${name}.log`),
    { cpu: CFG.serverCpu, timeoutMs: 15000, pollMs: 5 });
  for (let t0 = Date.now(); admin && !isListening(adminPort);) {
    if (!alive(srv.pid) || Date.now() - t0 > 5000) {
      await stopServer(srv, note);
      throw new Error(`${name}: no admin listener on ${adminPort}`);
    }
    await sleep(5);
  }
  return { ...srv, adminPort };
}

function get(port, target, { method = 'GET', body, headers = {}, agent = false } = {}) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method, agent, timeout: 5000,
      headers: body !== undefined ? { 'Content-Length': Buffer.byteLength(body), ...headers } : headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, body: String(e.message) }));
    req.end(body);
  });
}

// ---- 1 and 2: interleaved A/B -----------------------------------------------------
async function measure(srv, test) {
  const m = await wrkRun(srv.pid, CFG, test.args(srv.port, CFG.seconds), true);
  return { requests: m.w.requests, rps: m.w.rps, ticks: m.ticks, ns: m.ns, bad: m.w.errors + m.w.non2xx,
    disturbance: disturbance(m), died: !m.ok };
}

// a and b are { name, bin, admin }; returns per test the sums of each side
// and the per-round ratios.
async function abCompare(what, a, b) {
  const res = { what, a: a.name, b: b.name, tests: {} };
  let sa;
  let sb;
  try {
    sa = await start(a.name, a.bin, a.admin);
    sb = await start(b.name, b.bin, b.admin);
    for (const srv of [sa, sb]) {
      for (const t of TESTS) await run('taskset', ['-c', String(CFG.clientCpu), 'wrk', ...t.args(srv.port, CFG.warmupSeconds)]);
    }
    log(`${what}: ${CFG.rounds} rounds of ${CFG.seconds} s runs, ${a.name} and ${b.name} alternated`);
    for (const t of TESTS) res.tests[t.id] = { label: t.label, rounds: [], sum: { [a.name]: {}, [b.name]: {} } };
    for (let i = 0; i < CFG.rounds; i++) {
      for (const t of TESTS) {
        const order = i % 2 ? [sb, sa] : [sa, sb];
        const r = {};
        for (const srv of order) r[srv.name] = await measure(srv, t);
        const per = (m, k) => (m.requests && m[k] !== null ? m[k] / m.requests : null);
        const ra = per(r[a.name], 'ns');
        const rb = per(r[b.name], 'ns');
        const round = { ...r, ratio_ns: ra && rb ? rb / ra - 1 : null };
        res.tests[t.id].rounds.push(round);
        log(`  round ${i + 1} ${t.label}: ${a.name} ${ra ? (ra / 1e3).toFixed(2) : '?'} µs/req, ` +
          `${b.name} ${rb ? (rb / 1e3).toFixed(2) : '?'} µs/req: ${round.ratio_ns === null ? '?' : fmt.pct(round.ratio_ns)}` +
          `${r[a.name].bad || r[b.name].bad ? ' (errors/non-2xx)' : ''}`);
      }
    }
    for (const t of TESTS) {
      const T = res.tests[t.id];
      for (const side of [a.name, b.name]) {
        const ms = T.rounds.map((r) => r[side]);
        const total = (k) => ms.reduce((s, m) => s + (m[k] || 0), 0);
        T.sum[side] = { requests: total('requests'), ticks: total('ticks'), ns: total('ns'), bad: total('bad'),
          disturbed: ms.filter((m) => m.disturbance > 0.05).length };
        T.sum[side].us_ticks = T.sum[side].requests ? (T.sum[side].ticks / CLK_TCK / T.sum[side].requests) * 1e6 : null;
        T.sum[side].us_ns = T.sum[side].requests ? T.sum[side].ns / 1e3 / T.sum[side].requests : null;
      }
      const A = T.sum[a.name];
      const B = T.sum[b.name];
      T.overhead_ticks = A.us_ticks && B.us_ticks ? B.us_ticks / A.us_ticks - 1 : null;
      T.overhead_ns = A.us_ns && B.us_ns ? B.us_ns / A.us_ns - 1 : null;
      // The verdict: the median of the rounds' paired ratios, which a burst
      // of other work in one round moves less than the pooled sums.
      T.round_spread = stats(T.rounds.map((r) => r.ratio_ns));
    }
  } catch (e) {
    note(`${what}: ${e.message}`);
  } finally {
    await stopServer(sa, note);
    await stopServer(sb, note);
  }
  return res;
}

// ---- 3: one scrape, with the server's series populated ----------------------------
// Requests over the reference document's routes, in several methods and
// with bad inputs, for >= 100 (method, route, status) series: the issue's
// 20 routes x 5 statuses. The series actually there are counted from the scrape.
const POPULATE = (() => {
  const targets = ['/health', '/json', '/hash', '/blog', '/blog?limit=2', '/blog?limit=x', '/blog/7', '/blog/999999',
    '/blog/x', '/validate', '/novalidate', '/delay/1', '/delay/x', '/nope', '/compute', '/openapi.json', '/fanout?n=2',
    '/proxy/json'];
  const reqs = [];
  for (const t of targets) {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'BREW']) {
      reqs.push({ target: t, method });
      if (method === 'POST' || method === 'PUT') {
        reqs.push({ target: t, method, body: BLOG_BODY, headers: { 'Content-Type': 'application/json' } });
        reqs.push({ target: t, method, body: '{"title":', headers: { 'Content-Type': 'application/json' } });
        reqs.push({ target: t, method, body: 'x', headers: { 'Content-Type': 'text/plain' } });
      }
    }
  }
  return reqs;
})();

async function scrapeTime() {
  let srv;
  const out = {};
  try {
    srv = await start('scrape', serviceCopy, true);
    for (const r of POPULATE) await get(srv.port, r.target, r);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const first = await get(srv.adminPort, '/metrics', { agent });
    if (first.status !== 200) throw new Error(`GET /metrics: status ${first.status}: ${first.body.slice(0, 200)}`);
    out.series = (first.body.match(/^http_server_request_duration_seconds_count\{/gm) || []).length;
    out.lines = first.body.split('\n').filter((l) => l && !l.startsWith('#')).length;
    out.bytes = Buffer.byteLength(first.body);
    const walls = [];
    const ticks0 = cpuTicks(srv.pid);
    const ns0 = cpuNs(srv.pid);
    for (let i = 0; i < CFG.scrapes; i++) {
      const t0 = process.hrtime.bigint();
      const r = await get(srv.adminPort, '/metrics', { agent });
      walls.push(Number(process.hrtime.bigint() - t0) / 1e3);
      if (r.status !== 200) throw new Error(`scrape ${i + 1}: status ${r.status}`);
    }
    const ns1 = cpuNs(srv.pid);
    out.wall_us = stats(walls);
    out.wall_p99_us = walls.sort((x, y) => x - y)[Math.floor(walls.length * 0.99)];
    out.cpu_us_ticks = ((cpuTicks(srv.pid) - ticks0) / CLK_TCK / CFG.scrapes) * 1e6;
    out.cpu_us_ns = ns0 !== null && ns1 !== null ? (ns1 - ns0) / 1e3 / CFG.scrapes : null;
    agent.destroy();
    log(`scrape: ${out.series} duration series, ${out.lines} samples, ${out.bytes} B: ` +
      `${fmt.us(out.wall_us.median)} µs wall (median of ${CFG.scrapes}), server CPU ` +
      `${out.cpu_us_ns === null ? '?' : fmt.us(out.cpu_us_ns)} µs per scrape`);
    if (out.series < 100) note(`only ${out.series} duration series were populated (want >= 100)`);
  } catch (e) {
    note(`scrape time: ${e.message}`);
  } finally {
    await stopServer(srv, note);
  }
  return out;
}

// ---- 4: idle RSS --------------------------------------------------------------------
function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : null;
}
async function idleRss() {
  const out = {};
  for (const [key, admin] of [['off', false], ['on', true]]) {
    const xs = [];
    for (let i = 0; i < 3; i++) {
      let srv;
      try {
        srv = await start(`idle-${key}`, serviceCopy, admin);
        await sleep(200); // as bench.js: let start-up work finish before reading idle memory
        xs.push(rssKiB(srv.pid));
      } catch (e) {
        note(`idle RSS (admin ${key}): ${e.message}`);
      } finally {
        await stopServer(srv, note);
      }
    }
    out[key] = stats(xs);
  }
  log(`idle RSS: admin listener off ${out.off ? out.off.median : '?'} KiB, on ${out.on ? out.on.median : '?'} KiB`);
  return out;
}

// ---- the table ----------------------------------------------------------------------
function abRows(L, res, target) {
  for (const T of Object.values(res.tests || {})) {
    const A = T.sum[res.a];
    const B = T.sum[res.b];
    const v = T.overhead_ticks;
    const sp = T.round_spread;
    const verdict = sp ? sp.median : null;
    L.push(`| ${res.what} | ${T.label} | ${A.us_ticks ? fmt.us(A.us_ticks) : '–'} / ${A.us_ns ? fmt.us(A.us_ns) : '–'} | ` +
      `${B.us_ticks ? fmt.us(B.us_ticks) : '–'} / ${B.us_ns ? fmt.us(B.us_ns) : '–'} | ` +
      `${v === null ? '–' : fmt.pct(v)} / ${T.overhead_ns === null ? '–' : fmt.pct(T.overhead_ns)} | ` +
      `${sp ? `${fmt.pct(sp.median)} (${fmt.pct(sp.min)} … ${fmt.pct(sp.max)})` : '–'} | ` +
      `${verdict === null ? '?' : verdict <= target ? `≤ ${fmt.pct(target)}: met` : `> ${fmt.pct(target)}: missed`}` +
      `${A.bad || B.bad ? ' †' : ''}${A.disturbed || B.disturbed ? ` (${A.disturbed + B.disturbed} runs disturbed)` : ''} |`);
  }
}

function table(res) {
  const L = [];
  L.push('## Metrics (issue 13): overhead, scrape, idle memory');
  L.push('');
  L.push(`ingot alone on CPU ${CFG.serverCpu} (INGOT_THREADS=1), wrk -t1 on CPU ${CFG.clientCpu}. CPU per request is the ` +
    `server's over all ${CFG.rounds} runs of ${CFG.seconds} s of a side, the two sides alternated (ABAB, BABA): ` +
    'utime+stime (/proc/PID/stat) / schedstat ns. The verdict is the median of the rounds\' paired ratios. The server meters its requests only ' +
    'when the admin port is set (a scrape can read them), so "on vs off" is the meters\' and the admin listener\'s cost; ' +
    'request ids and trace context are on both sides, and in the comparison with the commit before issue 13.');
  L.push('');
  L.push('| comparison | test | before: µs/req | after: µs/req | pooled: after/before | rounds (schedstat): median (min … max) | target (on the median) |');
  L.push('|---|---|---|---|---|---|---|');
  if (res.metrics) abRows(L, res.metrics, TARGET_METRICS);
  if (res.issue) abRows(L, res.issue, TARGET_ISSUE);
  L.push('');
  const s = res.scrape || {};
  if (s.wall_us) {
    L.push(`One scrape of /metrics with ${s.series} duration series populated (${s.lines} samples, ${s.bytes} B): ` +
      `${fmt.us(s.wall_us.median)} µs wall at the client (median of ${s.wall_us.n}, p99 ${fmt.us(s.wall_p99_us)} µs), ` +
      `${s.cpu_us_ns === null ? '?' : fmt.us(s.cpu_us_ns)} µs of server CPU (schedstat; ` +
      `${fmt.us(s.cpu_us_ticks)} µs by utime+stime).`);
  }
  const r = res.idle || {};
  if (r.on) {
    L.push(`Idle RSS: ${r.on.median} KiB with the admin listener on (${r.on.min}–${r.on.max}), ` +
      `${r.off ? r.off.median : '?'} KiB off; target ≤ ${TARGET_IDLE_KIB} KiB: ${r.on.median <= TARGET_IDLE_KIB ? 'met' : 'missed'}.`);
  }
  L.push('');
  L.push(`† errors or non-2xx responses in a run. Machine: ${res.machine.cpu}, ${res.machine.nproc} CPUs; ${loadText(res.machine)}.`);
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

// ---- main ------------------------------------------------------------------------------
const SERVICE = env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service');
let serviceCopy = null; // main's private copy
async function main() {
  if (!fs.existsSync(SERVICE)) throw new Error(`${SERVICE} is missing (make bin)`);
  tmpDir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'ingot-bench-metrics-'));
  // The service is copied: a rebuild during the run must not change it.
  const bin = path.join(tmpDir, 'service');
  fs.copyFileSync(SERVICE, bin);
  fs.chmodSync(bin, 0o755);
  serviceCopy = bin;
  fs.writeFileSync(path.join(tmpDir, 'blog.json'), BLOG_BODY);
  const res = { config: CFG, machine: machineBase(), notes };
  const part = (p) => CFG.parts.includes(p);
  if (part('onoff')) {
    res.metrics = await abCompare('metrics on vs off', { name: 'off', bin, admin: false }, { name: 'on', bin, admin: true });
  }
  if (CFG.base && part('issue')) {
    try {
      const base = baseBinary(CFG.base, log);
      res.issue = await abCompare(`issue 13 vs ${CFG.base}`, { name: CFG.base, bin: base, admin: false },
        { name: 'issue13', bin, admin: env.BENCH_METRICS_ADMIN !== '0' });
    } catch (e) {
      note(`base ${CFG.base}: ${e.message}`);
    }
  }
  if (part('scrape')) res.scrape = await scrapeTime();
  if (part('idle')) res.idle = await idleRss();
  res.machine.loadavg_end = require('node:os').loadavg();
  const md = table(res);
  process.stdout.write(`\n${md}`);
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'metrics.md'), md);
  fs.writeFileSync(path.join(OUT, 'metrics.json'), `${JSON.stringify(res, null, 2)}\n`);
  intoResults(md, SECTION_BEGIN, SECTION_END);
}
main().catch((e) => { log(`failed: ${e.stack || e.message}`); process.exitCode = 1; });
