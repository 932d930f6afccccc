// Headless Chromium (Debian's package) for the browser suites: where its
// binary is, and a browser driven through the DevTools protocol over npm's
// `ws` (one page: navigate, then evaluate script there and get its value).
// Each browser has its own profile and process group, both gone on close.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { within } from './lib.mjs';

// The binary: $CHROMIUM when set (a missing one skips the suites, as on a
// machine without it), else chromium or chromium-browser on PATH.
// reason: why there is none, the skip's one line.
export function findChromium() {
	const setup = 'tools/setup test installs Debian\'s chromium';
	if (process.env.CHROMIUM) {
		try { fs.accessSync(process.env.CHROMIUM, fs.constants.X_OK); } catch {
			return { bin: null, reason: `CHROMIUM=${process.env.CHROMIUM} is not an executable (${setup})` };
		}
		return { bin: process.env.CHROMIUM };
	}
	for (const c of ['chromium', 'chromium-browser']) {
		try { return { bin: execFileSync('sh', ['-c', `command -v ${c}`]).toString().trim() }; } catch { /* next */ }
	}
	return { bin: null, reason: `chromium is not installed (${setup})` };
}

// Nothing but the pages asked for: no background fetches, updates or sync
// (the tests reach loopback only).
const QUIET = ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
	'--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync',
	'--disable-default-apps', '--disable-extensions', '--disable-domain-reliability', '--metrics-recording-only'];

/** A started browser, its page attached: navigate(url) resolves on the
 * page's load; evaluate(expr) awaits the expression's promise in the page
 * and resolves its value (JSON-able), or rejects with the page's exception;
 * close() ends the browser and removes its profile. */
export async function launchBrowser(bin) {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-chromium-'));
	// Port 0: the browser picks its DevTools port and says it on stderr.
	// XDG_CONFIG_HOME: its crash handler's database (which it keeps under
	// the config directory, not the profile) goes with the profile too.
	const proc = spawn(bin, [...QUIET, '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'],
		{ stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, XDG_CONFIG_HOME: profile } });
	const exited = new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal })));
	let stderr = '';
	const browser = { proc, profile, exited, cdp: null };
	browser.close = () => close(browser);
	try {
		const devtools = await within(30000, new Promise((resolve, reject) => {
			// Read to the end, or a full pipe would stop the browser.
			proc.stderr.on('data', (d) => {
				stderr = (stderr + d).slice(-8192);
				const m = /DevTools listening on (ws:\/\/[^\s/]+)\//.exec(stderr);
				if (m) resolve(m[1].replace('ws://', 'http://'));
			});
			proc.once('error', reject);
			exited.then((x) => reject(new Error(`chromium exited (${JSON.stringify(x)}): ${stderr.slice(-2000)}`)));
		}), 'chromium\'s DevTools port');
		const targets = await (await fetch(`${devtools}/json/list`)).json();
		const page = targets.find((t) => t.type === 'page');
		if (!page) throw new Error(`no page target: ${JSON.stringify(targets)}`);
		browser.cdp = await connect(page.webSocketDebuggerUrl);
		await browser.cdp.send('Page.enable');
	} catch (e) {
		await close(browser);
		throw e;
	}
	browser.navigate = async (url) => {
		const loaded = browser.cdp.once('Page.loadEventFired');
		const r = await browser.cdp.send('Page.navigate', { url });
		if (r.errorText) throw new Error(`navigating to ${url}: ${r.errorText}`);
		await within(20000, loaded, `the load of ${url}`);
	};
	browser.evaluate = async (expression) => {
		const r = await browser.cdp.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
		if (r.exceptionDetails) {
			const d = r.exceptionDetails;
			throw new Error(`in the page: ${d.exception?.description ?? d.text}`);
		}
		return r.result.value;
	};
	return browser;
}

async function close(browser) {
	browser.cdp?.ws.terminate();
	// The group: the browser's helpers (renderer, zygote) end with it,
	// before its profile is removed. The crash handler, in a group of its
	// own, ends by itself when the browser has gone.
	try { process.kill(-browser.proc.pid, 'SIGKILL'); } catch { /* the group has ended */ }
	await browser.exited;
	// A helper killed with the group may still be leaving its last file
	// there as the directory goes: a few tries, as rm -rf would need.
	fs.rmSync(browser.profile, { recursive: true, force: true, maxRetries: 10 });
}

// A DevTools protocol session: send(method, params) resolves the result
// (rejects the protocol's error); once(event) resolves its next params.
async function connect(url) {
	const ws = new WebSocket(url, { perMessageDeflate: false });
	await within(20000, new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); }), 'the DevTools socket');
	let next = 1;
	const pending = new Map(), waiting = new Map();
	const lost = (e) => { for (const p of pending.values()) p.reject(e); pending.clear(); };
	ws.on('message', (d) => {
		const m = JSON.parse(d.toString());
		if (m.id !== undefined) {
			const p = pending.get(m.id);
			pending.delete(m.id);
			if (m.error) p?.reject(new Error(`${p.method}: ${m.error.message}`));
			else p?.resolve(m.result);
			return;
		}
		const w = waiting.get(m.method);
		if (w?.length) w.shift()(m.params);
	});
	ws.on('close', () => lost(new Error('the DevTools socket closed')));
	ws.on('error', lost);
	return {
		ws,
		send(method, params = {}) {
			const id = next++;
			return within(30000, new Promise((resolve, reject) => {
				pending.set(id, { resolve, reject, method });
				ws.send(JSON.stringify({ id, method, params }));
			}), `DevTools ${method}`);
		},
		once(method) {
			return new Promise((resolve) => {
				if (!waiting.has(method)) waiting.set(method, []);
				waiting.get(method).push(resolve);
			});
		},
	};
}
