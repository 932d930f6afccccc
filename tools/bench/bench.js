// bench.js: the orchestration half of tools/bench/run (which builds the C
// probes first). Starts floor, ingot, nginx and Node one at a time on one CPU,
// drives them with wrk on the other, reads their CPU time from /proc, times
// cold starts, and prints one markdown table (also build/bench/results.{md,json}).
// A measurement, never a test: it exits 0 even when targets are missed.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const http = require('node:http');
const crypto = require('node:crypto');
const { spawn, execFileSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'build', 'bench');
const env = process.env;
const num = (v, d) => (v !== undefined && v !== '' && Number.isFinite(+v) ? +v : d);
const CFG = {
  seconds: num(env.BENCH_SECONDS, 3),
  reps: num(env.BENCH_REPS, 3),
  warmupSeconds: num(env.BENCH_WARMUP, 1),
  coldRuns: num(env.BENCH_COLD_RUNS, 50),
  pipelineDepth: num(env.BENCH_PIPELINE_DEPTH, 16),
  pipelineConns: num(env.BENCH_PIPELINE_CONNS, 100),
  serverCpu: num(env.BENCH_SERVER_CPU, 0),
  clientCpu: num(env.BENCH_CLIENT_CPU, 1),
  retries: num(env.BENCH_RETRIES, 2),
  retryBudget: num(env.BENCH_RETRY_BUDGET, 24),
  servers: (env.BENCH_SERVERS || 'floor,ingot,nginx,node').split(',').map((s) => s.trim()),
};
const FOREIGN_MAX = 0.05; // share of a bench core other processes may take
let retryBudget = CFG.retryBudget;
const disturbed = []; // runs kept although other processes shared a bench core
// run puts the floor and the probe in a private directory (BENCH_BIN_DIR);
// the service is copied there too, so a rebuild or `make clean` elsewhere in
// the tree mid-run cannot change or remove what is being measured.
const BIN_DIR = env.BENCH_BIN_DIR || OUT;
const FLOOR_BIN = path.join(BIN_DIR, 'floor');
const COLD_BIN = path.join(BIN_DIR, 'coldstart');
const SERVICE_DEFAULT = path.join(ROOT, 'build', 'bin', 'service');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const notes = [];
const note = (s) => { notes.push(s); log(`note: ${s}`); };
function log(s) { process.stderr.write(`[bench] ${s}\n`); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

// ---- child processes: every one we start is tracked and ended by PID ----
const live = new Map(); // pid -> ChildProcess
function track(child) {
  live.set(child.pid, child);
  child.on('exit', () => live.delete(child.pid));
  return child;
}
function killAll(sig) {
  for (const pid of live.keys()) { try { process.kill(pid, sig); } catch { /* gone */ } }
}
process.on('exit', () => {
  killAll('SIGKILL');
  if (env.BENCH_BIN_DIR) fs.rmSync(env.BENCH_BIN_DIR, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { log(`${sig}: stopping children`); killAll('SIGTERM'); process.exit(130); });
}

function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = track(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts }));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', (e) => resolve({ code: -1, out, err: err + String(e) }));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

// Binding port 0 lets the kernel pick a free port; the tiny window before the
// server binds it is harmless on a machine where nothing else takes ports fast.
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// ---- /proc readers -------------------------------------------------------
function cpuTicks(pid) {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
  return Number(f[11]) + Number(f[12]); // utime + stime, all threads of the process
}
function memKiB(pid) {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const get = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st) || [])[1]);
  return { rss: get('VmRSS'), vsz: get('VmSize') };
}
// Listening is read from /proc/net/tcp{,6}, so readiness costs the server no
// connection: idle RSS is then taken before any client has touched it.
function isListening(port) {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let txt = '';
    try { txt = fs.readFileSync(f, 'utf8'); } catch { continue; }
    for (const line of txt.split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 3 && c[1].endsWith(hex) && c[3] === '0A') return true;
    }
  }
  return false;
}
// The server's core as a whole (/proc/stat). With tick accounting and no
// IRQ-time accounting (this kernel), softirq work run in the server's context
// is charged to the server's utime+stime, so busy ticks beyond the server's
// own are other processes sharing its core: a run so disturbed is redone.
function coreTicks(cpu) {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${cpu} `));
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq, steal };
}
function alive(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch { return false; }
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
  const conf = `# generated by tools/bench/bench.js: one single-process worker, no logging
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 16384;
error_log stderr warn;
pid ${dir}/nginx-${port}.pid;
events { worker_connections 8192; }
http {
  access_log off;
  server_tokens off;
  keepalive_requests 100000000;
  keepalive_timeout 120s;
${temps}
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
  const { argv, env: extra } = SERVERS[name].cmd(port);
  const k = `${name}-rep${rep + 1}`;
  starts[k] = (starts[k] || 0) + 1;
  const logFile = path.join(OUT, 'logs', `${k}${starts[k] > 1 ? `-start${starts[k]}` : ''}.log`);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  // Logs go to a file, not a pipe: a chatty server must not block, and
  // draining a pipe would spend CPU on the client's core during a run.
  const fd = fs.openSync(logFile, 'w');
  const child = track(spawn('taskset', ['-c', String(CFG.serverCpu), ...argv], {
    stdio: ['ignore', fd, fd], env: { ...process.env, ...extra },
  }));
  fs.closeSync(fd);
  let spawnErr = null;
  child.on('error', (e) => { spawnErr = e; });
  const t0 = Date.now();
  while (!isListening(port)) {
    if (spawnErr || child.exitCode !== null || child.signalCode !== null || Date.now() - t0 > 10000) {
      try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ }
      const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-400) : '';
      throw new Error(`${name} did not listen on ${port} (${spawnErr || `exit ${child.exitCode}`}): ${tail}`);
    }
    await sleep(2);
  }
  const srv = { name, port, pid: child.pid, child, logFile };
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

async function stopServer(srv) {
  if (!alive(srv.pid)) return;
  const gone = new Promise((r) => srv.child.once('exit', r));
  try { process.kill(srv.pid, 'SIGTERM'); } catch { return; }
  const t = await Promise.race([gone.then(() => 'ok'), sleep(3000).then(() => 'slow')]);
  if (t === 'slow') {
    note(`${srv.name} still running 3 s after SIGTERM; killed`);
    try { process.kill(srv.pid, 'SIGKILL'); } catch { /* gone */ }
    await gone;
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

// ---- wrk -----------------------------------------------------------------
const UNIT = { us: 1, ms: 1e3, s: 1e6 };
function parseWrk(out) {
  const m = (re) => re.exec(out);
  const req = m(/(\d+) requests in ([\d.]+)(us|ms|s)/);
  const rps = m(/Requests\/sec:\s+([\d.]+)/);
  const sock = m(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const non2xx = m(/Non-2xx or 3xx responses: (\d+)/);
  const lat = (q) => {
    const x = new RegExp(`^\\s+${q}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    return x ? Number(x[1]) * UNIT[x[2]] : null;
  };
  return {
    requests: req ? Number(req[1]) : 0,
    rps: rps ? Number(rps[1]) : 0,
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    p50_us: lat(50),
    p99_us: lat(99),
  };
}
function wrkArgs(port, t, seconds) {
  const a = ['wrk', '-t1', '-c', String(t.conns), '-d', `${seconds}s`, '--timeout', '10s', '--latency'];
  if (t.pipeline) a.push('-s', path.join(__dirname, 'pipeline.lua'));
  a.push(`http://127.0.0.1:${port}${t.path}`);
  if (t.pipeline) a.push('--', String(t.pipeline), t.path);
  return a;
}
// wrk runs under a shell that, once it has reaped wrk, prints its own
// /proc/PID/stat: the children's utime+stime there are wrk's CPU time, which
// tells how much of the client core other processes took during the run.
const WRK_SH = 'wrk "$@"; s=$?; echo; echo "@@stat $(cat /proc/$$/stat)"; exit $s';
function childTicks(out) {
  const line = out.split('\n').find((l) => l.startsWith('@@stat '));
  if (!line) return null;
  const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return Number(f[13]) + Number(f[14]); // cutime + cstime (fields 16, 17)
}
async function measure(srv, t) {
  const before = cpuTicks(srv.pid);
  const core0 = coreTicks(CFG.serverCpu);
  const client0 = coreTicks(CFG.clientCpu);
  const self0 = process.cpuUsage();
  const t0 = Date.now();
  const [, ...wrk] = wrkArgs(srv.port, t, CFG.seconds);
  const r = await run('taskset', ['-c', String(CFG.clientCpu), 'sh', '-c', WRK_SH, 'sh', ...wrk]);
  // Let the server see wrk's closes, so every run is charged the same teardown.
  await sleep(100);
  const wallTicks = ((Date.now() - t0) / 1000) * CLK_TCK;
  const ok = alive(srv.pid);
  const after = ok ? cpuTicks(srv.pid) : before;
  const core1 = coreTicks(CFG.serverCpu);
  const client1 = coreTicks(CFG.clientCpu);
  const self = process.cpuUsage(self0);
  const w = parseWrk(r.out);
  const cpuSec = (after - before) / CLK_TCK;
  const foreign = Math.max(0, core1.busy - core0.busy - (after - before)) / wallTicks;
  const wrkTicks = childTicks(r.out);
  const selfTicks = ((self.user + self.system) / 1e6) * CLK_TCK;
  // Company on the client core only matters if wrk wanted the time: with
  // idle time left on that core (e.g. /compute, where wrk mostly waits) wrk
  // was not held back.
  const clientIdle = 1 - (client1.busy - client0.busy) / wallTicks;
  const clientForeign = wrkTicks === null ? null : clientIdle > FOREIGN_MAX ? 0
    : Math.max(0, client1.busy - client0.busy - wrkTicks - selfTicks) / wallTicks;
  return {
    ...w,
    cpu_s: cpuSec,
    cpu_us_per_req: w.requests > 0 && ok ? (cpuSec / w.requests) * 1e6 : null,
    core_us_per_req: w.requests > 0 ? ((core1.busy - core0.busy) / CLK_TCK / w.requests) * 1e6 : null,
    foreign_share: Number(foreign.toFixed(3)),
    client_foreign_share: clientForeign === null ? null : Number(clientForeign.toFixed(3)),
    wrk_cpu_s: wrkTicks === null ? null : wrkTicks / CLK_TCK,
    steal_share: Number(((core1.steal - core0.steal) / wallTicks).toFixed(3)),
    server_died: !ok,
    wrk_exit: r.code,
    wrk_stderr: r.err.trim() || undefined,
  };
}
// Share of either core that went to processes other than the server and wrk.
const disturbance = (r) => Math.max(r.foreign_share, r.client_foreign_share || 0);

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

// ---- statistics and the table --------------------------------------------
function stats(xs) {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const n = v.length;
  const med = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return { median: med, min: v[0], max: v[n - 1], n };
}
const fmt = {
  rps: (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(0)),
  us: (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)),
  ms: (x) => (x / 1000).toFixed(x >= 100000 ? 0 : 2),
  kib: (x) => x.toFixed(0),
};
function cell(s, f) {
  if (!s) return '–';
  return s.n > 1 && s.min !== s.max ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : f(s.median);
}
const ratio = (a, b) => (a && b && b.median ? a.median / b.median : null);
const rfmt = (r) => (r === null ? '–' : `${r.toFixed(2)}×`);

function machine() {
  const cpu = (/^model name\s*:\s*(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8')) || [])[1] || '?';
  // The runner itself is pinned to one CPU, so its own nproc would say 1.
  const nproc = num(env.BENCH_NPROC, os.cpus().length);
  const ver = (cmd, args) => {
    try {
      const r = require('node:child_process').spawnSync(cmd, args);
      return `${r.stdout}${r.stderr}`.split('\n').find((l) => l.trim()) || '?';
    } catch { return '?'; }
  };
  return {
    cpu, kernel: `${os.type()} ${os.release()}`, nproc, loadavg_start: os.loadavg(),
    wrk: ver('wrk', ['--version']).replace(/ Copyright.*/, ''),
    nginx: ver('nginx', ['-v']), node: process.version,
  };
}

// A target names the servers it compares; without all of them it is n/a.
const target = (text, needs, ok) => ({ text, needs, ok });

function buildRows(res) {
  const S = CFG.servers;
  const rows = [];
  const pick = (srv, test, key) => {
    if (!res.runs[srv] || !res.runs[srv][test]) return null;
    const runs = res.runs[srv][test];
    // Undisturbed reps only, where there are any: a rep that shared a core
    // with a compiler measures the compiler as much as the server.
    const clean = runs.filter((r) => disturbance(r) <= FOREIGN_MAX);
    const use = clean.length ? clean : runs;
    const s = stats(use.map((r) => r[key]));
    if (s) {
      s.bad = runs.some((r) => r.errors || r.non2xx || r.server_died);
      s.disturbed = !clean.length;
      s.dropped = runs.length - use.length;
    }
    return s;
  };
  for (const t of TESTS) {
    const rps = Object.fromEntries(S.map((s) => [s, pick(s, t.id, 'rps')]));
    const cpu = Object.fromEntries(S.map((s) => [s, pick(s, t.id, 'cpu_us_per_req')]));
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
    test: 'binary build/bin/service', metric: 'KiB',
    vals: { ingot: kib === null ? null : { median: kib, min: kib, max: kib, n: 1 } },
    f: (x) => x.toFixed(1),
    target: target('≤ 256 KiB', ['ingot'], (v) => v.ingot <= 256),
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
  L.push(`Machine: ${m.cpu}, ${m.kernel}, nproc ${m.nproc}; load avg at start ${m.loadavg_start.map((x) => x.toFixed(2)).join(' ')}, ` +
    `at end ${m.loadavg_end.map((x) => x.toFixed(2)).join(' ')}`);
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
    const cells = [r.test, r.metric, ...S.map((s) => {
      const c = cell(r.vals[s], r.f);
      const v = r.vals[s];
      return v ? `${c}${v.bad ? ' †' : ''}${v.disturbed ? ' ‡' : ''}${v.dropped ? ` [${v.n}/${v.n + v.dropped}]` : ''}` : c;
    })];
    cells.push(...ratios.map((s) => rfmt(ratio(r.vals.ingot, r.vals[s]))));
    cells.push(r.target ? r.target.text : '', r.verdict);
    L.push(`| ${cells.join(' | ')} |`);
  }
  L.push('');
  L.push('– not served or not measured: nginx and floor serve only /health and /json; ' +
    'the floor answers every request with the fixed /health response, /json included. ' +
    '† some run had socket errors, non-2xx answers or a server exit (see results.json). ' +
    `‡ every rep had other processes on a bench core (> ${FOREIGN_MAX * 100}% of CPU ${CFG.serverCpu} or ${CFG.clientCpu}); ` +
    '[k/n]: only the k of n reps without such company are in the cell.');
  L.push('results.json also holds, per run, core_us_per_req: all busy time of the server\'s CPU (softirq included) per request, and latency p50/p99.');
  L.push('nginx runs with `master_process off`: one process is both master and worker, so its CPU and RSS are the worker\'s.');
  if (serviceStandIn) L.push('ingot* = STAND-IN: the floor binary (build/bin/service was missing); not ingot\'s numbers.');
  const p = rows.filter((r) => r.verdict === 'PASS').length;
  const t = rows.filter((r) => r.verdict === 'PASS' || r.verdict.startsWith('MISS')).length;
  L.push(`Targets: ${p} of ${t} PASS. Total bench time ${res.elapsed_s.toFixed(0)} s.`);
  if (notes.length) { L.push(''); L.push('Notes:'); for (const n of notes) L.push(`- ${n}`); }
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
  if (res.machine.loadavg_start[0] > 0.5) {
    note(`load average ${res.machine.loadavg_start[0].toFixed(2)} at start: other work on this machine may skew numbers`);
  }
  const S = CFG.servers.filter((s) => {
    if (SERVERS[s]) return true;
    note(`unknown server ${s} ignored`);
    return false;
  });
  CFG.servers = S;
  for (let rep = 0; rep < CFG.reps; rep++) {
    const k = rep % S.length;
    const order = [...S.slice(k), ...S.slice(0, k)];
    log(`rep ${rep + 1}/${CFG.reps}: ${order.join(' → ')}`);
    for (const name of order) await benchServer(name, rep, res);
    for (const name of order) {
      log(`  ${name}: cold start ×${CFG.coldRuns}`);
      (res.cold[name] ||= []).push(await coldStart(name));
    }
  }
  res.machine.loadavg_end = os.loadavg();
  res.disturbed = disturbed.map((d) => d.text);
  if (disturbed.length) {
    const total = Object.values(res.runs).reduce((a, t) => a + Object.keys(t).length, 0) * CFG.reps;
    const worst = [...disturbed].sort((a, b) => b.share - a.share).slice(0, 3).map((d) => d.text);
    note(`${disturbed.length} of ${total} runs kept although other processes took part of a bench core ` +
      `(best of up to ${CFG.retries + 1} tries${retryBudget <= 0 ? '; retry budget spent' : ''}); ` +
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
  let srv;
  try {
    srv = await startServer(name, rep);
  } catch (e) {
    note(`rep ${rep + 1}: ${e.message}`);
    return;
  }
  try {
    await sleep(200); // let start-up work finish before reading idle memory
    (res.idle[name] ||= []).push(memKiB(srv.pid));
    if (rep === 0) res.verification[name] = await verify(srv);
    if (CFG.warmupSeconds > 0) {
      // Warm caches and Node's JIT on every route it will be measured on.
      const paths = [...new Set(TESTS.filter((t) => SERVERS[name].serves(t)).map((t) => t.path))];
      for (const p of paths) {
        await run('taskset', ['-c', String(CFG.clientCpu),
          ...wrkArgs(srv.port, { path: p, conns: 10 }, Math.max(1, CFG.warmupSeconds / paths.length))]);
      }
    }
    for (const t of TESTS) {
      if (!SERVERS[name].serves(t)) continue;
      if (!alive(srv.pid)) {
        note(`rep ${rep + 1}: ${name} had exited before ${t.label}; restarted`);
        srv = await startServer(name, rep);
      }
      // A run whose cores were shared with other processes is redone; the
      // least disturbed attempt is kept. A global budget keeps a machine that
      // stays busy from stretching the bench without bound.
      let r = await measure(srv, t);
      for (let i = 0; i < CFG.retries && disturbance(r) > FOREIGN_MAX && retryBudget > 0 && alive(srv.pid); i++) {
        retryBudget--;
        log(`  ${name} ${t.label}: ${(disturbance(r) * 100).toFixed(0)}% of a bench core went to other processes; again`);
        await sleep(1000); // a compiler burst on a shared machine lasts a second or two
        const again = await measure(srv, t);
        again.retries = i + 1;
        if (disturbance(again) < disturbance(r)) r = again;
      }
      if (disturbance(r) > FOREIGN_MAX) {
        disturbed.push({
          share: disturbance(r), text: `rep ${rep + 1} ${name} ${t.label} ${(disturbance(r) * 100).toFixed(0)}%`,
        });
      }
      ((res.runs[name] ||= {})[t.id] ||= []).push({ rep, ...r });
      const cpu = r.cpu_us_per_req === null ? '?' : r.cpu_us_per_req.toFixed(2);
      const bad = r.errors || r.non2xx || r.server_died ? ` errors=${r.errors} non2xx=${r.non2xx}${r.server_died ? ' DIED' : ''}` : '';
      log(`  ${name.padEnd(5)} ${t.label.padEnd(28)} ${fmt.rps(r.rps).padStart(7)} req/s  ${cpu.padStart(6)} µs/req${bad}`);
    }
  } catch (e) {
    note(`rep ${rep + 1}: ${name}: ${e.message}`);
  } finally {
    await stopServer(srv);
  }
}

main().catch((e) => { log(`failed: ${e.stack}`); killAll('SIGKILL'); process.exit(1); });
