// npm's jose on the tokens jwtbench times (not a test): for each "ok"
// token of a tests/auth/jose_mint.mjs fixture (or tools/bench/auth.js's)
// labelled -with-kid, ns per jwtVerify (the kid's key imported once, as a
// service would) in the process's CPU time (all its threads: the garbage
// collector's are jose's cost too), as jwtbench counts, for comparison with
// tools/bench/jwtbench.c. Usage: node tools/bench/jwt_jose.mjs FIXTURE [ITERS]
// jose is the bench's (tools/bench/package.json; tools/setup bench installs it).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const { decodeProtectedHeader, importJWK, jwtVerify } = createRequire(new URL('./package.json', import.meta.url))('jose');

const [fixture, itersArg] = process.argv.slice(2);
const iters = Number(itersArg ?? 2000);
const [first, ...rest] = readFileSync(fixture, 'utf8').trim().split('\n');
const { keys } = JSON.parse(first);
console.log('token            jose verify ns');
for (const line of rest) {
	const [want, at, label, token] = line.split(' ');
	if (want !== 'ok' || !label.endsWith('-with-kid')) continue;
	const { alg, kid } = decodeProtectedHeader(token);
	const key = await importJWK(keys.find((k) => k.kid === kid), alg);
	const opts = { issuer: 'https://jose.test', audience: 'ingot', currentDate: new Date(Number(at) * 1000) };
	for (let i = 0; i < 200; i++) await jwtVerify(token, key, opts); // warm up the JIT and the key cache
	const t0 = process.cpuUsage();
	for (let i = 0; i < iters; i++) await jwtVerify(token, key, opts);
	const t = process.cpuUsage(t0);
	const ns = ((t.user + t.system) * 1e3) / iters;
	console.log(`${label.padEnd(16)} ${ns.toFixed(0).padStart(14)}`);
}
