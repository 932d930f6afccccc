// pgboss-worker.js: pg-boss (npm, version 10), the peer of ingot's
// PostgreSQL provider in tools/bench/pubsub.js, as a child process with an
// IPC channel. BENCH_PGBOSS_MODE=fill stores BENCH_PGBOSS_FILL jobs on the
// queue `bench` and exits; =consume runs BENCH_PGBOSS_WORKERS workers
// (boss.work, batchSize BENCH_PGBOSS_BATCH, polling every 0.5 s, its
// least) whose handler keeps each job's latency from its sent_us (wall
// clock, µs) as ingot's bench app does, and answers the bench's messages
// (peer-ipc.js; its publish: boss.send). A measurement helper, never a test.
'use strict';
const PgBoss = require('pg-boss');
const { nowUs, recorder, serve } = require('./peer-ipc');

const env = process.env;
const QUEUE = 'bench';

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
  const rec = recorder();
  const handle = async (jobs) => {
    const t = nowUs();
    for (const j of jobs) rec.handled(j.data.sent_us, t);
  };
  const workers = Number(env.BENCH_PGBOSS_WORKERS || 4);
  for (let i = 0; i < workers; i++)
    await boss.work(QUEUE, { batchSize: Number(env.BENCH_PGBOSS_BATCH || 100), pollingIntervalSeconds: 0.5 }, handle);
  serve(rec, {
    send: (n, sentUs) => boss.send(QUEUE, { n, sent_us: sentUs }),
    stop: () => boss.stop({ graceful: false, wait: true }),
  });
}
main().catch((e) => { process.stderr.write(`${e.stack}\n`); process.exit(1); });
