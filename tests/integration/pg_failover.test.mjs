// A failover that moves the database's name (what a managed database does:
// the primary's DNS name points at the new primary). DATABASE_URL names
// db.test, which a DNS server of this file resolves, with TTL 0, to server
// A on 127.0.0.1; a second server B listens on 127.0.0.2 at the same port.
// When A goes away and the name points at B, the pool's reconnects look
// the name up again and /db answers from B, without restarting ingot.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, curlResponse, startServer, within, LWIP } from './lib.mjs';
import { startPostgres } from './pglib.mjs';
import { migrate, waitReady } from './dbservice.mjs';
import { startDns, resolverFiles, stopAll } from './upstreams.mjs';

const servers = [];
let files;
after(async () => {
	cleanup();
	await stopAll();
	for (const pg of servers) await pg.stop();
	files?.cleanup();
});

/** /db's row, or null for a 503 (no database right now). */
async function db(port) {
	const r = await curlResponse(port, '/db');
	if (r.status === 503) return null;
	assert.equal(r.status, 200, r.body);
	return JSON.parse(r.body);
}

test('the database name moves to another server: the pool follows it, /db answers from the new one', {
	skip: LWIP && 'the database suites run over the kernel\'s TCP', timeout: 120000,
}, async () => {
	const a = await startPostgres();
	servers.push(a);
	const b = await startPostgres({ host: '127.0.0.2', port: a.port });
	servers.push(b);
	// One role and password on both, as a replica has.
	await b.psql(`ALTER ROLE ingot PASSWORD '${a.password}';`, { database: 'postgres' });
	for (const u of [a.url, b.urlWith({ password: a.password })]) {
		const m = await migrate(u);
		assert.equal(m.code, 0, `--migrate: ${m.stdout}${m.stderr}`);
	}
	// B's rows say B with a number the schema allows (a debug build checks
	// every answer against it) and none of A's rows has.
	await b.psql('UPDATE world SET randomnumber = 10000;');
	await a.psql('UPDATE world SET randomnumber = 1 WHERE randomnumber = 10000;');

	const dns = await startDns({ 'db.test': '127.0.0.1' }, { ttl: 0 });
	files = resolverFiles({ resolv: 'nameserver 127.0.0.1\n' });
	const url = a.urlWith({ host: 'db.test' });
	const srv = await startServer({
		DATABASE_URL: url, INGOT_RESOLV_CONF: files.resolv, INGOT_HOSTS_FILE: files.hosts,
		INGOT_DNS_PORT: String(dns.port), INGOT_PG_POOL_SIZE: '2',
	});
	try {
		await waitReady(srv);
		const first = await db(srv.port);
		assert.ok(first && first.randomNumber < 10000, JSON.stringify(first)); // from A
		assert.ok(dns.queries.some((q) => q.name === 'db.test'), 'the name was looked up');

		dns.names['db.test'] = '127.0.0.2';
		await a.stop();
		// Every answer meanwhile is a row or a 503; then B's rows.
		await within(20000, (async () => {
			for (;;) {
				const row = await db(srv.port);
				if (row && row.randomNumber === 10000) return;
				await new Promise((resolve) => setImmediate(resolve));
			}
		})(), '/db never answered from the server the name moved to');
		assert.equal(srv.exit, null);
		assert.equal(srv.logs.filter((l) => l.msg === 'listening').length, 1);
	} finally {
		await srv.stop();
	}
});
