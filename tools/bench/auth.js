// auth.js: the door's cost (issue 28), a part of `make bench`. Three parts:
//   1. the door app (tools/bench/door, built by `make bench`: /open, /me
//      behind a bearer JWT and /limited behind a rate limit far above the
//      load, all three answering the same JSON to the same request bytes)
//      served by one process (INGOT_THREADS=1 on BENCH_SERVER_CPU, wrk -t1
//      on BENCH_CLIENT_CPU): the server's CPU per request (utime+stime
//      from /proc/PID/stat, and schedstat's ns) on each route, the three
//      taking turns in rotated order each round, so that the drift of a
//      shared machine falls on all alike. /me repeats one ES256 token (a
//      hit of the per-core token cache after the first); the verdicts are
//      the medians of the rounds' paired differences: /me over /open
//      (target: at most 1 µs) and /limited over /open (at most 1.05×);
//   2. /me with a new ES256 token on each request (door.lua cycles through
//      more tokens than the cache holds): the server's CPU per request, so
//      the verify's cost in a request is seen beside part 3's;
//   3. the verify alone: build/bin/jwtbench (tools/bench/jwtbench.c: net/auth's
//      ig_jwt_verify, no cache) and npm's jose (tools/bench/jwt_jose.mjs:
//      jwtVerify with the key imported once) on the same tokens (HS256,
//      RS256, ES256, ES384), taking turns; µs per verify and the ratio;
//   4. the instructions the door app runs per request on each route of part
//      1 (valgrind's lackey: all the process's user-space instructions
//      while it answers N2 requests, less those for N1, over N2 − N1; 16
//      pipelined per write on one connection), a count that a shared
//      machine does not move, beside part 1's times, which it does.
// The tokens are minted here with jose (tools/bench's package). Its table
// and a summary of the targets go to stdout, build/bench/auth.{md,json} and
// build/bench/results.md. tools/bench/run starts it (BENCH_AUTH=0 skips
// it); `node tools/bench/auth.js` runs it alone. A measurement, never a test:
// the targets are reported, not enforced.
//
// Knobs (environment): BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_WARMUP
// (1 s); its own: BENCH_AUTH_ROUNDS (7), BENCH_AUTH_SECONDS (2 per run),
// BENCH_AUTH_CONNS (100), BENCH_AUTH_TOKENS (1024 for part 2), BENCH_AUTH_VERIFY_ITERS
// (2000 per token and run in part 3), BENCH_AUTH_VERIFY_REPS (3), BENCH_AUTH_ICOUNT (1; 0
// skips part 4, which needs valgrind: tools/setup bench installs it), BENCH_AUTH_APP
// (tools/bench/door/build/bin/door), BENCH_AUTH_JWTBENCH (build/bin/jwtbench).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const {
  ROOT, OUT, num, sharedCfg, CLK_TCK, sleep, logger, track, killAll, run, freePort, httpRequest, isListening, launch,
  stopServer, wrkRun,
  disturbance, retrier, stats, fmt, machineBase, loadText, pushNotes, publish, benchMain, FOREIGN_MAX,
} = require('./lib');

const HERE = __dirname;
const env = process.env;
const { timing, cores } = sharedCfg(6);
const CFG = {
  warmupSeconds: timing.warmupSeconds,
  ...cores,
  rounds: num(env.BENCH_AUTH_ROUNDS, 7),
  seconds: num(env.BENCH_AUTH_SECONDS, 2),
  conns: num(env.BENCH_AUTH_CONNS, 100),
  tokens: num(env.BENCH_AUTH_TOKENS, 1024),
  verifyIters: num(env.BENCH_AUTH_VERIFY_ITERS, 2000),
  verifyReps: num(env.BENCH_AUTH_VERIFY_REPS, 3),
  icount: env.BENCH_AUTH_ICOUNT !== '0',
  icountN: [160, 1760],
  app: env.BENCH_AUTH_APP || path.join(HERE, 'door', 'build', 'bin', 'door'),
  jwtbench: env.BENCH_AUTH_JWTBENCH || path.join(ROOT, 'build', 'bin', 'jwtbench'),
};
const TARGET_CACHED_US = 1;
const TARGET_LIMIT_RATIO = 1.05;
const ISS = 'https://jose.test'; // what jwtbench.c's policy expects
const AUD = 'ingot';
const SECTION_BEGIN = '<!-- tools/bench/auth.js: begin -->';
const SECTION_END = '<!-- tools/bench/auth.js: end -->';
const { notes, log, note } = logger('bench auth');

let tmpDir = null;
function cleanup() {
  killAll('SIGKILL');
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  tmpDir = null;
}
process.on('exit', cleanup);

// ---- the tokens ------------------------------------------------------------------------
// One key per alg, a JWKS of them all (the oct key's secret included: the
// file is the service's INGOT_JWKS_FILE), the fixture jwtbench and
// jwt_jose.mjs read (tests/auth/jose_mint.mjs's format: the JWKS, then
// "ok AT LABEL TOKEN" lines), the token /me repeats and the tokens part 2
// cycles through. Subject and scope are what /open answers.
async function mint(dir) {
  const { SignJWT, generateKeyPair, exportJWK } = require('jose');
  const now = Math.floor(Date.now() / 1000);
  const keys = [];
  const signers = {};
  for (const [alg, opts] of [['RS256', { modulusLength: 2048 }], ['ES256', {}], ['ES384', {}]]) {
    const { publicKey, privateKey } = await generateKeyPair(alg, opts);
    const jwk = { ...(await exportJWK(publicKey)), kid: `${alg.toLowerCase()}-key`, use: 'sig', alg };
    keys.push(jwk);
    signers[alg] = { key: privateKey, kid: jwk.kid };
  }
  const secret = randomBytes(64);
  keys.push({ kty: 'oct', kid: 'hs-key', k: secret.toString('base64url') });
  signers.HS256 = { key: secret, kid: 'hs-key' };
  // Valid for the bench's whole run, whatever its length.
  const sign = (alg, jti) => {
    const s = signers[alg];
    let j = new SignJWT({ scope: 'reports:read' }).setProtectedHeader({ alg, typ: 'JWT', kid: s.kid })
      .setSubject('user-1').setIssuedAt(now).setIssuer(ISS).setAudience(AUD).setExpirationTime(now + 6 * 3600);
    if (jti !== undefined) j = j.setJti(String(jti));
    return j.sign(s.key);
  };
  const lines = [JSON.stringify({ keys })];
  for (const alg of ['HS256', 'RS256', 'ES256', 'ES384']) lines.push(`ok ${now} ${alg}-with-kid ${await sign(alg)}`);
  const files = { jwks: path.join(dir, 'jwks.json'), fixture: path.join(dir, 'fixture.txt'), tokens: path.join(dir, 'tokens.txt') };
  fs.writeFileSync(files.jwks, `${lines[0]}\n`, { mode: 0o600 });
  fs.writeFileSync(files.fixture, `${lines.join('\n')}\n`, { mode: 0o600 });
  const many = [];
  for (let i = 0; i < CFG.tokens; i++) many.push(await sign('ES256', i));
  fs.writeFileSync(files.tokens, `${many.join('\n')}\n`);
  return { files, cached: await sign('ES256'), many };
}

// ---- parts 1 and 2: the door app -------------------------------------------------------
async function startApp(files) {
  const port = await freePort();
  const extra = { INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', INGOT_LOG_LEVEL: 'warn',
    INGOT_JWKS_FILE: files.jwks, INGOT_JWT_ISSUER: ISS, INGOT_JWT_AUDIENCE: AUD };
  return launch('door', port, { argv: [appCopy], env: extra }, path.join(OUT, 'logs', 'auth-door.log'),
    { cpu: CFG.serverCpu, timeoutMs: 15000, pollMs: 5 });
}

// The routes answer alike and the door does what it should, before any
// number is taken from them.
async function check(srv, tok) {
  const auth = { Authorization: `Bearer ${tok.cached}` };
  const open = await httpRequest(srv.port, '/open', { headers: auth });
  const me = await httpRequest(srv.port, '/me', { headers: auth });
  const limited = await httpRequest(srv.port, '/limited', { headers: auth });
  const fresh = await httpRequest(srv.port, '/me', { headers: { Authorization: `Bearer ${tok.many[0]}` } });
  const none = await httpRequest(srv.port, '/me');
  const bad = [];
  if (open.status !== 200) bad.push(`/open: ${open.status} ${open.body.slice(0, 200)}`);
  if (me.status !== 200 || me.body !== open.body) bad.push(`/me: ${me.status} ${me.body.slice(0, 200)} (/open: ${open.body})`);
  if (limited.status !== 200 || limited.body !== open.body) bad.push(`/limited: ${limited.status} ${limited.body.slice(0, 200)}`);
  if (fresh.status !== 200) bad.push(`/me with part 2's token: ${fresh.status}`);
  if (none.status !== 401) bad.push(`/me without a token: ${none.status}, not 401`);
  if (bad.length) throw new Error(`the door app does not answer as the bench needs: ${bad.join('; ')}`);
}

const TESTS = [
  { id: 'open', label: 'GET /open' },
  { id: 'me', label: 'GET /me, one ES256 token (cached)' },
  { id: 'limited', label: 'GET /limited (rate limit 10⁶/s)' },
];
// Every route gets the same request bytes, the token included: /open and
// /limited ignore it.
const wrkArgs = (srv, test, seconds, tok, files) => {
  const base = ['-t1', '-c', String(CFG.conns), '-d', `${seconds}s`, '--timeout', '10s'];
  if (test.id === 'uncached') {
    return [...base, '-s', path.join(HERE, 'door.lua'), `http://127.0.0.1:${srv.port}/me`, '--', files.tokens];
  }
  return [...base, '-H', `Authorization: Bearer ${tok.cached}`, `http://127.0.0.1:${srv.port}/${test.id}`];
};

async function measure(srv, test, tok, files) {
  const m = await wrkRun(srv.pid, CFG, wrkArgs(srv, test, CFG.seconds, tok, files), true);
  const n = m.w.requests;
  return { requests: n, rps: m.w.rps, ticks: m.ticks, ns: m.ns, bad: m.w.errors + m.w.non2xx, died: !m.ok,
    foreign_share: m.foreign_share, client_foreign_share: m.client_foreign_share, disturbance: disturbance(m),
    us_ticks: n ? (m.ticks / CLK_TCK / n) * 1e6 : null, us_ns: n && m.ns !== null ? m.ns / 1e3 / n : null };
}

// The schedstat figure where the kernel has one, else utime+stime's.
const us = (m) => (m.us_ns !== null ? m.us_ns : m.us_ticks);

async function doorRounds(tok, files) {
  const res = { rounds: [] };
  const retry = retrier(CFG.retryBudget, CFG.retries, log);
  let srv;
  try {
    srv = await startApp(files);
    await check(srv, tok);
    for (const t of [...TESTS, { id: 'uncached' }]) {
      await run('taskset', ['-c', String(CFG.clientCpu), 'wrk', ...wrkArgs(srv, t, CFG.warmupSeconds, tok, files)]);
    }
    log(`${CFG.rounds} rounds of ${CFG.seconds} s runs per route, c${CFG.conns}, the routes' order rotated each round`);
    for (let i = 0; i < CFG.rounds; i++) {
      const r = {};
      const order = [...TESTS.slice(i % TESTS.length), ...TESTS.slice(0, i % TESTS.length)];
      for (const t of order) r[t.id] = await retry.measure(srv.pid, i, `door ${t.id}`, () => measure(srv, t, tok, files));
      // After the three, so that its tokens never push the repeated one
      // out of the cache during theirs.
      r.uncached = await retry.measure(srv.pid, i, 'door uncached', () => measure(srv, { id: 'uncached' }, tok, files));
      r.cached_over_open_us = us(r.me) - us(r.open);
      r.limited_over_open = us(r.limited) / us(r.open);
      r.uncached_over_open_us = us(r.uncached) - us(r.open);
      res.rounds.push(r);
      const bad = ['open', 'me', 'limited', 'uncached'].some((k) => r[k].bad || r[k].died);
      log(`  round ${i + 1}: open ${fmt.us(us(r.open))}, me ${fmt.us(us(r.me))}, limited ${fmt.us(us(r.limited))}, ` +
        `uncached ${fmt.us(us(r.uncached))} µs/req: me − open ${r.cached_over_open_us.toFixed(3)} µs, ` +
        `limited/open ${r.limited_over_open.toFixed(3)}×${bad ? ' (errors/non-2xx)' : ''}`);
    }
    res.disturbed = retry.disturbed.map((d) => d.text);
  } catch (e) {
    note(`door app: ${e.message}`);
  } finally {
    await stopServer(srv, note);
  }
  const col = (k, f) => stats(res.rounds.map((r) => f(r[k])));
  res.per_route = {};
  for (const k of ['open', 'me', 'limited', 'uncached']) {
    res.per_route[k] = { us: col(k, us), us_ticks: col(k, (m) => m.us_ticks), rps: col(k, (m) => m.rps),
      bad: res.rounds.some((r) => r[k].bad || r[k].died) };
  }
  res.cached_over_open_us = stats(res.rounds.map((r) => r.cached_over_open_us));
  res.cached_over_open_us_ticks = stats(res.rounds.map((r) => r.me.us_ticks - r.open.us_ticks));
  res.limited_over_open = stats(res.rounds.map((r) => r.limited_over_open));
  res.limited_over_open_ticks = stats(res.rounds.map((r) => r.limited.us_ticks / r.open.us_ticks));
  res.uncached_over_open_us = stats(res.rounds.map((r) => r.uncached_over_open_us));
  res.schedstat = res.rounds.every((r) => r.open.us_ns !== null);
  return res;
}

// ---- part 3: the verify alone, beside jose ---------------------------------------------
function parseIngot(out) {
  const m = {};
  for (const line of out.split('\n')) {
    const x = /^(\S+)-with-kid\s+([\d.]+)\s+([\d.]+)\s+\(lookup alone ([\d.]+) ns/.exec(line);
    if (x) m[x[1]] = { verify_ns: Number(x[2]), cached_ns: Number(x[3]), lookup_ns: Number(x[4]) };
  }
  return m;
}
function parseJose(out) {
  const m = {};
  for (const line of out.split('\n')) {
    const x = /^(\S+)-with-kid\s+([\d.]+)\s*$/.exec(line);
    if (x) m[x[1]] = { verify_ns: Number(x[2]) };
  }
  return m;
}

async function verifyCompare(files) {
  const res = { reps: [] };
  const pin = ['-c', String(CFG.serverCpu)];
  for (let i = 0; i < CFG.verifyReps; i++) {
    const rep = {};
    const sides = [
      ['ingot', () => run('taskset', [...pin, CFG.jwtbench, files.fixture, String(CFG.verifyIters)]), parseIngot],
      ['jose', () => run('taskset', [...pin, process.execPath, path.join(HERE, 'jwt_jose.mjs'), files.fixture,
        String(CFG.verifyIters)]), parseJose],
    ];
    for (const [name, go, parse] of i % 2 ? sides.reverse() : sides) {
      const r = await go();
      if (r.code !== 0) throw new Error(`${name}: exit ${r.code}: ${(r.err || r.out).trim().slice(-300)}`);
      rep[name] = parse(r.out);
    }
    res.reps.push(rep);
    log(`  verify rep ${i + 1}: ${Object.keys(rep.ingot).map((a) => `${a} ingot ${(rep.ingot[a].verify_ns / 1e3).toFixed(1)} µs, ` +
      `jose ${rep.jose[a] ? (rep.jose[a].verify_ns / 1e3).toFixed(1) : '?'} µs`).join('; ')}`);
  }
  res.algs = {};
  for (const alg of Object.keys(res.reps[0].ingot)) {
    const col = (side, k) => stats(res.reps.map((r) => (r[side][alg] ? r[side][alg][k] / 1e3 : null)));
    const ingot = col('ingot', 'verify_ns');
    const jose = col('jose', 'verify_ns');
    res.algs[alg] = { ingot_us: ingot, jose_us: jose, ingot_cached_us: col('ingot', 'cached_ns'),
      ingot_lookup_us: col('ingot', 'lookup_ns'),
      ratio: stats(res.reps.map((r) => (r.ingot[alg] && r.jose[alg] ? r.ingot[alg].verify_ns / r.jose[alg].verify_ns : null))) };
  }
  return res;
}

// ---- part 4: instructions per request -----------------------------------------------
const statusLines = (text, re) => (text.match(re) || []).length;

// One lackey run of the door app answering n requests to target, 16 in
// each write, the next 16 once the last 16 have begun to come back; the
// process's instruction count.
async function lackey(files, target, tok, n) {
  const port = await freePort();
  const child = track(spawn('valgrind', ['--tool=lackey', '--basic-counts=yes', appCopy], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: env.PATH, INGOT_THREADS: '1', PORT: String(port), HOST: '127.0.0.1', INGOT_LOG_LEVEL: 'warn',
      INGOT_JWKS_FILE: files.jwks, INGOT_JWT_ISSUER: ISS, INGOT_JWT_AUDIENCE: AUD },
  }));
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.on('close', resolve));
  try {
    for (const t0 = Date.now(); !isListening(port);) {
      if (child.exitCode !== null || Date.now() - t0 > 60000) throw new Error(`valgrind: no listener: ${err.slice(-300)}`);
      await sleep(20);
    }
    const one = `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tok}\r\n\r\n`;
    const batch = one.repeat(16);
    await new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port });
      let got = '';
      let sent = 0;
      const more = () => { sent += 16; s.write(batch); };
      s.on('connect', more);
      s.on('data', (d) => {
        got += d.toString('latin1');
        if (statusLines(got, /HTTP\/1\.1 /g) < sent) return;
        if (sent < n) { more(); return; }
        s.destroy();
        const ok = statusLines(got, /HTTP\/1\.1 200 /g);
        if (ok !== n) reject(new Error(`${target}: ${ok} of ${n} answers were 200`));
        else resolve();
      });
      s.on('error', reject);
    });
  } finally {
    try { process.kill(child.pid, 'SIGTERM'); } catch { /* gone */ }
    await exited;
  }
  const m = /guest instrs:\s+([\d,]+)/.exec(err);
  if (!m) throw new Error(`valgrind: no count: ${err.slice(-300)}`);
  return Number(m[1].replace(/,/g, ''));
}

async function instructions(files, tok) {
  if ((await run('valgrind', ['--version'])).code !== 0) {
    note('instructions per request: valgrind is not installed (tools/setup bench installs it); part 4 skipped');
    return null;
  }
  const [n1, n2] = CFG.icountN;
  const res = { n1, n2, per_request: {} };
  for (const t of TESTS) {
    const a = await lackey(files, `/${t.id}`, tok.cached, n1);
    const b = await lackey(files, `/${t.id}`, tok.cached, n2);
    res.per_request[t.id] = (b - a) / (n2 - n1);
    log(`  instructions: ${t.id} ${res.per_request[t.id].toFixed(0)} per request`);
  }
  return res;
}

// ---- the table -------------------------------------------------------------------------
const range = (s, f) => (s ? `${f(s.median)} (${f(s.min)} … ${f(s.max)})` : '–');
const us3 = (x) => x.toFixed(3);
const x3 = (x) => `${x.toFixed(3)}×`;

function table(res) {
  const L = ['## The door (issue 28): JWT and rate limit cost', ''];
  const d = res.door || {};
  const src = d.schedstat ? 'schedstat ns' : 'utime+stime';
  L.push(`The door app (tools/bench/door: /open, /me behind a bearer JWT, /limited behind a rate limit of 10⁶ ` +
    `a second per address; the same JSON body from each, the same request bytes to each) alone on CPU ${CFG.serverCpu} ` +
    `(INGOT_THREADS=1), wrk -t1 -c${CFG.conns} on CPU ${CFG.clientCpu}: the server's CPU per request over a run of ` +
    `${CFG.seconds} s per route and round, ${d.rounds ? d.rounds.length : 0} rounds, the routes' order rotated each ` +
    `round; median (min … max) of the rounds, in µs (${src}; utime+stime in the second column).`);
  L.push('');
  if (d.per_route) {
    L.push('| route | µs/req | µs/req (utime+stime) | req/s |');
    L.push('|---|---|---|---|');
    const label = { open: 'GET /open', me: 'GET /me, one ES256 token repeated (cached)', limited: 'GET /limited',
      uncached: `GET /me, a new ES256 token each request (${CFG.tokens} cycled; uncached)` };
    for (const [k, v] of Object.entries(d.per_route)) {
      L.push(`| ${label[k]} | ${range(v.us, us3)} | ${range(v.us_ticks, us3)} | ${range(v.rps, fmt.rps)}${v.bad ? ' †' : ''} |`);
    }
    L.push('');
    L.push(`Paired per round (${src}; utime+stime): /me cached − /open ${range(d.cached_over_open_us, us3)} µs ` +
      `(${range(d.cached_over_open_us_ticks, us3)}); /limited ÷ /open ${range(d.limited_over_open, x3)} ` +
      `(${range(d.limited_over_open_ticks, x3)}); /me uncached − /open ${range(d.uncached_over_open_us, (x) => x.toFixed(1))} µs.`);
    if (d.disturbed && d.disturbed.length) L.push(`Runs kept with other processes on a bench core (> ${FOREIGN_MAX * 100}%): ${d.disturbed.join(', ')}.`);
    L.push('');
  }
  const ic = res.instructions;
  if (ic) {
    const p = ic.per_request;
    L.push(`Instructions per request (valgrind's lackey, user space, ${ic.n2} requests less ${ic.n1}, 16 pipelined per ` +
      `write on one connection: a count other processes do not move): /open ${p.open.toFixed(0)}, /me cached ${p.me.toFixed(0)} ` +
      `(+${(p.me - p.open).toFixed(0)}), /limited ${p.limited.toFixed(0)} (+${(p.limited - p.open).toFixed(0)}).`);
    L.push('');
  }
  const v = res.verify;
  if (v && v.algs) {
    L.push(`The verify alone, on CPU ${CFG.serverCpu}, µs per verify over ${CFG.verifyIters} verifies of one token, ` +
      `median (min … max) of ${v.reps.length} runs, the two taking turns: net/auth's ig_jwt_verify (tools/bench/jwtbench.c, ` +
      'no cache; BearSSL) and npm\'s jose 5 on Node ' + process.versions.node + ' (jwtVerify, the key imported once; ' +
      'OpenSSL), on the same tokens; the cache hit (ig_jwt_verify_cached: lookup, compare, claims) beside.');
    L.push('');
    L.push('| alg | ingot µs | jose µs | ingot ÷ jose | ingot cache hit µs (lookup alone) |');
    L.push('|---|---|---|---|---|');
    const f = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));
    for (const [alg, a] of Object.entries(v.algs)) {
      L.push(`| ${alg} | ${range(a.ingot_us, f)} | ${range(a.jose_us, f)} | ${range(a.ratio, fmt.x)} | ` +
        `${a.ingot_cached_us ? a.ingot_cached_us.median.toFixed(3) : '–'} (${a.ingot_lookup_us ? a.ingot_lookup_us.median.toFixed(3) : '–'}) |`);
    }
    L.push('');
  }
  L.push('Summary (targets of issue 28):');
  L.push('');
  L.push('| target | measured (median) | |');
  L.push('|---|---|---|');
  for (const s of res.summary) L.push(`| ${s.target} | ${s.measured} | ${s.verdict} |`);
  L.push('');
  L.push(`† errors or non-2xx responses in a run. Machine: ${res.machine.cpu}, ${res.machine.nproc} CPUs; ${loadText(res.machine)}.`);
  pushNotes(L, notes);
  return `${L.join('\n')}\n`;
}

function summary(res) {
  const d = res.door || {};
  const out = [];
  const c = d.cached_over_open_us;
  out.push({ target: `/me with an ES256 token, cached: ≤ ${TARGET_CACHED_US} µs of CPU per request over /open`,
    measured: c ? `${c.median.toFixed(3)} µs` : '–',
    verdict: !c ? 'not measured' : c.median <= TARGET_CACHED_US ? 'met' : 'missed' });
  const l = d.limited_over_open;
  out.push({ target: `a rate limit far above the load: ≤ ${TARGET_LIMIT_RATIO}× the CPU of the route without it`,
    measured: l ? `${l.median.toFixed(3)}×` : '–',
    verdict: !l ? 'not measured' : l.median <= TARGET_LIMIT_RATIO ? 'met' : 'missed' });
  const es = res.verify && res.verify.algs && res.verify.algs.ES256;
  out.push({ target: 'uncached: ingot\'s verify beside jose (reported, no target)',
    measured: es && es.ratio ? `ES256 ${es.ingot_us.median.toFixed(1)} µs vs ${es.jose_us.median.toFixed(1)} µs: ${fmt.x(es.ratio.median)}` : '–',
    verdict: 'reported' });
  return out;
}

// ---- main ------------------------------------------------------------------------------
let appCopy = null;
async function main() {
  const started = Date.now();
  const res = { config: CFG, machine: machineBase(), notes };
  for (const [what, f, how] of [['the door app', CFG.app, 'make bench builds it: make -C tools/bench/door'],
    ['jwtbench', CFG.jwtbench, 'make jwtbench']]) {
    if (!fs.existsSync(f)) throw new Error(`${what} (${f}) is missing (${how})`);
  }
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-bench-auth-'));
  // Copied: a rebuild during the run must not change it.
  appCopy = path.join(tmpDir, 'door');
  fs.copyFileSync(CFG.app, appCopy);
  fs.chmodSync(appCopy, 0o755);
  log(`minting tokens (1 per alg, ${CFG.tokens} ES256 for the uncached runs)`);
  const tok = await mint(tmpDir);
  res.door = await doorRounds(tok, tok.files);
  try {
    res.verify = await verifyCompare(tok.files);
  } catch (e) {
    note(`verify, ingot beside jose: ${e.message}`);
  }
  if (CFG.icount) {
    try {
      res.instructions = await instructions(tok.files, tok);
    } catch (e) {
      note(`instructions per request: ${e.message}`);
    }
  }
  res.summary = summary(res);
  res.machine.loadavg_end = os.loadavg();
  res.elapsed_s = (Date.now() - started) / 1000;
  publish('auth', table(res), res, SECTION_BEGIN, SECTION_END, log);
  cleanup();
  return res;
}

benchMain(module, main, { clientCpu: cores.clientCpu, log, cleanup });
