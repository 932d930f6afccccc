// lwip.js: the hosted lwIP part of `make bench` (reported, not judged): the
// same service on lwIP over a TAP device (build/bin/service-lwip,
// INGOT_NET=tap:NAME) against the kernel's TCP (build/bin/service), one core
// each: the server on BENCH_SERVER_CPU, wrk on BENCH_CLIENT_CPU, both in a
// network namespace this script makes (igub*) and deletes. wrk reaches
// lwIP through the TAP at 10.233.0.2 and the kernel's TCP on the
// namespace's loopback. Requests per second and the server's CPU time per
// request (schedstat), medians of BENCH_REPS interleaved runs; a table on
// stdout, build/bench/lwip.{md,json} and a section of build/bench/results.md.
// Needs root (ip netns); a measurement, never a test.
//
// Knobs (environment): BENCH_SECONDS (3), BENCH_REPS (3), BENCH_SERVER_CPU
// (0), BENCH_CLIENT_CPU (1), BENCH_LWIP_CONNS (50).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const {
  ROOT, OUT, num, logger, track, killAll, onSignals, run, cpuNs, parseWrk, stats, fmt, machineBase, loadText,
  pushNotes, intoResults, sleep, cell,
} = require('./lib');

const env = process.env;
const CFG = {
  seconds: num(env.BENCH_SECONDS, 3),
  reps: num(env.BENCH_REPS, 3),
  serverCpu: num(env.BENCH_SERVER_CPU, 0),
  clientCpu: num(env.BENCH_CLIENT_CPU, 1),
  conns: num(env.BENCH_LWIP_CONNS, 50),
};
const NS = `igub${process.pid % 100000}`;
const TAP = `igubt${process.pid % 10000}`;
const SECTION_BEGIN = '<!-- tools/bench/lwip.js: begin -->';
const SECTION_END = '<!-- tools/bench/lwip.js: end -->';
const { notes, log, note } = logger('lwip');
const BIN = path.join(ROOT, 'build', 'bin');
const STACKS = [
  { name: 'kernel TCP', bin: path.join(BIN, 'service'), url: 'http://127.0.0.1:8080',
    env: { PORT: '8080', HOST: '127.0.0.1' } },
  { name: 'lwIP over TAP', bin: path.join(BIN, 'service-lwip'), url: 'http://10.233.0.2:8080',
    env: { PORT: '8080', INGOT_NET: `tap:${TAP}`, INGOT_NET_IP: '10.233.0.2/24' } },
];
const ROUTES = ['/health', '/json'];

const inNs = (...args) => ['ip', 'netns', 'exec', NS, ...args];
async function must(args) {
  const r = await run(args[0], args.slice(1));
  if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.err || r.out}`);
}

/** The server in the namespace, pinned; resolves once it logged "listening". */
function start(stack) {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = inNs('taskset', '-c', String(CFG.serverCpu), stack.bin);
    const child = track(spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: env.PATH, INGOT_THREADS: '1', ...stack.env },
    }));
    let out = '';
    const t = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${stack.name}: no "listening" in 10 s: ${out}`)); }, 10000);
    const onData = (d) => {
      out += d;
      if (out.includes('"msg":"listening"')) { clearTimeout(t); resolve(child); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => { clearTimeout(t); reject(new Error(`${stack.name} exited (${code}): ${out}`)); });
  });
}
async function stop(child) {
  if (child.exitCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  if (await Promise.race([gone.then(() => false), sleep(5000).then(() => true)])) child.kill('SIGKILL');
  await gone;
}

async function measure(stack, route) {
  const child = await start(stack);
  try {
    const ns0 = cpuNs(child.pid);
    const [cmd, ...args] = inNs('taskset', '-c', String(CFG.clientCpu), 'wrk', '-t1', `-c${CFG.conns}`,
      `-d${CFG.seconds}s`, `${stack.url}${route}`);
    const r = await run(cmd, args);
    const ns1 = cpuNs(child.pid);
    const w = parseWrk(r.out);
    if (r.code !== 0 || !w.requests) throw new Error(`wrk: ${r.out}${r.err}`);
    if (w.errors || w.non2xx) note(`${stack.name} ${route}: ${w.errors} socket errors, ${w.non2xx} non-2xx`);
    return { rps: w.rps, cpu_us: ns0 !== null && ns1 !== null ? (ns1 - ns0) / 1e3 / w.requests : null };
  } finally {
    await stop(child);
  }
}

async function main() {
  onSignals(log, () => { killAll('SIGKILL'); });
  fs.mkdirSync(OUT, { recursive: true });
  const present = STACKS.filter((s) => fs.existsSync(s.bin) || note(`${path.relative(ROOT, s.bin)} is missing (make lwip builds it): not measured`));
  const machine = machineBase();
  await must(['ip', 'netns', 'add', NS]);
  const results = {};
  try {
    await must(inNs('ip', 'link', 'set', 'lo', 'up'));
    await must(inNs('ip', 'tuntap', 'add', TAP, 'mode', 'tap'));
    await must(inNs('ip', 'addr', 'add', '10.233.0.1/24', 'dev', TAP));
    await must(inNs('ip', 'link', 'set', TAP, 'up'));
    for (let rep = 0; rep < CFG.reps; rep++) {
      for (const route of ROUTES) {
        // Alternated each rep, so neither stack always runs first.
        for (const s of rep % 2 ? [...present].reverse() : present) {
          const key = `${s.name} ${route}`;
          try {
            const m = await measure(s, route);
            (results[key] ||= []).push(m);
            log(`rep ${rep + 1} ${key}: ${fmt.rps(m.rps)} req/s, ${m.cpu_us?.toFixed(2)} µs/req`);
          } catch (e) {
            note(`rep ${rep + 1} ${key}: ${e.message}`);
          }
        }
      }
    }
  } finally {
    await run('ip', ['netns', 'delete', NS]);
  }
  machine.loadavg_end = require('node:os').loadavg();
  const md = table(results, machine);
  process.stdout.write(md);
  fs.writeFileSync(path.join(OUT, 'lwip.md'), md);
  fs.writeFileSync(path.join(OUT, 'lwip.json'), JSON.stringify({ cfg: CFG, machine, results }, null, 2));
  intoResults(md, SECTION_BEGIN, SECTION_END);
}

function table(results, machine) {
  const L = [`Hosted lwIP against the kernel's TCP (tools/bench/lwip.js), ${new Date().toISOString().slice(0, 16).replace('T', ' ')}: ` +
    `${machine.cpu}, ${machine.nproc} CPUs; ${loadText(machine)}. The server alone on CPU ${CFG.serverCpu}, wrk ` +
    `(${CFG.conns} connections, ${CFG.seconds} s) on CPU ${CFG.clientCpu}, in a network namespace; medians (min–max) of ` +
    `${CFG.reps}. Reported, not judged.`, ''];
  L.push('| route | metric | kernel TCP | lwIP over TAP | lwIP/kernel |');
  L.push('|---|---|--:|--:|--:|');
  for (const route of ROUTES) {
    const k = results[`kernel TCP ${route}`] || [], l = results[`lwIP over TAP ${route}`] || [];
    for (const [metric, key, f] of [['req/s', 'rps', fmt.rps], ['server CPU µs/req', 'cpu_us', fmt.us]]) {
      const a = stats(k.map((m) => m[key])), b = stats(l.map((m) => m[key]));
      L.push(`| ${route} c${CFG.conns} | ${metric} | ${cell(a, f)} | ${cell(b, f)} | ${a && b ? fmt.x(b.median / a.median) : '–'} |`);
    }
  }
  pushNotes(L, notes);
  L.push('');
  return L.join('\n');
}

main().catch((e) => {
  log(`failed: ${e.stack || e}`);
  killAll('SIGKILL');
  run('ip', ['netns', 'delete', NS]).then(() => process.exit(1));
});
