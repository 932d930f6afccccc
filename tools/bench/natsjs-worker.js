// natsjs-worker.js: nats.js (npm `nats`, version 2), the peer of ingot's
// NATS JetStream provider in tools/bench/pubsub.js, as a child process with
// an IPC channel, at ingot's durability and contract: the stream
// `natsjs-bench` (file storage, the subject `natsjs.bench`) and a durable
// pull consumer `sink` with explicit ack and MaxAckPending 64 (ingot's
// maxConcurrency in the bench app), each message decoded from JSON and
// acked on its own. BENCH_NATS_MODE=fill publishes BENCH_NATS_FILL
// messages (each waiting for its PubAck, 256 in flight) and exits;
// =consume consumes, keeping each message's latency from its sent_us (wall
// clock, µs) as ingot's bench app does, and answers the bench's messages
// (peer-ipc.js; its publish: js.publish, awaited to its PubAck).
// BENCH_NATS_URL: the server. A measurement helper, never a test.
'use strict';
const { connect, AckPolicy, StorageType } = require('nats');
const { recorder, serve } = require('./peer-ipc');

const env = process.env;
const STREAM = 'natsjs-bench';
const SUBJECT = 'natsjs.bench';
const DURABLE = 'sink';
const PENDING = 64;
const enc = (o) => Buffer.from(JSON.stringify(o));

async function main() {
  const nc = await connect({ servers: env.BENCH_NATS_URL });
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.info(STREAM);
  } catch {
    await jsm.streams.add({ name: STREAM, subjects: [SUBJECT], storage: StorageType.File });
  }
  const js = nc.jetstream();
  if (env.BENCH_NATS_MODE === 'fill') {
    const n = Number(env.BENCH_NATS_FILL);
    for (let i = 0; i < n; i += 256) {
      const batch = [];
      for (let k = i; k < Math.min(n, i + 256); k++) batch.push(js.publish(SUBJECT, enc({ n: k, sent_us: 0 })));
      await Promise.all(batch);
    }
    await nc.drain();
    return;
  }
  await jsm.consumers.add(STREAM, { durable_name: DURABLE, ack_policy: AckPolicy.Explicit, max_ack_pending: PENDING });
  const consumer = await js.consumers.get(STREAM, DURABLE);
  const rec = recorder();
  (async () => {
    const msgs = await consumer.consume({ max_messages: PENDING });
    for await (const m of msgs) {
      rec.handled(m.json().sent_us);
      m.ack();
    }
  })().catch((e) => { process.stderr.write(`consume: ${e.stack}\n`); process.exit(1); });
  serve(rec, {
    send: (n, sentUs) => js.publish(SUBJECT, enc({ n, sent_us: sentUs })),
    stop: () => nc.close(),
  });
}
main().catch((e) => { process.stderr.write(`${e.stack}\n`); process.exit(1); });
