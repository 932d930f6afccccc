// peer-ipc.js: the IPC side of a peer's consumer process for
// tools/bench/pubsub.js (pgboss-worker.js, natsjs-worker.js): the
// latencies and the count its handler records, and the bench's messages
// answered: {cmd:'stats'} -> {count, p50_us, p99_us}, {cmd:'reset'},
// {cmd:'publish', count, intervalMs} -> send(sent_us) one at a time, each
// awaited, then {sent}, and {cmd:'stop'} -> stop(), then exit.
'use strict';

const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A recorder for the handler: handled(sent_us) counts a message and keeps
// its latency when it was stamped (the backlog's are not: sent_us 0).
function recorder() {
  const lat = [];
  const rec = { count: 0, lat };
  rec.handled = (sentUs, t = nowUs()) => {
    if (sentUs) lat.push(Math.max(0, t - sentUs));
    rec.count++;
  };
  return rec;
}

// Answers the bench over IPC, then tells it the consumer is ready.
function serve(rec, { send, stop }) {
  process.on('message', async (m) => {
    if (m.cmd === 'stats') {
      const s = [...rec.lat].sort((a, b) => a - b);
      process.send({ count: rec.count, p50_us: s.length ? s[s.length >> 1] : 0, p99_us: s.length ? s[Math.floor(s.length * 0.99)] : 0 });
    } else if (m.cmd === 'reset') {
      rec.lat.length = 0;
      rec.count = 0;
      process.send({ reset: true });
    } else if (m.cmd === 'publish') {
      for (let i = 0; i < m.count; i++) {
        await send(i, nowUs());
        await sleep(m.intervalMs);
      }
      process.send({ sent: m.count });
    } else if (m.cmd === 'stop') {
      await stop();
      process.exit(0);
    }
  });
  process.send({ ready: true });
}

module.exports = { nowUs, recorder, serve };
