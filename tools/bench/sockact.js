// sockact.js: the socket-activation part of `make bench` (issue 15): the
// cold start as a client sees it, from its connect to the first byte of
// the response, with the binary not running. systemd-socket-activate holds
// the socket and execs build/bin/service on the first connection (as a
// systemd .socket unit does); beside it, the same on a fresh connection to
// the service once it runs (warm), so that the difference is what the
// start costs. Runs alternate cold and warm; medians (min–max). Prints a
// table (stdout, build/bench/sockact.{md,json}, a section of
// build/bench/results.md). A measurement, never a test.
//
// Knobs (environment): BENCH_SOCKACT_RUNS (21), BENCH_SOCKACT_THREADS
// (1 and 2: INGOT_THREADS of each row).
'use strict';
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { ROOT, num, logger, track, killAll, freePort, stats, fmt, cell, machineBase, loadText, pushNotes, publish,
  benchMain } = require('./lib');

const env = process.env;
const BIN = path.join(ROOT, 'build', 'bin', 'service');
const CFG = {
  runs: Math.max(1, num(env.BENCH_SOCKACT_RUNS, 21)),
  threads: (env.BENCH_SOCKACT_THREADS || '1 2').split(/\s+/).filter(Boolean),
};
const SECTION_BEGIN = '<!-- tools/bench/sockact.js: begin -->';
const SECTION_END = '<!-- tools/bench/sockact.js: end -->';
const { notes, log } = logger('sockact');
const now = () => Number(process.hrtime.bigint()) / 1e3; // us

/** Connects, writes GET /health, resolves the µs from before the connect
 * to the first byte back (and closes). */
function firstByte(port) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const s = net.connect({ host: '127.0.0.1', port });
    s.on('connect', () => s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'));
    s.once('data', () => { const t = now() - t0; s.destroy(); resolve(t); });
    s.on('error', reject);
  });
}

/** systemd-socket-activate on a free port; resolves once it listens. */
async function activator(threads) {
  const port = await freePort();
  const p = track(spawn('systemd-socket-activate', ['-l', `127.0.0.1:${port}`, '-E', `INGOT_THREADS=${threads}`,
    '-E', 'INGOT_LOG_LEVEL=warn', BIN], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let err = '';
  await new Promise((resolve, reject) => {
    p.stderr.on('data', (c) => { err += c; if (err.includes('Listening on')) resolve(); });
    p.on('exit', (code) => reject(new Error(`systemd-socket-activate exited (${code}): ${err}`)));
  });
  return { port, p };
}

async function main() {
  const t0 = Date.now();
  const machine = machineBase();
  const results = [];
  for (const threads of CFG.threads) {
    const cold = [], warm = [];
    for (let i = 0; i < CFG.runs; i++) {
      const a = await activator(threads);
      cold.push(await firstByte(a.port));
      warm.push(await firstByte(a.port));
      const exited = new Promise((resolve) => a.p.on('exit', resolve));
      a.p.kill('SIGTERM');
      await exited;
    }
    results.push({ threads, cold: stats(cold), warm: stats(warm), cold_us: cold, warm_us: warm });
    log(`INGOT_THREADS=${threads}: cold ${stats(cold).median.toFixed(0)} us, warm ${stats(warm).median.toFixed(0)} us`);
  }
  machine.loadavg_end = require('node:os').loadavg();
  const L = ['## Socket-activated cold start (tools/bench/sockact.js)', '',
    `${machine.cpu}, ${machine.kernel}; ${loadText(machine)}. systemd-socket-activate holds the socket; ` +
    `from the client's connect to the first response byte of GET /health, ${CFG.runs} runs each, median (min–max), ms.`, '',
    '| INGOT_THREADS | cold: the binary not running | warm: running, a new connection | the start |', '|---|---|---|---|'];
  for (const r of results) {
    L.push(`| ${r.threads} | ${cell(r.cold, fmt.ms)} | ${cell(r.warm, fmt.ms)} | ` +
      `${fmt.ms(r.cold.median - r.warm.median)} |`);
  }
  notes.push('cold includes systemd-socket-activate\'s exec of the binary, as a systemd .socket unit\'s start does (without systemd\'s own unit bookkeeping)');
  pushNotes(L, notes);
  const md = `${L.join('\n')}\n`;
  publish('sockact', md, { cfg: CFG, machine, results, elapsed_s: (Date.now() - t0) / 1000 }, SECTION_BEGIN, SECTION_END, log);
  return results;
}

benchMain(module, main, { clientCpu: num(env.BENCH_CLIENT_CPU, 1), log, cleanup: () => killAll('SIGKILL') });
