// A Lambda Runtime API emulator, written from the published contract
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html, API
// version 2018-06-01): a Node HTTP server that queues invocations, hands
// each out on GET /runtime/invocation/next as a long poll (answered when an
// invocation is queued, never timed out), with the Lambda-Runtime-*
// headers, and records what the runtime posts to .../{id}/response,
// .../{id}/error and /runtime/init/error. Unknown ids get 400 as Lambda's
// InvalidRequestException. It can stop and start again on the same port,
// as the tests' "the Runtime API restarted" case needs.
//
// The streaming response mode (a function URL with InvokeMode
// RESPONSE_STREAM; https://docs.aws.amazon.com/lambda/latest/dg/
// runtimes-custom.html#runtimes-custom-response-streaming): a POST to
// .../{id}/response with Lambda-Runtime-Function-Response-Mode: streaming
// and Transfer-Encoding: chunked is read as it comes (the invocation's
// onData sees each piece, and may pause the request to hold the runtime
// back); an application/vnd.awslambda.http-integration-response body is
// split at the 8 NUL bytes after its JSON prelude; the error trailers
// (Lambda-Runtime-Function-Error-Type and -Body) are recorded.
import http from 'node:http';
import { randomUUID } from 'node:crypto';

const PREFIX = '/2018-06-01/runtime';

export class RuntimeApi {
	constructor() {
		this.queue = [];       // invocations not handed out yet
		this.pending = new Map(); // id -> the invocation handed out, not answered
		this.polls = [];       // GET next responses waiting for an invocation
		this.nextCount = 0;    // GET next requests seen
		this.initErrors = [];  // {headers, body} posted to init/error
		this.refused = [];     // posts for unknown ids
		this.trail = [];       // 'next', and 'response <id>' / 'error <id>', in arrival order
		this.sockets = new Set();
		this._pollWaiters = [];
		this._initWaiters = [];
	}

	/** Listens on 127.0.0.1 (port 0: a free one); resolves with the port. */
	async start(port = 0) {
		this.server = http.createServer((req, res) => this._handle(req, res));
		this.server.keepAliveTimeout = 0; // the runtime keeps its connection: never expire it
		this.server.on('connection', (s) => {
			this.sockets.add(s);
			s.on('close', () => this.sockets.delete(s));
		});
		await new Promise((resolve, reject) => {
			this.server.once('error', reject);
			this.server.listen(port, '127.0.0.1', resolve);
		});
		this.port = this.server.address().port;
		this.address = `127.0.0.1:${this.port}`;
		return this.port;
	}

	/** Closes the listener and every connection (a long poll included). */
	async stop() {
		for (const s of this.sockets) s.destroy();
		this.polls = [];
		await new Promise((resolve) => this.server.close(resolve));
	}

	/** Queues an event; resolves with what the runtime posted for it:
	 * {kind: 'response' | 'error', status posted, body (parsed JSON), raw, headers}.
	 * A streamed response resolves with {kind: 'response', streaming: true,
	 * headers, prelude (parsed JSON, or undefined without the integration's
	 * content type), body (Buffer, after the delimiter), raw (Buffer, all
	 * of it), pieces (data events seen), trailers}. onData(chunk, bytesSoFar, req)
	 * is called for each piece of a streamed response. */
	invoke(event, { requestId = randomUUID(), deadlineMs = Date.now() + 30000, traceId,
		functionArn = 'arn:aws:lambda:us-east-1:123456789012:function:ingot', onData } = {}) {
		return new Promise((resolve) => {
			const inv = { id: requestId, event, deadlineMs, traceId, functionArn, resolve, onData };
			this.queue.push(inv);
			this._dispatch();
		});
	}

	/** Resolves once `count` GET next requests have been seen in all. */
	waitPolls(count) {
		if (this.nextCount >= count) return Promise.resolve();
		return new Promise((resolve) => this._pollWaiters.push({ count, resolve }));
	}

	/** Resolves with the next init/error post. */
	waitInitError() {
		if (this.initErrors.length) return Promise.resolve(this.initErrors[0]);
		return new Promise((resolve) => this._initWaiters.push(resolve));
	}

	_dispatch() {
		while (this.queue.length && this.polls.length) {
			const res = this.polls.shift();
			if (res.destroyed || res.socket?.destroyed) continue;
			const inv = this.queue.shift();
			this.pending.set(inv.id, inv);
			const body = JSON.stringify(inv.event);
			const headers = {
				'Content-Type': 'application/json',
				'Lambda-Runtime-Aws-Request-Id': inv.id,
				'Lambda-Runtime-Deadline-Ms': String(inv.deadlineMs),
				'Lambda-Runtime-Invoked-Function-Arn': inv.functionArn,
			};
			if (inv.traceId) headers['Lambda-Runtime-Trace-Id'] = inv.traceId;
			res.writeHead(200, headers);
			res.end(body);
		}
	}

	_handle(req, res) {
		const streamed = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/response$/.exec(req.url);
		if (req.method === 'POST' && streamed && req.headers['lambda-runtime-function-response-mode'] === 'streaming') {
			this._stream(req, res, decodeURIComponent(streamed[1]));
			return;
		}
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const raw = Buffer.concat(chunks).toString('utf8');
			const url = req.url;
			if (req.method === 'GET' && url === `${PREFIX}/invocation/next`) {
				this.nextCount++;
				this.trail.push('next');
				this._pollWaiters = this._pollWaiters.filter((w) => (this.nextCount >= w.count ? (w.resolve(), false) : true));
				this.polls.push(res); // answered when an invocation is queued: no timeout
				this._dispatch();
				return;
			}
			if (req.method === 'POST' && url === `${PREFIX}/init/error`) {
				const e = { headers: req.headers, body: JSON.parse(raw) };
				this.initErrors.push(e);
				for (const w of this._initWaiters.splice(0)) w(e);
				this._reply(res, 202, { status: 'OK' });
				return;
			}
			const m = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
			if (req.method === 'POST' && m) {
				const inv = this.pending.get(decodeURIComponent(m[1]));
				if (!inv) {
					this.refused.push({ id: m[1], kind: m[2] });
					this._reply(res, 400, { errorMessage: 'Invalid request ID', errorType: 'InvalidRequestID' });
					return;
				}
				this.pending.delete(inv.id);
				this.trail.push(`${m[2]} ${inv.id}`);
				let body;
				try { body = JSON.parse(raw); } catch { body = undefined; }
				this._reply(res, 202, { status: 'OK' });
				inv.resolve({ kind: m[2], body, raw, headers: req.headers });
				return;
			}
			this._reply(res, 404, { errorMessage: 'not found', errorType: 'NotFound' });
		});
	}

	_stream(req, res, id) {
		const inv = this.pending.get(id);
		if (!inv) {
			this.refused.push({ id, kind: 'response' });
			req.resume();
			this._reply(res, 400, { errorMessage: 'Invalid request ID', errorType: 'InvalidRequestID' });
			return;
		}
		this.pending.delete(id);
		this.trail.push(`response ${id}`);
		const chunks = [];
		let total = 0, pieces = 0;
		req.on('data', (c) => {
			chunks.push(c);
			total += c.length;
			pieces++;
			inv.onData?.(c, total, req);
		});
		req.on('end', () => {
			const raw = Buffer.concat(chunks);
			let prelude, body = raw;
			if (req.headers['content-type'] === 'application/vnd.awslambda.http-integration-response') {
				const at = raw.indexOf(Buffer.alloc(8));
				if (at >= 0) {
					try { prelude = JSON.parse(raw.subarray(0, at).toString('utf8')); } catch { prelude = undefined; }
					body = raw.subarray(at + 8);
				}
			}
			this._reply(res, 202, { status: 'OK' });
			inv.resolve({ kind: 'response', streaming: true, headers: req.headers, prelude, body, raw, pieces,
				trailers: req.trailers });
		});
	}

	_reply(res, status, obj) {
		res.writeHead(status, { 'Content-Type': 'application/json' });
		res.end(JSON.stringify(obj));
	}
}
