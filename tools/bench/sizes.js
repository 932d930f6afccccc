// tools/bench/sizes.js: what a binary costs (issue 24's "pay for what you
// use"): the sizes of the reference service, the scaffold's hello app
// (tools/new-service) and the todo app (tests/apps/todo), each built out of
// the tree against this ingot; the reference service's idle RSS with two
// threads after "listening" and one GET /health; and the RSS one idle
// keep-alive connection adds, at 9,000 of them. Prints a table and appends
// it to build/bench/results.md. It measures; it gates nothing.
//
// Knobs: SIZES_SERVICE (build/bin/service), SIZES_RUNS (3), SIZES_CONNS
// (9000), SIZES_APPS (1; 0 skips building the two apps).
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const env = process.env;
const SERVICE = env.SIZES_SERVICE || path.join(root, 'build', 'bin', 'service');
const RUNS = Number(env.SIZES_RUNS || 3);
const CONNS = Number(env.SIZES_CONNS || 9000);

const kib = (b) => (b / 1024).toFixed(1);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[s.length >> 1] : NaN; };
const rssKiB = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// An app out of the tree, built by `make` against this ingot: its binary's path.
function buildApp(dir, make) {
  make();
  execFileSync('make', ['--no-print-directory', '-C', dir], { env: { ...env, INGOT_ROOT: root }, stdio: 'ignore' });
  const bin = path.join(dir, 'build', 'bin');
  return path.join(bin, fs.readdirSync(bin).find((f) => !f.endsWith('.map')));
}

// The service on a free port with two threads, once it has logged "listening".
function start(bin) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [], { env: { PATH: env.PATH, PORT: '0', HOST: '127.0.0.1', INGOT_THREADS: '2' },
      stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /"msg":"listening"[^\n]*"port":(\d+)/.exec(out);
      if (m) { child.stdout.removeAllListeners('data'); child.stdout.resume(); resolve({ child, port: Number(m[1]) }); }
    });
    child.once('exit', () => reject(new Error(`${bin} exited before listening:\n${out}`)));
  });
}

// One GET /health on sock, kept alive: resolves when the whole answer is in.
function health(sock) {
  return new Promise((resolve, reject) => {
    let got = '';
    const on = (c) => {
      got += c;
      const end = got.indexOf('\r\n\r\n');
      const len = /content-length:\s*(\d+)/i.exec(got);
      if (end >= 0 && len && got.length >= end + 4 + Number(len[1])) { sock.off('data', on); resolve(); }
    };
    sock.on('data', on);
    sock.once('error', reject);
    sock.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  });
}
const connect = (port) => new Promise((resolve, reject) => {
  const s = net.connect(port, '127.0.0.1', () => resolve(s));
  s.once('error', reject);
});

async function idleRss(bin) {
  const { child, port } = await start(bin);
  try {
    const s = await connect(port);
    await health(s);
    s.destroy();
    await pause(300); // the close reaches the server and is handled
    return rssKiB(child.pid);
  } finally { child.kill('SIGKILL'); }
}

// RSS per idle keep-alive connection: CONNS connections that each made one
// request, against the same server after one. Opened BATCH at a time, so
// that what requests in flight hold (read buffers, contexts, whose pools
// keep their high-water mark) adds little to what an idle one holds.
const BATCH = 20;
async function perConnection(bin) {
  const { child, port } = await start(bin);
  const socks = [];
  try {
    const first = await connect(port);
    await health(first);
    socks.push(first);
    await pause(300);
    const before = rssKiB(child.pid);
    for (let i = 1; i < CONNS; i += BATCH) {
      const batch = await Promise.all(Array.from({ length: Math.min(BATCH, CONNS - i) }, () => connect(port)));
      await Promise.all(batch.map(health));
      socks.push(...batch);
    }
    await pause(300);
    return (rssKiB(child.pid) - before) / (CONNS - 1);
  } finally {
    for (const s of socks) s.destroy();
    child.kill('SIGKILL');
  }
}

async function main() {
  const rows = [];
  const size = (label, bin) => rows.push([`binary: ${label}`, 'KiB', kib(fs.statSync(bin).size)]);
  size('reference service (build/bin/service)', SERVICE);
  if (env.SIZES_APPS !== '0') {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-sizes-'));
    try {
      const hello = path.join(tmp, 'hello');
      size('scaffold (tools/new-service)', buildApp(hello,
        () => execFileSync(path.join(root, 'tools', 'new-service'), [hello, 'hello'], { stdio: 'ignore' })));
      const todo = path.join(tmp, 'todo');
      size('todo app (tests/apps/todo)', buildApp(todo, () => fs.cpSync(path.join(root, 'tests', 'apps', 'todo'), todo,
        { recursive: true, filter: (src) => path.basename(src) !== 'build' })));
    } finally { fs.rmSync(tmp, { recursive: true, force: true }); }
  }
  const idle = [];
  for (let i = 0; i < RUNS; i++) idle.push(await idleRss(SERVICE));
  rows.push(['idle RSS, 2 threads, after one GET /health', 'KiB', `${median(idle)} (${idle.join(', ')})`]);
  const per = [];
  for (let i = 0; i < RUNS; i++) per.push(await perConnection(SERVICE));
  rows.push([`RSS per idle keep-alive connection at ${CONNS}`, 'KiB', `${median(per).toFixed(3)} (${per.map((x) => x.toFixed(3)).join(', ')})`]);

  const table = ['| what | unit | value (median, runs) |', '|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  console.log(table);
  const out = path.join(root, 'build', 'bench');
  fs.mkdirSync(out, { recursive: true });
  fs.appendFileSync(path.join(out, 'results.md'), `\n## Sizes and memory (tools/bench/sizes.js)\n\n${table}\n`);
}

main().catch((e) => { console.error(e); process.exit(1); });
