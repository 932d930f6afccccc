// Child-process client for concurrency.test.mjs: holds N keep-alive
// connections open at once (it runs under a raised `ulimit -n`, which Node
// cannot set for itself), sends one request on each, waits until every
// one is answered, then a second request on each. Prints one JSON line.
import { RawClient, req, BODY } from '../lib.mjs';

const port = Number(process.argv[2]);
const n = Number(process.argv[3] || 1000);
// The server's address when it is not 127.0.0.1 (lwIP mode, the unikernel on a TAP).
const at = process.argv[4] ? { host: process.argv[4] } : {};

async function main() {
	const clients = await Promise.all(Array.from({ length: n }, () => RawClient.connect(port, at)));
	const round = async (target, body) => {
		const res = await Promise.all(clients.map(async (c, i) => {
			await c.write(req('GET', target(i)));
			const r = await c.response();
			return r.status === 200 && r.text === body(i) && !c.ended;
		}));
		return res.filter(Boolean).length;
	};
	const first = await round(() => '/health', () => BODY.health);
	const openAfterFirst = clients.filter((c) => !c.ended && !c.isClosed).length;
	const second = await round((i) => `/blog/${i + 1}`, (i) => BODY.blog(i + 1));
	const openAfterSecond = clients.filter((c) => !c.ended && !c.isClosed).length;
	for (const c of clients) c.destroy();
	return { n, first, second, openAfterFirst, openAfterSecond };
}

main().then((r) => {
	process.stdout.write(JSON.stringify(r) + '\n');
	process.exit(0);
}, (e) => {
	process.stdout.write(JSON.stringify({ error: String(e && e.stack || e) }) + '\n');
	process.exit(1);
});
