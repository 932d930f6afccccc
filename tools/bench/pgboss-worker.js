// pgboss-worker.js: pg-boss (npm, version 10), the peer of ingot's
// PostgreSQL provider in tools/bench/pubsub.js, as a child process with an
// IPC channel. BENCH_PGBOSS_MODE=fill stores BENCH_PGBOSS_FILL jobs on the
// queue `bench` and exits; =consume runs BENCH_PGBOSS_WORKERS workers
// (boss.work, batchSize BENCH_PGBOSS_BATCH, polling every 0.5 s, its
// least) whose handler keeps each job's latency from its sent_us (wall
// clock, µs) as ingot's bench app does, and answers the bench's messages:
// {cmd:'stats'} -> {count, p50_us, p99_us}, {cmd:'reset'}, and
// {cmd:'publish', count, intervalMs} -> boss.send one job at a time, each
// stamped when sent, then {sent}. A measurement helper, never a test.
'use strict';
const PgBoss = require('pg-boss');

const env = process.env;
const QUEUE = 'bench';
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const boss = new PgBoss({ connectionString: env.DATABASE_URL, schedule: false, max: Number(env.BENCH_PGBOSS_POOL || 10) });
  boss.on('error', (e) => process.stderr.write(`pg-boss: ${e.message}\n`));
  await boss.start();
  await boss.createQueue(QUEUE);
  if (env.BENCH_PGBOSS_MODE === 'fill') {
    const n = Number(env.BENCH_PGBOSS_FILL);
    for (let i = 0; i < n; i += 1000) {
      const jobs = [];
      for (let k = i; k < Math.min(n, i + 1000); k++) jobs.push({ name: QUEUE, data: { n: k, sent_us: 0 } });
      await boss.insert(jobs);
    }
    await boss.stop({ graceful: false, wait: true });
    return;
  }
  const lat = [];
  let count = 0;
  const handle = async (jobs) => {
    const t = nowUs();
    for (const j of jobs) {
      if (j.data.sent_us) lat.push(Math.max(0, t - j.data.sent_us));
      count++;
    }
  };
  const workers = Number(env.BENCH_PGBOSS_WORKERS || 4);
  for (let i = 0; i < workers; i++)
    await boss.work(QUEUE, { batchSize: Number(env.BENCH_PGBOSS_BATCH || 100), pollingIntervalSeconds: 0.5 }, handle);
  process.on('message', async (m) => {
    if (m.cmd === 'stats') {
      const s = [...lat].sort((a, b) => a - b);
      process.send({ count, p50_us: s.length ? s[s.length >> 1] : 0, p99_us: s.length ? s[Math.floor(s.length * 0.99)] : 0 });
    } else if (m.cmd === 'reset') {
      lat.length = 0;
      count = 0;
      process.send({ reset: true });
    } else if (m.cmd === 'publish') {
      for (let i = 0; i < m.count; i++) {
        await boss.send(QUEUE, { n: i, sent_us: nowUs() });
        await sleep(m.intervalMs);
      }
      process.send({ sent: m.count });
    } else if (m.cmd === 'stop') {
      await boss.stop({ graceful: false, wait: true });
      process.exit(0);
    }
  });
  process.send({ ready: true });
}
main().catch((e) => { process.stderr.write(`${e.stack}\n`); process.exit(1); });
