// The admin listener and the server's metrics, through a real Prometheus
// (Debian's prometheus package, started here with its own config and data
// directory, scraping every second): exact counts per route, method and
// status after a known load over two cores, read back with /api/v1/query;
// promtool accepts the exposition; histograms are consistent; unknown
// paths add no series; the admin port's settings and failures.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { startServer, cleanup, curl, runBinary, RawClient, req, within, needTools, freePort, LWIP } from './lib.mjs';

after(cleanup);

// The admin listener's address, host:port (in lwIP mode the server's own
// address: its admin listener is on the same stack).
async function adminAddr(srv) {
	const l = await srv.waitLog((x) => x.msg === 'admin listening');
	assert.equal(typeof l.port, 'number');
	return `${srv.host}:${l.port}`;
}

async function scrape(addr) {
	const r = await curl(['-i', `http://${addr}/metrics`]);
	assert.equal(r.code, 0, r.stderr);
	const text = r.stdout.toString('utf8');
	const split = text.indexOf('\r\n\r\n');
	return { head: text.slice(0, split), body: text.slice(split + 4) };
}

// The exposition's samples: [{name, labels: {..}, key: 'name{..}', value}].
function samples(body) {
	const out = [];
	for (const line of body.split('\n')) {
		if (!line || line.startsWith('#')) continue;
		const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
		assert.ok(m, `a sample line: ${line}`);
		const labels = {};
		for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
		out.push({ name: m[1], labels, key: `${m[1]}{${m[2] ?? ''}}`, value: Number(m[3]) });
	}
	return out;
}

// Every histogram series: buckets in le order non-decreasing, +Inf == _count.
function checkHistograms(body) {
	const series = new Map();
	for (const s of samples(body)) {
		const base = s.name.replace(/_(bucket|count|sum)$/, '');
		if (base === s.name) continue;
		const { le, ...rest } = s.labels;
		const id = base + JSON.stringify(rest);
		if (!series.has(id)) series.set(id, { buckets: [], count: null });
		const h = series.get(id);
		if (s.name.endsWith('_bucket')) h.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
		if (s.name.endsWith('_count')) h.count = s.value;
	}
	assert.ok(series.size > 0, 'the exposition has histograms');
	for (const [id, h] of series) {
		assert.ok(h.buckets.length > 1 && h.count !== null, `${id}: buckets and a count`);
		for (let i = 1; i < h.buckets.length; i++) {
			assert.ok(h.buckets[i][0] > h.buckets[i - 1][0], `${id}: le increasing`);
			assert.ok(h.buckets[i][1] >= h.buckets[i - 1][1], `${id}: bucket counts monotone`);
		}
		const inf = h.buckets[h.buckets.length - 1];
		assert.equal(inf[0], Infinity, `${id}: ends with +Inf`);
		assert.equal(inf[1], h.count, `${id}: +Inf equals _count`);
	}
	return series.size;
}

// ---- Prometheus ----

let prom = null;

async function startPrometheus(target) {
	const dir = mkdtempSync(path.join(tmpdir(), 'ingot-prom-'));
	const cfg = path.join(dir, 'prometheus.yml');
	writeFileSync(cfg, [
		'global:', '  scrape_interval: 1s', '  evaluation_interval: 1s',
		'scrape_configs:', '  - job_name: ingot', '    static_configs:', `      - targets: ['${target}']`, '',
	].join('\n'));
	const port = await freePort();
	const proc = spawn('prometheus', [`--config.file=${cfg}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
		`--web.listen-address=127.0.0.1:${port}`, '--log.level=info'], { stdio: ['ignore', 'ignore', 'pipe'] });
	let log = '';
	const exited = new Promise((resolve) => proc.on('close', resolve));
	await within(60000, new Promise((resolve, reject) => {
		proc.stderr.setEncoding('utf8');
		proc.stderr.on('data', (d) => {
			log += d;
			if (log.includes('Server is ready to receive web requests')) resolve();
		});
		exited.then((code) => reject(new Error(`prometheus exited (${code}): ${log}`)));
	}), 'prometheus ready');
	prom = { proc, port, dir, exited, log: () => log };
	return prom;
}

async function stopPrometheus() {
	if (!prom) return;
	prom.proc.kill('SIGTERM');
	await prom.exited;
	rmSync(prom.dir, { recursive: true, force: true });
	prom = null;
}
after(stopPrometheus);

async function query(expr) {
	const r = await curl(['--get', '--data-urlencode', `query=${expr}`, `http://127.0.0.1:${prom.port}/api/v1/query`]);
	assert.equal(r.code, 0, r.stderr);
	const j = JSON.parse(r.stdout.toString());
	assert.equal(j.status, 'success', JSON.stringify(j));
	return j.data.result.map((x) => ({ metric: x.metric, value: Number(x.value[1]) }));
}

// Asks Prometheus until check(results) holds: each answer reflects the
// scrapes so far, and counters only grow, so the first answer that holds
// is the final one. A bounded wait (within), not a timed one.
async function untilProm(expr, check, what) {
	let last, done = false;
	try {
		return await within(60000, (async () => {
			while (!done) {
				last = await query(expr);
				if (check(last)) return last;
				await new Promise((resolve) => setTimeout(resolve, 250));
			}
		})(), what);
	} catch (e) {
		throw new Error(`${e.message}; Prometheus last answered ${JSON.stringify(last)}`);
	} finally {
		done = true;
	}
}

// ---- load ----

// n connections, each pipelining requests, reading every answer, then
// closing its side and waiting for the server to close.
async function load(port, n, requests) {
	await Promise.all(Array.from({ length: n }, async (_, c) => {
		const client = await RawClient.connect(port);
		const list = requests(c);
		await client.write(list.map(([m, t]) => req(m, t)).join(''));
		const rs = await client.responses(list.length);
		rs.forEach((r, i) => assert.equal(r.status, list[i][2], `${list[i][0]} ${list[i][1]}`));
		client.end();
		await client.waitClosed();
	}));
}

const CONNS = 20;
const PER_CONN = (c) => [
	...Array.from({ length: 6 }, () => ['GET', '/health', 200]),
	['GET', '/blog?limit=abc', 400], ['GET', '/blog?limit=-5', 400],
	['GET', `/no/such/${c}`, 404],
	['DELETE', '/health', 405],
];
const EXPECTED = new Map([
	['GET /health 200', 6 * CONNS],
	['GET /blog 400', 2 * CONNS],
	['GET  404', CONNS],
	['DELETE /health 405', CONNS],
]);
// Prometheus stores an empty label as no label: http_route="" is absent.
const seriesKey = (m) => `${m.http_request_method} ${m.http_route ?? ''} ${m.http_response_status_code}`;

let srv, admin;
before(async () => {
	await needTools('prometheus', 'promtool', 'curl');
	srv = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '2' });
	admin = await adminAddr(srv);
	await startPrometheus(admin);
});

test('a real Prometheus scrapes exact counts per route, method and status over two cores', async () => {
	assert.equal(srv.listening.threads, 2);
	await load(srv.port, CONNS, PER_CONN);
	// A request the engine refuses before any handler, on a connection of its own.
	const bad = await RawClient.connect(srv.port);
	await bad.write('GET / HTTP/9.9\r\n\r\n');
	assert.equal((await bad.response()).status, 505);
	await bad.waitClosed();

	const counts = await untilProm('http_server_request_duration_seconds_count{job="ingot"}', (rs) =>
		rs.length === EXPECTED.size && rs.every((r) => EXPECTED.get(seriesKey(r.metric)) === r.value),
	'request counts per series');
	assert.deepEqual(new Map(counts.map((r) => [seriesKey(r.metric), r.value])), EXPECTED);

	const one = async (expr, want) => {
		const rs = await untilProm(expr, (x) => x.length === 1 && x[0].value === want, expr);
		assert.equal(rs[0].value, want, expr);
	};
	await one('sum(http_server_request_body_size_bytes_count{job="ingot"})', 10 * CONNS);
	await one('sum(http_server_response_body_size_bytes_count{job="ingot"})', 10 * CONNS);
	await one('http_server_request_duration_seconds_bucket{job="ingot",http_request_method="GET",http_route="/health",le="+Inf"}', 6 * CONNS);
	await one('ingot_validation_failures_total{job="ingot",http_route="/blog"}', 2 * CONNS);
	await one('sum(ingot_validation_failures_total{job="ingot"})', 2 * CONNS);
	await one('ingot_http_errors_total{job="ingot",status="505"}', 1);
	await one('sum(ingot_http_errors_total{job="ingot"})', 1);
	await one('ingot_connections_accepted_total{job="ingot"}', CONNS + 1);
	await one('ingot_connections_closed_total{job="ingot",reason="client"}', CONNS);
	await one('ingot_connections_closed_total{job="ingot",reason="error"}', 1);
	await one('ingot_connections_active{job="ingot"}', 0);
	await one('http_server_active_requests{job="ingot"}', 0);
	await one('up{job="ingot"}', 1);
});

test('the exposition: content type, promtool check metrics, consistent histograms', async () => {
	const { head, body } = await scrape(admin);
	assert.match(head, /^HTTP\/1\.1 200 /);
	assert.match(head, /\r\nContent-Type: text\/plain; version=0\.0\.4; charset=utf-8\r\n/i);
	const r = await new Promise((resolve) => {
		const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
		let out = '';
		p.stdout.on('data', (d) => { out += d; });
		p.stderr.on('data', (d) => { out += d; });
		p.on('close', (code) => resolve({ code, out }));
		p.stdin.end(body);
	});
	assert.equal(r.code, 0, `promtool check metrics: ${r.out}`);
	// Every family has HELP and TYPE, once, before its samples.
	const types = new Map();
	for (const line of body.split('\n')) {
		const t = /^# TYPE (\S+) (\S+)$/.exec(line);
		if (t) { assert.ok(!types.has(t[1]), `one TYPE for ${t[1]}`); types.set(t[1], t[2]); }
	}
	for (const name of ['http_server_request_duration_seconds', 'http_server_active_requests',
		'http_server_request_body_size_bytes', 'http_server_response_body_size_bytes',
		'ingot_connections_accepted_total', 'ingot_connections_active', 'ingot_connections_rejected_total',
		'ingot_connections_limit', 'ingot_connections_closed_total', 'ingot_http_errors_total', 'ingot_validation_failures_total',
		'ingot_log_lines_dropped_total', 'ingot_memory_budget_bytes', 'ingot_memory_budget_rejections_total',
		'ingot_memory_budget_paused_total', 'ingot_handlers_waiting', 'ingot_waiting_rejections_total']) {
		assert.ok(types.has(name), `family ${name}`);
		assert.ok(body.includes(`# HELP ${name} `), `HELP for ${name}`);
	}
	assert.equal(types.get('http_server_request_duration_seconds'), 'histogram');
	assert.ok(checkHistograms(body) >= 3 * EXPECTED.size, 'three histograms per series');
	const buckets = samples(body).filter((s) => s.name === 'http_server_request_duration_seconds_bucket' &&
		s.labels.http_route === '/health').map((s) => s.labels.le);
	assert.deepEqual(buckets.slice(0, 6), ['0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005']);
	assert.equal(buckets.at(-2), '10');
});

test('1,000 requests to random unknown paths add no series', async () => {
	const before = new Set(samples((await scrape(admin)).body).map((s) => s.key));
	const promBefore = (await query('count({job="ingot"})'))[0].value;
	const rand = () => Math.random().toString(36).slice(2);
	await load(srv.port, 10, () => Array.from({ length: 100 }, () => ['GET', `/${rand()}/${rand()}?q=${rand()}`, 404]));
	const { body } = await scrape(admin);
	const afterKeys = new Set(samples(body).map((s) => s.key));
	assert.deepEqual([...afterKeys].filter((k) => !before.has(k)), [], 'no new series in the exposition');
	assert.equal(afterKeys.size, before.size);
	const unknown = samples(body).find((s) => s.key ===
		'http_server_request_duration_seconds_count{http_request_method="GET",http_route="",http_response_status_code="404"}');
	assert.equal(unknown.value, CONNS + 1000);
	await untilProm('http_server_request_duration_seconds_count{job="ingot",http_route=""}',
		(rs) => rs.length === 1 && rs[0].value === CONNS + 1000, 'the unknown paths scraped');
	assert.equal((await query('count({job="ingot"})'))[0].value, promBefore, 'Prometheus holds no new series');
});

test('the admin listener answers only its own paths; the API port has no /metrics', async () => {
	const nf = await curl(['-s', '-o', '/dev/null', '-w', '%{http_code} %{content_type}', `http://${admin}/health`]);
	assert.equal(nf.stdout.toString(), '404 application/problem+json');
	const post = await curl(['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', `http://${admin}/metrics`]);
	assert.equal(post.stdout.toString(), '405');
	for (const [p, want] of [['/livez', '200 {"status":"ok"}'], ['/readyz', '200 {"status":"ready"}']]) {
		const h = await curl(['-s', '-w', '%{http_code}', `http://${admin}${p}`]);
		const body = h.stdout.toString();
		assert.equal(`${body.slice(-3)} ${body.slice(0, -3)}`, want, p);
	}
	const api = await curl(['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://${srv.host}:${srv.port}/metrics`]);
	assert.equal(api.stdout.toString(), '404');
	assert.notEqual(admin, `${srv.host}:${srv.port}`);
});

test('after SIGTERM the admin listener says 503 on /readyz and still serves /metrics during the drain delay', async () => {
	const s = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_DRAIN_DELAY_MS: '60000', INGOT_GRACE_MS: '1000' },
		{ threads: '2' });
	const port = await adminAddr(s);
	const code = async (p) => (await curl(['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://${port}${p}`])).stdout.toString();
	assert.equal(await code('/readyz'), '200');
	const mark = s.mark();
	s.signal('SIGTERM');
	await s.waitLog((l) => l.msg === 'draining', mark);
	assert.equal(await code('/readyz'), '503');
	assert.equal(await code('/livez'), '200');
	assert.match((await scrape(port)).body, /^ingot_connections_accepted_total 0$/m);
	s.kill();
});

test('a busy admin port stops the start with exit 2', async () => {
	// Taken by another ingot: no SO_REUSEPORT, so no second listener joins
	// it (in lwIP mode that one listens on its own stack, not here).
	if (!LWIP) {
		const r = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_ADMIN_PORT: admin.split(':')[1] });
		assert.equal(r.code, 2, r.stderr);
		assert.match(r.stderr, /INGOT_ADMIN_PORT/);
	}
	// Taken by any other socket.
	const holder = net.createServer();
	await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve));
	const busy = holder.address().port;
	const r2 = await runBinary([], { PORT: '0', HOST: '127.0.0.1', INGOT_ADMIN_PORT: String(busy) });
	holder.close();
	assert.equal(r2.code, 2, r2.stderr);
	assert.match(r2.stderr, /admin listener \(INGOT_ADMIN_PORT\): cannot listen on 127\.0\.0\.1 port \d+/);
});

test('INGOT_ADMIN_PORT equal to PORT is a settings error (exit 2)', async () => {
	const port = await freePort();
	const r = await runBinary([], { PORT: String(port), HOST: '127.0.0.1', INGOT_ADMIN_PORT: String(port) });
	assert.equal(r.code, 2, r.stderr);
	assert.match(r.stderr, /INGOT_ADMIN_PORT must differ from PORT/);
});

test('INGOT_ADMIN_PORT=0 logs the port it picked; unset, there is no admin listener', async () => {
	const s = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const l = s.logs.find((x) => x.msg === 'admin listening');
	assert.ok(l && l.port > 0 && l.port !== s.port && l.addr === s.host, JSON.stringify(s.logs));
	assert.match((await scrape(`${s.host}:${l.port}`)).head, /^HTTP\/1\.1 200 /);
	await s.stop();
	const plain = await startServer({}, { threads: '1' });
	assert.equal(plain.logs.filter((x) => x.msg === 'admin listening').length, 0);
	await plain.stop();
});

test('--help lists INGOT_ADMIN_PORT; --help and --version open no listener', async () => {
	// The port is held: a command that tried to listen there would exit 2.
	const holder = net.createServer();
	await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve));
	const port = String(holder.address().port);
	const r = await runBinary(['--help'], { HOST: '127.0.0.1', INGOT_ADMIN_PORT: port });
	const v = await runBinary(['--version'], { HOST: '127.0.0.1', INGOT_ADMIN_PORT: port });
	holder.close();
	assert.equal(r.code, 0, r.stderr);
	assert.match(r.stdout, /INGOT_ADMIN_PORT/);
	assert.doesNotMatch(r.stdout, /admin listening/);
	assert.equal(v.code, 0, v.stderr);
	assert.doesNotMatch(v.stdout, /listening/);
});

test('a scrape larger than a request\'s memory: every route under every method', async () => {
	const s = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_MAX_BODY: '0' }, { threads: '2' });
	const port = await adminAddr(s);
	const routes = ['/health', '/json', '/compute', '/hash', '/blog', '/blog/1', '/delay/1', '/validate', '/novalidate',
		'/openapi.json', '/no/such'];
	const methods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PATCH', 'FOO'];
	for (const m of methods) {
		const c = await RawClient.connect(s.port);
		await c.write(routes.map((r) => req(m, r, { headers: ['Content-Length: 0'] })).join(''));
		await c.responses(routes.length, { head: m === 'HEAD' });
		c.destroy();
	}
	const { head, body } = await scrape(port);
	assert.match(head, /^HTTP\/1\.1 200 /);
	// INGOT_MAX_BODY=0 bounds a request's memory at 1 MiB, where a growing
	// body (copied as it doubles) stops at 512 KiB.
	assert.ok(body.length > 600 * 1024, `a scrape of ${body.length} bytes`);
	const series = checkHistograms(body);
	assert.ok(series >= 3 * routes.length * (methods.length - 1), `${series} histogram series`);
	assert.ok(body.includes('http_request_method="_OTHER"'), 'FOO is counted as _OTHER');
	s.kill();
});

// Over lwIP too: its listeners count their refusals as net/sock's do.
test('connection metrics: refused at INGOT_MAX_CONNS, closed by the idle and header timeouts', async () => {
	const s = await startServer({ INGOT_ADMIN_PORT: '0', INGOT_MAX_CONNS: '2', INGOT_IDLE_TIMEOUT_MS: '300',
		INGOT_HEADER_TIMEOUT_MS: '300' }, { threads: '1' });
	const port = await adminAddr(s);
	const value = async (key) => samples((await scrape(port)).body).find((x) => x.key === key)?.value;
	// Two connections fill the core; a third is accepted and closed at once.
	const idle = await RawClient.connect(s.port);
	const slow = await RawClient.connect(s.port);
	await slow.write('GET /health HTTP/1.1\r\nHost: x\r\n'); // a head that never ends
	await idle.write(req('GET', '/health'));
	await idle.response();
	const refused = await RawClient.connect(s.port);
	await refused.waitClosed();
	assert.equal(refused.received, 0, `the refused connection got no bytes: ${refused.buf.toString('latin1')}`);
	assert.equal((await value('ingot_connections_rejected_total{reason="max_conns"}')), 1);
	assert.equal((await value('ingot_connections_rejected_total{reason="fd_limit"}')), 0);
	assert.equal((await value('ingot_connections_limit{}')), 2, 'INGOT_MAX_CONNS per core, one core');
	// The memory budget's refusals by cause, each written at zero.
	assert.equal(await value('ingot_memory_budget_rejections_total{cause="request_body"}'), 0);
	assert.equal(await value('ingot_memory_budget_rejections_total{cause="tls_handshake"}'), 0);
	assert.equal(await value('ingot_memory_budget_paused_total{}'), 0);
	assert.equal((await value('ingot_connections_active{}')), 2);
	// The idle one meets the idle timeout, the slow one the header timeout (408).
	await idle.waitClosed();
	assert.equal((await slow.response()).status, 408);
	await slow.waitClosed();
	assert.equal(await value('ingot_connections_closed_total{reason="idle"}'), 1);
	assert.equal(await value('ingot_connections_closed_total{reason="header_timeout"}'), 1);
	assert.equal(await value('ingot_http_errors_total{status="408"}'), 1);
	assert.equal(await value('ingot_connections_accepted_total{}'), 2);
	assert.equal(await value('ingot_connections_active{}'), 0);
	s.kill();
});

test('durations: a request that waits 30 ms on a timer is never in a bucket below 30 ms', async () => {
	const s = await startServer({ INGOT_ADMIN_PORT: '0' }, { threads: '1' });
	const port = await adminAddr(s);
	const c = await RawClient.connect(s.port);
	await c.write(req('GET', '/delay/30'));
	assert.equal((await c.response()).status, 200);
	const all = samples((await scrape(port)).body).filter((x) => x.labels.http_route === '/delay/{ms}' &&
		x.name.startsWith('http_server_request_duration_seconds'));
	const bucket = (le) => all.find((x) => x.name.endsWith('_bucket') && x.labels.le === le).value;
	assert.equal(bucket('0.025'), 0);
	assert.equal(bucket('+Inf'), 1);
	// The timer wheel counts whole milliseconds from the loop's reading: a
	// 30 ms wait that began late in a millisecond ends up to 1 ms sooner.
	const sum = all.find((x) => x.name.endsWith('_sum')).value;
	assert.ok(sum >= 0.029, `the sum counts the wait (${sum} s)`);
	s.kill();
});
