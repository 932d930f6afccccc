// The document features real services use, through a real binary: the
// links app (tests/apps/links) copied out of the tree and built with its
// make fragment; its document refers to components/parameters, headers,
// requestBodies and responses, answers problem+json (the runtime's
// Problem, which schemac provides, and the app's own schema), keys
// responses by a range (2XX, 4XX) and default, and redirects. Also: a
// scaffold whose document gained an operation without a handler fails its
// build naming the operation and its prototype, not with the linker's
// "undefined reference".
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer, cleanup, curlResponse, assertProblem, commandRunner } from './lib.mjs';

const T = { timeout: 300000 };
// Built here, static; the sanitizer pass of tests/run (INGOT_BIN) would
// build the same again.
const SKIP = process.env.INGOT_BIN ? { skip: 'the apps build their own binaries; tested in the plain pass' } : {};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-documents-'));
after(() => {
	cleanup();
	fs.rmSync(tmp, { recursive: true, force: true });
});
const { run, must } = commandRunner({ timeoutMs: 240000 });
const env = { ...process.env, INGOT_ROOT: ROOT };

let links; // the links app's server
async function linksApp() {
	if (links)
		return links;
	const dir = path.join(tmp, 'links');
	fs.cpSync(path.join(ROOT, 'tests', 'apps', 'links'), dir, {
		recursive: true, filter: (src) => path.basename(src) !== 'build',
	});
	await must('make', ['--no-print-directory', '-C', dir], { env });
	links = await startServer({ INGOT_ADMIN_PORT: '-1' }, { command: path.join(dir, 'build', 'bin', 'links') });
	return links;
}
const put = (port, body) => curlResponse(port, '/links/abc',
	['-X', 'PUT', '-H', 'Content-Type: application/json', '--data-binary', body]);

test('x-ingot-cors: the document\'s CORS policy answers preflights and redirects; INGOT_CORS_* override it field by field', { ...T, ...SKIP }, async () => {
	const { port } = await linksApp();
	const pre = (origin) => ['-X', 'OPTIONS', '-H', `Origin: ${origin}`, '-H', 'Access-Control-Request-Method: PUT'];
	let r = await curlResponse(port, '/links/abc', pre('https://links.example'));
	assert.equal(r.status, 204);
	assert.equal(r.headers['access-control-allow-origin'], 'https://links.example');
	assert.equal(r.headers['access-control-allow-credentials'], 'true');
	assert.equal(r.headers['access-control-max-age'], '60');
	assert.match(r.headers['access-control-allow-methods'], /\bPUT\b/);
	r = await curlResponse(port, '/links/abc', ['-H', 'Origin: https://a.links.test']);
	assert.equal(r.status, 302);
	assert.equal(r.headers['access-control-allow-origin'], 'https://a.links.test');
	assert.equal(r.headers['access-control-expose-headers'], 'X-Request-Id, Location');
	r = await curlResponse(port, '/links/abc', pre('https://other.test'));
	assert.equal(r.headers['access-control-allow-origin'], undefined);
	// Settings win: another origin list, no credentials; the max-age stays the document's.
	const other = await startServer({ INGOT_ADMIN_PORT: '-1', INGOT_CORS_ORIGINS: 'https://other.test', INGOT_CORS_CREDENTIALS: 'false' },
		{ command: path.join(tmp, 'links', 'build', 'bin', 'links') });
	try {
		r = await curlResponse(other.port, '/links/abc', pre('https://other.test'));
		assert.equal(r.headers['access-control-allow-origin'], 'https://other.test');
		assert.equal(r.headers['access-control-allow-credentials'], undefined);
		assert.equal(r.headers['access-control-max-age'], '60');
		r = await curlResponse(other.port, '/links/abc', pre('https://links.example'));
		assert.equal(r.headers['access-control-allow-origin'], undefined);
	} finally { await other.stop(); }
});

test('a redirect: Location, no body and no Content-Type; parameters from components/parameters', { ...T, ...SKIP }, async () => {
	const { port } = await linksApp();
	let r = await curlResponse(port, '/links/abc');
	assert.equal(r.status, 302);
	assert.equal(r.headers.location, 'https://example.com/to/abc');
	assert.equal(r.headers['content-length'], '0');
	assert.ok(!('content-type' in r.headers), `no Content-Type: ${r.head}`);
	r = await curlResponse(port, '/links/abc?verbose=true');
	assert.equal(r.status, 307);
	assert.equal(r.reason, 'Temporary Redirect');
	assert.ok(!('content-type' in r.headers));
	// The path parameter's pattern and the query's type come from the components.
	let p = assertProblem(await curlResponse(port, '/links/ABC'), 400);
	assert.deepEqual(p.errors.map((e) => [e.in, e.name, e.keyword]), [['path', 'code', 'pattern']]);
	p = assertProblem(await curlResponse(port, '/links/abc?verbose=maybe'), 400);
	assert.deepEqual(p.errors.map((e) => [e.in, e.name]), [['query', 'verbose']]);
});

test('problem+json with the runtime\'s Problem: the handler\'s ig_respond_problem, or the encoder\'s for a status returned', { ...T, ...SKIP }, async () => {
	const { port } = await linksApp();
	let p = assertProblem(await curlResponse(port, '/links/gone'), 404);
	assert.equal(p.detail, 'the link "gone" was deleted');
	p = assertProblem(await curlResponse(port, '/links/missing'), 404);
	assert.deepEqual([p.type, p.title, p.detail], ['about:blank', 'Not Found', 'Not Found']);
	assert.match(p.request_id, /^[0-9a-f]{32}$/);
	// The served document carries the Problem schema it refers to.
	const doc = (await curlResponse(port, '/openapi.json')).json();
	assert.deepEqual(doc.components.schemas.Problem.required, ['type', 'title', 'status']);
	assert.equal(doc.paths['/links/{code}'].get.responses['404'].$ref, '#/components/responses/NotFound');
});

test('range keys and default: 2XX fills r2XX for 201 and 202, 204 stays bodiless, 4XX is the app\'s own problem, default the runtime\'s', { ...T, ...SKIP }, async () => {
	const { port } = await linksApp();
	let r = await put(port, '{"url":"https://x.io/"}');
	assert.equal(r.status, 201);
	assert.equal(r.headers['content-type'], 'application/json');
	assert.deepEqual(r.json(), { url: 'https://x.io/', hits: 3 });
	r = await put(port, '{"url":"https://example.com/a/long/one"}');
	assert.equal(r.status, 202);
	assert.deepEqual(r.json(), { url: 'https://example.com/a/long/one', hits: 3 });
	r = await put(port, '{"url":"same:"}');
	assert.equal(r.status, 204);
	assert.equal(r.body.length, 0);
	assert.ok(!('content-type' in r.headers));
	r = await put(port, '{"url":"refused:"}');
	assert.equal(r.status, 422);
	assert.equal(r.headers['content-type'], 'application/problem+json');
	assert.deepEqual(r.json(), { title: 'Unprocessable Content', field: 'url' });
	const p = assertProblem(await put(port, '{"url":"down:"}'), 503);
	assert.equal(p.title, 'Service Unavailable');
	// The request body from components/requestBodies is required and checked.
	const bad = assertProblem(await put(port, '{"hits":1}'), 400);
	assert.deepEqual(bad.errors.map((e) => [e.pointer, e.keyword]), [['/url', 'required']]);
});

test('a missing handler: the build names the operation, its route and its prototype, before any link', { ...T, ...SKIP }, async () => {
	const app = path.join(tmp, 'hello');
	await must(path.join(ROOT, 'tools', 'new-service'), [app, 'hello']);
	const doc = path.join(app, 'openapi.yaml');
	fs.writeFileSync(doc, fs.readFileSync(doc, 'utf8').replace(/^components:/m, `  /links/{code}/stats:
    get:
      operationId: getLinkStats
      parameters:
        - { name: code, in: path, required: true, schema: { type: string } }
      responses:
        '200':
          description: "the link's counts"
components:`));
	for (const target of [[], ['test']]) {
		const r = await run('make', ['--no-print-directory', '-C', app, ...target], { env });
		const out = r.stdout + r.stderr;
		assert.notEqual(r.code, 0, out);
		assert.match(out, /getLinkStats \(GET \/links\/\{code\}\/stats\) needs\n\s+int getLinkStats\(ig_ctx \*ctx, const struct getLinkStats_in \*in, struct getLinkStats_out \*out\)/);
		assert.doesNotMatch(out, /undefined reference/);
		assert.doesNotMatch(out, /getHello|createGreeting/, 'the handlers that are there are not named');
	}
	// Written, it builds.
	fs.appendFileSync(path.join(app, 'handlers.c'), `
int getLinkStats(ig_ctx *ctx, const struct getLinkStats_in *in, struct getLinkStats_out *out)
{
	(void)ctx; (void)in; (void)out;
	return 200;
}
`);
	await must('make', ['--no-print-directory', '-C', app], { env });
	assert.ok(fs.existsSync(path.join(app, 'build', 'bin', 'hello')));
});
