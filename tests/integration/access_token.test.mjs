// A browser's EventSource and WebSocket cannot send Authorization, so a
// stream that declares it (x-ingot-access-token-query) takes its bearer
// token from ?access_token= (RFC 6750 2.3): the reference service's
// GET /me/events (SSE, read by curl and undici's EventSource) and
// GET /ws/me (npm's ws) with ES256 tokens minted by jose against a JWKS
// file. A bad token is 401 invalid_token, a token both in the header and
// the query 400 invalid_request, and the query's token authenticates no
// other operation. With the access log on at debug level (whose lines carry
// the request's target) the server writes the requests, and never a
// token's value, wherever it was sent.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jose from 'jose';
import WebSocket from 'ws';
import { EventSource } from 'undici';
import { startServer, cleanup, curl, curlResponse, assertProblem, hostFor, within } from './lib.mjs';

after(() => cleanup());
const T = { timeout: 30000 };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-access-token-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const jwksFile = path.join(dir, 'jwks.json');
let key, other, srv;

before(async () => {
	key = await jose.generateKeyPair('ES256', { extractable: true });
	other = await jose.generateKeyPair('ES256', { extractable: true });
	const pub = await jose.exportJWK(key.publicKey);
	fs.writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...pub, kid: 'k1', alg: 'ES256', use: 'sig' }] }));
	// One server for the file: the access log on, at debug level.
	srv = await startServer({ INGOT_JWKS_FILE: jwksFile, INGOT_ACCESS_LOG: '1', INGOT_LOG_LEVEL: 'debug' });
});
after(() => srv?.stop());

const now = () => Math.floor(Date.now() / 1000);
function mint(sub, { signWith = key.privateKey } = {}) {
	return new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject(sub)
		.setIssuedAt().setExpirationTime(now() + 600).sign(signWith);
}


// Every token a test sent: none may appear in the server's output.
const sent = [];
async function token(sub, opts) {
	const t = await mint(sub, opts);
	sent.push(t);
	return t;
}

// The events of a text/event-stream body.
function events(text) {
	return text.split('\n\n').filter((b) => b.trim()).map((b) => Object.fromEntries(
		b.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])));
}

// A stream's whole answer through curl (which takes the chunks apart):
// {status, headers, text}.
async function curlStream(target, extra = []) {
	const r = await curl(['-N', '-D', '-', ...extra, `http://${hostFor(srv.port)}:${srv.port}${target}`]);
	assert.equal(r.code, 0, r.stderr);
	const s = r.stdout.toString(), end = s.indexOf('\r\n\r\n');
	const [first, ...fields] = s.slice(0, end).split('\r\n');
	const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
	return { status: Number(first.split(' ')[1]), headers, text: s.slice(end + 4) };
}

const wsUrl = (target) => `ws://${hostFor(srv.port)}:${srv.port}${target}`;

// A ws client's first message, or its refusal ({status, headers}).
function wsFirst(target, opts = {}) {
	return within(10000, new Promise((resolve, reject) => {
		const ws = new WebSocket(wsUrl(target), opts);
		ws.on('message', (data) => { resolve({ ws, msg: JSON.parse(data.toString()) }); });
		ws.on('unexpected-response', (req, res) => {
			let body = '';
			res.on('data', (c) => { body += c; });
			res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
		});
		ws.on('error', reject);
	}), `ws ${target}`);
}

test('SSE: GET /me/events authenticated by ?access_token= (curl and EventSource)', T, async () => {
	const t = await token('alice');
	const res = await curlStream(`/me/events?access_token=${t}`);
	assert.equal(res.status, 200, res.text);
	assert.match(res.headers['content-type'], /^text\/event-stream/);
	const ev = events(res.text);
	assert.equal(ev.length, 1, res.text);
	assert.equal(ev[0].event, 'caller');
	assert.deepEqual(JSON.parse(ev[0].data), { sub: 'alice' });

	// The header still works on the same operation.
	const h = await curlStream('/me/events', ['-H', `Authorization: Bearer ${await token('carol')}`]);
	assert.equal(h.status, 200, h.text);
	assert.deepEqual(JSON.parse(events(h.text)[0].data), { sub: 'carol' });

	// A browser's way: EventSource, which can only put the token in the URL.
	const es = new EventSource(`http://${hostFor(srv.port)}:${srv.port}/me/events?access_token=${await token('dave')}`);
	try {
		const got = await within(10000, new Promise((resolve, reject) => {
			es.addEventListener('caller', (e) => resolve(JSON.parse(e.data)));
			es.onerror = () => { if (es.readyState === EventSource.CLOSED) reject(new Error('EventSource closed')); };
		}), 'the caller event');
		assert.deepEqual(got, { sub: 'dave' });
	} finally {
		es.close();
	}
});

test('SSE: a bad token in the query is 401 invalid_token; header and query at once is 400', T, async () => {
	for (const bad of [await token('mallory', { signWith: other.privateKey }), 'not-a-token']) {
		const res = await curlResponse(srv.port, `/me/events?access_token=${bad}`);
		assertProblem(res, 401);
		assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
	}
	assert.equal((await curlResponse(srv.port, '/me/events')).headers['www-authenticate'], 'Bearer', 'none sent');

	const t = await token('alice');
	let res = await curlResponse(srv.port, `/me/events?access_token=${t}`, ['-H', `Authorization: Bearer ${t}`]);
	assertProblem(res, 400);
	assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_request"');
	res = await curlResponse(srv.port, `/me/events?access_token=${t}&access_token=${t}`);
	assertProblem(res, 400);
});

test('the query token authenticates no operation that does not declare it', T, async () => {
	const t = await token('alice');
	const res = await curlResponse(srv.port, `/me?access_token=${t}`);
	assertProblem(res, 401);
	assert.equal(res.headers['www-authenticate'], 'Bearer', 'as if no token had been sent');
	// The same token in the header passes there: only its place differs.
	const ok = await curlResponse(srv.port, '/me', ['-H', `Authorization: Bearer ${t}`]);
	assert.equal(ok.status, 200, ok.text);
	// An open route ignores it as any other unknown parameter.
	assert.equal((await curlResponse(srv.port, `/json?access_token=${t}`)).status, 200);
});

test('WebSocket: GET /ws/me authenticated by ?access_token= (npm ws)', T, async () => {
	const { ws, msg } = await wsFirst(`/ws/me?access_token=${await token('erin')}`);
	try {
		assert.deepEqual(msg, { text: 'erin', n: 0 }, 'greeted by the token\'s subject');
		const echo = await within(10000, new Promise((resolve) => {
			ws.once('message', (d) => resolve(JSON.parse(d.toString())));
			ws.send(JSON.stringify({ text: 'hi', n: 41 }));
		}), 'the echo');
		assert.deepEqual(echo, { text: 'hi', n: 42 });
	} finally {
		ws.close();
	}

	let r = await wsFirst(`/ws/me?access_token=${await token('mallory', { signWith: other.privateKey })}`);
	assert.equal(r.status, 401, 'a bad token: no upgrade');
	assert.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token"');
	r = await wsFirst('/ws/me');
	assert.equal(r.status, 401, 'no token');
	const t = await token('alice');
	r = await wsFirst(`/ws/me?access_token=${t}`, { headers: { Authorization: `Bearer ${t}` } });
	assert.equal(r.status, 400, 'header and query');
	assert.equal(r.headers['www-authenticate'], 'Bearer error="invalid_request"');
	// The header alone upgrades too.
	const h = await wsFirst('/ws/me', { headers: { Authorization: `Bearer ${await token('frank')}` } });
	h.ws.close();
	assert.deepEqual(h.msg, { text: 'frank', n: 0 });
});

test('no token is ever written out: the access log has each request, its target redacted', T, async () => {
	// One more of each kind after the others, so that their lines are due.
	const t = await token('zoe');
	assert.equal((await curlStream(`/me/events?n=1&access_token=${t}`)).status, 200);
	assert.equal((await curlResponse(srv.port, `/me?access_token=${t}&x=1`)).status, 401);
	await srv.waitLog((l) => l.msg === 'request' && l.status === 401 && l.route === '/me' && /x=1$/.test(l.target ?? ''));
	await srv.stop();

	const out = srv.lines.join('\n') + srv.stderr;
	for (const s of sent) {
		assert.ok(!out.includes(s), 'a token in the output');
		assert.ok(!out.includes(s.split('.')[2]), 'a token\'s signature in the output');
	}
	const lines = srv.logs.filter((l) => l.msg === 'request');
	const line = lines.find((l) => l.route === '/me/events' && l.status === 200 && l.subject === 'zoe');
	assert.ok(line, `the stream's access line: ${JSON.stringify(lines.slice(-5))}`);
	assert.equal(line.method, 'GET');
	assert.equal(line.target, '/me/events?n=1&access_token=[redacted]');
	assert.ok(lines.some((l) => l.route === '/me' && l.status === 401 && l.target === '/me?access_token=[redacted]&x=1'),
		'redacted on an operation that does not take it too');
	assert.ok(lines.some((l) => l.route === '/ws/me' && l.subject === 'erin' && l.target === '/ws/me?access_token=[redacted]'),
		'the WebSocket\'s line');
	assert.ok(lines.some((l) => l.route === '/me/events' && l.status === 400), 'the refusals are logged too');
});
