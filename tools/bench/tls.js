// tls.js: the TLS half of `make bench`. ingot over HTTPS, with each TLS
// backend built (build/bin/service: BearSSL; build/bin/service-mbedtls), against
// nginx with the same ECDSA P-256 certificate and the same suite. Each server
// alone on one CPU, the clients pinned to the other:
//   - HTTPS GET /health on keep-alive connections (wrk -t1, c50 and c100):
//     req/s and the server's CPU time per request (/proc schedstat);
//   - full handshakes (openssl s_time -new, several at once, no resumption
//     possible), ECDHE over X25519 and over P-256: handshakes/s and the
//     server's CPU time per handshake;
//   - the binaries: bytes the TLS library, net/tls and the trust anchors add,
//     from a link map of the same link (relinked in a temporary directory).
// Both sides are pinned to TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256: nginx by its
// configuration, the clients (wrk, s_time, s_client) by an OpenSSL config
// (OPENSSL_CONF); what each server negotiated is checked with s_client first.
// Its table goes to stdout, build/bench/tls.{md,json} and into
// build/bench/results.md. A measurement, never a test: a missed target does
// not fail it. `node tools/bench/tls.js` runs it alone.
//
// Knobs (environment), shared with bench.js: BENCH_SECONDS (3), BENCH_REPS (3),
// BENCH_WARMUP (1), BENCH_RETRIES (2), BENCH_RETRY_BUDGET (12 here),
// BENCH_SERVICE, BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1); its own:
// BENCH_SERVICE_MBEDTLS (build/bin/service-mbedtls), BENCH_TLS_SERVERS
// (bearssl,mbedtls,nginx), BENCH_TLS_CONNS (50,100), BENCH_TLS_HS_CLIENTS (4
// s_time processes at once), BENCH_NOTLS_BIN (a build without TLS, for its size).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, logger, killAll, onSignals, run, freePort,
  cpuTicks, cpuNs, coreTicks, alive, launch, session, wrkRun, retrier, runLine, pick, fmt, cell, ratio,
  machineBase, loadText, warnLoad, rotate, disturbedLegend, pushNotes, intoResults, nginxHead,
} = require('./lib');

const env = process.env;
const { timing, cores } = sharedCfg(12);
const CFG = {
  ...timing,
  conns: (env.BENCH_TLS_CONNS || '50,100').split(',').map(Number).filter((c) => c > 0),
  hsClients: num(env.BENCH_TLS_HS_CLIENTS, 4),
  ...cores,
  servers: (env.BENCH_TLS_SERVERS || 'bearssl,mbedtls,nginx').split(',').map((s) => s.trim()),
};
const SUITE = 'ECDHE-ECDSA-AES128-GCM-SHA256';
const BODY = '{"status":"ok"}';
const GROUPS = {
  x25519: { label: 'X25519', openssl: 'X25519:P-256', tempKey: /X25519/ },
  p256: { label: 'P-256', openssl: 'P-256', tempKey: /prime256v1|P-256/ },
};
const { notes, log, note } = logger('tls');
const retry = retrier(CFG.retryBudget, CFG.retries, log);
const SECTION_BEGIN = '<!-- tls.js: begin -->';
const SECTION_END = '<!-- tls.js: end -->';

const TESTS = [
  ...CFG.conns.map((c) => ({ id: `keepalive-c${c}`, label: `HTTPS /health keep-alive c${c}`, kind: 'keepalive', conns: c })),
  ...Object.keys(GROUPS).map((g) => ({
    id: `handshake-${g}`, label: `full handshake, ECDHE ${GROUPS[g].label}`, kind: 'handshake', group: g,
  })),
];

// ---- files: certificate, client configs, copies of the binaries ------------
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-bench-tls-'));
function cleanup() {
  killAll('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
}
process.on('exit', cleanup);

const CERT = path.join(work, 'cert.pem');
const KEY = path.join(work, 'key.pem');
function makeCertificate() {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', KEY, '-out', CERT, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
}
// The clients' side of the pin. For TLS 1.2 the groups also name the curves
// the client accepts in the certificate, so P-256 stays in the X25519 list
// (after it: the servers take the client's first choice).
function clientConf(group) {
  const file = path.join(work, `client-${group}.cnf`);
  fs.writeFileSync(file, `# written by tools/bench/tls.js
openssl_conf = ingot_bench
[ingot_bench]
ssl_conf = ingot_bench_ssl
[ingot_bench_ssl]
system_default = ingot_bench_client
[ingot_bench_client]
MinProtocol = TLSv1.2
MaxProtocol = TLSv1.2
CipherString = ${SUITE}
Groups = ${GROUPS[group].openssl}
`);
  return file;
}
const CONF = Object.fromEntries(Object.keys(GROUPS).map((g) => [g, null]));

// ---- the servers -------------------------------------------------------------
const BINS = {
  bearssl: env.BENCH_SERVICE || path.join(ROOT, 'build', 'bin', 'service'),
  mbedtls: env.BENCH_SERVICE_MBEDTLS || path.join(ROOT, 'build', 'bin', 'service-mbedtls'),
};
const copies = {};
function nginxConf(port) {
  const dir = path.join(OUT, 'nginx-tls');
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const conf = `${nginxHead('tls.js', dir, port)}  client_body_temp_path ${tmp};
  ssl_protocols TLSv1.2;
  ssl_ciphers ${SUITE};
  ssl_ecdh_curve X25519:prime256v1;
  ssl_session_cache off;
  ssl_session_tickets off;
  server {
    listen 127.0.0.1:${port} ssl backlog=4096;
    ssl_certificate ${CERT};
    ssl_certificate_key ${KEY};
    location = /health { default_type application/json; return 200 '${BODY}'; }
    location / { return 404; }
  }
}
`;
  const file = path.join(dir, `nginx-${port}.conf`);
  fs.writeFileSync(file, conf);
  return file;
}
const SERVERS = {
  bearssl: { title: 'ingot BearSSL', ingot: true },
  mbedtls: { title: 'ingot mbedtls', ingot: true },
  nginx: { title: 'nginx' },
};
function command(name, port) {
  if (name === 'nginx') {
    const file = nginxConf(port);
    return { argv: ['nginx', '-e', 'stderr', '-p', path.dirname(file), '-c', file], env: {} };
  }
  return {
    argv: [copies[name]],
    env: {
      INGOT_THREADS: '1', HOST: '127.0.0.1', PORT: '0', INGOT_TLS_PORT: String(port),
      INGOT_TLS_CERT: CERT, INGOT_TLS_KEY: KEY,
    },
  };
}
function nginxHasSsl() {
  const r = spawnSync('nginx', ['-V'], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`.includes('--with-http_ssl_module');
}

const starts = {};
async function startServer(name, rep) {
  const port = await freePort();
  const k = `${name}-rep${rep + 1}`;
  starts[k] = (starts[k] || 0) + 1;
  const logFile = path.join(OUT, 'logs', `tls-${k}${starts[k] > 1 ? `-start${starts[k]}` : ''}.log`);
  const srv = await launch(name, port, command(name, port), logFile,
    { cpu: CFG.serverCpu, timeoutMs: 10000, pollMs: 2 });
  srv.logFile = logFile;
  return srv;
}

// ---- checks before measuring: the body, and what each group negotiates ------
async function verify(srv) {
  const out = {};
  const r = await run('curl', ['-sk', '--tls-max', '1.2', '--ciphers', SUITE, '--max-time', '5',
    `https://127.0.0.1:${srv.port}/health`]);
  out.health = r.code === 0 && r.out === BODY ? 'ok' : `curl exit ${r.code}: ${JSON.stringify(r.out.slice(0, 80))} ${r.err.trim()}`;
  if (out.health !== 'ok') note(`${srv.name} GET /health over TLS: ${out.health}`);
  for (const g of Object.keys(GROUPS)) {
    const s = await run('openssl', ['s_client', '-connect', `127.0.0.1:${srv.port}`, '-servername', 'localhost'],
      { env: { ...env, OPENSSL_CONF: CONF[g] } });
    const text = s.out + s.err;
    const proto = (/^\s*Protocol\s*:\s*(\S+)/m.exec(text) || [])[1] || '?';
    const suite = (/Cipher is (\S+)/.exec(text) || [])[1] || '?';
    const key = ((/Server Temp Key: ([^\n]+)/.exec(text) || [])[1] || '?').trim();
    out[g] = `${proto} ${suite} ${key}`;
    if (suite !== SUITE || !GROUPS[g].tempKey.test(key)) {
      note(`${srv.name} negotiated ${out[g]} when offered ${SUITE} with ${GROUPS[g].openssl} only`);
    }
  }
  return out;
}

// ---- the two measurements ------------------------------------------------------
// wrk has no TLS options: OPENSSL_CONF reaches it through the environment it
// inherits (lib's run() passes ours), set only while it runs.
async function withClientConf(group, fn) {
  const saved = env.OPENSSL_CONF;
  env.OPENSSL_CONF = CONF[group];
  try { return await fn(); } finally {
    if (saved === undefined) delete env.OPENSSL_CONF; else env.OPENSSL_CONF = saved;
  }
}
const serverUs = (m, count) => {
  if (!count || m.server_died) return null;
  const ns = m.ns !== null ? m.ns : (m.ticks / CLK_TCK) * 1e9;
  return ns / count / 1000;
};
async function keepalive(srv, t, seconds) {
  const m = await withClientConf('p256', () => wrkRun(srv.pid, CFG, ['-t1', '-c', String(t.conns), '-d', `${seconds}s`,
    '--timeout', '10s', '--latency', `https://127.0.0.1:${srv.port}/health`], true));
  return {
    ...m.w, cpu_us_per_req: serverUs({ ...m, server_died: !m.ok }, m.w.requests),
    foreign_share: m.foreign_share, client_foreign_share: m.client_foreign_share, ...m.end,
  };
}
// hsClients s_time processes at once, each doing full handshakes one after
// the other for `seconds`; the server's CPU time from /proc over the window.
async function handshakes(srv, t, seconds) {
  const ns0 = cpuNs(srv.pid);
  const ticks0 = cpuTicks(srv.pid);
  const core0 = coreTicks(CFG.serverCpu);
  const t0 = Date.now();
  const runs = await Promise.all(Array.from({ length: CFG.hsClients }, () => run('taskset', ['-c', String(CFG.clientCpu),
    'openssl', 's_time', '-new', '-connect', `127.0.0.1:${srv.port}`, '-cipher', SUITE, '-time', String(seconds)],
  { env: { ...env, OPENSSL_CONF: CONF[t.group] } })));
  const wallTicks = ((Date.now() - t0) / 1000) * CLK_TCK;
  const ok = alive(srv.pid);
  const ns1 = ok ? cpuNs(srv.pid) : null;
  const ticks = ok ? cpuTicks(srv.pid) - ticks0 : 0;
  const core1 = coreTicks(CFG.serverCpu);
  let count = 0;
  const errors = [];
  for (const r of runs) {
    const c = /(\d+) connections in [\d.]+s;/.exec(r.out);
    if (c) count += Number(c[1]);
    if (r.code !== 0 || !c) errors.push(`s_time exit ${r.code}: ${(r.err || r.out).trim().split('\n').pop()}`);
  }
  const m = { ns: ns0 !== null && ns1 !== null ? ns1 - ns0 : null, ticks, server_died: !ok };
  return {
    requests: count, rps: count / (wallTicks / CLK_TCK), cpu_us_per_req: serverUs(m, count),
    errors: errors.length, non2xx: 0, server_died: !ok, s_time_errors: errors.length ? errors : undefined,
    foreign_share: Number((Math.max(0, core1.busy - core0.busy - ticks) / wallTicks).toFixed(3)),
    client_foreign_share: null,
  };
}

async function benchServer(name, rep, res) {
  await session(name, rep, () => startServer(name, rep), note, async (first, current) => {
    if (rep === 0) res.verification[name] = await verify(first);
    if (CFG.warmupSeconds > 0) {
      await withClientConf('p256', () => run('taskset', ['-c', String(CFG.clientCpu), 'wrk', '-t1', '-c', '10', '-d',
        `${CFG.warmupSeconds}s`, `https://127.0.0.1:${first.port}/health`]));
    }
    for (const t of TESTS) {
      const srv = await current(t.label);
      const m = await retry.measure(srv.pid, rep, `${name} ${t.label}`,
        () => (t.kind === 'keepalive' ? keepalive(srv, t, CFG.seconds) : handshakes(srv, t, CFG.seconds)));
      ((res.runs[name] ||= {})[t.id] ||= []).push(m);
      const line = runLine(m, name, 8, t.label, 34);
      log(`${line.text}${line.bad}`);
    }
  });
}

// ---- bytes in the binaries, from a link map -------------------------------------
// The Makefile's own link command (make -n), run again with -Map into work/.
function linkCommand(bin, tls) {
  const build = path.dirname(path.dirname(bin));
  const r = spawnSync('make', ['-n', '-B', '--no-print-directory', `BUILD=${build}`, `TLS=${tls}`, bin],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  const suffix = ` -o ${bin}`;
  return (r.stdout || '').split('\n').find((l) => l.endsWith(suffix) && / -static /.test(l)) || null;
}
// Kept input sections that take bytes in the file, summed by where they came from.
const KINDS = [
  ['bearssl', /libbearssl\.a\(/], ['mbedtls', /libmbed(tls|x509|crypto)\.a\(/],
  ['anchors', /\/gen\/anchors\.o$/], ['net/tls', /\/obj[^/]*\/net\/tls\/[^/]+\.o$/],
  ['libc', /\/musl\/|libc\.a|crt\w*\.o$/],
];
function parseMap(text) {
  const sum = { bearssl: 0, mbedtls: 0, anchors: 0, 'net/tls': 0, libc: 0, rest: 0 };
  const members = new Set();
  const lines = text.split('\n');
  let i = lines.findIndex((l) => l.startsWith('Linker script and memory map'));
  let out = null;
  let pending = null;
  for (i++; i > 0 && i < lines.length; i++) {
    const l = lines[i];
    const o = /^(\.\S+|\/DISCARD\/)(\s+0x[0-9a-f]+\s+0x[0-9a-f]+)?/.exec(l);
    if (o) { out = o[1]; pending = null; continue; }
    let m = /^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$/.exec(l);
    if (!m && pending) {
      const n = /^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$/.exec(l);
      if (n) m = [l, pending, n[1], n[2], n[3]];
    }
    pending = null;
    if (!m) {
      const only = /^ (\.\S+)$/.exec(l);
      if (only) pending = only[1];
      continue;
    }
    if (!out || !/^\.(text|rodata|data|tdata|init|fini|init_array|fini_array|eh_frame|gcc_except_table|got)/.test(out)) continue;
    const size = parseInt(m[3], 16);
    if (!size) continue;
    const file = m[4].trim();
    const kind = (KINDS.find(([, re]) => re.test(file)) || ['rest'])[0];
    sum[kind] += size;
    const lib = /libbearssl\.a\((\w+)\.o\)/.exec(file);
    if (lib) members.add(lib[1]);
  }
  return { sum, bearsslMembers: [...members].sort() };
}
function binarySizes(name) {
  const bin = BINS[name];
  if (!fs.existsSync(bin)) return null;
  const out = { bytes: fs.statSync(bin).size };
  const cmd = linkCommand(bin, name);
  if (!cmd) { note(`${name}: no link command from make -n for ${bin}: no breakdown`); return out; }
  const relinked = path.join(work, `${name}.relinked`);
  const map = path.join(work, `${name}.map`);
  const r = spawnSync('sh', ['-c', `${cmd.slice(0, -(` -o ${bin}`).length)} -o '${relinked}' -Wl,-Map='${map}'`],
    { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) { note(`${name}: relinking with a map failed: ${r.stderr.trim().split('\n')[0]}`); return out; }
  const relinkedBytes = fs.statSync(relinked).size;
  if (relinkedBytes !== out.bytes) {
    note(`${name}: the objects in the build tree link to ${relinkedBytes} bytes, ${bin} has ${out.bytes}: ` +
      'the breakdown is of the build tree as it is now');
  }
  Object.assign(out, parseMap(fs.readFileSync(map, 'utf8')));
  return out;
}
function sizes() {
  const s = {};
  for (const name of ['bearssl', 'mbedtls']) if (CFG.servers.includes(name)) s[name] = binarySizes(name);
  if (env.BENCH_NOTLS_BIN && fs.existsSync(env.BENCH_NOTLS_BIN)) s.notls = { bytes: fs.statSync(env.BENCH_NOTLS_BIN).size };
  return s;
}

// ---- the table -----------------------------------------------------------------
const kib = (x) => (x / 1024).toFixed(1);
const one = (x) => (x === null || x === undefined ? null : { median: x, min: x, max: x, n: 1 });

function buildRows(res) {
  const S = res.servers;
  const rows = [];
  const pickRun = (s, id, key) => pick((res.runs[s] || {})[id] || [], key);
  for (const t of TESTS) {
    const hs = t.kind === 'handshake';
    const rps = Object.fromEntries(S.map((s) => [s, pickRun(s, t.id, 'rps')]));
    const cpu = Object.fromEntries(S.map((s) => [s, pickRun(s, t.id, 'cpu_us_per_req')]));
    rows.push({ test: t.label, metric: hs ? 'handshakes/s' : 'req/s', vals: rps, f: fmt.rps });
    rows.push({
      test: t.label, metric: hs ? 'server CPU µs/handshake' : 'server CPU µs/req', vals: cpu, f: fmt.us,
      target: hs ? null : { text: 'ingot ≤ nginx', ok: (v) => v.bearssl <= v.nginx, needs: ['bearssl', 'nginx'] },
    });
    // What one core could do if the clients kept up: 10⁶ ÷ CPU µs.
    const perCore = (x) => (x ? { ...x, median: 1e6 / x.median, min: 1e6 / x.max, max: 1e6 / x.min } : null);
    if (hs) rows.push({ test: t.label, metric: 'one core\'s capacity/s', vals: Object.fromEntries(S.map((s) => [s, perCore(cpu[s])])), f: fmt.rps });
  }
  const z = res.sizes;
  const size = (f) => Object.fromEntries(['bearssl', 'mbedtls'].map((s) => [s, z[s] ? one(f(z[s])) : null]));
  const part = (k) => (x) => (x.sum ? x.sum[k] / 1024 : null);
  rows.push({ test: 'binary (static, stripped)', metric: 'KiB', vals: size((x) => x.bytes / 1024), f: kib1 });
  rows.push({
    test: '  TLS library in it', metric: 'KiB',
    vals: { bearssl: z.bearssl ? one(part('bearssl')(z.bearssl)) : null, mbedtls: z.mbedtls ? one(part('mbedtls')(z.mbedtls)) : null },
    f: kib1, target: { text: 'BearSSL ≤ 150 KiB', ok: (v) => v.bearssl <= 150, needs: ['bearssl'] },
  });
  rows.push({ test: '  net/tls (the glue)', metric: 'KiB', vals: size(part('net/tls')), f: kib1 });
  rows.push({
    test: '  trust anchors (the form the backend uses)', metric: 'KiB', vals: size(part('anchors')), f: kib1,
    target: { text: 'BearSSL form ≤ 80 KiB', ok: (v) => v.bearssl <= 80, needs: ['bearssl'] },
  });
  rows.push({
    test: 'binary − TLS library − net/tls − anchors', metric: 'KiB',
    vals: size((x) => (x.sum ? (x.bytes - x.sum.bearssl - x.sum.mbedtls - x.sum.anchors - x.sum['net/tls']) / 1024 : null)),
    f: kib1,
    // Issue 2's budget: "stripped binary <= 256 KiB before TLS".
    target: { text: 'before TLS ≤ 256 KiB', ok: (v) => v.bearssl <= 256, needs: ['bearssl'] },
  });
  if (z.notls) rows.push({ test: 'binary without TLS (BENCH_NOTLS_BIN)', metric: 'KiB', vals: { bearssl: one(z.notls.bytes / 1024) }, f: kib1 });
  for (const r of rows) {
    if (!r.target) { r.verdict = ''; continue; }
    if (!r.target.needs.every((s) => r.vals[s])) { r.verdict = 'n/a'; continue; }
    const med = Object.fromEntries(r.target.needs.map((s) => [s, r.vals[s].median]));
    r.verdict = r.target.ok(med) ? 'PASS' : 'MISS';
    if (r.vals.bearssl && r.vals.bearssl.bad) r.verdict = 'MISS (errors)';
  }
  return rows;
}
function kib1(x) { return x.toFixed(1); }

function renderMarkdown(res, rows) {
  const S = res.servers;
  const m = res.machine;
  const L = [];
  L.push('## TLS');
  L.push('');
  L.push(`Machine: ${m.cpu}, ${m.kernel}, nproc ${m.nproc}; ${loadText(m)}`);
  L.push(`Tools: ${m.wrk}; ${m.nginx}; ${m.openssl}`);
  L.push(`Method: each server alone on CPU ${CFG.serverCpu} (ingot with INGOT_THREADS=1, nginx one process), the clients ` +
    `on CPU ${CFG.clientCpu}; TLS 1.2 ${SUITE}, one ECDSA P-256 certificate for all. Keep-alive: \`wrk -t1\` over https, ` +
    `its connections' handshakes included. Full handshakes: ${CFG.hsClients} \`openssl s_time -new\` at once (no ` +
    'session is ever offered), handshake only, no request. CPU µs = the server\'s schedstat CPU time over the run ÷ ' +
    `requests or handshakes. ${CFG.reps} reps × ${CFG.seconds} s, server order rotated; cells are median (min–max). ` +
    `Run at ${res.started}.`);
  L.push('');
  const hdr = ['test', 'metric', ...S.map((s) => SERVERS[s].title)];
  const ratios = S.includes('nginx') ? S.filter((s) => SERVERS[s].ingot) : [];
  hdr.push(...ratios.map((s) => `${s}/nginx`), 'target', 'verdict');
  L.push(`| ${hdr.join(' | ')} |`);
  L.push(`|${hdr.map((h, i) => (i < 2 || h === 'target' || h === 'verdict' ? '---' : '--:')).join('|')}|`);
  for (const r of rows) {
    if (!S.some((s) => r.vals[s])) continue;
    const cells = [r.test, r.metric, ...S.map((s) => cell(r.vals[s], r.f))];
    cells.push(...ratios.map((s) => { const x = ratio(r.vals[s], r.vals.nginx); return x === null ? '–' : fmt.x(x); }));
    cells.push(r.target ? r.target.text : '', r.verdict);
    L.push(`| ${cells.join(' | ')} |`);
  }
  L.push('');
  L.push('– not measured or not applicable. † some run had errors or a server exit (see tls.json). ' + disturbedLegend(CFG));
  L.push('Handshakes/s is what the clients reached: openssl s_time spends about as much CPU on a handshake as the ' +
    'server, so a fast server is client-bound there; server CPU µs/handshake is the comparable number.');
  const neg = Object.entries(res.verification).map(([s, v]) => `${SERVERS[s].title}: ${Object.keys(GROUPS).map((g) => v[g]).join(' / ')}`);
  if (neg.length) L.push(`Negotiated (s_client, X25519 list / P-256 list): ${neg.join('; ')}.`);
  const z = res.sizes;
  if (z.bearssl && z.bearssl.bearsslMembers) {
    const impl = z.bearssl.bearsslMembers.filter((x) => /^(ec_|ecdsa_|aes_|ghash_|chacha20_|poly1305_|x25519|sha2|rsa_)/.test(x));
    L.push(`BearSSL objects linked for curves, ciphers and hashes: ${impl.join(', ')}.`);
  }
  if (z.bearssl && z.bearssl.sum) {
    L.push('Bytes from a link map of the binary\'s own link command: input sections kept in .text/.rodata/.data* ' +
      `(the BearSSL binary's library count includes the SHA-256 app/service.c uses). BearSSL binary: ${kib(z.bearssl.sum.rest)} KiB ` +
      `runtime+app, ${kib(z.bearssl.sum.libc)} KiB musl.`);
  }
  for (const s of ['bearssl', 'mbedtls']) {
    if (z[s] && z[s].sum && z[s].sum.anchors === 0) {
      L.push(`The ${SERVERS[s].title} binary holds no trust anchors: nothing in it reaches the client role's trust store, ` +
        'so --gc-sections dropped them (tests/anchors/run measures what each form adds).');
    }
  }
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

function versions() {
  const first = (cmd, args) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    return `${r.stdout || ''}${r.stderr || ''}`.split('\n').find((l) => l.trim()) || '?';
  };
  return {
    ...machineBase(),
    wrk: first('wrk', ['--version']).replace(/ Copyright.*/, ''),
    nginx: first('nginx', ['-v']), openssl: first('openssl', ['version']),
  };
}

async function main() {
  const t0 = Date.now();
  fs.mkdirSync(OUT, { recursive: true });
  makeCertificate();
  for (const g of Object.keys(GROUPS)) CONF[g] = clientConf(g);
  const servers = CFG.servers.filter((s) => {
    if (!SERVERS[s]) { note(`unknown server ${s} ignored`); return false; }
    if (s === 'nginx') {
      if (nginxHasSsl()) return true;
      note('nginx without http_ssl_module: no nginx numbers');
      return false;
    }
    if (!fs.existsSync(BINS[s])) { note(`${BINS[s]} missing: no ${SERVERS[s].title} numbers`); return false; }
    copies[s] = path.join(work, `service-${s}`);
    fs.copyFileSync(BINS[s], copies[s]);
    fs.chmodSync(copies[s], 0o755);
    return true;
  });
  const res = {
    started: new Date().toISOString(), machine: versions(), config: CFG, suite: SUITE,
    binaries: Object.fromEntries(Object.keys(copies).map((s) => [s, { path: BINS[s], mtime: fs.statSync(BINS[s]).mtime.toISOString() }])),
    servers, runs: {}, verification: {}, sizes: sizes(), notes,
  };
  warnLoad(res.machine, note);
  const failed = new Set();
  for (let rep = 0; rep < CFG.reps && servers.length; rep++) {
    const order = rotate(servers, rep).filter((s) => !failed.has(s));
    log(`rep ${rep + 1}/${CFG.reps}: ${order.join(' → ')}`);
    for (const name of order) {
      const before = notes.length;
      await benchServer(name, rep, res);
      // A server that does not serve TLS at all is not started again.
      if (!res.runs[name] && notes.length > before) failed.add(name);
    }
  }
  res.machine.loadavg_end = os.loadavg();
  if (retry.disturbed.length) {
    note(`${retry.disturbed.length} runs kept although other processes took part of a bench core: ` +
      `${retry.disturbed.slice(0, 3).map((d) => d.text).join('; ')}`);
  }
  res.elapsed_s = (Date.now() - t0) / 1000;
  const rows = buildRows(res);
  const md = renderMarkdown(res, rows);
  res.table = rows.map((r) => ({
    test: r.test.trim(), metric: r.metric, target: r.target ? r.target.text : null, verdict: r.verdict || null,
    values: Object.fromEntries(Object.entries(r.vals).filter(([, v]) => v)),
  }));
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'tls.md'), md);
  fs.writeFileSync(path.join(OUT, 'tls.json'), `${JSON.stringify(res, null, 1)}\n`);
  intoResults(md, SECTION_BEGIN, SECTION_END);
  process.stdout.write(`\n${md}`);
  log(`wrote build/bench/tls.{md,json} and its section of results.md (${res.elapsed_s.toFixed(0)} s)`);
  return res;
}

module.exports = {
  main: () => main().catch((e) => { log(`failed: ${e.stack}`); return null; }),
};

if (require.main === module) {
  // Alone, it pins itself to the client CPU as `run` pins bench.js.
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(CFG.clientCpu), String(process.pid)], { stdio: 'ignore' });
  } catch { log(`could not pin this process to CPU ${CFG.clientCpu}`); }
  onSignals(log, () => killAll('SIGTERM'));
  module.exports.main().then((r) => process.exit(r ? 0 : 1));
}
