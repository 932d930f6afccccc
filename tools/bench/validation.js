// validation.js: the validation half of `make bench`. ingot's POST /validate
// against POST /novalidate (the same request decoded without checks), and
// POST /blog, each also against Node + Fastify with the same JSON schemas
// (fastify-server.js: Ajv validates, fast-json-stringify serializes), and
// the floor server (floor.c: parses nothing, answers fixed bytes), whose
// cost is the kernel's share of each request: no server can go below it, so
// Fastify ÷ floor is the most any server could be ahead here. Each
// server alone on one CPU, wrk -t1 with post.lua on the other; the server's
// CPU time per request comes from /proc, since one wrk core caps what
// loopback can show in requests per second. tools/bench/run starts it after
// bench.js (BENCH_VALIDATION=0 skips it); `node tools/bench/validation.js`
// runs it alone. Its table goes to stdout, build/bench/validation.{md,json},
// and into build/bench/results.md. A measurement, never a test: a missed
// target does not fail it.
//
// Knobs (environment), shared with bench.js: BENCH_SECONDS (3), BENCH_REPS (3),
// BENCH_WARMUP (1), BENCH_RETRIES (2), BENCH_RETRY_BUDGET (12 here),
// BENCH_SERVICE, BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1); its own:
// BENCH_VALIDATION_CONNS (100), BENCH_VALIDATION_PAIRS (8),
// BENCH_VALIDATION_PAIR_SECONDS (2), BENCH_VALIDATION_PIPELINE (16; 0 = off).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  ROOT, OUT, num, sharedCfg, FOREIGN_MAX, CLK_TCK, logger, killAll, run, freePort, httpRequest, alive,
  launch, stopServer, session, floorBinary, wrkRun, disturbance, retrier, runLine, stats, pick, fmt, cell, ratio,
  machineBase, loadText, warnLoad, rotate, disturbedLegend, pushNotes, publish, benchMain,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
// The same knobs as bench.js, so one setting drives both halves.
const { timing, cores } = sharedCfg(12);
const CFG = {
  ...timing,
  conns: num(env.BENCH_VALIDATION_CONNS, 100),
  ...cores,
  // The overhead target compares two runs of one server a few percent
  // apart: alternating short runs of the two routes on one server start
  // (ABBA order) cancel most of the drift a shared machine adds.
  pairs: num(env.BENCH_VALIDATION_PAIRS, 8),
  pairSeconds: num(env.BENCH_VALIDATION_PAIR_SECONDS, 2),
  // The pairs are run again with this many requests per write: the server,
  // not wrk, is then the bottleneck, the per-request syscalls are amortized,
  // and what is left is the HTTP and JSON work validation adds to (0: off).
  pairPipeline: num(env.BENCH_VALIDATION_PIPELINE, 16),
};
const SERVER_NAMES = ['ingot', 'fastify', 'floor'];
const TARGET_OVERHEAD = 0.05; // validation adds ≤ 5% CPU per request over /novalidate
const TARGET_RPS = 5; // ≥ 5× Fastify's requests per second on POST /blog
const SECTION_BEGIN = '<!-- tools/bench/validation.js: begin -->';
const SECTION_END = '<!-- tools/bench/validation.js: end -->';

const { notes, log, note } = logger('bench validation');

// ---- the requests: one valid request per route, as wrk sends it --------
// ValidateInput of schemas/service.json: seven keys of every kind.
const VALIDATE_BODY = '{"name":"Ada Lovelace","nickname":null,"ref":"A-1","status":"active",' +
  '"scores":[90,85,77,100,0],"address":{"street":"12 Main St","city":"Springfield","zip":"12345"},' +
  '"active":true}';
const BLOG_BODY = '{"title":"Hello, validation","body":"A post body of a few words.","likes":3,' +
  '"tags":["c","bench"]}';
const VALIDATE_QUERY = 'page=2&tags=alpha&tags=beta';
const VALIDATE_ECHO = `{"page":2,"tags":["alpha","beta"],"foo":"bar","body":${VALIDATE_BODY}}`;
const ROUTES = [
  {
    id: 'validate', label: 'POST /validate', target: `/validate?${VALIDATE_QUERY}`,
    body: VALIDATE_BODY, headers: { 'x-foo': 'bar' }, status: 200, expect: () => VALIDATE_ECHO,
  },
  {
    id: 'novalidate', label: 'POST /novalidate', target: `/novalidate?${VALIDATE_QUERY}`,
    body: VALIDATE_BODY, headers: { 'x-foo': 'bar' }, status: 200, expect: () => VALIDATE_ECHO,
  },
  {
    id: 'blog', label: 'POST /blog', target: '/blog', body: BLOG_BODY, headers: {}, status: 201,
    // The id is the server's count of posts; Location must name the same one.
    expect: (res) => {
      const id = Number((/^\/blog\/(\d+)$/.exec(res.headers.location || '') || [])[1]);
      return `{"id":${id},${BLOG_BODY.slice(1)}`;
    },
  },
];
// What each server is measured on: the routes, and POST /blog again with
// pairPipeline requests per write. That run is server-bound (the kernel's
// per-request cost is shared by a batch), so it shows the framework's own
// work per request, the part a server controls; it is reported, not a target.
const MEASURED = CFG.pairPipeline > 1
  ? [...ROUTES, {
    ...ROUTES.find((r) => r.id === 'blog'), id: 'blog_piped',
    label: `POST /blog ×${CFG.pairPipeline} per write`, pipeline: CFG.pairPipeline,
  }]
  : ROUTES;

// Requests either server must refuse (400) or, on the unchecked route, take
// (200): both peers enforce the same schema, not just accept the bench's.
const CHECKS = [
  { what: 'page=0', target: '/validate?page=0', body: VALIDATE_BODY, headers: { 'x-foo': 'bar' }, status: 400 },
  { what: 'no x-foo', target: '/validate', body: VALIDATE_BODY, headers: {}, status: 400 },
  { what: 'zip 1234', target: '/validate', body: VALIDATE_BODY.replace('12345', '1234'), headers: { 'x-foo': 'b' }, status: 400 },
  { what: 'extra key', target: '/validate', body: `${VALIDATE_BODY.slice(0, -1)},"extra":1}`, headers: { 'x-foo': 'b' }, status: 400 },
  { what: 'score 101', target: '/validate', body: VALIDATE_BODY.replace('100', '101'), headers: { 'x-foo': 'b' }, status: 400 },
  { what: 'page=0 unchecked', target: '/novalidate?page=0', body: VALIDATE_BODY, headers: { 'x-foo': 'bar' }, status: 200 },
  { what: 'empty title', target: '/blog', body: BLOG_BODY.replace('Hello, validation', ''), headers: {}, status: 400 },
];

// ---- child processes: every one started here is tracked (lib.js) and ended by PID
let tmpDir = null;
function cleanup() {
  killAll('SIGKILL');
  if (floor) { floor.cleanup(); floor = null; }
  if (tmpDir) { fs.rmSync(tmpDir, { recursive: true, force: true }); tmpDir = null; }
}
process.on('exit', cleanup);

// ---- the servers ------------------------------------------------------------
let serviceBin = null;
let floor = null; // { bin, cleanup } from lib.js
const SERVERS = {
  ingot: (port) => ({ argv: [serviceBin], env: { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1' } }),
  fastify: (port) => ({
    argv: [process.execPath, path.join(HERE, 'fastify-server.js')],
    env: { PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production' },
  }),
  floor: (port) => ({ argv: [floor.bin], env: { PORT: String(port), HOST: '127.0.0.1' } }),
};

async function startServer(name, rep) {
  const port = await freePort();
  const logFile = path.join(OUT, 'logs', `validation-${name}-${typeof rep === 'number' ? `rep${rep + 1}` : rep}.log`);
  return launch(name, port, SERVERS[name](port), logFile, { cpu: CFG.serverCpu, timeoutMs: 15000, pollMs: 5 });
}

// ---- correctness: the bench must measure the 2xx path, not the 400 one ----
function post(port, target, body, headers) {
  return httpRequest(port, target, { method: 'POST', body, timeoutMs: 3000,
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers } });
}
async function verify(srv) {
  const out = {};
  if (srv.name === 'floor') {
    // It answers its fixed /health response to anything: only that is checked.
    for (const r of ROUTES) {
      const res = await post(srv.port, r.target, r.body, r.headers);
      out[r.label] = res.status === 200 ? 'ok' : `status ${res.status} (want 200)`;
      if (out[r.label] !== 'ok') note(`floor ${r.label}: ${out[r.label]}`);
    }
    return out;
  }
  for (const r of ROUTES) {
    const res = await post(srv.port, r.target, r.body, r.headers);
    const want = r.expect(res);
    let v = 'ok';
    if (res.status !== r.status) v = `status ${res.status} (want ${r.status}): ${res.body.slice(0, 160)}`;
    else if (!/^application\/json\b/.test(res.headers['content-type'] || '')) v = `content-type ${res.headers['content-type']}`;
    else if (res.body !== want) v = `body ${JSON.stringify(res.body.slice(0, 160))}, want ${JSON.stringify(want.slice(0, 160))}`;
    out[r.label] = v;
    if (v !== 'ok') note(`${srv.name} ${r.label}: ${v}`);
  }
  for (const c of CHECKS) {
    const res = await post(srv.port, c.target, c.body, c.headers);
    const v = res.status === c.status ? 'ok' : `status ${res.status}, want ${c.status}`;
    out[`${c.target.split('?')[0]} ${c.what}`] = v;
    if (v !== 'ok') note(`${srv.name} POST ${c.target} (${c.what}): ${v}`);
  }
  return out;
}

// ---- wrk (the run and its /proc accounting: lib.js) ---------------------------
const bodyFiles = {};
function wrkArgs(port, r, seconds, conns, pipeline = 0) {
  const hdrs = Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`);
  if (pipeline > 1) hdrs.push(`pipeline=${pipeline}`);
  return ['-t1', '-c', String(conns), '-d', `${seconds}s`, '--timeout', '10s', '--latency',
    '-s', path.join(HERE, 'post.lua'), `http://127.0.0.1:${port}${r.target}`, '--', bodyFiles[r.id], ...hdrs];
}
async function measure(srv, r, seconds = CFG.seconds, pipeline = 0) {
  const m = await wrkRun(srv.pid, CFG, wrkArgs(srv.port, r, seconds, CFG.conns, pipeline), true);
  const tickSec = m.ticks / CLK_TCK;
  const cpuSec = m.ns !== null ? m.ns / 1e9 : tickSec;
  return {
    ...m.w,
    cpu_s: cpuSec,
    cpu_s_ticks: tickSec, // utime+stime from /proc/PID/stat, for comparison with bench.js
    cpu_us_per_req: m.w.requests > 0 && m.ok ? (cpuSec / m.w.requests) * 1e6 : null,
    // How busy the server's core was: well under 1 means wrk, not the server, set the pace.
    server_busy: Number((m.ticks / m.wallTicks).toFixed(3)),
    foreign_share: m.foreign_share,
    client_foreign_share: m.client_foreign_share,
    wrk_cpu_s: m.wrk_cpu_s,
    ...m.end,
  };
}

// ---- one server, one rep: every route, retried while disturbed ----------------
const retry = retrier(CFG.retryBudget, CFG.retries, log); // .disturbed: runs kept although disturbed
async function benchServer(name, rep, res) {
  await session(name, rep, () => startServer(name, rep), note, async (first, current) => {
    if (!res.verification[name]) res.verification[name] = await verify(first);
    // Route order rotates with the rep, so no route always runs first.
    const routes = rotate(MEASURED, rep);
    if (CFG.warmupSeconds > 0) {
      // Warm caches and V8's JIT on every route before any is measured.
      for (const r of rotate(ROUTES, rep)) {
        await run('taskset', ['-c', String(CFG.clientCpu), 'wrk',
          ...wrkArgs(first.port, r, Math.max(1, CFG.warmupSeconds), 10)]);
      }
    }
    for (const r of routes) {
      const srv = await current(r.label);
      const m = await retry.measure(srv.pid, rep, `${name} ${r.label}`,
        () => measure(srv, r, CFG.seconds, r.pipeline || 0));
      ((res.runs[name] ||= {})[r.id] ||= []).push({ rep, ...m });
      const { text, bad } = runLine(m, name, 7, r.label, 24);
      log(`${text}  busy ${(m.server_busy * 100).toFixed(0)}%${bad}`);
    }
  });
}

// ---- the overhead pairs: ingot's /validate and /novalidate alternated ------
async function overheadPairs(res) {
  const v = ROUTES.find((r) => r.id === 'validate');
  const n = ROUTES.find((r) => r.id === 'novalidate');
  const modes = [{ key: 'plain', pipeline: 0 }];
  if (CFG.pairPipeline > 1) modes.push({ key: 'pipelined', pipeline: CFG.pairPipeline });
  let srv;
  try {
    srv = await startServer('ingot', 'pairs');
    for (const r of [v, n]) {
      await run('taskset', ['-c', String(CFG.clientCpu), 'wrk', ...wrkArgs(srv.port, r, Math.max(1, CFG.warmupSeconds), 10)]);
    }
    log(`ingot overhead: ${CFG.pairs} pairs of ${CFG.pairSeconds} s runs, /validate and /novalidate alternated (ABBA)` +
      `${modes.length > 1 ? `, also pipelined ×${CFG.pairPipeline}` : ''}`);
    res.pairs = { plain: [], pipelined: [] };
    for (let i = 0; i < CFG.pairs && alive(srv.pid); i++) {
      for (const mode of modes) {
        const order = i % 2 ? [n, v] : [v, n];
        const m = {};
        for (const r of order) m[r.id] = await measure(srv, r, CFG.pairSeconds, mode.pipeline);
        const a = m.validate.cpu_us_per_req;
        const b = m.novalidate.cpu_us_per_req;
        const bad = m.validate.non2xx + m.novalidate.non2xx + m.validate.errors + m.novalidate.errors;
        const pair = {
          validate_us: a, novalidate_us: b, overhead: a && b ? a / b - 1 : null, bad,
          disturbance: Math.max(disturbance(m.validate), disturbance(m.novalidate)),
          validate: m.validate, novalidate: m.novalidate,
        };
        res.pairs[mode.key].push(pair);
        log(`  pair ${i + 1}${mode.pipeline ? ` ×${mode.pipeline}` : ''}: /validate ${a === null ? '?' : a.toFixed(2)} µs/req, ` +
          `/novalidate ${b === null ? '?' : b.toFixed(2)} µs/req: ${pair.overhead === null ? '?' : fmt.pct(pair.overhead)}` +
          `${bad ? ` (${bad} non-2xx/errors)` : ''}` +
          `${pair.disturbance > FOREIGN_MAX ? ` (disturbed ${(pair.disturbance * 100).toFixed(0)}%)` : ''}`);
      }
    }
  } catch (e) {
    note(`overhead pairs: ${e.message}`);
  } finally {
    await stopServer(srv, note);
  }
}

// ---- the table (statistics and cells: lib.js) ------------------------------------
const pickRun = (res, srv, id, key) => pick((res.runs[srv] || {})[id] || [], key);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function summarize(res) {
  const rows = MEASURED.map((r) => {
    const v = {};
    for (const s of SERVER_NAMES) {
      v[s] = {
        rps: pickRun(res, s, r.id, 'rps'),
        cpu: pickRun(res, s, r.id, 'cpu_us_per_req'),
        busy: pickRun(res, s, r.id, 'server_busy'),
        non2xx: sum(((res.runs[s] || {})[r.id] || []).map((m) => m.non2xx)),
        errors: sum(((res.runs[s] || {})[r.id] || []).map((m) => m.errors)),
        requests: sum(((res.runs[s] || {})[r.id] || []).map((m) => m.requests)),
      };
    }
    return {
      id: r.id, label: r.label, v,
      rps_ratio: ratio(v.ingot.rps, v.fastify.rps), // ingot ÷ fastify
      cpu_ratio: ratio(v.fastify.cpu, v.ingot.cpu), // fastify ÷ ingot: how many times cheaper ingot is
      // The same two ratios for the floor: as far ahead as any server could be.
      floor_rps_ratio: ratio(v.floor.rps, v.fastify.rps),
      floor_cpu_ratio: ratio(v.fastify.cpu, v.floor.cpu),
    };
  });
  const row = (id) => rows.find((r) => r.id === id);
  const bad = (r, s) => r.v[s].non2xx > 0 || r.v[s].errors > 0 || (r.v[s].cpu && r.v[s].cpu.bad);
  // Validation overhead: from the medians, with the per-rep spread of the
  // same ratio (validate and novalidate of one rep ran on one server start).
  const vi = row('validate').v.ingot.cpu;
  const ni = row('novalidate').v.ingot.cpu;
  const perRep = [];
  for (let rep = 0; rep < CFG.reps; rep++) {
    const a = (((res.runs.ingot || {}).validate) || []).find((m) => m.rep === rep);
    const b = (((res.runs.ingot || {}).novalidate) || []).find((m) => m.rep === rep);
    if (a && b && a.cpu_us_per_req && b.cpu_us_per_req) perRep.push(a.cpu_us_per_req / b.cpu_us_per_req - 1);
  }
  const fromReps = vi && ni ? vi.median / ni.median - 1 : null;
  // The verdict comes from the pairs where there are any, else from the
  // reps' medians.
  const pairStats = (list) => {
    const pairs = (list || []).filter((p) => p.overhead !== null);
    // Undisturbed pairs only while they are at least half and three: the
    // median of one or two lucky pairs says less than that of all of them.
    const clean = pairs.filter((p) => p.disturbance <= FOREIGN_MAX);
    const enough = clean.length >= Math.max(3, pairs.length / 2);
    const use = enough ? clean : pairs;
    const st = stats(use.map((p) => p.overhead));
    if (st) Object.assign(st, { of: pairs.length, clean: enough, bad: use.some((p) => p.bad) });
    return st;
  };
  const pairText = (st, what) => `${fmt.pct(st.median)} (median of ${st.clean ? `the ${st.n} undisturbed of ` : ''}` +
    `${st.of} pairs of ${CFG.pairSeconds} s runs${what}${st.clean ? '' : ' ‡'}, ${fmt.pct(st.min)} … ${fmt.pct(st.max)})`;
  const paired = pairStats((res.pairs || {}).plain);
  const piped = pairStats((res.pairs || {}).pipelined);
  const overhead = paired ? paired.median : fromReps;
  const pairsBad = paired ? paired.bad : false;
  const blog = row('blog');
  // When even the floor stays under the goal, no server can meet it on this
  // machine: the verdict says so rather than blaming the code.
  const ceiling = [blog.floor_rps_ratio, blog.floor_cpu_ratio].filter((x) => x !== null);
  const beyondFloor = ceiling.length === 2 && Math.max(...ceiling) < TARGET_RPS;
  const targets = [
    {
      text: 'validation overhead: ingot CPU/req of POST /validate ÷ POST /novalidate − 1',
      goal: `≤ ${TARGET_OVERHEAD * 100}%`,
      value: overhead === null ? '–' : (paired
        ? `${pairText(paired, '')}; from the reps' medians ${fromReps === null ? '–' : fmt.pct(fromReps)}`
        : `${fmt.pct(overhead)} (from the reps' medians)`) +
        (perRep.length > 1 ? `; per rep ${perRep.map(fmt.pct).join(', ')}` : ''),
      raw: overhead,
      verdict: overhead === null ? 'n/a'
        : bad(row('validate'), 'ingot') || bad(row('novalidate'), 'ingot') || pairsBad ? 'MISS (errors)'
          : overhead <= TARGET_OVERHEAD ? 'PASS' : 'MISS',
    },
    {
      text: 'POST /blog: ingot req/s ÷ Fastify req/s',
      goal: `≥ ${TARGET_RPS}×`,
      value: blog.rps_ratio === null ? '–' : fmt.x(blog.rps_ratio) +
        (blog.cpu_ratio === null ? '' : ` (CPU per request: ${fmt.x(blog.cpu_ratio)})`) +
        (blog.v.ingot.busy && blog.v.ingot.busy.median < 0.9
          ? `; ingot's core ${(blog.v.ingot.busy.median * 100).toFixed(0)}% busy: wrk's one core set its rate` : '') +
        (ceiling.length === 2 ? `; the floor server: ${fmt.x(blog.floor_rps_ratio)} (CPU per request: ` +
          `${fmt.x(blog.floor_cpu_ratio)})` : ''),
      raw: blog.rps_ratio,
      verdict: blog.rps_ratio === null ? 'n/a'
        : bad(blog, 'ingot') ? 'MISS (errors)' : blog.rps_ratio >= TARGET_RPS ? 'PASS'
          : beyondFloor ? 'MISS (beyond the floor here)' : 'MISS',
    },
  ];
  if (piped) {
    targets.push({
      text: `(the same, pipelined ×${CFG.pairPipeline}: server-bound, per-request syscalls amortized; not the target)`,
      goal: '', value: pairText(piped, ` ×${CFG.pairPipeline}`), raw: piped.median,
      verdict: piped.bad ? '(errors)' : '',
    });
  }
  return {
    rows, targets, overhead_per_rep: perRep, overhead_paired: paired, overhead_pipelined: piped, overhead_from_reps: fromReps,
  };
}

function renderMarkdown(res, sum_) {
  const L = [];
  const m = res.machine;
  L.push('## Validation: POST with JSON bodies, ingot vs Fastify + Ajv (and the floor)');
  L.push('');
  L.push(`Machine: ${m.cpu}, nproc ${m.nproc}; ${loadText(m)}. Peers: ingot (build/bin/service, INGOT_THREADS=1); ` +
    `Fastify ${m.fastify} with Ajv ${m.ajv} and fast-json-stringify ${m.fjs} on node ${m.node} ` +
    '(tools/bench/fastify-server.js: the same request and response schemas); the floor server (tools/bench/floor.c).');
  L.push(`Method: each server alone on CPU ${CFG.serverCpu}, \`wrk -t1 -c${CFG.conns}\` with tools/bench/post.lua on ` +
    `CPU ${CFG.clientCpu}; ${CFG.reps} reps × ${CFG.seconds} s per route after a ${Math.max(1, CFG.warmupSeconds)} s warm-up ` +
    'of each route, server and route order rotated each rep; cells are median (min–max) over reps (undisturbed reps only, ' +
    'where any; see ‡). CPU µs/req = the server\'s CPU time over the run (utime+stime of all its threads, read in ns ' +
    'from /proc/PID/task/*/schedstat) ÷ requests wrk counted. ' +
    (CFG.pairs > 0 ? `The overhead target also takes ${CFG.pairs} pairs of ${CFG.pairSeconds} s runs of ingot's two routes, ` +
      'alternated on one server start (ABBA), and uses their median' +
      `${CFG.pairPipeline > 1 ? `; the pairs are repeated with ${CFG.pairPipeline} requests per write` : ''}. ` : '') +
    `Requests: POST /validate?${VALIDATE_QUERY} and /novalidate (same query, \`x-foo: bar\`, a ${VALIDATE_BODY.length}-byte ` +
    `body of 7 keys), POST /blog (${BLOG_BODY.length}-byte body)` +
    `${MEASURED.length > ROUTES.length ? `, and POST /blog again with ${CFG.pairPipeline} requests per write (the ` +
      'server, not wrk, is then the bottleneck and the kernel\'s per-request cost is shared by the batch: what is ' +
      'left is each framework\'s own work; reported, not a target)' : ''}. Run at ${res.started}.`);
  L.push('');
  const x = (v) => (v === null ? '–' : fmt.x(v));
  L.push('| route | ingot req/s | fastify req/s | floor req/s | ingot/fastify req/s | floor/fastify req/s | ' +
    'ingot CPU µs/req | fastify CPU µs/req | floor CPU µs/req | fastify/ingot CPU µs/req | fastify/floor CPU µs/req | ' +
    'core busy ingot / fastify / floor | non-2xx ingot / fastify |');
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of sum_.rows) {
    const busy = SERVER_NAMES.map((n) => (r.v[n].busy ? `${(r.v[n].busy.median * 100).toFixed(0)}%` : '–')).join(' / ');
    const n2 = ['ingot', 'fastify'].map((s) => (r.v[s].requests
      ? `${r.v[s].non2xx}${r.v[s].errors ? ` (+${r.v[s].errors} socket errors)` : ''}` : '–'));
    L.push(`| ${r.label} | ${cell(r.v.ingot.rps, fmt.rps)} | ${cell(r.v.fastify.rps, fmt.rps)} | ` +
      `${cell(r.v.floor.rps, fmt.rps)} | ${x(r.rps_ratio)} | ${x(r.floor_rps_ratio)} | ` +
      `${cell(r.v.ingot.cpu, fmt.us)} | ${cell(r.v.fastify.cpu, fmt.us)} | ${cell(r.v.floor.cpu, fmt.us)} | ` +
      `${x(r.cpu_ratio)} | ${x(r.floor_cpu_ratio)} | ${busy} | ${n2.join(' / ')} |`);
  }
  L.push('');
  L.push('| target | value | goal | verdict |');
  L.push('|---|--:|---|---|');
  for (const t of sum_.targets) L.push(`| ${t.text} | ${t.value} | ${t.goal} | ${t.verdict} |`);
  L.push('');
  L.push('Floor: tools/bench/floor.c reads each request, parses nothing and writes a fixed 83-byte response, so its ' +
    'CPU per request is what the kernel alone costs for one request on this machine, and floor/fastify is as far ' +
    'ahead of Fastify as any server could be here. ' +
    'Core busy: the server\'s CPU time ÷ wall time; well under 100% means the one wrk core (or other work on the ' +
    'server\'s core), not the server, set the request rate, and the CPU per request is then the fairer comparison. ' +
    '† some run had socket errors, non-2xx answers or a server exit (see validation.json). ' + disturbedLegend(CFG));
  const ver = Object.entries(res.verification).flatMap(([s, o]) => Object.entries(o)
    .filter(([, v]) => v !== 'ok').map(([k, v]) => `${s} ${k}: ${v}`));
  L.push(ver.length ? `Verification FAILED: ${ver.join('; ')}.`
    : `Verified before the runs, on ingot and Fastify: each bench request answers ${ROUTES.map((r) => r.status).join('/')} ` +
      `with the same body byte for byte; ${CHECKS.filter((c) => c.status === 400).length} invalid requests ` +
      '(query, header, body constraints) answer 400, and /novalidate takes page=0.');
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

// ---- setup: npm packages, the service copy, request bodies -------------------
// The Fastify peer's packages (tools/bench/package-lock.json), which
// `tools/setup bench` (run by make bench) installs.
function ensureFastify() {
  if (fs.existsSync(path.join(HERE, 'node_modules', 'fastify', 'package.json'))) return true;
  note('npm fastify is not installed in tools/bench (tools/setup bench installs it): no Fastify numbers');
  return false;
}
function versions() {
  const v = (p) => { try { return require(path.join(HERE, 'node_modules', p, 'package.json')).version; } catch { return '?'; } };
  return {
    ...machineBase(), node: process.version,
    fastify: v('fastify'), ajv: v('ajv'), fjs: v('fast-json-stringify'),
  };
}

async function main() {
  const t0 = Date.now();
  fs.mkdirSync(OUT, { recursive: true });
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-validation.'));
  const servers = [];
  // The service is copied: a rebuild or `make clean` elsewhere mid-run
  // cannot change or remove what is measured.
  const src = env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service');
  if (fs.existsSync(src)) {
    serviceBin = path.join(tmpDir, 'service');
    fs.copyFileSync(src, serviceBin);
    fs.chmodSync(serviceBin, 0o755);
    servers.push('ingot');
  } else {
    note(`${src} missing (make bin): no ingot numbers`);
  }
  if (ensureFastify()) servers.push('fastify');
  try {
    floor = floorBinary();
    servers.push('floor');
  } catch (e) {
    note(`floor server not built (${e.message.split('\n')[0]}): no floor numbers`);
  }
  for (const r of MEASURED) {
    bodyFiles[r.id] = path.join(tmpDir, `${r.id}.json`);
    fs.writeFileSync(bodyFiles[r.id], r.body);
  }
  const res = {
    started: new Date().toISOString(), machine: versions(), config: CFG,
    service: { path: src, mtime: serviceBin ? fs.statSync(src).mtime.toISOString() : null },
    requests: ROUTES.map((r) => ({ route: r.label, target: r.target, headers: r.headers, body: r.body })),
    runs: {}, verification: {}, notes,
  };
  warnLoad(res.machine, note);
  for (let rep = 0; rep < CFG.reps && servers.length; rep++) {
    const order = rotate(servers, rep);
    log(`rep ${rep + 1}/${CFG.reps}: ${order.join(' → ')}`);
    for (const name of order) await benchServer(name, rep, res);
  }
  if (servers.includes('ingot') && CFG.pairs > 0) await overheadPairs(res);
  res.machine.loadavg_end = os.loadavg();
  const { disturbed } = retry;
  res.disturbed = disturbed.map((d) => d.text);
  if (disturbed.length) {
    const worst = [...disturbed].sort((a, b) => b.share - a.share).slice(0, 3).map((d) => d.text);
    note(`${disturbed.length} of ${servers.length * ROUTES.length * CFG.reps} runs kept although other processes ` +
      `took part of a bench core (best of up to ${CFG.retries + 1} tries${retry.budget <= 0 ? '; retry budget spent' : ''}); ` +
      `worst: ${worst.join('; ')}`);
  }
  const s = summarize(res);
  res.elapsed_s = (Date.now() - t0) / 1000;
  const md = renderMarkdown(res, s);
  res.table = s.rows.map((r) => ({
    route: r.label, rps_ratio: r.rps_ratio, cpu_ratio: r.cpu_ratio,
    floor_rps_ratio: r.floor_rps_ratio, floor_cpu_ratio: r.floor_cpu_ratio, values: r.v,
  }));
  res.targets = s.targets.map(({ text, goal, value, raw, verdict }) => ({ text, goal, value, raw, verdict }));
  res.overhead_per_rep = s.overhead_per_rep;
  res.overhead_paired = s.overhead_paired;
  res.overhead_pipelined = s.overhead_pipelined;
  res.overhead_from_reps = s.overhead_from_reps;
  publish('validation', md, res, SECTION_BEGIN, SECTION_END, log);
  cleanup();
  return res;
}

// Called from bench.js (main never throws), or alone.
benchMain(module, main, { clientCpu: CFG.clientCpu, log, cleanup });
