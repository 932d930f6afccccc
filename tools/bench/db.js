// db.js: the database half of `make bench`: TechEmpower's db, queries=20,
// fortunes and updates=20 on ingot's reference service against Fastify with
// the postgres npm driver (fastify-db.js: postgres.js pipelines too), both on
// the same PostgreSQL (tools/pg-local's cluster of its own under
// build/bench/pg, or DATABASE_URL when set) over TCP, each server alone on
// the server CPU, PostgreSQL and wrk on the client CPU. Per test: requests
// per second and the server's CPU per request (its own process only, from
// /proc; PostgreSQL's work is not in it), and the ratio to the target (ingot
// ≤ 1/4 of Node's CPU per request). Also: /queries?queries=20 against /db
// at one connection (20 pipelined queries cost far less than 20 round
// trips), and each pooled connection's memory (RSS with a large pool minus
// RSS with one, over the difference). tools/bench/run starts it
// (BENCH_DB=0 skips it); `node tools/bench/db.js` runs it alone. Its table
// goes to stdout, build/bench/db.{md,json} and build/bench/results.md.
// A measurement, never a test.
//
// Knobs: BENCH_SECONDS (3), BENCH_REPS (3), BENCH_WARMUP (1), BENCH_RETRIES,
// BENCH_SERVICE, BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1) as bench.js; its
// own: BENCH_DB_CONNS (64), BENCH_DB_POOL (4: connections per server),
// BENCH_DB_MEM_POOL (16: the large pool of the memory measurement),
// BENCH_DB_SERVERS (ingot,fastify).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, sleep, logger, killAll, run, freePort, httpRequest, alive,
  launch, stopServer, session, wrkRun, retrier, runLine, pick, fmt, cell, ratio,
  machineBase, loadText, warnLoad, rotate, pushNotes, publish, benchMain, benchDatabase, benchCleanup, scratchDir,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
const { timing, cores } = sharedCfg(12);
const CFG = {
  ...timing, ...cores,
  conns: num(env.BENCH_DB_CONNS, 64),
  pool: num(env.BENCH_DB_POOL, 4),
  memPool: num(env.BENCH_DB_MEM_POOL, 16),
  servers: (env.BENCH_DB_SERVERS || 'ingot,fastify').split(',').filter(Boolean),
};
const TARGET_CPU = 4; // Node's CPU per request ÷ ingot's ≥ 4 on each test
const SECTION_BEGIN = '<!-- tools/bench/db.js: begin -->';
const SECTION_END = '<!-- tools/bench/db.js: end -->';
const { notes, log, note } = logger('bench db');

const TESTS = [
  { id: 'db', label: 'GET /db', target: '/db', check: (b) => isWorld(JSON.parse(b)) },
  { id: 'queries', label: 'GET /queries?queries=20', target: '/queries?queries=20', check: (b) => isWorlds(JSON.parse(b), 20) },
  { id: 'fortunes', label: 'GET /fortunes', target: '/fortunes', check: isFortunes },
  { id: 'updates', label: 'GET /updates?queries=20', target: '/updates?queries=20', check: (b) => isWorlds(JSON.parse(b), 20) },
];
const isWorld = (w) => w && Number.isInteger(w.id) && w.id >= 1 && w.id <= 10000 &&
  Number.isInteger(w.randomNumber) && Object.keys(w).length === 2;
const isWorlds = (a, n) => Array.isArray(a) && a.length === n && a.every(isWorld);
function isFortunes(b) {
  const rows = [...b.matchAll(/<tr><td>(\d+)<\/td><td>(.*?)<\/td><\/tr>/g)];
  return rows.length === 13 && b.includes('&lt;script&gt;') && b.includes('フレームワークのベンチマーク') &&
    b.includes('<td>0</td><td>Additional fortune added at request time.</td>');
}

// ---- child processes: tracked (lib.js) and ended by PID; PostgreSQL by tools/pg-local ----
let tmpDir = null;
const cleanup = benchCleanup;
process.on('exit', cleanup);

// The tables: the service's --migrate; else (no ingot) the migration files with psql.
async function migrate(url) {
  if (serviceBin) {
    const r = await run(serviceBin, ['--migrate'], { env: { PATH: env.PATH, DATABASE_URL: url } });
    if (r.code === 0) return 'service --migrate';
    note(`service --migrate failed (${r.code}): ${(r.err + r.out).trim().slice(0, 200)}; applying the files with psql`);
  }
  const dir = env.BENCH_DB_MIGRATIONS || path.join(ROOT, 'schemas', 'migrations');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^\d+_.*\.sql$/.test(f)).sort() : [];
  const have = await run('psql', ['-X', '-A', '-t', '-d', url, '-c', "SELECT to_regclass('world') IS NOT NULL"]);
  if (have.out.trim() === 't') return 'already there';
  for (const f of files) {
    const r = await run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-1', '-f', path.join(dir, f)]);
    if (r.code !== 0) throw new Error(`psql -f ${f}: ${r.err}`);
  }
  return `psql -f ${dir}/*.sql`;
}

// ---- the servers ----
let serviceBin = null;
let dbUrl = null;
const SERVERS = {
  ingot: (port, pool) => ({
    argv: [serviceBin],
    env: { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: dbUrl, INGOT_PG_POOL_SIZE: String(pool) },
  }),
  fastify: (port, pool) => ({
    argv: [process.execPath, path.join(HERE, 'fastify-db.js')],
    env: { PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production', DATABASE_URL: dbUrl, DB_POOL: String(pool) },
  }),
};

const get = (port, target) => httpRequest(port, target);

async function startServer(name, rep, pool = CFG.pool) {
  const port = await freePort();
  const logFile = path.join(OUT, 'logs', `db-${name}-${rep}.log`);
  const srv = await launch(name, port, SERVERS[name](port, pool), logFile, { cpu: CFG.serverCpu, timeoutMs: 15000, pollMs: 5 });
  // Listening comes before the pool has connected: /db answers once it has.
  for (let t0 = Date.now(); (await get(port, '/db')).status !== 200;) {
    if (Date.now() - t0 > 10000 || !alive(srv.pid)) throw new Error(`${name}: GET /db never answered 200 (see ${logFile})`);
    await sleep(50);
  }
  return srv;
}

async function verify(srv) {
  const out = {};
  for (const t of TESTS) {
    const r = await get(srv.port, t.target);
    let v = 'ok';
    try {
      if (r.status !== 200) v = `status ${r.status}: ${r.body.slice(0, 160)}`;
      else if (!t.check(r.body)) v = `body ${JSON.stringify(r.body.slice(0, 160))}`;
      else if (!r.headers.server || !r.headers.date) v = 'no Server or Date header';
    } catch (e) { v = `${e.message}: ${r.body.slice(0, 160)}`; }
    out[t.label] = v;
    if (v !== 'ok') note(`${srv.name} ${t.label}: ${v}`);
  }
  return out;
}

// ---- wrk ----
const wrkArgs = (port, t, seconds, conns) => ['-t1', '-c', String(conns), '-d', `${seconds}s`, '--timeout', '10s',
  '--latency', `http://127.0.0.1:${port}${t.target}`];
async function measure(srv, t, seconds, conns) {
  const m = await wrkRun(srv.pid, CFG, wrkArgs(srv.port, t, seconds, conns), true);
  // PostgreSQL shares the client CPU with wrk by design: only company on
  // the server's CPU makes a run disturbed.
  m.client_foreign_share = null;
  const cpuSec = m.ns !== null ? m.ns / 1e9 : m.ticks / CLK_TCK;
  return {
    ...m.w, cpu_s: cpuSec,
    cpu_us_per_req: m.w.requests > 0 && m.ok ? (cpuSec / m.w.requests) * 1e6 : null,
    server_busy: Number((m.ticks / m.wallTicks).toFixed(3)),
    foreign_share: m.foreign_share, client_foreign_share: null, ...m.end,
  };
}

const retry = retrier(CFG.retryBudget, CFG.retries, log);
async function benchServer(name, rep, res) {
  await session(name, rep, () => startServer(name, `rep${rep + 1}`), note, async (first, current) => {
    if (!res.verification[name]) res.verification[name] = await verify(first);
    for (const t of rotate(TESTS, rep)) {
      if (CFG.warmupSeconds > 0) await measure(first, t, Math.max(1, CFG.warmupSeconds), CFG.conns);
      const srv = await current(t.label);
      const m = await retry.measure(srv.pid, rep, `${name} ${t.label}`, () => measure(srv, t, CFG.seconds, CFG.conns));
      ((res.runs[name] ||= {})[t.id] ||= []).push({ rep, ...m });
      const { text, bad } = runLine(m, name, 7, t.label, 24);
      log(`${text}  busy ${(m.server_busy * 100).toFixed(0)}%${bad}`);
    }
    // One connection: the latency of 20 queries against one's.
    for (const t of [TESTS[0], TESTS[1]]) {
      const srv = await current(`${t.label} at one connection`);
      const m = await measure(srv, t, CFG.seconds, 1);
      ((res.single[name] ||= {})[t.id] ||= []).push({ rep, ...m });
      log(`  ${name.padEnd(7)} ${t.label} at -c1: p50 ${m.p50_us === null ? '?' : fmt.ms(m.p50_us)} ms`);
    }
  });
}

// RSS of one server with `pool` connections, all of them up (counted in
// pg_stat_activity) after a short load that needs them all.
function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : null;
}
// The role's connections other than this query's own.
async function backends() {
  const r = await run('psql', ['-X', '-A', '-t', '-d', dbUrl, '-c',
    'SELECT count(*) FROM pg_stat_activity WHERE usename = current_user AND pid <> pg_backend_pid()']);
  return Number(r.out.trim());
}
async function memory(name) {
  const at = {};
  for (const pool of [1, CFG.memPool]) {
    let srv;
    try {
      const base = await backends();
      srv = await startServer(name, `mem${pool}`, pool);
      await measure(srv, TESTS[1], 1, pool * 4);
      const want = base + pool;
      for (let t0 = Date.now(); (await backends()) < want && Date.now() - t0 < 5000;) await sleep(50);
      const up = (await backends()) - base;
      if (up < pool) note(`${name} pool ${pool}: only ${up} connections up`);
      at[pool] = { rss_kib: rssKiB(srv.pid), connections: up };
    } catch (e) {
      note(`${name} memory, pool ${pool}: ${e.message}`);
    } finally {
      await stopServer(srv, note);
    }
  }
  const a = at[1];
  const b = at[CFG.memPool];
  return { at, per_connection_kib: a && b && b.connections > a.connections
    ? (b.rss_kib - a.rss_kib) / (b.connections - a.connections) : null };
}

// ---- the table ----
function summarize(res) {
  const rows = TESTS.map((t) => {
    const v = {};
    for (const s of CFG.servers) {
      const runs = (res.runs[s] || {})[t.id] || [];
      v[s] = { rps: pick(runs, 'rps'), cpu: pick(runs, 'cpu_us_per_req'), busy: pick(runs, 'server_busy'),
        bad: runs.reduce((a, m) => a + m.non2xx + m.errors, 0) };
    }
    const cpuRatio = v.ingot && v.fastify ? ratio(v.fastify.cpu, v.ingot.cpu) : null;
    return { id: t.id, label: t.label, v, rps_ratio: v.ingot && v.fastify ? ratio(v.ingot.rps, v.fastify.rps) : null,
      cpu_ratio: cpuRatio, verdict: cpuRatio === null ? 'n/a' : v.ingot.bad ? 'MISS (errors)' : cpuRatio >= TARGET_CPU ? 'PASS' : 'MISS' };
  });
  const single = {};
  for (const s of CFG.servers) {
    const one = (id) => pick(((res.single[s] || {})[id]) || [], 'p50_us');
    const d = one('db');
    const q = one('queries');
    single[s] = { db: d, queries: q, ratio: ratio(q, d) };
  }
  return { rows, single };
}

function renderMarkdown(res, s) {
  const L = [];
  const m = res.machine;
  L.push('## Database: TechEmpower db, queries, fortunes, updates: ingot vs Fastify + postgres.js');
  L.push('');
  L.push(`Machine: ${m.cpu}, nproc ${m.nproc}; ${loadText(m)}. PostgreSQL ${res.pg_version} (${res.database}, ` +
    `over TCP to 127.0.0.1), tables from ${res.migrated}. Peers: ingot (build/bin/service, INGOT_THREADS=1, ` +
    `INGOT_PG_POOL_SIZE=${CFG.pool}); Fastify ${m.fastify} with postgres.js ${m.postgres} (max ${CFG.pool} ` +
    `connections) on node ${m.node} (tools/bench/fastify-db.js).`);
  L.push(`Method: each server alone on CPU ${CFG.serverCpu}; PostgreSQL and \`wrk -t1 -c${CFG.conns}\` on CPU ${CFG.clientCpu}; ` +
    `${CFG.reps} reps × ${CFG.seconds} s per test after a warm-up, order rotated each rep; cells are median (min–max). ` +
    'CPU µs/req = the server process\'s CPU time (all its threads, /proc/PID/task/*/schedstat) ÷ requests: the ' +
    'database\'s own work is in neither. Run at ' + `${res.started}.`);
  L.push('');
  L.push('| test | ingot req/s | fastify req/s | ingot/fastify req/s | ingot CPU µs/req | fastify CPU µs/req | ' +
    'fastify/ingot CPU | goal | verdict | non-2xx+errors ingot / fastify |');
  L.push('|---|--:|--:|--:|--:|--:|--:|---|---|--:|');
  const x = (v) => (v === null ? '–' : fmt.x(v));
  const c = (r, srv, key, f) => (r.v[srv] ? cell(r.v[srv][key], f) : '–');
  for (const r of s.rows) {
    L.push(`| ${r.label} | ${c(r, 'ingot', 'rps', fmt.rps)} | ${c(r, 'fastify', 'rps', fmt.rps)} | ${x(r.rps_ratio)} | ` +
      `${c(r, 'ingot', 'cpu', fmt.us)} | ${c(r, 'fastify', 'cpu', fmt.us)} | ${x(r.cpu_ratio)} | ≥ ${TARGET_CPU}× | ${r.verdict} | ` +
      `${r.v.ingot ? r.v.ingot.bad : '–'} / ${r.v.fastify ? r.v.fastify.bad : '–'} |`);
  }
  L.push('');
  L.push('Pipelining: p50 latency at one connection (`wrk -c1`), /queries?queries=20 against /db. Twenty sequential ' +
    'round trips would cost about 20× /db\'s; pipelined, the 20 queries share one.');
  L.push('');
  L.push('| server | /db p50 ms | /queries?queries=20 p50 ms | ratio |');
  L.push('|---|--:|--:|--:|');
  for (const [srv, v] of Object.entries(s.single)) {
    L.push(`| ${srv} | ${cell(v.db, fmt.ms)} | ${cell(v.queries, fmt.ms)} | ${x(v.ratio)} |`);
  }
  L.push('');
  L.push(`Memory per pooled connection: the server's RSS with ${CFG.memPool} connections up minus with 1, after a short ` +
    'load on /queries, over the difference in connections (counted in pg_stat_activity).');
  L.push('');
  L.push('| server | RSS, pool 1 (KiB) | RSS, pool ' + `${CFG.memPool} (KiB) | per connection (KiB) |`);
  L.push('|---|--:|--:|--:|');
  for (const [srv, v] of Object.entries(res.memory)) {
    const at = (p) => (v.at[p] ? `${v.at[p].rss_kib} (${v.at[p].connections} up)` : '–');
    L.push(`| ${srv} | ${at(1)} | ${at(CFG.memPool)} | ${v.per_connection_kib === null ? '–' : v.per_connection_kib.toFixed(1)} |`);
  }
  const ver = Object.entries(res.verification).flatMap(([srv, o]) => Object.entries(o)
    .filter(([, v]) => v !== 'ok').map(([k, v]) => `${srv} ${k}: ${v}`));
  L.push('');
  L.push(ver.length ? `Verification FAILED: ${ver.join('; ')}.`
    : 'Verified before the runs, on each server: /db one World, /queries and /updates 20 of them, /fortunes the 13 ' +
      'rows (the added one, the <script> row escaped, the Japanese row), with Server and Date headers.');
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

function versions() {
  const v = (p) => { try { return require(path.join(HERE, 'node_modules', p, 'package.json')).version; } catch { return '?'; } };
  return { ...machineBase(), node: process.version, fastify: v('fastify'), postgres: v('postgres') };
}

async function main() {
  const t0 = Date.now();
  fs.mkdirSync(OUT, { recursive: true });
  tmpDir = scratchDir('ingot-db.');
  const src = env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service');
  if (CFG.servers.includes('ingot')) {
    if (fs.existsSync(src)) {
      serviceBin = path.join(tmpDir, 'service');
      fs.copyFileSync(src, serviceBin);
      fs.chmodSync(serviceBin, 0o755);
    } else {
      note(`${src} missing (make bin): no ingot numbers`);
      CFG.servers = CFG.servers.filter((x) => x !== 'ingot');
    }
  }
  if (CFG.servers.includes('fastify') && !fs.existsSync(path.join(HERE, 'node_modules', 'postgres', 'package.json'))) {
    note('npm postgres is not installed in tools/bench (tools/setup bench installs it): no Fastify numbers');
    CFG.servers = CFG.servers.filter((x) => x !== 'fastify');
  }
  const res = { started: new Date().toISOString(), machine: versions(), config: CFG, runs: {}, single: {},
    memory: {}, verification: {}, notes };
  warnLoad(res.machine, note);
  const db = await benchDatabase();
  dbUrl = db.url;
  res.database = db.where;
  res.migrated = await migrate(dbUrl);
  res.pg_version = (await run('psql', ['-X', '-A', '-t', '-d', dbUrl, '-c', 'SHOW server_version'])).out.trim();
  for (let rep = 0; rep < CFG.reps && CFG.servers.length; rep++) {
    const order = rotate(CFG.servers, rep);
    log(`rep ${rep + 1}/${CFG.reps}: ${order.join(' → ')}`);
    for (const name of order) await benchServer(name, rep, res);
  }
  for (const name of CFG.servers) res.memory[name] = await memory(name);
  res.machine.loadavg_end = os.loadavg();
  res.disturbed = retry.disturbed.map((d) => d.text);
  if (res.disturbed.length) note(`${res.disturbed.length} runs kept although other processes took part of the server CPU`);
  const s = summarize(res);
  res.elapsed_s = (Date.now() - t0) / 1000;
  res.table = s;
  const md = renderMarkdown(res, s);
  publish('db', md, res, SECTION_BEGIN, SECTION_END, log);
  cleanup();
  return res;
}

benchMain(module, main, { clientCpu: CFG.clientCpu, log, cleanup });
