// fdstorm.js: the descriptor-limit part of `make bench` (issue 25): the
// server's CPU while 200 connections storm it under `ulimit -n 64`
// (prlimit) with INGOT_MAX_CONNS=10000 set, for BENCH_FDSTORM_SECONDS.
// Two storms: "held" (200 connections opened once and kept) and
// "reconnecting" (each connection the server closes is opened again at
// once). CPU is the server's own (schedstat), as a share of one core;
// target: at most 10%. BENCH_FDSTORM_BASE names another binary (the commit
// before, say) measured the same way beside it. Prints a table (stdout,
// build/bench/fdstorm.{md,json}, a section of build/bench/results.md). A
// measurement, never a test.
//
// Knobs (environment): BENCH_FDSTORM_SECONDS (5), BENCH_FDSTORM_CONNS (200),
// BENCH_FDSTORM_NOFILE (64), BENCH_FDSTORM_BASE (none), BENCH_SERVER_CPU (0).
'use strict';
const net = require('node:net');
const path = require('node:path');
const { ROOT, num, logger, killAll, freePort, cpuNs, launch, stopServer, sleep, machineBase, loadText, pushNotes,
  publish, benchMain } = require('./lib');

const env = process.env;
const CFG = {
  seconds: Math.max(1, num(env.BENCH_FDSTORM_SECONDS, 5)),
  conns: Math.max(1, num(env.BENCH_FDSTORM_CONNS, 200)),
  nofile: Math.max(16, num(env.BENCH_FDSTORM_NOFILE, 64)),
  serverCpu: num(env.BENCH_SERVER_CPU, 0),
  bins: [['this tree', path.join(ROOT, 'build', 'bin', 'service')],
    ...(env.BENCH_FDSTORM_BASE ? [['BENCH_FDSTORM_BASE', env.BENCH_FDSTORM_BASE]] : [])],
};
const SECTION_BEGIN = '<!-- tools/bench/fdstorm.js: begin -->';
const SECTION_END = '<!-- tools/bench/fdstorm.js: end -->';
const { notes, log } = logger('fdstorm');

/** Opens n connections to port; with reconnect, one the server closes is
 * opened again at once. Returns stop(), which closes them all. */
function storm(port, n, reconnect) {
  let stopped = false;
  const socks = new Set();
  const open = () => {
    const s = net.connect({ host: '127.0.0.1', port });
    socks.add(s);
    s.on('error', () => {});
    s.on('close', () => { socks.delete(s); if (reconnect && !stopped) setImmediate(open); });
  };
  for (let i = 0; i < n; i++) open();
  return () => { stopped = true; for (const s of socks) s.destroy(); };
}

async function measure(label, bin, reconnect) {
  const port = await freePort();
  const srv = await launch(label, port, {
    argv: ['prlimit', `--nofile=${CFG.nofile}:${CFG.nofile}`, '--', bin],
    env: { PORT: String(port), HOST: '127.0.0.1', INGOT_MAX_CONNS: '10000', INGOT_THREADS: '1' },
  }, path.join(ROOT, 'build', 'bench', 'fdstorm-server.log'), { cpu: CFG.serverCpu, timeoutMs: 10000, pollMs: 5 });
  try {
    const stop = storm(port, CFG.conns, reconnect);
    await sleep(200); // the storm under way
    const c0 = cpuNs(srv.pid), t0 = process.hrtime.bigint();
    await sleep(CFG.seconds * 1000);
    const c1 = cpuNs(srv.pid), t1 = process.hrtime.bigint();
    stop();
    return c0 === null || c1 === null ? null : (c1 - c0) / Number(t1 - t0);
  } finally {
    await stopServer(srv, (m) => notes.push(m));
  }
}

async function main() {
  const t0 = Date.now();
  const machine = machineBase();
  const results = [];
  for (const [label, bin] of CFG.bins) {
    for (const reconnect of [false, true]) {
      const share = await measure(label, bin, reconnect);
      results.push({ binary: label, storm: reconnect ? 'reconnecting' : 'held', cpu_share: share });
      log(`${label}, ${reconnect ? 'reconnecting' : 'held'}: ${share === null ? 'n/a' : `${(share * 100).toFixed(1)}%`}`);
    }
  }
  machine.loadavg_end = require('node:os').loadavg();
  const L = ['## Descriptor-limit storm (tools/bench/fdstorm.js)', '',
    `${machine.cpu}, ${machine.kernel}; ${loadText(machine)}. ${CFG.conns} connections against one core under ` +
    `\`ulimit -n ${CFG.nofile}\` with INGOT_MAX_CONNS=10000, ${CFG.seconds} s; the server's CPU as a share of one ` +
    'core (target: at most 10%).', '',
    '| binary | storm | server CPU |', '|---|---|---|'];
  for (const r of results) {
    L.push(`| ${r.binary} | ${r.storm} | ${r.cpu_share === null ? 'n/a' : `${(r.cpu_share * 100).toFixed(1)}%`} |`);
  }
  notes.push('held: the connections are opened once; reconnecting: each one the server closes is opened again at once, so the server accepts and closes without pause');
  pushNotes(L, notes);
  const md = `${L.join('\n')}\n`;
  publish('fdstorm', md, { cfg: CFG, machine, results, elapsed_s: (Date.now() - t0) / 1000 }, SECTION_BEGIN,
    SECTION_END, log);
  return results;
}

benchMain(module, main, { clientCpu: num(env.BENCH_CLIENT_CPU, 1), log, cleanup: () => killAll('SIGKILL') });
