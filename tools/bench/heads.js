// heads.js: large request heads in small pieces (issue 24), a part of
// `make bench`. With INGOT_MAX_HEADER_BYTES=1048576, BENCH_HEADS_N (10) heads
// of about 950 KB go, one after another on one connection, in 4 KiB
// segments: each its own write with TCP_NODELAY, the next written only once
// the server has read the last, so they arrive apart as a slow client's would. The
// server's CPU for all of them (utime+stime from /proc/PID/stat, and
// schedstat ns where the kernel has it) is set beside the floor server's
// (floor.c, which only counts "\r\n\r\n" and answers) for the same bytes;
// a parser that re-read the head on every segment would cost it quadratic
// time. Median of BENCH_REPS (3). The server runs on BENCH_SERVER_CPU (0),
// this process on BENCH_CLIENT_CPU (1). tools/bench/run starts it
// (BENCH_HEADS=0 skips it); `node tools/bench/heads.js` runs it alone. Its
// table goes to stdout, build/bench/heads.{md,json} and build/bench/results.md.
// A measurement, never a test. Knobs: BENCH_SERVICE, BENCH_HEADS_N.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { ROOT, OUT, num, sharedCfg, logger, cpuTicks, cpuNs, CLK_TCK, stats, machineBase, loadText, pushNotes, publish, benchMain,
  freePort, launch, stopServer, floorBinary, killAll } = require('./lib');

const env = process.env;
const { cores, timing } = sharedCfg(0);
const CFG = {
  ...cores,
  reps: timing.reps,
  heads: num(env.BENCH_HEADS_N, 10),
  headBytes: 950 * 1000,
  segment: 4096,
  maxHeaderBytes: 1048576,
  service: env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service'),
};
const SECTION_BEGIN = '<!-- tools/bench/heads.js: begin -->';
const SECTION_END = '<!-- tools/bench/heads.js: end -->';
const { notes, log, note } = logger('bench heads');

// GET /health with 64 fields of about 15 KB, so that most field lines
// straddle segments: about CFG.headBytes in all.
function head() {
  const start = 'GET /health HTTP/1.1\r\nHost: x\r\n';
  const fields = 64;
  const each = Math.floor((CFG.headBytes - start.length - 2) / fields);
  let s = start;
  for (let i = 0; i < fields; i++) {
    const name = `X-Pad-${String(i).padStart(2, '0')}: `;
    s += `${name}${'a'.repeat(each - name.length - 2)}\r\n`;
  }
  return Buffer.from(`${s}\r\n`, 'latin1');
}

// The bytes the server has yet to read from its end of the connection
// whose client port is `client` (rx_queue in /proc/net/tcp), or null.
function serverUnread(port, client) {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const remote = `:${client.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n')) {
    const c = line.trim().split(/\s+/);
    if (c.length > 4 && c[1].endsWith(local) && c[2].endsWith(remote)) return parseInt(c[4].split(':')[1], 16);
  }
  return null;
}

// Sends each head in segments and waits for its answer before the next.
// A segment is written once the server has read the one before (its
// receive queue is empty): drained writes alone would pile up in that
// queue while the server waits for its core, and arrive as one.
function sendHeads(port, bytes, n) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    s.setNoDelay(true);
    let left = n, buf = '', off = 0;
    const fail = (e) => { s.destroy(); reject(e); };
    const read = () => {
      const deadline = Date.now() + 2000;
      while (serverUnread(port, s.localPort) && Date.now() < deadline) { /* the server is reading */ }
    };
    const next = () => {
      if (off >= bytes.length) return;
      const piece = bytes.subarray(off, off + CFG.segment);
      off += piece.length;
      s.write(piece, (e) => { if (e) { fail(e); return; } read(); next(); });
    };
    s.setEncoding('latin1');
    s.on('error', fail);
    s.on('close', () => { if (left > 0) reject(new Error(`the server closed with ${left} heads unanswered: ${buf.slice(0, 200)}`)); });
    s.on('connect', next);
    s.on('data', (d) => {
      buf += d;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!buf.startsWith('HTTP/1.1 200')) { fail(new Error(`answered ${buf.slice(0, buf.indexOf('\r\n'))}`)); return; }
        const m = /content-length: *(\d+)/i.exec(buf.slice(0, end));
        const total = end + 4 + (m ? Number(m[1]) : 0);
        if (buf.length < total) return;
        buf = buf.slice(total);
        if (--left === 0) { s.end(); resolve(); return; }
        off = 0;
        next();
      }
    });
  });
}

async function measure(name, spec, bytes) {
  const port = await freePort();
  const srv = await launch(name, port, spec(port), path.join(OUT, 'logs', `heads-${name}.log`),
    { cpu: CFG.serverCpu, timeoutMs: 10000, pollMs: 5 });
  try {
    await sendHeads(port, bytes, 1); // warm: pages, the read buffer
    const t0 = cpuTicks(srv.pid), n0 = cpuNs(srv.pid);
    await sendHeads(port, bytes, CFG.heads);
    const ticks = cpuTicks(srv.pid) - t0, n1 = cpuNs(srv.pid);
    return { cpu_s: ticks / CLK_TCK, cpu_ns_s: n0 === null || n1 === null ? null : (n1 - n0) / 1e9 };
  } finally {
    await stopServer(srv, note);
  }
}

function table(res, machine) {
  const f = (x) => (x === null ? '–' : x.toFixed(3));
  const L = ['## Large heads in small segments (issue 24)', '',
    `${CFG.heads} heads of ${res.head_bytes} bytes on one connection, each in ${CFG.segment}-byte writes (TCP_NODELAY, ` +
    `each read by the server before the next), INGOT_MAX_HEADER_BYTES=${CFG.maxHeaderBytes}; the server's CPU for all of them, ` +
    `median of ${CFG.reps} (min … max), on CPU ${CFG.serverCpu}:`, '',
    '| server | utime+stime s | min | max | schedstat s |', '|---|---|---|---|---|'];
  for (const name of ['floor', 'ingot']) {
    const r = res.runs[name];
    if (!r.length) { L.push(`| ${name} | – | – | – | – |`); continue; }
    const t = stats(r.map((x) => x.cpu_s));
    const ns = r.every((x) => x.cpu_ns_s !== null) ? stats(r.map((x) => x.cpu_ns_s)).median : null;
    L.push(`| ${name} | ${f(t.median)} | ${f(t.min)} | ${f(t.max)} | ${f(ns)} |`);
  }
  if (res.ratio !== null) L.push('', `ingot / floor (schedstat where there is one, else utime+stime): ${res.ratio.toFixed(2)}× (target: at most 1.5×).`);
  L.push('', loadText(machine), '');
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

async function main() {
  const started = Date.now();
  const machine = machineBase();
  const bytes = head();
  const floor = floorBinary();
  const servers = {
    floor: (port) => ({ argv: [floor.bin], env: { PORT: String(port), HOST: '127.0.0.1' } }),
    ingot: (port) => ({ argv: [CFG.service], env: { PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '1',
      INGOT_MAX_HEADER_BYTES: String(CFG.maxHeaderBytes) } }),
  };
  const res = { cfg: CFG, head_bytes: bytes.length, runs: { floor: [], ingot: [] }, ratio: null };
  for (let rep = 0; rep < CFG.reps; rep++) {
    for (const name of ['floor', 'ingot']) { // interleaved, so a busy spell hits both
      log(`rep ${rep + 1}: ${name}`);
      try {
        res.runs[name].push(await measure(name, servers[name], bytes));
      } catch (e) {
        note(`rep ${rep + 1}: ${name}: ${e.message}`);
      }
    }
  }
  const med = (name, key) => (res.runs[name].length && res.runs[name].every((x) => x[key] !== null)
    ? stats(res.runs[name].map((x) => x[key])).median : null);
  const key = med('floor', 'cpu_ns_s') !== null && med('ingot', 'cpu_ns_s') !== null ? 'cpu_ns_s' : 'cpu_s';
  if (med('floor', key) && med('ingot', key) !== null) res.ratio = med('ingot', key) / med('floor', key);
  machine.loadavg_end = os.loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  publish('heads', table(res, machine), res, SECTION_BEGIN, SECTION_END, log);
  floor.cleanup();
  return res;
}

benchMain(module, main, { clientCpu: CFG.clientCpu, log, cleanup: () => killAll('SIGKILL') });
