// bench.js: the orchestration half of tools/bench/run (which builds the C
// probes first). Starts floor, ingot, nginx and Node one at a time on one CPU,
// drives them with wrk on the other, reads their CPU time from /proc, times
// cold starts, and prints one markdown table (also build/bench/results.{md,json}).
// A measurement, never a test: it exits 0 even when targets are missed.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, sleep, logger, killAll, onSignals, run, freePort,
  launch, session, wrkRun, retrier, runLine, stats, pick, fmt, cell, ratio,
  machineBase, loadText, warnLoad, rotate, disturbedLegend, pushNotes, nginxHead,
} = require('./lib');

const env = process.env;
const { timing, cores } = sharedCfg(24);
const CFG = {
  ...timing,
  coldRuns: num(env.BENCH_COLD_RUNS, 50),
  pipelineDepth: num(env.BENCH_PIPELINE_DEPTH, 16),
  pipelineConns: num(env.BENCH_PIPELINE_CONNS, 100),
  ...cores,
  servers: (env.BENCH_SERVERS || 'floor,ingot,nginx,node').split(',').map((s) => s.trim()),
};
// run puts the floor and the probe in a private directory (BENCH_BIN_DIR);
// the service is copied there too, so a rebuild or `make clean` elsewhere in
// the tree mid-run cannot change or remove what is being measured.
const BIN_DIR = env.BENCH_BIN_DIR || path.join(ROOT, 'build', 'tools', 'bench'); // make bench-tools
const FLOOR_BIN = path.join(BIN_DIR, 'floor');
const COLD_BIN = path.join(BIN_DIR, 'coldstart');
const SERVICE_DEFAULT = path.join(ROOT, 'build', 'bin', 'service');
const { notes, log, note } = logger('bench');
const retry = retrier(CFG.retryBudget, CFG.retries, log); // .disturbed: runs kept although disturbed

// ---- expected bodies: the reference for every server's answers ----------
function expectedCompute() {
  let r = 0;
  for (let i = 0; i < 1000000; i++) r = (r + i * 31) % 1000000007;
  return r;
}
const HASH_HEX = crypto.createHash('sha256').update('hello world'.repeat(100)).digest('hex');
const EXPECTED = {
  '/health': '{"status":"ok"}',
  '/json': '{"id":1,"name":"widget","tags":["a","b","c"],"price":12.5,' +
    '"stock":{"warehouse":"north","count":42},"active":true}',
  '/compute': `{"result":${expectedCompute()}}`,
  '/hash': `{"sha256":"${HASH_HEX}"}`,
  '/blog/7': '{"id":7,"title":"post 7","body":"This is post 7.","likes":0}',
};

// ---- tests: what wrk drives, and which servers serve it -----------------
const TESTS = [
  ...['/health', '/json'].flatMap((p) => [10, 100, 500].map((c) => ({
    id: `${p.slice(1)}-c${c}`, label: `${p} c${c}`, path: p, conns: c, core: true,
  }))),
  { id: 'compute-c100', label: '/compute c100', path: '/compute', conns: 100, dynamic: true },
  { id: 'hash-c100', label: '/hash c100', path: '/hash', conns: 100, dynamic: true },
  {
    id: 'pipeline', label: `/health pipelined x${CFG.pipelineDepth} c${CFG.pipelineConns}`,
    path: '/health', conns: CFG.pipelineConns, pipeline: CFG.pipelineDepth,
  },
];

// ---- child processes: every one we start is tracked (lib.js) and ended by PID
process.on('exit', () => {
  killAll('SIGKILL');
  if (env.BENCH_BIN_DIR) fs.rmSync(env.BENCH_BIN_DIR, { recursive: true, force: true });
});
onSignals(log, () => killAll('SIGTERM'));

// ---- /proc readers (the rest are in lib.js) --------------------------------
function memKiB(pid) {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const get = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st) || [])[1]);
  return { rss: get('VmRSS'), vsz: get('VmSize') };
}

// ---- the four servers ----------------------------------------------------
function nginxConf(port) {
  const dir = path.join(OUT, 'nginx');
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  let V = '';
  try { V = execFileSync('nginx', ['-V'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString(); } catch (e) {
    V = String(e.stderr || '');
  }
  // Temp-path directives exist only for compiled-in modules; nginx-light lacks some.
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .filter((m) => m === 'client_body' || !V.includes(`--without-http_${m}_module`))
    .map((m) => `  ${m}_temp_path ${tmp}/${m};`).join('\n');
  const conf = `${nginxHead('bench.js', dir, port)}${temps}
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location = /health { default_type application/json; return 200 '${EXPECTED['/health']}'; }
    location = /json { default_type application/json; return 200 '${EXPECTED['/json']}'; }
    location / { return 404; }
  }
}
`;
  const file = path.join(dir, `nginx-${port}.conf`);
  fs.writeFileSync(file, conf);
  return { dir, file };
}

let serviceBin = env.BENCH_SERVICE || SERVICE_DEFAULT;
let serviceStandIn = false;

const SERVERS = {
  floor: {
    serves: (t) => !t.dynamic,
    fixedBody: true, // answers every request with the /health response
    cmd: (port) => ({ argv: [FLOOR_BIN], env: { PORT: String(port), HOST: '127.0.0.1' } }),
  },
  ingot: {
    serves: () => true,
    announces: true,
    cmd: (port) => ({
      argv: [serviceBin],
      env: { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1' },
    }),
  },
  nginx: {
    serves: (t) => !t.dynamic,
    staticOnly: true,
    cmd: (port) => {
      const { dir, file } = nginxConf(port);
      return { argv: ['nginx', '-e', 'stderr', '-p', dir, '-c', file], env: {} };
    },
  },
  node: {
    serves: () => true,
    cmd: (port) => ({
      argv: [process.execPath, path.join(__dirname, 'node-server.js')],
      env: { PORT: String(port), HOST: '127.0.0.1' },
    }),
  },
};

const starts = {}; // per server and rep, so a restart keeps the crashed run's log
async function startServer(name, rep) {
  const port = await freePort();
  const k = `${name}-rep${rep + 1}`;
  starts[k] = (starts[k] || 0) + 1;
  const logFile = path.join(OUT, 'logs', `${k}${starts[k] > 1 ? `-start${starts[k]}` : ''}.log`);
  const srv = await launch(name, port, SERVERS[name].cmd(port), logFile,
    { cpu: CFG.serverCpu, timeoutMs: 10000, pollMs: 2 });
  srv.logFile = logFile;
  if (SERVERS[name].announces) await checkAnnounce(srv);
  return srv;
}

// The reference service must print {"msg":"listening","port":N} on stdout.
async function checkAnnounce(srv) {
  const t0 = Date.now();
  for (;;) {
    const lines = fs.readFileSync(srv.logFile, 'utf8').split('\n');
    for (const l of lines) {
      try {
        const j = JSON.parse(l);
        if (j.msg === 'listening') {
          if (j.port !== srv.port) note(`${srv.name} announced port ${j.port}, asked for ${srv.port}`);
          return;
        }
      } catch { /* not JSON */ }
    }
    if (Date.now() - t0 > 2000) { note(`${srv.name} printed no {"msg":"listening"} line`); return; }
    await sleep(5);
  }
}

// ---- correctness: a throughput of wrong answers measures nothing --------
function get(port, p) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, type: '', body: String(e.message) }));
  });
}
async function verify(srv) {
  const out = {};
  for (const [p, want] of Object.entries(EXPECTED)) {
    const test = TESTS.find((t) => t.path === p);
    if (test && !SERVERS[srv.name].serves(test)) continue;
    if (p.startsWith('/blog') && SERVERS[srv.name].staticOnly) continue;
    if (SERVERS[srv.name].fixedBody && p !== '/health') continue;
    const r = await get(srv.port, p);
    let verdict = 'ok';
    if (r.status !== 200) verdict = `status ${r.status}`;
    else if (!/^application\/json\b/.test(r.type || '')) verdict = `content-type ${r.type}`;
    else if (r.body !== want) {
      let same = false;
      try { same = JSON.stringify(JSON.parse(r.body)) === JSON.stringify(JSON.parse(want)); } catch { /* */ }
      verdict = same ? 'ok (JSON-equal, bytes differ)' : `body ${JSON.stringify(r.body.slice(0, 120))}`;
    }
    out[p] = verdict;
    if (!verdict.startsWith('ok')) note(`${srv.name} GET ${p}: ${verdict}`);
  }
  return out;
}

// ---- wrk (the run and its /proc accounting: lib.js) -----------------------
function wrkArgs(port, t, seconds) {
  const a = ['wrk', '-t1', '-c', String(t.conns), '-d', `${seconds}s`, '--timeout', '10s', '--latency'];
  if (t.pipeline) a.push('-s', path.join(__dirname, 'pipeline.lua'));
  a.push(`http://127.0.0.1:${port}${t.path}`);
  if (t.pipeline) a.push('--', String(t.pipeline), t.path);
  return a;
}
async function measure(srv, t) {
  const [, ...wrk] = wrkArgs(srv.port, t, CFG.seconds);
  const m = await wrkRun(srv.pid, CFG, wrk);
  const cpuSec = m.ticks / CLK_TCK;
  return {
    ...m.w,
    cpu_s: cpuSec,
    cpu_us_per_req: m.w.requests > 0 && m.ok ? (cpuSec / m.w.requests) * 1e6 : null,
    core_us_per_req: m.w.requests > 0 ? (m.coreBusy / CLK_TCK / m.w.requests) * 1e6 : null,
    foreign_share: m.foreign_share,
    client_foreign_share: m.client_foreign_share,
    wrk_cpu_s: m.wrk_cpu_s,
    steal_share: Number((m.steal / m.wallTicks).toFixed(3)),
    ...m.end,
  };
}

// ---- cold start ----------------------------------------------------------
async function coldStart(name) {
  const port = await freePort();
  const { argv, env: extra } = SERVERS[name].cmd(port);
  const r = await run('taskset', ['-c', String(CFG.clientCpu), COLD_BIN, '-n', String(CFG.coldRuns),
    '-c', String(CFG.serverCpu), '-p', String(port), '--', ...argv], { env: { ...process.env, ...extra } });
  try {
    const j = JSON.parse(r.out.trim().split('\n').pop());
    if (j.error) throw new Error(j.error);
    return j;
  } catch (e) {
    note(`cold start of ${name} failed: ${e.message} ${r.err.trim()}`);
    return null;
  }
}

// ---- the table (statistics and cells: lib.js) -----------------------------
const rfmt = (r) => (r === null ? '–' : `${r.toFixed(2)}×`);

function machine() {
  const ver = (cmd, args) => {
    try {
      const r = require('node:child_process').spawnSync(cmd, args);
      return `${r.stdout}${r.stderr}`.split('\n').find((l) => l.trim()) || '?';
    } catch { return '?'; }
  };
  return {
    ...machineBase(),
    wrk: ver('wrk', ['--version']).replace(/ Copyright.*/, ''),
    nginx: ver('nginx', ['-v']), node: process.version,
  };
}

// A target names the servers it compares; without all of them it is n/a.
const target = (text, needs, ok) => ({ text, needs, ok });

function buildRows(res) {
  const S = CFG.servers;
  const rows = [];
  const pickRun = (srv, test, key) => pick((res.runs[srv] || {})[test] || [], key);
  for (const t of TESTS) {
    const rps = Object.fromEntries(S.map((s) => [s, pickRun(s, t.id, 'rps')]));
    const cpu = Object.fromEntries(S.map((s) => [s, pickRun(s, t.id, 'cpu_us_per_req')]));
    let rpsTarget = null;
    let cpuTarget = null;
    if (t.core) {
      rpsTarget = target('≥ nginx', ['ingot', 'nginx'], (v) => v.ingot >= v.nginx);
      cpuTarget = target('≤ 1.15× floor, < nginx', ['ingot', 'floor', 'nginx'],
        (v) => v.ingot <= 1.15 * v.floor && v.ingot < v.nginx);
    } else if (t.pipeline) {
      rpsTarget = target('≥ 0.8× floor, ≥ 8× nginx', ['ingot', 'floor', 'nginx'],
        (v) => v.ingot >= 0.8 * v.floor && v.ingot >= 8 * v.nginx);
    }
    rows.push({ test: t.label, metric: 'req/s', vals: rps, f: fmt.rps, target: rpsTarget });
    rows.push({ test: t.label, metric: 'CPU µs/req', vals: cpu, f: fmt.us, target: cpuTarget });
  }
  const cold = (k) => Object.fromEntries(S.map((s) => [s, stats((res.cold[s] || []).map((c) => c && c[k]))]));
  rows.push({
    test: `cold start (${CFG.coldRuns} runs)`, metric: 'median ms', vals: cold('median_us'), f: fmt.ms,
    target: target('≤ 1.2× floor', ['ingot', 'floor'], (v) => v.ingot <= 1.2 * v.floor),
  });
  rows.push({ test: `cold start (${CFG.coldRuns} runs)`, metric: 'p90 ms', vals: cold('p90_us'), f: fmt.ms });
  const idle = (k) => Object.fromEntries(S.map((s) => [s, stats((res.idle[s] || []).map((m) => m[k]))]));
  rows.push({
    test: 'idle', metric: 'RSS KiB', vals: idle('rss'), f: fmt.kib,
    target: target('≤ 256 KiB', ['ingot'], (v) => v.ingot <= 256),
  });
  rows.push({ test: 'idle', metric: 'VSZ KiB', vals: idle('vsz'), f: fmt.kib });
  const kib = res.binary_bytes === null ? null : res.binary_bytes / 1024;
  rows.push({
    // TLS included: the budget "<= 256 KiB before TLS" is checked by
    // tls.js, which splits the binary by a link map.
    test: 'binary build/bin/service (with TLS)', metric: 'KiB',
    vals: { ingot: kib === null ? null : { median: kib, min: kib, max: kib, n: 1 } },
    f: (x) => x.toFixed(1),
  });
  for (const r of rows) {
    if (!r.target) { r.verdict = ''; continue; }
    if (!r.target.needs.every((s) => r.vals[s])) { r.verdict = 'n/a'; continue; }
    const med = Object.fromEntries(r.target.needs.map((s) => [s, r.vals[s].median]));
    r.verdict = r.target.ok(med) ? 'PASS' : 'MISS';
    if (r.vals.ingot.bad) r.verdict = 'MISS (errors)';
  }
  return rows;
}

function renderMarkdown(res, rows) {
  const S = CFG.servers;
  const m = res.machine;
  const name = (s) => (s === 'ingot' && serviceStandIn ? 'ingot*' : s);
  const L = [];
  L.push('# ingot bench');
  L.push('');
  L.push(`Machine: ${m.cpu}, ${m.kernel}, nproc ${m.nproc}; ${loadText(m)}`);
  L.push(`Tools: ${m.wrk}; ${m.nginx}; node ${m.node}`);
  L.push(`Method: each server alone on CPU ${CFG.serverCpu}, \`wrk -t1\` on CPU ${CFG.clientCpu}; ${CFG.reps} reps × ` +
    `${CFG.seconds} s per run, server order rotated each rep; cells are median (min–max) over reps ` +
    '(undisturbed reps only, where any; see ‡); ' +
    'CPU µs/req = server utime+stime over the run ÷ requests wrk counted. Run at ' + res.started + '.');
  L.push('');
  const hdr = ['test', 'metric', ...S.map(name)];
  const ratios = ['floor', 'nginx', 'node'].filter((s) => S.includes(s) && S.includes('ingot'));
  hdr.push(...ratios.map((s) => `ingot/${s}`), 'target', 'verdict');
  L.push(`| ${hdr.join(' | ')} |`);
  L.push(`|${hdr.map((h, i) => (i < 2 || h === 'target' || h === 'verdict' ? '---' : '--:')).join('|')}|`);
  for (const r of rows) {
    if (!S.some((s) => r.vals[s])) continue;
    const cells = [r.test, r.metric, ...S.map((s) => cell(r.vals[s], r.f))];
    cells.push(...ratios.map((s) => rfmt(ratio(r.vals.ingot, r.vals[s]))));
    cells.push(r.target ? r.target.text : '', r.verdict);
    L.push(`| ${cells.join(' | ')} |`);
  }
  L.push('');
  L.push('– not served or not measured: nginx and floor serve only /health and /json; ' +
    'the floor answers every request with the fixed /health response, /json included. ' +
    '† some run had socket errors, non-2xx answers or a server exit (see results.json). ' + disturbedLegend(CFG));
  L.push('results.json also holds, per run, core_us_per_req: all busy time of the server\'s CPU (softirq included) per request, and latency p50/p99.');
  L.push('nginx runs with `master_process off`: one process is both master and worker, so its CPU and RSS are the worker\'s.');
  if (serviceStandIn) L.push('ingot* = STAND-IN: the floor binary (build/bin/service was missing); not ingot\'s numbers.');
  const p = rows.filter((r) => r.verdict === 'PASS').length;
  const t = rows.filter((r) => r.verdict === 'PASS' || r.verdict.startsWith('MISS')).length;
  L.push(`Targets: ${p} of ${t} PASS. Total bench time ${res.elapsed_s.toFixed(0)} s.`);
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

// ---- main ------------------------------------------------------------------
async function main() {
  const t0 = Date.now();
  // Configs and logs of an earlier bench would only confuse a reader.
  for (const d of ['nginx', 'logs']) fs.rmSync(path.join(OUT, d), { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const serviceSrc = serviceBin;
  if (!fs.existsSync(serviceBin)) {
    note(`${serviceBin} missing: using the floor binary as a stand-in for ingot`);
    serviceBin = FLOOR_BIN;
    serviceStandIn = true;
  } else if (env.BENCH_BIN_DIR) {
    serviceBin = path.join(BIN_DIR, 'service');
    fs.copyFileSync(serviceSrc, serviceBin);
    fs.chmodSync(serviceBin, 0o755);
  }
  const res = {
    started: new Date().toISOString(), machine: machine(), config: CFG,
    service: {
      path: serviceSrc, stand_in: serviceStandIn,
      mtime: serviceStandIn ? null : fs.statSync(serviceSrc).mtime.toISOString(),
    },
    binary_bytes: serviceStandIn ? null : fs.statSync(serviceBin).size,
    runs: {}, idle: {}, cold: {}, verification: {}, notes,
  };
  warnLoad(res.machine, note);
  const S = CFG.servers.filter((s) => {
    if (SERVERS[s]) return true;
    note(`unknown server ${s} ignored`);
    return false;
  });
  CFG.servers = S;
  for (let rep = 0; rep < CFG.reps; rep++) {
    const order = rotate(S, rep);
    log(`rep ${rep + 1}/${CFG.reps}: ${order.join(' → ')}`);
    for (const name of order) await benchServer(name, rep, res);
    for (const name of order) {
      log(`  ${name}: cold start ×${CFG.coldRuns}`);
      (res.cold[name] ||= []).push(await coldStart(name));
    }
  }
  res.machine.loadavg_end = os.loadavg();
  const { disturbed } = retry;
  res.disturbed = disturbed.map((d) => d.text);
  if (disturbed.length) {
    const total = Object.values(res.runs).reduce((a, t) => a + Object.keys(t).length, 0) * CFG.reps;
    const worst = [...disturbed].sort((a, b) => b.share - a.share).slice(0, 3).map((d) => d.text);
    note(`${disturbed.length} of ${total} runs kept although other processes took part of a bench core ` +
      `(best of up to ${CFG.retries + 1} tries${retry.budget <= 0 ? '; retry budget spent' : ''}); ` +
      `worst: ${worst.join('; ')}; all in results.json "disturbed"`);
  }
  res.elapsed_s = (Date.now() - t0) / 1000;
  const rows = buildRows(res);
  const md = renderMarkdown(res, rows);
  res.table = rows.map((r) => ({
    test: r.test, metric: r.metric, target: r.target ? r.target.text : null, verdict: r.verdict || null,
    values: Object.fromEntries(Object.entries(r.vals).filter(([, v]) => v)),
  }));
  fs.mkdirSync(OUT, { recursive: true }); // may have been cleaned meanwhile
  fs.writeFileSync(path.join(OUT, 'results.md'), md);
  fs.writeFileSync(path.join(OUT, 'results.json'), `${JSON.stringify(res, null, 1)}\n`);
  process.stdout.write(`\n${md}`);
  log(`wrote ${path.relative(ROOT, path.join(OUT, 'results.md'))} and results.json`);
}

async function benchServer(name, rep, res) {
  await session(name, rep, () => startServer(name, rep), note, async (first, current) => {
    await sleep(200); // let start-up work finish before reading idle memory
    (res.idle[name] ||= []).push(memKiB(first.pid));
    if (rep === 0) res.verification[name] = await verify(first);
    if (CFG.warmupSeconds > 0) {
      // Warm caches and Node's JIT on every route it will be measured on.
      const paths = [...new Set(TESTS.filter((t) => SERVERS[name].serves(t)).map((t) => t.path))];
      for (const p of paths) {
        await run('taskset', ['-c', String(CFG.clientCpu),
          ...wrkArgs(first.port, { path: p, conns: 10 }, Math.max(1, CFG.warmupSeconds / paths.length))]);
      }
    }
    for (const t of TESTS) {
      if (!SERVERS[name].serves(t)) continue;
      const srv = await current(t.label);
      const r = await retry.measure(srv.pid, rep, `${name} ${t.label}`, () => measure(srv, t));
      ((res.runs[name] ||= {})[t.id] ||= []).push({ rep, ...r });
      const { text, bad } = runLine(r, name, 5, t.label, 28);
      log(`${text}${bad}`);
    }
  });
}

main().catch((e) => { log(`failed: ${e.stack}`); killAll('SIGKILL'); process.exit(1); });
