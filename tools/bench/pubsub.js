// pubsub.js: Pub/Sub's cost (issue 29), a part of `make bench`: ingot's
// consumer (the bench app tools/bench/pubsub, built by `make bench`: a
// handler that acks at once) against a peer library on the same broker,
// per provider (PROVIDERS below; BENCH_PUBSUB_PROVIDERS picks them).
// Two measurements per provider, each side alone on the server CPU (the
// broker, and this script, on the client CPU):
//   1. throughput: BENCH_PUBSUB_MESSAGES messages stored first (ingot's by a
//      publishing-only process of the app, the peer's by its own insert),
//      then one consumer process started: from its first BENCH_PUBSUB_SKIP
//      (a share: 0.25) handled to the last (its connections are up by then:
//      the broker's authentication, SCRAM, is not counted), the messages per second (wall) and per CPU-second of the
//      consumer's process (schedstat; utime+stime where none), and of the
//      consumer and the broker together (the broker's processes' CPU);
//   2. latency: BENCH_PUBSUB_LATENCY messages published one at a time every
//      BENCH_PUBSUB_INTERVAL_MS by the consumer's own process (ingot: POST
//      /publish to it; the peer: its send), each stamped with the wall
//      clock; the handler takes the difference: p50 and p99.
// Reps rotate which side goes first. The verdict: ingot's messages per
// consumer CPU-second over each peer's (target ≥ 3×). pg-boss runs at each
// batchSize of BENCH_PGBOSS_BATCH: its batch handler completes or fails the
// batch as one (a verdict per message, as ingot's, is batchSize 1, whose
// workers wait for the poll after every job), so a larger batch is cheaper
// per message but not the same contract. Its table goes to
// stdout, build/bench/pubsub.{md,json} and results.md. The providers:
// postgres (tools/pg-local's cluster, or DATABASE_URL; pg-boss,
// pgboss-worker.js) and nats (a nats-server of its own, JetStream on, a
// temp store, a free port; nats.js, natsjs-worker.js). tools/bench/run
// starts it (BENCH_PUBSUB=0 skips it); `node tools/bench/pubsub.js` runs it
// alone. A measurement, never a test: the target is reported, not enforced.
//
// Knobs: BENCH_REPS (3), BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1); its own:
// BENCH_PUBSUB_PROVIDERS (postgres,nats), BENCH_PUBSUB_MESSAGES (20000), BENCH_PUBSUB_SKIP (0.25),
// BENCH_PUBSUB_LATENCY (500), BENCH_PUBSUB_INTERVAL_MS (5),
// BENCH_PUBSUB_APP (tools/bench/pubsub/build/bin/pubsub-bench),
// BENCH_PGBOSS_BATCH (100,1000: a list), BENCH_PGBOSS_WORKERS (4).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const { spawn, execFileSync } = require('node:child_process');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, sleep, logger, track, killAll, run, freePort, httpRequest, launch, stopServer,
  cpuTicks, cpuNs, stats, fmt, machineBase, loadText, warnLoad, rotate, pushNotes, publish, benchMain,
  benchDatabase, benchDatabaseStop,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
const { timing, cores } = sharedCfg(0);
const CFG = {
  reps: timing.reps,
  ...cores,
  providers: (env.BENCH_PUBSUB_PROVIDERS || 'postgres,nats').split(',').filter(Boolean),
  messages: num(env.BENCH_PUBSUB_MESSAGES, 20000),
  skip: num(env.BENCH_PUBSUB_SKIP, 0.25),
  latency: num(env.BENCH_PUBSUB_LATENCY, 500),
  intervalMs: num(env.BENCH_PUBSUB_INTERVAL_MS, 5),
  app: env.BENCH_PUBSUB_APP || path.join(HERE, 'pubsub', 'build', 'bin', 'pubsub-bench'),
  pgbossBatches: (env.BENCH_PGBOSS_BATCH || '100,1000').split(',').map(Number).filter((x) => x >= 1),
  pgbossWorkers: num(env.BENCH_PGBOSS_WORKERS, 4),
};
const TARGET = 3; // ingot's messages per consumer CPU-second ÷ the peer's
const SECTION_BEGIN = '<!-- tools/bench/pubsub.js: begin -->';
const SECTION_END = '<!-- tools/bench/pubsub.js: end -->';
const { notes, log, note } = logger('bench pubsub');

// ---- PostgreSQL: tools/pg-local's cluster of its own (or DATABASE_URL) ----
const natsDirs = []; // the nats-servers' stores, removed at the end
function cleanup() {
  killAll('SIGKILL');
  while (natsDirs.length) fs.rmSync(natsDirs.pop(), { recursive: true, force: true });
  benchDatabaseStop();
}
process.on('exit', cleanup);

async function psql(url, sql) {
  const r = await run('psql', ['-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql]);
  if (r.code !== 0) throw new Error(`psql: ${r.err.trim()}`);
  return r.out.trim();
}

// The broker's processes (the postmaster and its backends), for their CPU.
function pgPids() {
  let master = null;
  try {
    // tools/pg-local records where its cluster lives
    const dir = fs.readFileSync(path.join(ROOT, 'build', 'bench', 'pg', 'datadir'), 'utf8').trim();
    master = Number(fs.readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch { return []; }
  let kids = [];
  try { kids = fs.readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { /* none */ }
  return [master, ...kids];
}
const ticksOf = (pids) => pids.reduce((a, p) => { try { return a + cpuTicks(p); } catch { return a; } }, 0);

// ---- the providers: each names its broker, ingot's settings for it, and its peer ----
// A provider: setup() -> its broker (url, a description, its durability),
// ingotEnv(broker) (the app's settings to use it), reset(broker) (between
// runs: no message left), peers() -> [{ name, settings, fill(broker, n),
// start(broker) -> a consumer with stats()/reset()/publish(count,
// intervalMs)/stop() }], sides(peers) (the table's line on both sides'
// settings), brokerPids(broker), and teardown(broker) where the broker is
// its own.
const PROVIDERS = {
  postgres: {
    label: 'PostgreSQL',
    async setup() {
      const { url, where } = await benchDatabase();
      const m = await run(CFG.app, ['--migrate'], { env: { PATH: env.PATH, DATABASE_URL: url } });
      if (m.code !== 0) throw new Error(`${CFG.app} --migrate failed: ${(m.err + m.out).slice(0, 300)}`);
      const durability = `synchronous_commit=${await psql(url, 'SHOW synchronous_commit')}, fsync=${await psql(url, 'SHOW fsync')}`;
      return { url, where, durability, local: !env.DATABASE_URL };
    },
    ingotEnv: (b) => ({ DATABASE_URL: b.url }),
    async reset(b) {
      await psql(b.url, 'TRUNCATE ingot_pubsub.messages, ingot_pubsub.deliveries');
      await psql(b.url, "DO $$ BEGIN IF to_regclass('pgboss.job') IS NOT NULL THEN DELETE FROM pgboss.job WHERE name = 'bench'; END IF; END $$");
    },
    brokerPids: (b) => (b.local ? pgPids() : []),
    peers: () => CFG.pgbossBatches.map((batch) => ({
      name: `pg-boss 10, batchSize ${batch}`,
      settings: `${CFG.pgbossWorkers} workers, polling every 0.5 s`,
      async fill(b, n) {
        const r = await run(process.execPath, [path.join(HERE, 'pgboss-worker.js')],
          { env: { ...env, DATABASE_URL: b.url, BENCH_PGBOSS_MODE: 'fill', BENCH_PGBOSS_FILL: String(n) } });
        if (r.code !== 0) throw new Error(`pg-boss fill: ${r.err.slice(-300)}`);
      },
      start: (b) => pgbossConsumer(b, batch),
    })),
    sides: (peers) => `ingot: maxConcurrency 64, a verdict per message; pg-boss: ${peers[0]?.settings || ''}, a verdict per batch.`,
  },
  nats: {
    label: 'NATS JetStream',
    // A nats-server of its own: a temp store, a free port, JetStream on,
    // on the client CPU; stopped by its PID in teardown (or cleanup).
    async setup() {
      const bin = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => fs.existsSync(p));
      if (!bin) throw new Error('nats-server is not installed (tools/setup bench installs it)');
      const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim().replace(/^nats-server:\s*/, '');
      const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'ingot-bench-nats-'));
      natsDirs.push(dir);
      const port = await freePort();
      const srv = await launch('nats-server', port, { argv: [bin, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir] },
        path.join(OUT, 'logs', 'pubsub-nats-server.log'), { cpu: CFG.clientCpu, timeoutMs: 15000, pollMs: 5 });
      const url = `nats://127.0.0.1:${port}`;
      const { connect } = require('nats');
      const nc = await connect({ servers: url });
      return { url, srv, nc, jsm: await nc.jetstreamManager(),
        where: `nats-server ${version} of its own, on a free port with \`-js -sd <tmp>\``,
        durability: 'file storage (the server\'s default sync), explicit acks' };
    },
    ingotEnv: (b) => ({ INGOT_PUBSUB_URL: b.url }),
    // The streams (and their consumers) deleted: ingot's publisher makes
    // its stream again as it connects, nats.js's fill makes its own.
    async reset(b) {
      for (const name of ['pubsub-bench', 'natsjs-bench']) {
        try { await b.jsm.streams.delete(name); } catch { /* none yet */ }
      }
    },
    async teardown(b) {
      await b.nc.close();
      await stopServer(b.srv, note);
    },
    brokerPids: (b) => [b.srv.pid],
    peers: () => [{
      name: `nats.js ${require('nats/package.json').version}`,
      settings: 'a durable pull consumer, explicit ack, MaxAckPending 64, consume() 64 at a time',
      async fill(b, n) {
        const r = await run(process.execPath, [path.join(HERE, 'natsjs-worker.js')],
          { env: { ...env, BENCH_NATS_URL: b.url, BENCH_NATS_MODE: 'fill', BENCH_NATS_FILL: String(n) } });
        if (r.code !== 0) throw new Error(`nats.js fill: ${r.err.slice(-300)}`);
      },
      start: (b) => peerConsumer('nats.js', 'natsjs-worker.js', { BENCH_NATS_URL: b.url, BENCH_NATS_MODE: 'consume' }),
    }],
    sides: (peers) => `ingot: maxConcurrency 64 (64 handlers at once, pulled as slots free), an ack per message; nats.js: ${peers[0]?.settings || ''}, an ack per message.`,
  },
};

const pgbossConsumer = (b, batch) => peerConsumer('pg-boss', 'pgboss-worker.js', { DATABASE_URL: b.url, BENCH_PGBOSS_MODE: 'consume',
  BENCH_PGBOSS_BATCH: String(batch), BENCH_PGBOSS_WORKERS: String(CFG.pgbossWorkers) });

// A peer's consumer: its worker script as a child on the server CPU,
// answering the bench over IPC (pgboss-worker.js, natsjs-worker.js).
function peerConsumer(name, script, extra) {
  return new Promise((resolve, reject) => {
    const logFile = path.join(OUT, 'logs', `pubsub-${script.replace(/-worker\.js$/, '')}.log`);
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    const fd = fs.openSync(logFile, 'w');
    const child = track(spawn('taskset', ['-c', String(CFG.serverCpu), process.execPath, path.join(HERE, script)], {
      stdio: ['ignore', fd, fd, 'ipc'], env: { ...env, ...extra },
    }));
    fs.closeSync(fd);
    const waiting = [];
    child.on('message', (m) => {
      if (m.ready) return resolve(api);
      const w = waiting.shift();
      if (w) w(m);
    });
    child.on('exit', (code) => reject(new Error(`${name} consumer exited (${code}); see ${logFile}`)));
    const ask = (msg) => new Promise((r) => { waiting.push(r); child.send(msg); });
    const api = {
      pid: child.pid,
      stats: () => ask({ cmd: 'stats' }),
      reset: () => ask({ cmd: 'reset' }),
      publish: (count, intervalMs) => ask({ cmd: 'publish', count, intervalMs }),
      async stop() {
        const gone = new Promise((r) => child.once('exit', r));
        try { child.send({ cmd: 'stop' }); } catch { /* gone */ }
        if (await Promise.race([gone.then(() => false), sleep(5000).then(() => true)])) {
          try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ }
          await gone;
        }
      },
    };
  });
}

// ---- ingot: the bench app ----
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(port, target, body) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

async function ingotProcess(provider, b, consume, cpu) {
  const port = await freePort();
  const logFile = path.join(OUT, 'logs', `pubsub-ingot-${consume ? 'consumer' : 'publisher'}.log`);
  const srv = await launch('ingot', port, {
    argv: [CFG.app],
    env: { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', INGOT_ADMIN_PORT: '-1', INGOT_LOG_LEVEL: 'warn',
      INGOT_PUBSUB_CONSUME: consume ? 'true' : 'false', ...provider.ingotEnv(b) },
  }, logFile, { cpu, timeoutMs: 15000, pollMs: 5 });
  return {
    pid: srv.pid,
    async stats() { const r = await httpRequest(port, '/stats'); return JSON.parse(r.body); },
    async reset() { await httpRequest(port, '/reset', { method: 'POST' }); },
    async publish(count, intervalMs) {
      for (let i = 0; i < count; i++) {
        const s = await post(port, '/publish', JSON.stringify({ n: i, sent_us: nowUs() }));
        if (s !== 204) throw new Error(`POST /publish answered ${s}`);
        await sleep(intervalMs);
      }
    },
    async fill(n) {
      // The first publish is tried until the provider is up (NATS: the
      // client connects and makes the stream after the HTTP port listens).
      for (const deadline = Date.now() + 15000; ;) {
        const s = await post(port, '/publish', JSON.stringify({ n: 0, sent_us: 0 }));
        if (s === 204) break;
        if (Date.now() > deadline) throw new Error(`POST /publish answered ${s}`);
        await sleep(20);
      }
      let next = 1;
      const one = async () => {
        while (next < n) {
          const i = next++;
          const s = await post(port, '/publish', JSON.stringify({ n: i, sent_us: 0 }));
          if (s !== 204) throw new Error(`POST /publish answered ${s}`);
        }
      };
      await Promise.all(Array.from({ length: 16 }, one));
    },
    stop: () => stopServer(srv, note),
  };
}

// ---- one throughput run and one latency run of a side ----
const cpuOf = (pid) => { const ns = cpuNs(pid); return ns !== null ? ns / 1e9 : cpuTicks(pid) / CLK_TCK; };

async function drain(consumer, brokerPids, n) {
  const from = Math.ceil(n * CFG.skip);
  const deadline = Date.now() + 600000;
  const until = async (k) => {
    for (;;) {
      const s = await consumer.stats();
      if (s.count >= k) return s.count;
      if (Date.now() > deadline) throw new Error(`only ${s.count} of ${k} messages handled in 10 min`);
      await sleep(10);
    }
  };
  const c0 = await until(from);
  const t0 = performance.now(), cpu0 = cpuOf(consumer.pid), pg0 = ticksOf(brokerPids);
  const c1 = await until(n);
  const wall = (performance.now() - t0) / 1000, cpu = cpuOf(consumer.pid) - cpu0, pg = (ticksOf(brokerPids) - pg0) / CLK_TCK;
  const msgs = c1 - c0;
  return { messages: msgs, wall_s: wall, per_s: msgs / wall, cpu_s: cpu, per_cpu_s: msgs / cpu, broker_cpu_s: pg,
    per_total_cpu_s: brokerPids.length ? msgs / (cpu + pg) : null };
}

async function latencyRun(consumer) {
  await consumer.reset();
  await consumer.publish(CFG.latency, CFG.intervalMs);
  const deadline = Date.now() + 60000;
  for (;;) {
    const s = await consumer.stats();
    if (s.count >= CFG.latency) return { p50_us: s.p50_us, p99_us: s.p99_us };
    if (Date.now() > deadline) throw new Error(`only ${s.count} of ${CFG.latency} published messages handled`);
    await sleep(20);
  }
}

async function side(provider, b, who) {
  await provider.reset(b);
  let consumer;
  if (!who) {
    const pub = await ingotProcess(provider, b, false, CFG.clientCpu);
    try { await pub.fill(CFG.messages); } finally { await pub.stop(); }
    consumer = await ingotProcess(provider, b, true, CFG.serverCpu);
  } else {
    await who.fill(b, CFG.messages);
    consumer = await who.start(b);
  }
  try {
    const t = await drain(consumer, provider.brokerPids(b), CFG.messages);
    const l = await latencyRun(consumer);
    return { ...t, ...l };
  } finally {
    await consumer.stop();
  }
}

// ---- the table ----
function render(res) {
  const L = [];
  L.push('### Pub/Sub: publish→handler latency and messages per core-second (`tools/bench/pubsub.js`)');
  L.push('');
  L.push(`${res.machine.cpu}, ${res.machine.nproc} CPUs; each consumer alone on CPU ${CFG.serverCpu} (one thread), the broker and the bench on CPU ${CFG.clientCpu}; ` +
    `${CFG.messages} messages stored, then drained (from the first ${Math.round(CFG.skip * 100)}% handled to the last); ` +
    `${CFG.latency} published one at a time every ${CFG.intervalMs} ms by the consumer's process for the latency; medians of ${CFG.reps} reps (min–max).`);
  for (const p of res.providers) {
    L.push('');
    L.push(`**${p.label}** (${p.where}; ${p.durability}, the same for all); ${p.sides}`);
    L.push('');
    L.push('| consumer | messages/s | messages per consumer CPU-s | per CPU-s with the broker\'s | latency p50 | latency p99 |');
    L.push('|---|---:|---:|---:|---:|---:|');
    for (const s of [['ingot', p.ingot], ...p.peers.map((x) => [x.name, x.runs])]) {
      const st = (k) => stats(s[1].map((r) => r[k]).filter((x) => x !== null && x !== undefined));
      const c = (k, f) => { const x = st(k); return x ? (x.n > 1 && x.min !== x.max ? `${f(x.median)} (${f(x.min)}–${f(x.max)})` : f(x.median)) : '–'; };
      L.push(`| ${s[0]} | ${c('per_s', fmt.rps)} | ${c('per_cpu_s', fmt.rps)} | ${c('per_total_cpu_s', fmt.rps)} | ${c('p50_us', fmt.ms)} ms | ${c('p99_us', fmt.ms)} ms |`);
    }
    L.push('');
    for (const x of p.peers) {
      const r = x.ratio;
      L.push(r ? `- ingot ÷ ${x.name}, messages per consumer CPU-second: **${fmt.x(r.per_cpu_s)}** (target ≥ ${TARGET}×: ${r.per_cpu_s >= TARGET ? 'met' : 'NOT met'}); ` +
        `messages per second: ${fmt.x(r.per_s)}${r.per_total_cpu_s ? `; per CPU-second with the broker's: ${fmt.x(r.per_total_cpu_s)}` : ''}.` : `- ${x.name}: no ratio, a side failed (see the notes).`);
    }
  }
  L.push('');
  L.push(`${loadText(res.machine)}.`);
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

async function main() {
  const started = Date.now();
  if (!fs.existsSync(CFG.app)) throw new Error(`${CFG.app} is missing (make -C tools/bench/pubsub builds it)`);
  const machine = machineBase();
  warnLoad(machine, note);
  const res = { config: CFG, machine, providers: [] };
  for (const name of CFG.providers) {
    const provider = PROVIDERS[name];
    if (!provider) { note(`no provider "${name}" in tools/bench/pubsub.js`); continue; }
    let b;
    try {
      b = await provider.setup();
    } catch (e) { // no broker here (nats-server not installed...): the others still run
      note(`${name}: ${e.message}`);
      continue;
    }
    const peers = provider.peers();
    const out = { name, label: provider.label, where: b.where, durability: b.durability, sides: provider.sides(peers), ingot: [],
      peers: peers.map((x) => ({ name: x.name, settings: x.settings, runs: [] })) };
    const sides = [null, ...peers];
    for (let rep = 0; rep < CFG.reps; rep++) {
      for (const who of rotate(sides, rep)) {
        const label = who ? who.name : 'ingot';
        try {
          const r = await side(provider, b, who);
          log(`${name} rep ${rep + 1} ${label}: ${r.per_s.toFixed(0)}/s, ${r.per_cpu_s.toFixed(0)} per CPU-s, p50 ${(r.p50_us / 1000).toFixed(2)} ms, p99 ${(r.p99_us / 1000).toFixed(2)} ms`);
          (who ? out.peers[peers.indexOf(who)].runs : out.ingot).push(r);
        } catch (e) {
          note(`${name} rep ${rep + 1} ${label}: ${e.message}`);
        }
      }
    }
    const med = (runs, k) => stats(runs.map((r) => r[k]).filter((x) => x !== null && x !== undefined))?.median;
    for (const x of out.peers) {
      if (!out.ingot.length || !x.runs.length) continue;
      x.ratio = {};
      for (const k of ['per_s', 'per_cpu_s', 'per_total_cpu_s']) {
        const a = med(out.ingot, k), p = med(x.runs, k);
        x.ratio[k] = a && p ? a / p : null;
      }
    }
    res.providers.push(out);
    if (provider.teardown) await provider.teardown(b);
  }
  machine.loadavg_end = require('node:os').loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  const md = render(res);
  publish('pubsub', md, res, SECTION_BEGIN, SECTION_END, log);
  cleanup();
  return res;
}

benchMain(module, main, { clientCpu: CFG.clientCpu, log, cleanup });
