// lib.js: what the bench scripts share: child processes tracked by
// PID, free ports, the /proc readers, one wrk run measured against the
// server's CPU time, the "disturbed run" detection and its retries, wrk's
// output, statistics and the markdown cells. Each script is its own
// process, so the state here (the live children) is per script.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const http = require('node:http');
const { spawn, execFileSync } = require('node:child_process');

const env = process.env;
const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'build', 'bench'); // results, logs, nginx configs
const num = (v, d) => (v !== undefined && v !== '' && Number.isFinite(+v) ? +v : d);
// The knobs both halves read, so one setting drives both; in two parts, so
// each half's own knobs keep their place between them (and in its JSON).
const sharedCfg = (retryBudget) => ({
  timing: {
    seconds: num(env.BENCH_SECONDS, 3),
    reps: num(env.BENCH_REPS, 3),
    warmupSeconds: num(env.BENCH_WARMUP, 1),
  },
  cores: {
    serverCpu: num(env.BENCH_SERVER_CPU, 0),
    clientCpu: num(env.BENCH_CLIENT_CPU, 1),
    retries: num(env.BENCH_RETRIES, 2),
    retryBudget: num(env.BENCH_RETRY_BUDGET, retryBudget),
  },
});
const FOREIGN_MAX = 0.05; // share of a bench core other processes may take
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// log and note with a prefix of their own; notes also end up in the table.
function logger(prefix) {
  const notes = [];
  const log = (s) => { process.stderr.write(`[${prefix}] ${s}\n`); };
  const note = (s) => { notes.push(s); log(`note: ${s}`); };
  return { notes, log, note };
}

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
function onSignals(log, stop) {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => { log(`${sig}: stopping children`); stop(); process.exit(130); });
  }
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

// One request on a connection of its own: resolves {status, headers, body}
// (status 0 and the error in body when it failed).
function httpRequest(port, target, { method = 'GET', body, headers = {}, timeoutMs = 5000 } = {}) {
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1', port, path: target, method, agent: false, timeout: timeoutMs, headers,
    }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: String(e.message) }));
    req.end(body);
  });
}

// ---- /proc readers -------------------------------------------------------
function cpuTicks(pid) {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
  return Number(f[11]) + Number(f[12]); // utime + stime, all threads of the process
}
// The same CPU time in nanoseconds (each thread's sum_exec_runtime), where
// utime+stime come in ticks of 10 ms: a 2 s run of a server 30% busy is
// only 60 ticks. null where the kernel has no schedstat.
function cpuNs(pid) {
  try {
    let ns = 0;
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns;
  } catch { return null; }
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

// ---- servers: started pinned to one CPU, ready once listening -------------
// argv and env come from the caller's server table; output goes to logFile.
async function launch(name, port, { argv, env: extra }, logFile, { cpu, timeoutMs, pollMs }) {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  // Logs go to a file, not a pipe: a chatty server must not block, and
  // draining a pipe would spend CPU on the client's core during a run.
  const fd = fs.openSync(logFile, 'w');
  const child = track(spawn('taskset', ['-c', String(cpu), ...argv], {
    stdio: ['ignore', fd, fd], env: { ...process.env, ...extra },
  }));
  fs.closeSync(fd);
  let spawnErr = null;
  child.on('error', (e) => { spawnErr = e; });
  const t0 = Date.now();
  while (!isListening(port)) {
    if (spawnErr || child.exitCode !== null || child.signalCode !== null || Date.now() - t0 > timeoutMs) {
      try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ }
      const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-400) : '';
      throw new Error(`${name} did not listen on ${port} (${spawnErr || `exit ${child.exitCode}`}): ${tail}`);
    }
    await sleep(pollMs);
  }
  return { name, port, pid: child.pid, child };
}
async function stopServer(srv, note) {
  if (!srv || !alive(srv.pid)) return;
  const gone = new Promise((r) => srv.child.once('exit', r));
  try { process.kill(srv.pid, 'SIGTERM'); } catch { return; }
  if (await Promise.race([gone.then(() => false), sleep(3000).then(() => true)])) {
    note(`${srv.name} still running 3 s after SIGTERM; killed`);
    try { process.kill(srv.pid, 'SIGKILL'); } catch { /* gone */ }
    await gone;
  }
}

// One server start for one rep: body(first, current) runs on it, where
// current(label) is the server, restarted if it has exited before label.
// A failure is a note, never an exception; the server is stopped at the end.
async function session(name, rep, start, note, body) {
  let srv;
  try {
    srv = await start();
  } catch (e) {
    note(`rep ${rep + 1}: ${e.message}`);
    return;
  }
  const current = async (label) => {
    if (!alive(srv.pid)) {
      note(`rep ${rep + 1}: ${name} had exited before ${label}; restarted`);
      srv = await start();
    }
    return srv;
  };
  try {
    await body(srv, current);
  } catch (e) {
    note(`rep ${rep + 1}: ${name}: ${e.message}`);
  } finally {
    await stopServer(srv, note);
  }
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
// One wrk run (wrkArgs: wrk's arguments, without "wrk") on clientCpu against
// the server pid on serverCpu, with the CPU time both cores spent meanwhile.
// withNs: also the server's CPU time in ns from schedstat (null where none).
async function wrkRun(pid, { serverCpu, clientCpu }, wrkArgs, withNs = false) {
  const ns0 = withNs ? cpuNs(pid) : null;
  const before = cpuTicks(pid);
  const core0 = coreTicks(serverCpu);
  const client0 = coreTicks(clientCpu);
  const self0 = process.cpuUsage();
  const t0 = Date.now();
  const r = await run('taskset', ['-c', String(clientCpu), 'sh', '-c', WRK_SH, 'sh', ...wrkArgs]);
  // Let the server see wrk's closes, so every run is charged the same teardown.
  await sleep(100);
  const wallTicks = ((Date.now() - t0) / 1000) * CLK_TCK;
  const ok = alive(pid);
  const after = ok ? cpuTicks(pid) : before;
  const ns1 = withNs && ok ? cpuNs(pid) : null;
  const core1 = coreTicks(serverCpu);
  const client1 = coreTicks(clientCpu);
  const self = process.cpuUsage(self0);
  const w = parseWrk(r.out);
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
    w, ok, ticks: after - before, wallTicks,
    ns: ns0 !== null && ns1 !== null ? ns1 - ns0 : null,
    coreBusy: core1.busy - core0.busy, steal: core1.steal - core0.steal,
    foreign_share: Number(foreign.toFixed(3)),
    client_foreign_share: clientForeign === null ? null : Number(clientForeign.toFixed(3)),
    wrk_cpu_s: wrkTicks === null ? null : wrkTicks / CLK_TCK,
    end: { server_died: !ok, wrk_exit: r.code, wrk_stderr: r.err.trim() || undefined },
  };
}
// Share of either core that went to processes other than the server and wrk.
const disturbance = (r) => Math.max(r.foreign_share, r.client_foreign_share || 0);

// A run whose cores were shared with other processes is redone; the least
// disturbed attempt is kept. A global budget keeps a machine that stays busy
// from stretching the bench without bound. disturbed: runs kept anyway.
function retrier(budget, retries, log) {
  const st = { budget, disturbed: [] };
  // what: "<server> <test>", once: () => one measurement.
  st.measure = async (pid, rep, what, once) => {
    let r = await once();
    for (let i = 0; i < retries && disturbance(r) > FOREIGN_MAX && st.budget > 0 && alive(pid); i++) {
      st.budget--;
      log(`  ${what}: ${(disturbance(r) * 100).toFixed(0)}% of a bench core went to other processes; again`);
      await sleep(1000); // a compiler burst on a shared machine lasts a second or two
      const again = await once();
      again.retries = i + 1;
      if (disturbance(again) < disturbance(r)) r = again;
    }
    if (disturbance(r) > FOREIGN_MAX) {
      st.disturbed.push({ share: disturbance(r), text: `rep ${rep + 1} ${what} ${(disturbance(r) * 100).toFixed(0)}%` });
    }
    return r;
  };
  return st;
}
// The line a measured run logs: requests per second, CPU per request, errors.
function runLine(m, name, nameW, label, labelW) {
  const cpu = m.cpu_us_per_req === null ? '?' : m.cpu_us_per_req.toFixed(2);
  const bad = m.errors || m.non2xx || m.server_died
    ? ` errors=${m.errors} non2xx=${m.non2xx}${m.server_died ? ' DIED' : ''}` : '';
  return { text: `  ${name.padEnd(nameW)} ${label.padEnd(labelW)} ${fmt.rps(m.rps).padStart(7)} req/s  ${cpu.padStart(6)} µs/req`, bad };
}

// ---- statistics and the table --------------------------------------------
function stats(xs) {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const n = v.length;
  const med = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return { median: med, min: v[0], max: v[n - 1], n };
}
// Undisturbed reps only, where there are any: a rep that shared a core with
// a compiler measures the compiler as much as the server.
function pick(runs, key) {
  const clean = runs.filter((m) => disturbance(m) <= FOREIGN_MAX);
  const use = clean.length ? clean : runs;
  const s = stats(use.map((m) => m[key]));
  if (s) {
    s.bad = runs.some((m) => m.errors || m.non2xx || m.server_died);
    s.disturbed = !clean.length;
    s.dropped = runs.length - use.length;
  }
  return s;
}
const fmt = {
  rps: (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(0)),
  us: (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)),
  ms: (x) => (x / 1000).toFixed(x >= 100000 ? 0 : 2),
  kib: (x) => x.toFixed(0),
  pct: (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`,
  x: (x) => `${x.toFixed(2)}×`,
};
// A cell: median (min–max), then † (errors), ‡ (all reps disturbed) and
// [k/n] (k undisturbed reps of n) from pick().
function cell(s, f) {
  if (!s) return '–';
  const c = s.n > 1 && s.min !== s.max ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : f(s.median);
  return `${c}${s.bad ? ' †' : ''}${s.disturbed ? ' ‡' : ''}${s.dropped ? ` [${s.n}/${s.n + s.dropped}]` : ''}`;
}
const ratio = (a, b) => (a && b && b.median ? a.median / b.median : null);

// ---- the machine and the text around the tables ---------------------------
function machineBase() {
  const cpu = (/^model name\s*:\s*(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8')) || [])[1] || '?';
  // The runner itself is pinned to one CPU, so its own nproc would say 1.
  const nproc = num(env.BENCH_NPROC, os.cpus().length);
  return { cpu, kernel: `${os.type()} ${os.release()}`, nproc, loadavg_start: os.loadavg() };
}
const loadText = (m) => `load avg at start ${m.loadavg_start.map((x) => x.toFixed(2)).join(' ')}, ` +
  `at end ${m.loadavg_end.map((x) => x.toFixed(2)).join(' ')}`;
function warnLoad(m, note) {
  if (m.loadavg_start[0] > 0.5) {
    note(`load average ${m.loadavg_start[0].toFixed(2)} at start: other work on this machine may skew numbers`);
  }
}
// Server order rotated each rep, so no server always runs first.
const rotate = (xs, k) => [...xs.slice(k % xs.length), ...xs.slice(0, k % xs.length)];
const disturbedLegend = (cfg) => `‡ every rep had other processes on a bench core (> ${FOREIGN_MAX * 100}% of ` +
  `CPU ${cfg.serverCpu} or ${cfg.clientCpu}); [k/n]: only the k of n reps without such company are in the cell.`;
function pushNotes(L, notes) {
  if (notes.length) { L.push(''); L.push('Notes:'); for (const n of notes) L.push(`- ${n}`); }
}

// results.md is bench.js's; another tool's section (from its begin marker
// to its end marker) replaces an earlier one of its own there, or is
// appended.
function intoResults(md, begin, end) {
  const file = path.join(OUT, 'results.md');
  const section = `${begin}\n${md}${end}\n`;
  let cur = '';
  try { cur = fs.readFileSync(file, 'utf8'); } catch { /* none yet */ }
  const a = cur.indexOf(begin);
  const b = cur.indexOf(end);
  const next = a >= 0 && b > a ? cur.slice(0, a) + section + cur.slice(b + end.length + 1)
    : `${cur}${cur && !cur.endsWith('\n\n') ? '\n' : ''}${section}`;
  fs.writeFileSync(file, next);
}

// The start of an nginx config for one single-process worker without
// logging, up to inside its http block (after the keep-alive settings);
// tool names the script that writes it.
function nginxHead(tool, dir, port) {
  return `# generated by tools/bench/${tool}: one single-process worker, no logging
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
`;
}

// The floor server (floor.c), built by `make bench-tools`: tools/bench/run's
// private copy (BENCH_BIN_DIR), else the build's. Throws when it is missing.
function floorBinary() {
  const given = env.BENCH_BIN_DIR && path.join(env.BENCH_BIN_DIR, 'floor');
  if (given && fs.existsSync(given)) return { bin: given, cleanup() {} };
  const built = path.join(ROOT, 'build', 'tools', 'bench', 'floor');
  if (!fs.existsSync(built)) throw new Error(`${built} is missing (make bench-tools builds it)`);
  return { bin: built, cleanup() {} };
}

// The bench's PostgreSQL: DATABASE_URL when set, else tools/pg-local's
// cluster of its own under build/bench/pg, started here (as a child of the
// calling script it shares that script's CPU, the client's). Returns
// { url, where, local }; benchDatabaseStop() stops a cluster started here
// (an exit handler's work: it is synchronous).
const PG_LOCAL = path.join(ROOT, 'tools', 'pg-local');
const pgLocalEnv = () => ({ ...env, BUILD: OUT });
let pgLocalStarted = false;
async function benchDatabase() {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, where: 'DATABASE_URL', local: false };
  const r = await run(PG_LOCAL, ['start'], { env: pgLocalEnv() });
  if (r.code !== 0) throw new Error(`tools/pg-local start failed: ${r.err}`);
  pgLocalStarted = true;
  const t = await run(PG_LOCAL, ['tcp-url'], { env: pgLocalEnv() });
  return { url: t.out.trim(), where: 'tools/pg-local (build/bench/pg)', local: true };
}
function benchDatabaseStop() {
  if (!pgLocalStarted) return;
  try { execFileSync(PG_LOCAL, ['stop'], { env: pgLocalEnv(), stdio: 'ignore' }); } catch { /* gone */ }
  pgLocalStarted = false;
}

// A script's scratch directory, removed by benchCleanup; and the cleanup
// itself, for a script that starts servers and may start the bench's
// PostgreSQL: every tracked child killed, the database stopped, the
// scratch directories removed. Synchronous: an exit handler's work.
const scratchDirs = [];
function scratchDir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  scratchDirs.push(d);
  return d;
}
function benchCleanup() {
  killAll('SIGKILL');
  benchDatabaseStop();
  while (scratchDirs.length) fs.rmSync(scratchDirs.pop(), { recursive: true, force: true });
}

// An earlier commit's reference service (the commit before an issue, for
// an A/B against this tree), built once into build/bench/base-<commit>/service
// from `git archive` (no worktree: nothing in the repository's metadata
// changes), with this tree's third-party builds (build/deps) linked in.
function baseBinary(commit, log) {
  const dir = path.join(OUT, `base-${commit}`);
  const bin = path.join(dir, 'service');
  if (fs.existsSync(bin)) return bin;
  const src = path.join(dir, 'src');
  fs.rmSync(src, { recursive: true, force: true });
  fs.mkdirSync(path.join(src, 'build'), { recursive: true });
  log(`building ${commit}'s service into ${dir} (once)`);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${commit}" | tar -x -C "${src}"`]);
  fs.symlinkSync(path.join(ROOT, 'build', 'deps'), path.join(src, 'build', 'deps'));
  execFileSync('nice', ['make', '-C', src, '-j2', 'build/bin/service'], { stdio: ['ignore', 'ignore', 'inherit'] });
  fs.copyFileSync(path.join(src, 'build', 'bin', 'service'), bin);
  fs.chmodSync(bin, 0o755);
  fs.rmSync(src, { recursive: true, force: true });
  return bin;
}

// A bench part's outputs: build/bench/<name>.{md,json}, its section of
// results.md, the table on stdout.
function publish(name, md, res, begin, end, log) {
  fs.mkdirSync(OUT, { recursive: true }); // may have been cleaned meanwhile
  fs.writeFileSync(path.join(OUT, `${name}.md`), md);
  fs.writeFileSync(path.join(OUT, `${name}.json`), `${JSON.stringify(res, null, 1)}\n`);
  intoResults(md, begin, end);
  process.stdout.write(`\n${md}`);
  log(`wrote build/bench/${name}.{md,json} and its section of results.md (${res.elapsed_s.toFixed(0)} s)`);
}

// A bench part as a module (mod: its `module`): its exported main() never
// throws, so a failure cannot cost the tables written before it; run alone,
// it pins itself to the client CPU as `run` pins bench.js.
function benchMain(mod, main, { clientCpu, log, cleanup }) {
  mod.exports = { main: () => main().catch((e) => { log(`failed: ${e.stack}`); cleanup(); return null; }) };
  if (require.main !== mod) return;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(clientCpu), String(process.pid)], { stdio: 'ignore' });
  } catch { log(`could not pin this process to CPU ${clientCpu}`); }
  onSignals(log, cleanup);
  mod.exports.main().then((r) => process.exit(r ? 0 : 1));
}

module.exports = {
  ROOT, OUT, num, sharedCfg, FOREIGN_MAX, CLK_TCK, sleep, logger,
  track, killAll, onSignals, run, freePort, httpRequest,
  cpuTicks, cpuNs, isListening, coreTicks, alive,
  launch, stopServer, session, floorBinary, baseBinary, benchDatabase, benchDatabaseStop, scratchDir, benchCleanup,
  parseWrk, wrkRun, disturbance, retrier, runLine,
  stats, pick, fmt, cell, ratio,
  machineBase, loadText, warnLoad, rotate, disturbedLegend, pushNotes, intoResults, nginxHead, publish, benchMain,
};
