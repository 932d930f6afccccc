// The peers of a guest on a TAP in a test's network namespace, run inside
// it (ip netns exec NS node ns_peers.mjs ADDR NAMES [PGSOCKET]): a DNS
// server answering NAMES (JSON {name: ip}) and the reference upstream
// (upstreams.mjs's) on ADDR, and with PGSOCKET (a PostgreSQL unix socket:
// it crosses namespaces) a TCP pipe on ADDR to it. Prints one JSON line
// {dns, up, pg} of their ports, then one line {query} for each DNS
// question, and exits when stdin ends.
import net from 'node:net';
import { Upstream, serviceRoutes, startDns, stopAll } from './upstreams.mjs';

const [addr, names, pgSocket] = process.argv.slice(2);
const dns = await startDns(JSON.parse(names), {
	host: addr,
	onQuery: (q) => process.stdout.write(`${JSON.stringify({ query: { name: q.name, type: q.type, from: q.from } })}\n`),
});
const up = await Upstream.start(serviceRoutes, { host: addr });
let pg = null;
if (pgSocket) {
	pg = net.createServer((c) => {
		const u = net.connect(pgSocket);
		c.pipe(u);
		u.pipe(c);
		c.on('error', () => u.destroy());
		u.on('error', () => c.destroy());
	});
	await new Promise((resolve) => pg.listen(0, addr, resolve));
}
process.stdout.write(`${JSON.stringify({ dns: dns.port, up: up.port, pg: pg?.address().port ?? null })}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
	pg?.close();
	await stopAll();
	process.exit(0);
});
