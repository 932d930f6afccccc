// CORS as a real browser enforces it: headless Chromium (Debian's package)
// loads a page from one origin (a node server on 127.0.0.1) that fetches
// three services on other origins (other ports): one that allows the page's
// origin with credentials, one that allows only another origin, and one
// that allows *. The page posts what each fetch got (a status, or the
// browser's refusal) back to its server, and the test checks it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startServer, cleanup } from './lib.mjs';
import { findChromium } from './chromium.mjs';

after(() => cleanup());

const { bin: CHROMIUM, reason: NO_CHROMIUM } = findChromium();

// Runs in the browser: each case is one fetch; a refusal by CORS is a
// TypeError without a status.
const PAGE = `<!doctype html><title>cors</title><script>
const q = new URLSearchParams(location.search);
const own = q.get('own'), other = q.get('other'), star = q.get('star');
async function run(name, url, init, read) {
	try {
		const r = await fetch(url, init);
		return [name, { status: r.status, body: read ? await r.text() : undefined,
			id: r.headers.get('x-request-id'), date: r.headers.get('date') }];
	} catch (e) { return [name, { blocked: e.name }]; }
}
(async () => {
	const json = { 'Content-Type': 'application/json' };
	const results = Object.fromEntries(await Promise.all([
		run('simple', own + '/health', {}, true),
		run('notFound', own + '/nope', {}),
		run('post', own + '/blog', { method: 'POST', headers: json,
			body: '{"title":"t","body":"b","likes":1,"tags":["c"]}' }),
		run('headerParam', own + '/validate', { method: 'POST', headers: { ...json, 'x-foo': 'a' }, body: '{}' }),
		run('badHeader', own + '/validate', { method: 'POST', headers: { ...json, 'x-other': 'a' }, body: '{}' }),
		run('badMethod', own + '/health', { method: 'DELETE' }),
		run('credentials', own + '/health', { credentials: 'include' }),
		run('otherOrigin', other + '/health', {}),
		run('otherPreflight', other + '/validate', { method: 'POST', headers: json, body: '{}' }),
		run('star', star + '/health', {}),
		run('starCredentials', star + '/health', { credentials: 'include' }),
	]));
	await fetch('/result', { method: 'POST', body: JSON.stringify(results) });
})();
</script>`;

test('CORS in a real browser: allowed and refused origins, methods, headers and credentials', {
	timeout: 90000,
	skip: CHROMIUM ? false : NO_CHROMIUM,
}, async () => {
	let results;
	const got = new Promise((resolve) => { results = resolve; });
	const page = http.createServer((req, res) => {
		if (req.method === 'POST' && req.url === '/result') {
			let body = '';
			req.on('data', (d) => { body += d; });
			req.on('end', () => { res.end('ok'); results(JSON.parse(body)); });
			return;
		}
		res.writeHead(200, { 'Content-Type': 'text/html' });
		res.end(PAGE);
	});
	await new Promise((r) => page.listen(0, '127.0.0.1', r));
	const origin = `http://127.0.0.1:${page.address().port}`;
	const own = await startServer({ INGOT_CORS_ORIGINS: `http://app.test, ${origin}`, INGOT_CORS_CREDENTIALS: 'true',
		INGOT_CORS_EXPOSE_HEADERS: 'X-Request-Id' });
	const other = await startServer({ INGOT_CORS_ORIGINS: 'http://app.test' });
	const star = await startServer({ INGOT_CORS_ORIGINS: '*' });
	const base = (s) => `http://127.0.0.1:${s.port}`;
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-cors-'));
	const url = `${origin}/?own=${base(own)}&other=${base(other)}&star=${base(star)}`;
	// A process group of its own: the browser's helpers (renderer, GPU,
	// zygote) end with it, before its profile is removed.
	const browser = spawn(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
		'--disable-dev-shm-usage', `--user-data-dir=${profile}`, url], { stdio: 'ignore', detached: true });
	const browserExited = new Promise((r) => browser.once('exit', r));
	try {
		const r = await got;
		assert.equal(r.simple.status, 200);
		assert.equal(r.simple.body, '{"status":"ok"}');
		assert.match(r.simple.id ?? '', /^[0-9a-f]{32}$/, 'X-Request-Id is exposed');
		assert.equal(r.simple.date, null, 'Date is not exposed'); // not a CORS-safelisted response header
		assert.equal(r.notFound.status, 404); // the runtime's own error is readable
		assert.ok(r.post.status >= 200 && r.post.status < 300, JSON.stringify(r.post)); // preflighted
		assert.equal(r.headerParam.status, 400); // its preflight passed with x-foo; the decoder refused the body
		assert.deepEqual(r.badHeader, { blocked: 'TypeError' });
		assert.deepEqual(r.badMethod, { blocked: 'TypeError' });
		assert.equal(r.credentials.status, 200);
		assert.deepEqual(r.otherOrigin, { blocked: 'TypeError' });
		assert.deepEqual(r.otherPreflight, { blocked: 'TypeError' });
		assert.equal(r.star.status, 200);
		assert.deepEqual(r.starCredentials, { blocked: 'TypeError' }); // * never with credentials
	} finally {
		try { process.kill(-browser.pid, 'SIGKILL'); } catch { /* the group has ended */ }
		await browserExited;
		await new Promise((r) => page.close(r));
		await Promise.all([own.stop(), other.stop(), star.stop()]);
		// A helper killed with the group may still be leaving its last file
		// there as the directory goes: a few tries, as rm -rf would need.
		fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10 });
	}
});
