// streams.js: the cost of streams (issue 30), a part of `make bench`. Three
// parts, every client being build/tools/bench/wsload (wsload.c, built by
// `make bench-tools`; tools/bench/run's private copy when there is one)
// pinned to BENCH_CLIENT_CPU, every server alone on BENCH_SERVER_CPU:
//   1. WebSocket echo: the reference service's GET /ws/echo (INGOT_THREADS=1:
//      each message decoded and validated against the Echo schema, answered
//      with n + 1 by app/streams.c) against npm's ws on Node
//      (tools/bench/ws-server.js: JSON.parse, the same checks by hand,
//      JSON.stringify), CONNS sockets each keeping INFLIGHT messages in flight;
//      the server's CPU per message (schedstat ns, from the clients' "ready"
//      to their count), the two taking turns each round; target: ingot's at
//      most 1/5 of ws's;
//   2. memory per idle socket: the server's RSS growth once IDLE WebSockets
//      (101 answered, counted by wsload) or IDLE SSE streams of GET
//      /events/idle (each kept by its handler once its "lines" event came)
//      are open, over IDLE, against the RSS after a first 16 came and went;
//      ingot's WebSocket and SSE, ws's WebSocket beside; targets: 1 KiB per
//      WebSocket, 2 KiB per SSE stream;
//   3. SSE fan-out: FANOUT streams of GET /events/idle on one core, and one
//      GET /events/idle?note= after another, each of which sends its note to
//      every kept stream of the core (app/streams.c's broadcast); the note
//      events the FANOUT clients received per second, and per CPU-second of
//      the server; beside it, FANOUT streams of GET /ticker at 1 ms
//      intervals, each sent by its own handler (waiting on its coroutine):
//      the same two figures.
// Its table goes to stdout, build/bench/streams.{md,json} and
// build/bench/results.md. tools/bench/run starts it (BENCH_STREAMS=0 skips
// it); `node tools/bench/streams.js` runs it alone. A measurement, never a
// test: the targets are reported, not enforced.
//
// Knobs (environment): BENCH_SERVICE (build/bin/service), BENCH_SERVER_CPU
// (0), BENCH_CLIENT_CPU (1), BENCH_WARMUP (1 s); its own:
// BENCH_STREAMS_ROUNDS (5), BENCH_STREAMS_SECONDS (3 per run),
// BENCH_STREAMS_CONNS (100), BENCH_STREAMS_INFLIGHT (4),
// BENCH_STREAMS_IDLE (10000), BENCH_STREAMS_FANOUT (1000),
// BENCH_STREAMS_MEM_REPS (3), BENCH_STREAMS_PARTS (echo,memory,fanout,ticker:
// the parts to run).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, logger, track, killAll, freePort, cpuNs, cpuTicks, coreTicks, alive,
  launch, stopServer, stats, fmt, machineBase, loadText, pushNotes, publish, benchMain, FOREIGN_MAX,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
const { timing, cores } = sharedCfg(0);
const CFG = {
  warmupSeconds: timing.warmupSeconds,
  serverCpu: cores.serverCpu,
  clientCpu: cores.clientCpu,
  rounds: num(env.BENCH_STREAMS_ROUNDS, 5),
  seconds: num(env.BENCH_STREAMS_SECONDS, 3),
  conns: num(env.BENCH_STREAMS_CONNS, 100),
  inflight: num(env.BENCH_STREAMS_INFLIGHT, 4),
  idle: num(env.BENCH_STREAMS_IDLE, 10000),
  fanout: num(env.BENCH_STREAMS_FANOUT, 1000),
  memReps: num(env.BENCH_STREAMS_MEM_REPS, 3),
  parts: (env.BENCH_STREAMS_PARTS || 'echo,memory,fanout,ticker').split(','),
  service: env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service'),
};
// GET /ws/echo's Echo message, 60-odd bytes of JSON, the same to both servers.
const MSG = '{"text":"the quick brown fox jumps over the lazy dog","n":1}';
const TARGET_CPU_RATIO = 5;
const TARGET_WS_KIB = 1;
const TARGET_SSE_KIB = 2;
const SECTION_BEGIN = '<!-- tools/bench/streams.js: begin -->';
const SECTION_END = '<!-- tools/bench/streams.js: end -->';
const { notes, log, note } = logger('bench streams');

function cleanup() { killAll('SIGKILL'); }
process.on('exit', cleanup);

function wsloadBinary() {
  const given = env.BENCH_BIN_DIR && path.join(env.BENCH_BIN_DIR, 'wsload');
  if (given && fs.existsSync(given)) return given;
  const built = path.join(ROOT, 'build', 'tools', 'bench', 'wsload');
  if (!fs.existsSync(built)) throw new Error(`${built} is missing (make bench-tools builds it)`);
  return built;
}
let wsload = null;

const rssKiB = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
// The descriptors a server and wsload may have: the hard limit, which the
// shells below raise the soft one to.
const hardNofile = () => Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim()) || 1024;

// ---- the servers -----------------------------------------------------------------------
// argv under a shell that raises its descriptor limit to the hard one, then
// execs the server: the PID launch() tracks is the server's.
const raised = (argv) => ['sh', '-c', 'ulimit -n "$(ulimit -Hn)" && exec "$@"', 'sh', ...argv];
const SERVERS = {
  ingot: (port, maxConns) => ({
    argv: raised([serviceCopy]),
    env: { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', INGOT_LOG_LEVEL: 'warn',
      ...(maxConns ? { INGOT_MAX_CONNS: String(maxConns) } : {}) },
  }),
  ws: (port) => ({ argv: raised([process.execPath, path.join(HERE, 'ws-server.js'), String(port)]), env: {} }),
};
async function start(name, maxConns) {
  const port = await freePort();
  return launch(name, port, SERVERS[name](port, maxConns), path.join(OUT, 'logs', `streams-${name}.log`),
    { cpu: CFG.serverCpu, timeoutMs: 15000, pollMs: 5 });
}

// ---- wsload ------------------------------------------------------------------------------
// wsload on the client CPU under a raised descriptor limit; onLine(line,
// child) for each line of its stdout, at once (the CPU readings are taken
// there). Resolves its exit code and stderr.
function tool(args, onLine) {
  return new Promise((resolve) => {
    const child = track(spawn('taskset', ['-c', String(CFG.clientCpu), ...raised([wsload, ...args])],
      { stdio: ['pipe', 'pipe', 'pipe'] }));
    let buf = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      for (let i; (i = buf.indexOf('\n')) >= 0;) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        onLine(line, child);
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.stdin.on('error', () => { /* it exited first */ });
    child.on('error', (e) => resolve({ code: -1, err: String(e) }));
    child.on('close', (code) => resolve({ code, err: err.trim() }));
  });
}

// ---- part 1: the echo --------------------------------------------------------------------
// One run against srv: the server's CPU from the clients' "ready" (all
// upgraded) to their count, and the share of its core other processes took.
async function echoRun(srv, seconds) {
  let ns0 = null;
  let ticks0 = 0;
  let core0 = null;
  let t0 = 0;
  let m = null;
  const r = await tool(['echo', String(srv.port), '/ws/echo', String(CFG.conns), String(CFG.inflight),
    String(seconds), MSG], (line) => {
    if (line === 'ready') {
      ns0 = cpuNs(srv.pid); ticks0 = cpuTicks(srv.pid); core0 = coreTicks(CFG.serverCpu); t0 = Date.now();
    } else if (line.startsWith('{')) {
      const ns1 = cpuNs(srv.pid);
      const ticks = cpuTicks(srv.pid) - ticks0;
      const core1 = coreTicks(CFG.serverCpu);
      const wallTicks = ((Date.now() - t0) / 1000) * CLK_TCK;
      m = JSON.parse(line);
      m.server_ns = ns0 !== null && ns1 !== null ? ns1 - ns0 : null;
      m.foreign_share = Number((Math.max(0, core1.busy - core0.busy - ticks) / wallTicks).toFixed(3));
    }
  });
  if (r.code !== 0 || !m) throw new Error(`wsload echo against ${srv.name}: exit ${r.code}: ${r.err.slice(-300)}`);
  if (!m.messages) throw new Error(`wsload echo against ${srv.name}: no message came back`);
  m.ns_per_msg = m.server_ns !== null ? m.server_ns / m.messages : null;
  m.client_share = m.client_cpu_s / m.seconds;
  m.server_share = m.server_ns !== null ? m.server_ns / 1e9 / m.seconds : null;
  return m;
}

async function echo() {
  const res = { rounds: [] };
  const srv = {};
  try {
    for (const name of ['ingot', 'ws']) {
      srv[name] = await start(name);
      await echoRun(srv[name], CFG.warmupSeconds);
    }
    log(`${CFG.rounds} rounds of ${CFG.seconds} s per server, ${CFG.conns} sockets × ${CFG.inflight} in flight`);
    for (let i = 0; i < CFG.rounds; i++) {
      const r = {};
      for (const name of i % 2 ? ['ws', 'ingot'] : ['ingot', 'ws']) {
        if (!alive(srv[name].pid)) throw new Error(`${name} has exited`);
        r[name] = await echoRun(srv[name], CFG.seconds);
      }
      r.ratio = r.ws.ns_per_msg / r.ingot.ns_per_msg;
      res.rounds.push(r);
      const bad = r.ingot.bad || r.ws.bad ? ' (echoes without "n":2)' : '';
      const busy = Math.max(r.ingot.foreign_share, r.ws.foreign_share);
      log(`  round ${i + 1}: ingot ${fmt.rps(r.ingot.per_s)} msg/s ${(r.ingot.ns_per_msg / 1e3).toFixed(2)} µs/msg, ` +
        `ws ${fmt.rps(r.ws.per_s)} msg/s ${(r.ws.ns_per_msg / 1e3).toFixed(2)} µs/msg: ws/ingot ${r.ratio.toFixed(2)}×; ` +
        `server core busy ${pct(r.ingot.server_share)}/${pct(r.ws.server_share)}, client ${pct(r.ingot.client_share)}/${pct(r.ws.client_share)}` +
        `${bad}${busy > FOREIGN_MAX ? ` (${(busy * 100).toFixed(0)}% of the server core went to others)` : ''}`);
    }
  } catch (e) {
    note(`echo: ${e.message}`);
  } finally {
    for (const s of Object.values(srv)) await stopServer(s, note);
  }
  const col = (f) => stats(res.rounds.map(f));
  res.ingot_us = col((r) => r.ingot.ns_per_msg / 1e3);
  res.ws_us = col((r) => r.ws.ns_per_msg / 1e3);
  res.ingot_rate = col((r) => r.ingot.per_s);
  res.ws_rate = col((r) => r.ws.per_s);
  res.ratio = col((r) => r.ratio);
  res.ingot_client_share = col((r) => r.ingot.client_share);
  res.ws_client_share = col((r) => r.ws.client_share);
  res.ingot_server_share = col((r) => r.ingot.server_share);
  res.ws_server_share = col((r) => r.ws.server_share);
  res.bad = res.rounds.some((r) => r.ingot.bad || r.ws.bad);
  res.disturbed = res.rounds.filter((r) => Math.max(r.ingot.foreign_share, r.ws.foreign_share) > FOREIGN_MAX).length;
  return res;
}

// ---- part 2: memory per idle socket ----------------------------------------------------
// wsload holding n sockets of kind open on srv until ready(), then let go;
// resolves once wsload has exited.
async function hold(srv, target, kind, n, ready) {
  let got = null;
  const r = await tool(['hold', String(srv.port), target, String(n), kind], (line, child) => {
    const m = /^ready (\d+)$/.exec(line);
    if (!m) return;
    got = Number(m[1]);
    try { ready(got); } finally { child.stdin.end(); }
  });
  if (r.code !== 0 || got !== n) throw new Error(`wsload hold ${kind} on ${srv.name}: exit ${r.code}, ${got} open: ${r.err.slice(-300)}`);
}

const MEM = [
  { id: 'ingot_ws', server: 'ingot', target: '/ws/echo', kind: 'ws', label: 'ingot, idle WebSockets (GET /ws/echo)' },
  { id: 'ingot_sse', server: 'ingot', target: '/events/idle', kind: 'sse', label: 'ingot, idle SSE streams (GET /events/idle)' },
  { id: 'ws_ws', server: 'ws', target: '/ws/echo', kind: 'ws', label: 'Node ws, idle WebSockets (reference)' },
];
async function memory() {
  const res = { idle: CFG.idle, per: {} };
  const nofile = hardNofile();
  if (nofile < CFG.idle + 256) {
    note(`memory: the descriptor limit's hard value is ${nofile}, too few for ${CFG.idle} sockets; part skipped`);
    return res;
  }
  for (const m of MEM) {
    const reps = [];
    for (let i = 0; i < CFG.memReps; i++) {
      let srv;
      try {
        srv = await start(m.server, CFG.idle + 64);
        // The first few open pools and arenas once; then the RSS to grow from.
        await hold(srv, m.target, m.kind, 16, () => {});
        const before = rssKiB(srv.pid);
        let after = null;
        await hold(srv, m.target, m.kind, CFG.idle, () => { after = rssKiB(srv.pid); });
        reps.push({ before_kib: before, after_kib: after, kib_per: (after - before) / CFG.idle });
        log(`  ${m.label}: ${before} → ${after} KiB: ${((after - before) / CFG.idle).toFixed(3)} KiB each`);
      } catch (e) {
        note(`memory, ${m.label}: ${e.message}`);
      } finally {
        await stopServer(srv, note);
      }
    }
    res.per[m.id] = { reps, kib: stats(reps.map((r) => r.kib_per)) };
  }
  return res;
}

// ---- part 3: SSE fan-out -----------------------------------------------------------------
// mode: 'fanout' (the broadcast) or 'ticker' (each stream's own handler,
// GET /ticker?interval_ms=1: at most 1,000 ticks a second each).
const TICKER = '/ticker?n=1000000&interval_ms=1';
async function fanout(mode) {
  const res = { conns: CFG.fanout, rounds: [] };
  let srv;
  try {
    srv = await start('ingot', CFG.fanout + 64);
    for (let i = 0; i < CFG.rounds; i++) {
      let ns0 = null;
      let m = null;
      // The note: a short word; the clients count "event: note" lines.
      const args = mode === 'fanout' ? ['fanout', String(srv.port), String(CFG.fanout), String(CFG.seconds), 'tick']
        : ['ticker', String(srv.port), TICKER, String(CFG.fanout), String(CFG.seconds)];
      const r = await tool(args, (line) => {
        if (line === 'ready') ns0 = cpuNs(srv.pid);
        else if (line.startsWith('{')) { m = JSON.parse(line); m.server_ns = cpuNs(srv.pid) - ns0; }
      });
      if (r.code !== 0 || !m) throw new Error(`wsload ${mode}: exit ${r.code}: ${r.err.slice(-300)}`);
      // The server's CPU from the streams all open to the count.
      m.events_per_cpu_s = m.events / (m.server_ns / 1e9);
      m.client_share = m.client_cpu_s / m.seconds;
      m.server_share = m.server_ns / 1e9 / m.seconds;
      res.rounds.push(m);
      const how = mode === 'fanout' ? `${m.broadcasts} broadcasts, ${m.events} of ${m.reached} sent received` : TICKER;
      log(`  ${mode} round ${i + 1}: ${fmt.rps(m.per_s)} events/s to ${m.conns} streams (${how}), ` +
        `${fmt.rps(m.events_per_cpu_s)} per server CPU-second; ` +
        `server core busy ${pct(m.server_share)}, client ${pct(m.client_share)}`);
    }
  } catch (e) {
    note(`${mode}: ${e.message}`);
  } finally {
    await stopServer(srv, note);
  }
  res.per_s = stats(res.rounds.map((r) => r.per_s));
  res.per_cpu_s = stats(res.rounds.map((r) => r.events_per_cpu_s));
  res.server_share = stats(res.rounds.map((r) => r.server_share));
  res.client_share = stats(res.rounds.map((r) => r.client_share));
  return res;
}

// ---- the table -------------------------------------------------------------------------
const range = (s, f) => (s ? `${f(s.median)} (${f(s.min)} … ${f(s.max)})` : '–');
const us2 = (x) => x.toFixed(2);
const pct = (x) => (x === null || x === undefined ? '?' : `${(x * 100).toFixed(0)}%`);
const k3 = (x) => x.toFixed(3);

function table(res) {
  const L = ['## Streams (issue 30): WebSocket echo, idle sockets, SSE fan-out', ''];
  const e = res.echo || {};
  if (res.echo) L.push(`WebSocket echo: ${CFG.conns} sockets, each keeping ${CFG.inflight} masked text frames of ${MSG.length} bytes ` +
    `(\`${MSG}\`) in flight, from build/tools/bench/wsload (C, one epoll loop) on CPU ${CFG.clientCpu}; the server alone on ` +
    `CPU ${CFG.serverCpu}: the reference service's GET /ws/echo (INGOT_THREADS=1: each message decoded and validated against ` +
    `its schema, answered with n + 1) and npm's ws ${wsVersion()} on Node ${process.versions.node} (tools/bench/ws-server.js: ` +
    `JSON.parse, the same checks by hand, JSON.stringify). The server's CPU per message (schedstat ns from all sockets ` +
    `upgraded to the count) over ${CFG.seconds} s runs, ${e.rounds ? e.rounds.length : 0} rounds, the two taking turns; ` +
    'median (min … max) of the rounds.', '');
  if (e.rounds && e.rounds.length) {
    L.push('| server | µs CPU / message | messages/s | server core busy | client core busy (wsload) |');
    L.push('|---|---|---|---|---|');
    L.push(`| ingot | ${range(e.ingot_us, us2)} | ${range(e.ingot_rate, fmt.rps)} | ${range(e.ingot_server_share, pct)} | ${range(e.ingot_client_share, pct)} |`);
    L.push(`| Node ws | ${range(e.ws_us, us2)} | ${range(e.ws_rate, fmt.rps)} | ${range(e.ws_server_share, pct)} | ${range(e.ws_client_share, pct)} |`);
    L.push('');
    L.push(`ws ÷ ingot, paired per round: ${range(e.ratio, fmt.x)}${e.bad ? ' († echoes without "n":2)' : ''}` +
      `${e.disturbed ? `; ${e.disturbed} round(s) had other processes on the server core (> ${FOREIGN_MAX * 100}%)` : ''}.`);
    L.push('');
  }
  const mem = res.memory || {};
  if (mem.per && Object.keys(mem.per).length) {
    L.push(`Memory per idle socket: the server's RSS growth once ${CFG.idle} sockets are open (each upgraded, 101, or each ` +
      'SSE stream kept by its handler, its first events received: counted by wsload, no sleep), over ' +
      `${CFG.idle}, from the RSS after 16 had come and gone; ${CFG.memReps} server starts each, median (min … max), KiB.`);
    L.push('');
    L.push('| sockets | KiB each | RSS before → after (KiB, median rep) |');
    L.push('|---|---|---|');
    for (const m of MEM) {
      const p = mem.per[m.id];
      if (!p || !p.reps.length) continue;
      const mid = [...p.reps].sort((a, b) => a.kib_per - b.kib_per)[Math.floor((p.reps.length - 1) / 2)];
      L.push(`| ${m.label} | ${range(p.kib, k3)} | ${mid.before_kib} → ${mid.after_kib} |`);
    }
    L.push('');
  }
  const f = res.fanout || {};
  if (f.rounds && f.rounds.length) {
    L.push(`SSE fan-out, one core (INGOT_THREADS=1): ${f.conns} streams of GET /events/idle held open by wsload, which ` +
      'meanwhile sends one GET /events/idle?note=tick after another; each sends its note, one SSE event, to every stream ' +
      `kept on the core (app/streams.c's broadcast, ig_sse_send to each). ${CFG.seconds} s runs, ${f.rounds.length} rounds: ` +
      `the note events the ${f.conns} clients received per second ${range(f.per_s, fmt.rps)}, per CPU-second of the ` +
      `server ${range(f.per_cpu_s, fmt.rps)} (its CPU from all streams open to the count, the broadcasting requests ` +
      `included); the server's core busy ${range(f.server_share, pct)}, wsload's ${range(f.client_share, pct)} (a client ` +
      'near 100% bounds the events per second, not the per-CPU-second figure).');
    L.push('');
  }
  const t = res.ticker || {};
  if (t.rounds && t.rounds.length) {
    L.push(`Beside it, ${t.conns} streams of GET ${TICKER} on one core, each sent by its own handler (ig_sse_send, ` +
      `ig_sleep(1) between ticks, on its coroutine): tick events received per second ${range(t.per_s, fmt.rps)}, per ` +
      `CPU-second of the server ${range(t.per_cpu_s, fmt.rps)}; the server's core busy ${range(t.server_share, pct)}, ` +
      `wsload's ${range(t.client_share, pct)}.`);
    L.push('');
  }
  L.push('Summary (targets of issue 30):');
  L.push('');
  L.push('| target | measured (median) | |');
  L.push('|---|---|---|');
  for (const s of res.summary) L.push(`| ${s.target} | ${s.measured} | ${s.verdict} |`);
  L.push('');
  L.push(`Machine: ${res.machine.cpu}, ${res.machine.nproc} CPUs; ${loadText(res.machine)}.`);
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

function wsVersion() {
  try { return require('ws/package.json').version; } catch { return '?'; }
}

function summary(res) {
  const out = [];
  const e = res.echo || {};
  out.push({ target: `WebSocket echo: ingot's server CPU per message ≤ 1/${TARGET_CPU_RATIO} of Node ws's`,
    measured: e.ratio ? `ws ÷ ingot ${fmt.x(e.ratio.median)}` : '–',
    verdict: !e.ratio ? 'not measured' : e.ratio.median >= TARGET_CPU_RATIO ? 'met' : 'missed' });
  const per = (res.memory && res.memory.per) || {};
  for (const [id, what, t] of [['ingot_ws', 'WebSocket', TARGET_WS_KIB], ['ingot_sse', 'SSE stream', TARGET_SSE_KIB]]) {
    const k = per[id] && per[id].kib;
    out.push({ target: `memory per idle ${what} at ${CFG.idle}: ≤ ${t} KiB`, measured: k ? `${k.median.toFixed(3)} KiB` : '–',
      verdict: !k ? 'not measured' : k.median <= t ? 'met' : 'missed' });
  }
  const f = res.fanout || {};
  out.push({ target: `SSE fan-out to ${CFG.fanout} clients from one core (reported, no target)`,
    measured: f.per_s ? `${fmt.rps(f.per_s.median)} events/s` : '–', verdict: 'reported' });
  return out;
}

// ---- main ------------------------------------------------------------------------------
let serviceCopy = null;
let tmpDir = null;
async function main() {
  const started = Date.now();
  const res = { config: CFG, machine: machineBase(), notes };
  wsload = wsloadBinary();
  if (!fs.existsSync(CFG.service)) throw new Error(`${CFG.service} is missing (make bin)`);
  // Copied: a rebuild during the run must not change it.
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-bench-streams-'));
  serviceCopy = path.join(tmpDir, 'service');
  fs.copyFileSync(CFG.service, serviceCopy);
  fs.chmodSync(serviceCopy, 0o755);
  try {
    if (CFG.parts.includes('echo')) res.echo = await echo();
    if (CFG.parts.includes('memory')) res.memory = await memory();
    if (CFG.parts.includes('fanout')) res.fanout = await fanout('fanout');
    if (CFG.parts.includes('ticker')) res.ticker = await fanout('ticker');
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
  res.summary = summary(res);
  res.machine.loadavg_end = os.loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  publish('streams', table(res), res, SECTION_BEGIN, SECTION_END, log);
  cleanup();
  return res;
}

benchMain(module, main, { clientCpu: cores.clientCpu, log, cleanup });
