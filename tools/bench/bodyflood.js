// bodyflood.js: the memory part of `make bench` (issue 25, item 1): the
// server's peak RSS (VmHWM) while BENCH_FLOOD_CONNS clients (120) each send
// a whole 1 MiB body to POST /validate at once (every head and half of every
// body first, then the rest), without a memory limit and in a 64 MiB memory
// cgroup of its own (v2 or v1; left out where neither is writable), with
// the answers counted by status and the cgroup's OOM kills. Then the
// slow-reader floods: BENCH_SLOW_CONNS clients (40) each send
// BENCH_SLOW_REQUESTS (200) pipelined POST /novalidate of ~24 KB, whose
// echo does not fit a connection's first output block, or 1500 pipelined
// GET /blog?limit=100 (answers of ~6.4 KB, up to 128 of them made from one
// read), and never read an answer: the peak RSS once the server has stopped working (after 8 s, its
// CPU time still for a second), without a budget that binds and with
// INGOT_MEMORY_BUDGET=BENCH_SLOW_BUDGET (4 MiB), at INGOT_MAX_OUTPUT's
// default (BENCH_SLOW_MAX_OUTPUT sets it).
// BENCH_FLOOD_BASE names another binary measured the same way beside it.
// Prints a table (stdout, build/bench/bodyflood.{md,json}, a section of
// build/bench/results.md). A measurement, never a test.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { ROOT, num, logger, killAll, freePort, launch, stopServer, machineBase, loadText, pushNotes, publish,
  benchMain, sleep, cpuTicks, httpRequest } = require('./lib');

const env = process.env;
const MB = 1048576;
const CFG = {
  conns: Math.max(1, num(env.BENCH_FLOOD_CONNS, 120)),
  cgroupBytes: 64 * MB,
  serverCpu: num(env.BENCH_SERVER_CPU, 0),
  slowConns: Math.max(1, num(env.BENCH_SLOW_CONNS, 40)),
  slowRequests: Math.max(1, num(env.BENCH_SLOW_REQUESTS, 200)),
  slowBudget: num(env.BENCH_SLOW_BUDGET, 4 * MB),
  slowMaxOutput: env.BENCH_SLOW_MAX_OUTPUT || null,
  bins: [['this tree', path.join(ROOT, 'build', 'bin', 'service')],
    ...(env.BENCH_FLOOD_BASE ? [['BENCH_FLOOD_BASE', env.BENCH_FLOOD_BASE]] : [])],
};
const SECTION_BEGIN = '<!-- tools/bench/bodyflood.js: begin -->';
const SECTION_END = '<!-- tools/bench/bodyflood.js: end -->';
const { notes, log } = logger('bodyflood');

/** A memory cgroup of our own: { dir, procs, ooms() }, or null. */
function makeCgroup(name) {
  const v2 = '/sys/fs/cgroup';
  try {
    if (fs.existsSync(`${v2}/cgroup.controllers`) && fs.readFileSync(`${v2}/cgroup.controllers`, 'utf8').includes('memory')) {
      const dir = `${v2}/${name}`;
      fs.mkdirSync(dir);
      fs.writeFileSync(`${dir}/memory.max`, String(CFG.cgroupBytes));
      return { dir, ooms: () => Number(/oom_kill (\d+)/.exec(fs.readFileSync(`${dir}/memory.events`, 'utf8'))?.[1] ?? 0) };
    }
    if (fs.existsSync(`${v2}/memory/memory.stat`)) {
      const dir = `${v2}/memory/${name}`;
      fs.mkdirSync(dir);
      fs.writeFileSync(`${dir}/memory.limit_in_bytes`, String(CFG.cgroupBytes));
      return { dir, ooms: () => Number(/oom_kill (\d+)/.exec(fs.readFileSync(`${dir}/memory.oom_control`, 'utf8'))?.[1] ?? 0) };
    }
  } catch { /* not writable */ }
  return null;
}

/** One client: head and half the body, then (when go resolves) the rest;
 * resolves with the answer's status, or 'reset'. */
function client(port, halfSent, go) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    let done = false;
    const end = (v) => { if (!done) { done = true; s.destroy(); resolve(v); } };
    s.on('error', () => end('reset'));
    s.on('close', () => end(/^HTTP\/1\.1 (\d{3})/.exec(buf)?.[1] ?? 'reset'));
    s.on('data', (d) => {
      buf += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})[^]*?\r\n\r\n/.exec(buf);
      const len = /content-length: (\d+)/i.exec(buf);
      if (m && len && buf.length >= m[0].length + Number(len[1])) end(m[1]);
    });
    const half = Buffer.alloc(MB / 2, 'x');
    s.write(`POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-foo: a\r\nContent-Length: ${MB}\r\n\r\n`);
    s.write(half, () => halfSent());
    go.then(() => s.write(half, () => {}));
  });
}

async function measure(label, bin, cg) {
  const port = await freePort();
  const argv = cg ? ['sh', '-c', `echo $$ > ${cg.dir}/cgroup.procs && exec "$0"`, bin] : [bin];
  const srv = await launch(label, port, {
    argv, env: { PORT: String(port), HOST: '127.0.0.1', INGOT_MAX_BODY: String(MB), INGOT_THREADS: '1' },
  }, path.join(ROOT, 'build', 'bench', 'bodyflood-server.log'), { cpu: CFG.serverCpu, timeoutMs: 10000, pollMs: 5 });
  let hwm = null;
  const statuses = {};
  try {
    let sent = 0, release;
    const go = new Promise((r) => { release = r; });
    const all = Array.from({ length: CFG.conns }, () => client(port, () => { if (++sent === CFG.conns) release(); }, go));
    for (const st of await Promise.all(all)) statuses[st] = (statuses[st] || 0) + 1;
    try { hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${srv.pid}/status`, 'utf8'))[1]) * 1024; } catch { /* gone */ }
  } finally {
    await stopServer(srv, (m) => notes.push(m));
  }
  return { hwm, statuses, ooms: cg ? cg.ooms() : null };
}

// A request of ~24 KB (it fits the read buffer) echoed back by the route.
const ECHO_BODY = JSON.stringify({ name: 'A', nickname: null, ref: 1, status: 'active', scores: [],
  address: { street: 's'.repeat(24000), city: 'c', zip: '12345' }, active: true });
const ECHO = 'POST /novalidate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-foo: a\r\n' +
  `Content-Length: ${ECHO_BODY.length}\r\n\r\n${ECHO_BODY}`;

const statusBytes = (pid, key) =>
  Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

const LIST = 'GET /blog?limit=100 HTTP/1.1\r\nHost: x\r\n\r\n';
const SLOW_KINDS = {
  echo: () => ECHO.repeat(CFG.slowRequests),
  list: () => LIST.repeat(1500),
};

/** Slow readers of kind against bin, with budget bytes (null: one that never binds). */
async function measureSlow(label, bin, budget, kind) {
  const port = await freePort();
  const srvEnv = { PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '1',
    INGOT_MEMORY_BUDGET: String(budget ?? 2 ** 40) };
  if (CFG.slowMaxOutput) srvEnv.INGOT_MAX_OUTPUT = CFG.slowMaxOutput;
  const srv = await launch(label, port, { argv: [bin], env: srvEnv },
    path.join(ROOT, 'build', 'bench', 'bodyflood-slow-server.log'), { cpu: CFG.serverCpu, timeoutMs: 10000, pollMs: 5 });
  const socks = [];
  try {
    await httpRequest(port, '/novalidate', { method: 'POST', body: ECHO_BODY,
      headers: { 'content-type': 'application/json', 'x-foo': 'a' } });
    const rss0 = statusBytes(srv.pid, 'VmRSS');
    const payload = SLOW_KINDS[kind]();
    for (let i = 0; i < CFG.slowConns; i++) {
      const s = net.connect({ host: '127.0.0.1', port });
      s.pause();
      s.on('error', () => {});
      s.write(payload);
      socks.push(s);
    }
    // Settled: after 8 s, the server's CPU time still for a second (30 s
    // at most): the clients' writes reach it over seconds.
    const t0 = Date.now();
    let last = -1, still = 0;
    while ((still < 5 || Date.now() - t0 < 8000) && Date.now() - t0 < 30000) {
      await sleep(200);
      const t = cpuTicks(srv.pid);
      still = t === last ? still + 1 : 0;
      last = t;
    }
    const health = await httpRequest(port, '/health');
    return { kind, budget, rss0, hwm: statusBytes(srv.pid, 'VmHWM'), settle_s: (Date.now() - t0) / 1000,
      health: health.status };
  } finally {
    for (const s of socks) s.destroy();
    await stopServer(srv, (m) => notes.push(m));
  }
}

async function main() {
  const t0 = Date.now();
  const machine = machineBase();
  const results = [];
  for (const [label, bin] of CFG.bins) {
    for (const limited of [false, true]) {
      const cg = limited ? makeCgroup(`ingot-bench-${process.pid}-${results.length}`) : null;
      if (limited && !cg) { notes.push('no writable memory cgroup (v2 or v1): the 64 MiB case is left out'); continue; }
      try {
        const r = await measure(label, bin, cg);
        results.push({ binary: label, limit: limited ? '64 MiB cgroup' : 'none', ...r });
        log(`${label}, ${limited ? '64 MiB' : 'no limit'}: VmHWM ${r.hwm === null ? 'n/a' : `${(r.hwm / MB).toFixed(1)} MiB`} ${JSON.stringify(r.statuses)}`);
      } finally {
        if (cg) try { fs.rmdirSync(cg.dir); } catch { /* a process still leaving */ }
      }
    }
  }
  const slow = [];
  for (const [label, bin] of CFG.bins) {
    for (const kind of Object.keys(SLOW_KINDS)) {
      for (const budget of [null, CFG.slowBudget]) {
        const r = await measureSlow(label, bin, budget, kind);
        slow.push({ binary: label, ...r });
        log(`${label}, slow readers (${kind}), budget ${budget ?? 'none'}: VmHWM ${(r.hwm / MB).toFixed(1)} MiB ` +
          `(from ${(r.rss0 / MB).toFixed(1)}), /health ${r.health}`);
      }
    }
  }
  machine.loadavg_end = require('node:os').loadavg();
  const L = ['## Request-body flood (tools/bench/bodyflood.js)', '',
    `${machine.cpu}, ${machine.kernel}; ${loadText(machine)}. ${CFG.conns} clients each send a whole 1 MiB body ` +
    'to POST /validate at once, one core; the server\'s peak RSS, its answers and the cgroup\'s OOM kills.', '',
    '| binary | memory limit | VmHWM | answers | OOM kills |', '|---|---|---|---|---|'];
  for (const r of results) {
    L.push(`| ${r.binary} | ${r.limit} | ${r.hwm === null ? 'n/a (killed)' : `${(r.hwm / MB).toFixed(1)} MiB`} | ` +
      `${Object.entries(r.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')} | ${r.ooms ?? '–'} |`);
  }
  L.push('', `Slow readers: ${CFG.slowConns} clients each send, pipelined, ${CFG.slowRequests} POST /novalidate of ` +
    `${ECHO.length} bytes (echo: the route echoes them) or 1500 GET /blog?limit=100 (list: ~6.4 KB answers), and ` +
    `never read; INGOT_MAX_OUTPUT ${CFG.slowMaxOutput ?? 'at its default'}; one core. RSS before, peak once the ` +
    'server is idle, and /health meanwhile.',
  '', '| binary | flood | INGOT_MEMORY_BUDGET | RSS before | VmHWM | /health |', '|---|---|---|---|---|---|');
  for (const r of slow) {
    L.push(`| ${r.binary} | ${r.kind} | ${r.budget === null ? 'none (1 TiB)' : `${(r.budget / MB).toFixed(0)} MiB`} | ` +
      `${(r.rss0 / MB).toFixed(1)} MiB | ${(r.hwm / MB).toFixed(1)} MiB | ${r.health} |`);
  }
  notes.push('400 is the route\'s answer to this body; 503 is the memory budget\'s, after INGOT_MEMORY_WAIT_MS');
  pushNotes(L, notes);
  const md = `${L.join('\n')}\n`;
  publish('bodyflood', md, { cfg: CFG, machine, results, slow, elapsed_s: (Date.now() - t0) / 1000 }, SECTION_BEGIN,
    SECTION_END, log);
  return results;
}

benchMain(module, main, { clientCpu: num(env.BENCH_CLIENT_CPU, 1), log, cleanup: () => killAll('SIGKILL') });
