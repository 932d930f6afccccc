// lambda.js: the Lambda half of `make bench` (issue 15), two parts:
//   1. init: from exec to the runtime's first GET .../invocation/next,
//      median of BENCH_COLD_RUNS (50) starts (lambda_init.c), beside the
//      same time for the floor (lambda_floor.c: read the variable, connect,
//      write the request);
//   2. one invocation's CPU in the runtime loop (the service under the
//      Runtime API emulator of the tests, tests/integration/lambda_emulator.mjs,
//      one API Gateway 2.0 event at a time), against one HTTP request of the
//      same route on a keep-alive connection to the same binary with one
//      core: the server's CPU time (schedstat ns) over N of them, divided by N.
// The server runs on BENCH_SERVER_CPU (0), this process on BENCH_CLIENT_CPU
// (1). tools/bench/run starts it (BENCH_LAMBDA=0 skips it); `node
// tools/bench/lambda.js` runs it alone. Its table goes to stdout,
// build/bench/lambda.{md,json} and build/bench/results.md. A measurement,
// never a test. Knobs: BENCH_SERVICE, BENCH_COLD_RUNS, BENCH_LAMBDA_N (5000).
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const os = require('node:os');
const { ROOT, num, sharedCfg, logger, cpuNs, stats, machineBase, loadText, pushNotes, publish, benchMain, freePort, isListening, sleep, track, killAll } = require('./lib');

const env = process.env;
const { cores } = sharedCfg(0);
const CFG = {
  ...cores,
  coldRuns: num(env.BENCH_COLD_RUNS, 50),
  n: num(env.BENCH_LAMBDA_N, 5000),
  service: env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service'),
  tools: env.BENCH_BIN_DIR || path.join(ROOT, 'build', 'tools', 'bench'),
  routes: ['/health', '/json'],
};
const SECTION_BEGIN = '<!-- tools/bench/lambda.js: begin -->';
const SECTION_END = '<!-- tools/bench/lambda.js: end -->';
const { notes, log, note } = logger('bench lambda');

function tool(name) {
  for (const d of [CFG.tools, path.join(ROOT, 'build', 'tools', 'bench')]) {
    const f = path.join(d, name);
    if (fs.existsSync(f)) return f;
  }
  throw new Error(`${name} is missing (make bench-tools builds it)`);
}

function initTime(prog) {
  const out = execFileSync('taskset', ['-c', String(CFG.serverCpu), tool('lambda_init'), '-n', String(CFG.coldRuns), '--', prog],
    { encoding: 'utf8' });
  return JSON.parse(out.trim());
}

function event(route) {
  return {
    version: '2.0', routeKey: '$default', rawPath: route, rawQueryString: '', headers: { accept: '*/*' },
    requestContext: { http: { method: 'GET', path: route, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1' }, stage: '$default' },
    isBase64Encoded: false,
  };
}

async function lambdaCpu(route) {
  const { RuntimeApi } = await import(path.join(ROOT, 'tests', 'integration', 'lambda_emulator.mjs'));
  const api = new RuntimeApi();
  await api.start();
  const child = track(spawn('taskset', ['-c', String(CFG.serverCpu), CFG.service], {
    stdio: 'ignore', env: { PATH: env.PATH, AWS_LAMBDA_RUNTIME_API: api.address } }));
  try {
    await api.waitPolls(1);
    const ev = event(route);
    for (let i = 0; i < 200; i++) await api.invoke(ev); // warm: pages, the client's connection
    const t0 = cpuNs(child.pid);
    for (let i = 0; i < CFG.n; i++) {
      const r = await api.invoke(ev);
      if (r.kind !== 'response' || r.body.statusCode !== 200) throw new Error(`invocation failed: ${r.raw}`);
    }
    return (cpuNs(child.pid) - t0) / CFG.n / 1000;
  } finally {
    child.kill('SIGKILL');
    await api.stop();
  }
}

/** N sequential requests on one keep-alive connection. */
function keepAlive(port, route, n) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const reqBytes = Buffer.from(`GET ${route} HTTP/1.1\r\nHost: x\r\naccept: */*\r\n\r\n`);
    let left = n, buf = '';
    s.setEncoding('latin1');
    s.on('error', reject);
    s.on('connect', () => s.write(reqBytes));
    s.on('data', (d) => {
      buf += d;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const m = /content-length: *(\d+)/i.exec(buf.slice(0, end));
        const total = end + 4 + (m ? Number(m[1]) : 0);
        if (buf.length < total) return;
        buf = buf.slice(total);
        if (--left === 0) { s.destroy(); resolve(); return; }
        s.write(reqBytes);
      }
    });
  });
}

async function httpCpu(route) {
  const port = await freePort();
  const child = track(spawn('taskset', ['-c', String(CFG.serverCpu), CFG.service], {
    stdio: 'ignore', env: { PATH: env.PATH, PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '1' } }));
  try {
    while (!isListening(port)) await sleep(5);
    await keepAlive(port, route, 200);
    const t0 = cpuNs(child.pid);
    await keepAlive(port, route, CFG.n);
    return (cpuNs(child.pid) - t0) / CFG.n / 1000;
  } finally {
    child.kill('SIGKILL');
  }
}

function table(res, machine) {
  const L = ['## Lambda (issue 15)', '',
    `Init: exec to the first GET .../invocation/next, median of ${CFG.coldRuns} (min … max), on CPU ${CFG.serverCpu}.`, '',
    '| process | init µs | min | max |', '|---|---|---|---|'];
  for (const [name, s] of [['floor (connect and write)', res.init.floor], ['ingot', res.init.ingot]]) {
    L.push(`| ${name} | ${s.median_us.toFixed(0)} | ${s.min_us.toFixed(0)} | ${s.max_us.toFixed(0)} |`);
  }
  L.push('', `CPU per answer (server side, schedstat), ${CFG.n} in sequence, one core:`, '',
    '| route | invocation µs | HTTP request µs | ratio |', '|---|---|---|---|');
  for (const r of CFG.routes) {
    const { lambda, http } = res.cpu[r];
    L.push(`| GET ${r} | ${lambda.toFixed(1)} | ${http.toFixed(1)} | ${(lambda / http).toFixed(2)}× |`);
  }
  L.push('', `An invocation's CPU includes the runtime's own HTTP: the GET next, its event's JSON, the POST of the answer.`, '');
  L.push(loadText(machine), '');
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

async function main() {
  const started = Date.now();
  const machine = machineBase();
  const res = { cfg: CFG, init: {}, cpu: {} };
  log('init: floor');
  res.init.floor = initTime(tool('lambda_floor'));
  log('init: ingot');
  res.init.ingot = initTime(CFG.service);
  for (const r of CFG.routes) {
    log(`cpu: ${r}`);
    res.cpu[r] = { lambda: await lambdaCpu(r), http: await httpCpu(r) };
  }
  machine.loadavg_end = os.loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  publish('lambda', table(res, machine), res, SECTION_BEGIN, SECTION_END, log);
  return res;
}

benchMain(module, main, { clientCpu: CFG.clientCpu, log, cleanup: () => killAll('SIGKILL') });
