// coro.js: the coroutine switch's cost (issue 26), a part of `make bench`.
// Runs build/tools/bench/coro_switch (coro_switch.c, built by `make
// bench-tools`; tools/bench/run's private copy when there is one) pinned to
// BENCH_SERVER_CPU (0): ns per resume and yield back, and per run of a
// coroutine that never waits (new, resume, return). Its table goes to
// stdout, build/bench/coro.{md,json} and build/bench/results.md. A
// measurement, never a test. Knobs: BENCH_CORO_N, BENCH_CORO_REPS.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT, sharedCfg, logger, machineBase, loadText, pushNotes, publish, benchMain } = require('./lib');

const { cores } = sharedCfg(0);
const SECTION_BEGIN = '<!-- tools/bench/coro.js: begin -->';
const SECTION_END = '<!-- tools/bench/coro.js: end -->';
const { notes, log } = logger('bench coro');

function binary() {
  const given = process.env.BENCH_BIN_DIR && path.join(process.env.BENCH_BIN_DIR, 'coro_switch');
  if (given && fs.existsSync(given)) return given;
  const built = path.join(ROOT, 'build', 'tools', 'bench', 'coro_switch');
  if (!fs.existsSync(built)) throw new Error(`${built} is missing (make bench-tools builds it)`);
  return built;
}

async function main() {
  const started = Date.now();
  const machine = machineBase();
  const out = execFileSync('taskset', ['-c', String(cores.serverCpu), binary()], { encoding: 'utf8' });
  const res = { ...JSON.parse(out), cpu: cores.serverCpu };
  machine.loadavg_end = os.loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  const f = (x) => x.toFixed(1);
  const L = ['## Coroutine switch (issue 26)', '',
    `kernel/runtime/coro.c on CPU ${res.cpu}, ns per operation, best and median of ${res.reps} runs of ${res.n}:`, '',
    '| operation | min ns | median ns |', '|---|---|---|',
    `| resume, then yield back (two switches) | ${f(res.round_trip_ns.min)} | ${f(res.round_trip_ns.median)} |`,
    `| a run that never waits (new, resume, return) | ${f(res.run_no_wait_ns.min)} | ${f(res.run_no_wait_ns.median)} |`,
    '', loadText(machine), ''];
  pushNotes(L, notes);
  publish('coro', `${L.join('\n')}\n`, res, SECTION_BEGIN, SECTION_END, log);
  return res;
}

benchMain(module, main, { clientCpu: cores.clientCpu, log, cleanup: () => {} });
