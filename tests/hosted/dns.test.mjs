// Name resolution over the hosted lwIP stack: the service on its own
// TCP/IP stack over a TAP device resolves UPSTREAM's host name through a
// DNS server this file runs on the TAP's other end (INGOT_DNS_SERVER,
// INGOT_DNS_PORT), the queries leaving from lwIP's address, and calls the
// upstream it names; a name the server does not know fails as "dns"; with
// neither the setting nor DHCP (a static address) there is no nameserver
// and the host's resolv.conf is not used. With DHCP (this file's server on
// the TAP, tests/hosted/dhcp_server.mjs) the lease's nameserver is asked,
// and INGOT_DNS_SERVER wins over it. A DATABASE_URL by name: the pool
// resolves it over lwIP and /db answers from a real PostgreSQL (in the
// namespace, reached through a pipe on the TAP's end, as its pg_hba takes
// loopback only). Runs in lwIP mode only (tests/run: INGOT_TEST_NET=tap
// inside a network namespace).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { LWIP, startServer, cleanup, curlResponse, BODY } from '../integration/lib.mjs';
import { Upstream, serviceRoutes, startDns, stopAll } from '../integration/upstreams.mjs';
import { startDhcp } from './dhcp_server.mjs';
import { startPostgres } from '../integration/pglib.mjs';
import { migrate, waitReady } from '../integration/dbservice.mjs';

const skip = !LWIP && 'needs lwIP mode: INGOT_TEST_NET=tap in a network namespace (tests/run)';
const T = { timeout: 60000, skip };

// Both on every address of the test's namespace, so that the TAP's other
// end (known once a server has its TAP) reaches them.
let dns, up;
before(async () => {
	if (skip) return;
	dns = await startDns({}, { host: '0.0.0.0' });
	up = await Upstream.start(serviceRoutes, { host: '0.0.0.0' });
});
after(async () => { await stopAll(); cleanup(); });

function startNamed(upstreamHost, { withServer = true } = {}) {
	return startServer({ UPSTREAM: `http://${upstreamHost}:${up.port}`, INGOT_DNS_PORT: String(dns.port) },
		{ threads: '1', lwipEnv: (tap) => (withServer ? { INGOT_DNS_SERVER: tap.linuxAddr } : {}) });
}

test('UPSTREAM by name: resolved over lwIP through INGOT_DNS_SERVER, and /proxy/json answers from that upstream', T, async () => {
	const srv = await startNamed('up.test');
	try {
		dns.names['up.test'] = srv.linuxAddr;
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 200, r.text);
		assert.equal(r.text, BODY.json);
		const asked = dns.queries.filter((q) => q.name === 'up.test');
		assert.ok(asked.some((q) => q.type === 1), JSON.stringify(dns.queries));
		assert.ok(asked.every((q) => q.from === srv.host), `the queries came from lwIP's ${srv.host}: ${JSON.stringify(asked)}`);
		assert.ok(up.requests.some((q) => q.path === '/json' && q.conn.socket.remoteAddress === srv.host),
			'the upstream was called from lwIP\'s address');
		// Cached for the answer's TTL: the next call sends no query.
		const before = dns.queries.length;
		assert.equal((await curlResponse(srv.port, '/proxy/json')).status, 200);
		assert.equal(dns.queries.length, before, 'the second call was answered from the cache');
	} finally {
		await srv.stop();
	}
});

test('a name the DNS server does not know: /proxy/json fails as "dns", after a query over lwIP, each lookup from a random port', T, async () => {
	const srv = await startNamed('nowhere.test');
	try {
		for (let i = 0; i < 3; i++) { // failures are not cached: a lookup each
			const r = await curlResponse(srv.port, '/proxy/json');
			assert.equal(r.status, 502, r.text);
			assert.equal(r.json().error, 'dns', r.text);
		}
		const asked = dns.queries.filter((q) => q.name === 'nowhere.test' && q.type === 1);
		assert.equal(asked.length, 3, JSON.stringify(dns.queries));
		assert.ok(asked.every((q) => q.from === srv.host), JSON.stringify(asked));
		const ports = asked.map((q) => q.fromPort);
		// lwIP's own choice would be its next port each time.
		assert.ok(!(ports[1] === ports[0] + 1 && ports[2] === ports[1] + 1), `source ports ${ports}`);
	} finally {
		await srv.stop();
	}
});

test('a static address and no INGOT_DNS_SERVER: no nameserver, the lookup fails at once as "dns" and sends nothing', T, async () => {
	const srv = await startNamed('up.test', { withServer: false });
	try {
		const before = dns.queries.length;
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 502, r.text);
		assert.equal(r.json().error, 'dns', r.text);
		const line = await srv.waitLog((l) => /no nameserver/.test(JSON.stringify(l)));
		assert.match(JSON.stringify(line), /up\.test/, 'the log line names the host');
		assert.equal(dns.queries.length, before, 'no query was sent');
	} finally {
		await srv.stop();
	}
});

/** A server that takes its address from DHCP: a lease of the TAP's usual
 * address naming `dns` as nameservers (each a function of the TAP). */
async function startLeased(upstreamHost, { dns: names, setting = false }) {
	let dhcp;
	const srv = await startServer({ UPSTREAM: `http://${upstreamHost}:${up.port}`, INGOT_DNS_PORT: String(dns.port),
		INGOT_NET_IP: undefined, INGOT_NET_GW: undefined }, {
		threads: '1', lwipEnv: async (tap) => {
			dhcp = await startDhcp({ server: tap.linuxAddr, addr: tap.addr, prefix: tap.prefix, router: tap.linuxAddr,
				dns: names.map((f) => f(tap)) });
			return setting ? { INGOT_DNS_SERVER: tap.linuxAddr } : {};
		},
	});
	srv.exited.then(() => dhcp.close());
	const lease = await srv.waitLog((l) => l.msg === 'net: address');
	assert.equal(lease.ip, srv.host, JSON.stringify(lease));
	return { srv, dhcp };
}

test('DHCP: the lease\'s nameserver (option 6, which lwIP asks for) resolves UPSTREAM\'s name', T, async () => {
	const { srv, dhcp } = await startLeased('leased.test', { dns: [(tap) => tap.linuxAddr] });
	try {
		dns.names['leased.test'] = srv.linuxAddr;
		assert.ok(dhcp.requests.some((r) => r.asked.includes(6)), `DHCP's parameter list asks for nameservers: ${JSON.stringify(dhcp.requests)}`);
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 200, r.text);
		assert.equal(r.text, BODY.json);
		assert.ok(dns.queries.some((q) => q.name === 'leased.test' && q.from === srv.host), JSON.stringify(dns.queries));
	} finally {
		await srv.stop();
	}
});

test('DHCP and INGOT_DNS_SERVER: the setting wins over the lease\'s nameserver (one that never answers)', T, async () => {
	// 10.232.N.99: on the TAP's subnet, held by nobody; asked first it would
	// cost the lookup its whole timeout and the call would fail.
	const { srv } = await startLeased('setting.test', {
		dns: [(tap) => tap.linuxAddr.replace(/\.1$/, '.99')], setting: true,
	});
	try {
		dns.names['setting.test'] = srv.linuxAddr;
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 200, r.text);
		assert.ok(dns.queries.some((q) => q.name === 'setting.test' && q.from === srv.host), JSON.stringify(dns.queries));
	} finally {
		await srv.stop();
	}
});

/** A TCP server on every address of the namespace piping each connection
 * to 127.0.0.1:port. */
// Its end() destroys every piped connection and closes the listener: once
// the service (its lwIP stack) is gone, a connection to it that still has
// bytes to send stays in FIN-WAIT-1, retransmitting for minutes, and would
// keep this process (and the suite) from ending.
async function pipeTo(port) {
	const sockets = new Set();
	const server = net.createServer((c) => {
		const u = net.connect(port, '127.0.0.1');
		for (const s of [c, u]) {
			sockets.add(s);
			s.on('close', () => sockets.delete(s));
		}
		c.pipe(u);
		u.pipe(c);
		c.on('error', () => u.destroy());
		u.on('error', () => c.destroy());
	});
	await new Promise((resolve) => server.listen(0, '0.0.0.0', resolve));
	server.end = () => {
		for (const s of sockets) s.destroy();
		server.close();
	};
	return server;
}

test('DATABASE_URL by name: the pool resolves it over lwIP, connects, and /db answers from the database', { ...T, timeout: 120000 }, async () => {
	const pg = await startPostgres();
	let pipe, srv;
	try {
		const m = await migrate(pg.url);
		assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
		pipe = await pipeTo(pg.port);
		srv = await startServer({ DATABASE_URL: pg.urlWith({ host: 'db.test', port: pipe.address().port }),
			INGOT_DNS_PORT: String(dns.port), INGOT_PG_POOL_SIZE: '1' }, {
			threads: '1', lwipEnv: (tap) => {
				dns.names['db.test'] = tap.linuxAddr;
				return { INGOT_DNS_SERVER: tap.linuxAddr };
			},
		});
		await waitReady(srv, 60000);
		const r = await curlResponse(srv.port, '/db');
		assert.equal(r.status, 200, r.text);
		assert.deepEqual(Object.keys(r.json()), ['id', 'randomNumber']);
		assert.ok(dns.queries.some((q) => q.name === 'db.test' && q.type === 1 && q.from === srv.host), JSON.stringify(dns.queries));
	} finally {
		await srv?.stop();
		pipe?.end();
		await pg.stop();
	}
});
