// The outbound client over HTTPS and with names to resolve. HTTPS: a test
// CA made here by openssl signs a certificate for upstream.test; the
// upstream is Node's https server (another TLS stack) or the ingot service
// itself serving HTTPS. The client accepts it with that CA (fetch --cacert,
// or INGOT_TLS_CA_FILE with INGOT_TLS_CA_MODE=replace for the service) and
// refuses it without the CA, with an unrelated CA, and under a name the
// certificate does not carry. Every case runs against each TLS backend
// built: build/bin/service and fetch (BearSSL), service-mbedtls and
// fetch-mbedtls when they exist. Names: a hosts file (INGOT_HOSTS_FILE) and
// a DNS server this file runs on loopback (INGOT_RESOLV_CONF,
// INGOT_DNS_PORT) resolve made-up names to 127.0.0.1.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, startServer, cleanup, curlResponse, BODY } from './lib.mjs';
import { Upstream, serviceRoutes, makeTestPki, startTlsUpstream, startDns, resolverFiles, runFetch, fetchBin, stopAll } from './upstreams.mjs';

const T = { timeout: 30000 };

// The mbedtls pair sits beside the default one (make TLS=mbedtls bin).
const mbedBin = process.env.INGOT_BIN_MBEDTLS || path.join(path.dirname(BIN), 'service-mbedtls');
const BACKENDS = [
	{ name: 'bearssl', service: BIN, fetch: fetchBin(BIN) },
	{ name: 'mbedtls', service: mbedBin, fetch: fetchBin(mbedBin), optional: true },
].filter((b) => !b.optional || (fs.existsSync(b.service) && fs.existsSync(b.fetch)));

let pki, files;
before(async () => {
	pki = await makeTestPki(['upstream.test']);
	files = resolverFiles({ hosts: '127.0.0.1 upstream.test other.test\n' });
});
after(async () => {
	await stopAll();
	cleanup();
	pki?.cleanup();
	files?.cleanup();
});

function needFetch(bin) {
	assert.ok(fs.existsSync(bin), `${bin} is not built (tests/client/fetch.c; INGOT_FETCH_BIN overrides)`);
}

for (const b of BACKENDS) {
	describe(`HTTPS upstream, ${b.name} client`, () => {
		const hostsEnv = () => ({ INGOT_HOSTS_FILE: files.hosts });
		const fetchIt = (args) => runFetch(args, { bin: b.fetch, env: hostsEnv() });

		test('accepted with the test CA: the body exactly, connections kept alive', T, async () => {
			needFetch(b.fetch);
			const up = await startTlsUpstream(pki);
			const r = await fetchIt(['--cacert', pki.caFile, '--body', '--count', '5', `https://upstream.test:${up.port}/json`]);
			assert.equal(r.code, 0, r.stdout + r.stderr);
			for (const x of r.results) {
				assert.equal(x.status, 200);
				assert.equal(x.body, BODY.json);
			}
			assert.equal(up.connections, 1, 'five requests, one TLS connection');
			await up.close();
		});

		test('refused without the test CA (the compiled-in anchors do not have it)', T, async () => {
			needFetch(b.fetch);
			const up = await startTlsUpstream(pki);
			const r = await fetchIt([`https://upstream.test:${up.port}/json`]);
			assert.equal(r.results[0].error, 'tls', JSON.stringify(r.results[0]));
			assert.equal(up.requests, 0, 'no request was sent');
			await up.close();
		});

		test('refused with an unrelated CA', T, async () => {
			needFetch(b.fetch);
			const up = await startTlsUpstream(pki);
			const r = await fetchIt(['--cacert', pki.otherCaFile, `https://upstream.test:${up.port}/json`]);
			assert.equal(r.results[0].error, 'tls', JSON.stringify(r.results[0]));
			assert.equal(up.requests, 0);
			await up.close();
		});

		test('refused for a host name the certificate does not carry', T, async () => {
			needFetch(b.fetch);
			const up = await startTlsUpstream(pki);
			for (const host of ['other.test', '127.0.0.1']) {
				const r = await fetchIt(['--cacert', pki.caFile, `https://${host}:${up.port}/json`]);
				assert.equal(r.results[0].error, 'tls', `${host}: ${JSON.stringify(r.results[0])}`);
				assert.match(r.results[0].message, /name|host/i, host);
			}
			assert.equal(up.requests, 0);
			await up.close();
		});

		test('the service: GET /proxy/json and /fanout over HTTPS with INGOT_TLS_CA_FILE (replace); refused without it', T, async () => {
			const up = await startTlsUpstream(pki);
			const upstream = `https://upstream.test:${up.port}`;
			const srv = await startServer({ ...hostsEnv(), UPSTREAM: upstream, INGOT_TLS_CA_FILE: pki.caFile,
				INGOT_TLS_CA_MODE: 'replace', INGOT_CLIENT_CONNECTIONS: '4' }, { threads: '1', command: b.service });
			const r = await curlResponse(srv.port, '/proxy/json');
			assert.equal(r.status, 200, r.text);
			assert.equal(r.text, BODY.json);
			const f = (await curlResponse(srv.port, '/fanout?n=10')).json();
			assert.equal(f.succeeded, 10);
			assert.ok(up.connections <= 4, `${up.connections} TLS connections for a pool of 4`);
			await srv.stop();

			const bare = await startServer({ ...hostsEnv(), UPSTREAM: upstream }, { threads: '1', command: b.service });
			const refused = await curlResponse(bare.port, '/proxy/json');
			assert.equal(refused.status, 502);
			assert.equal(refused.json().error, 'tls', refused.text);
			await bare.stop();
			await up.close();
		});

		test('the service as its own HTTPS upstream: one ingot serves TLS, another calls it', T, async () => {
			const upstreamSrv = await startServer({ INGOT_TLS_CERT: pki.certFile, INGOT_TLS_KEY: pki.keyFile, INGOT_TLS_PORT: '0' },
				{ threads: '1', command: b.service });
			const tlsPort = upstreamSrv.listening.tls_port;
			assert.ok(tlsPort > 0, JSON.stringify(upstreamSrv.listening));
			const srv = await startServer({ ...hostsEnv(), UPSTREAM: `https://upstream.test:${tlsPort}`,
				INGOT_TLS_CA_FILE: pki.caFile, INGOT_TLS_CA_MODE: 'replace' }, { threads: '1', command: b.service });
			for (let i = 0; i < 3; i++) {
				const r = await curlResponse(srv.port, '/proxy/json');
				assert.equal(r.status, 200, r.text);
				assert.equal(r.text, BODY.json);
			}
			await srv.stop();
			await upstreamSrv.stop();
		});
	});
}

describe('name resolution', () => {
	let dns, up, conf;
	before(async () => {
		dns = await startDns({ 'made-up.test': '127.0.0.1' });
		up = await Upstream.start(serviceRoutes);
		conf = resolverFiles({ hosts: '', resolv: 'nameserver 127.0.0.1\noptions timeout:2 attempts:1\n' });
	});
	after(() => conf?.cleanup());
	const env = () => ({ INGOT_HOSTS_FILE: conf.hosts, INGOT_RESOLV_CONF: conf.resolv, INGOT_DNS_PORT: String(dns.port) });

	test('a made-up name resolves through the loopback DNS server', T, async () => {
		needFetch(fetchBin());
		const r = await runFetch(['--body', `http://made-up.test:${up.port}/json`], { env: env() });
		assert.equal(r.code, 0, r.stdout + r.stderr);
		assert.equal(r.results[0].body, BODY.json);
		assert.ok(dns.queries.some((q) => q.name === 'made-up.test' && q.type === 1), JSON.stringify(dns.queries));
	});

	test('an unknown name fails with "dns"', T, async () => {
		needFetch(fetchBin());
		const r = await runFetch([`http://no-such-name.test:${up.port}/json`], { env: env() });
		assert.equal(r.results[0].error, 'dns', JSON.stringify(r.results[0]));
	});

	test('the service: UPSTREAM with a made-up name', T, async () => {
		const srv = await startServer({ ...env(), UPSTREAM: `http://made-up.test:${up.port}` }, { threads: '1' });
		const r = await curlResponse(srv.port, '/proxy/json');
		assert.equal(r.status, 200, r.text);
		assert.equal(r.text, BODY.json);
		assert.equal((await curlResponse(srv.port, '/fanout?n=20')).json().succeeded, 20);
		await srv.stop();
	});
});
