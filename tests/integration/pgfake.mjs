// A raw fake PostgreSQL server (protocol v3 on node's net) for the fault
// tests: it completes startup with trust auth, answers the simple and the
// extended query protocol from a results function, and misbehaves on
// purpose when a test's fault hook says so (a malformed message, a close in
// the middle of a DataRow, a DataRow over the client's size limit, an
// ErrorResponse). It records, per connection, every message it read and
// every reply it wrote, in order, so a test can prove that the client wrote
// N queries before reading the first reply. Listens on 127.0.0.1, port 0.
import net from 'node:net';
import { Watched } from './lib.mjs';

export const OID = { bool: 16, int8: 20, int2: 21, int4: 23, text: 25, float8: 701, varchar: 1043 };

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

// ---- backend message builders ----

/** One backend message: type byte, Int32 length (itself included), body. */
export function msg(type, ...parts) {
	const body = Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p))));
	const head = Buffer.alloc(5);
	head.write(type, 0, 'latin1');
	head.writeInt32BE(body.length + 4, 1);
	return Buffer.concat([head, body]);
}
const i16 = (v) => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b; };
const i32 = (v) => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b; };
const cstr = (s) => Buffer.concat([Buffer.from(String(s)), Buffer.from([0])]);

export const authOk = () => msg('R', i32(0));
export const parameterStatus = (k, v) => msg('S', cstr(k), cstr(v));
export const backendKey = (pid, key) => msg('K', i32(pid), i32(key));
export const ready = (status = 'I') => msg('Z', status);
export const parseComplete = () => msg('1');
export const bindComplete = () => msg('2');
export const closeComplete = () => msg('3');
export const noData = () => msg('n');
export const commandComplete = (tag) => msg('C', cstr(tag));
export const emptyQuery = () => msg('I');
export function errorResponse({ severity = 'ERROR', code = 'XX000', message = 'fake error', detail, constraint } = {}) {
	const f = [['S', severity], ['V', severity], ['C', code], ['M', message]];
	if (detail !== undefined) f.push(['D', detail]);
	if (constraint !== undefined) f.push(['n', constraint]);
	return msg('E', ...f.map(([k, v]) => Buffer.concat([Buffer.from(k), cstr(v)])), Buffer.from([0]));
}
export function parameterDescription(oids) {
	return msg('t', i16(oids.length), ...oids.map(i32));
}
/** fields: [{name, oid}]; formats: one per field (0 text, 1 binary). */
export function rowDescription(fields, formats = []) {
	return msg('T', i16(fields.length), ...fields.map((f, i) => Buffer.concat([
		cstr(f.name), i32(0), i16(0), i32(f.oid), i16(typeLen(f.oid)), i32(-1), i16(formats[i] ?? 0)])));
}
/** cols: Buffers (already encoded) or null. */
export function dataRow(cols) {
	return msg('D', i16(cols.length), ...cols.flatMap((c) => (c === null ? [i32(-1)] : [i32(c.length), c])));
}

function typeLen(oid) {
	return { [OID.bool]: 1, [OID.int2]: 2, [OID.int4]: 4, [OID.int8]: 8, [OID.float8]: 8 }[oid] ?? -1;
}

/** A JS value as a column of type oid in format (0 text, 1 binary). */
export function encodeValue(v, oid, format) {
	if (v === null || v === undefined) return null;
	if (format === 1) {
		switch (oid) {
		case OID.bool: return Buffer.from([v ? 1 : 0]);
		case OID.int2: return i16(Number(v));
		case OID.int4: return i32(Number(v));
		case OID.int8: { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(v)); return b; }
		case OID.float8: { const b = Buffer.alloc(8); b.writeDoubleBE(Number(v)); return b; }
		default: return Buffer.isBuffer(v) ? v : Buffer.from(String(v));
		}
	}
	if (oid === OID.bool) return Buffer.from(v ? 't' : 'f');
	return Buffer.isBuffer(v) ? v : Buffer.from(String(v));
}

/** A bound parameter as a JS value: text as a string, binary int2/4/8 (by
 * the Parse's oid, else by length) as a number or BigInt. */
function decodeParam(buf, oid, format) {
	if (buf === null) return null;
	if (format === 0) return buf.toString('utf8');
	if (oid === OID.int2 || (!oid && buf.length === 2)) return buf.readInt16BE(0);
	if (oid === OID.int4 || (!oid && buf.length === 4)) return buf.readInt32BE(0);
	if (oid === OID.int8 || (!oid && buf.length === 8)) return buf.readBigInt64BE(0);
	if (oid === OID.bool) return buf[0] !== 0;
	return buf.toString('utf8');
}

// ---- frontend message parsing ----

class Reader {
	constructor(b) { this.b = b; this.o = 0; }
	u8() { return this.b[this.o++]; }
	i16() { const v = this.b.readInt16BE(this.o); this.o += 2; return v; }
	i32() { const v = this.b.readInt32BE(this.o); this.o += 4; return v; }
	bytes(n) { const v = this.b.subarray(this.o, this.o + n); this.o += n; return v; }
	cstr() { const e = this.b.indexOf(0, this.o); const v = this.b.toString('utf8', this.o, e); this.o = e + 1; return v; }
}

function parseFrontend(type, body) {
	const r = new Reader(body);
	switch (type) {
	case 'Q': return { type, sql: r.cstr() };
	case 'P': {
		const name = r.cstr(); const sql = r.cstr(); const n = r.i16();
		const oids = []; for (let i = 0; i < n; i++) oids.push(r.i32());
		return { type, name, sql, oids };
	}
	case 'B': {
		const portal = r.cstr(); const stmt = r.cstr();
		const nf = r.i16(); const formats = []; for (let i = 0; i < nf; i++) formats.push(r.i16());
		const np = r.i16(); const params = [];
		for (let i = 0; i < np; i++) { const len = r.i32(); params.push(len < 0 ? null : Buffer.from(r.bytes(len))); }
		const nr = r.i16(); const resultFormats = []; for (let i = 0; i < nr; i++) resultFormats.push(r.i16());
		return { type, portal, stmt, formats, params, resultFormats };
	}
	case 'D': return { type, kind: String.fromCharCode(r.u8()), name: r.cstr() };
	case 'E': return { type, portal: r.cstr(), maxRows: r.i32() };
	case 'C': return { type, kind: String.fromCharCode(r.u8()), name: r.cstr() };
	case 'p': return { type, secret: body };
	default: return { type }; // S (Sync), H (Flush), X (Terminate), ...
	}
}

// The format of result column i from Bind's result format codes.
const formatOf = (codes, i) => (codes.length === 0 ? 0 : codes.length === 1 ? codes[0] : codes[i] ?? 0);

/* What results(q) returns for one query (q = {sql, params (decoded), conn}):
 *   { fields: [{name, oid}], rows: [[value...]] , tag? }     a result set
 *   { tag: 'UPDATE 3' }                                       a command without rows
 * The default answers `SHOW max_connections` with 100, the server's
 * migrations check (SELECT ... FROM ingot_migrations) with no row, and every other
 * statement with the row (id, randomnumber) = ($1 or 1, 4242), the shape of
 * the reference service's World queries.
 * What fault(q) returns when it wants a query to go wrong (else null):
 *   { error: {code, message, detail, constraint} }  an ErrorResponse for it
 *   { malformed: 'short-length' | 'column-overrun' } a broken message instead of its rows
 *   { closeMidRow: true }     half a DataRow, then the connection closes
 *   { rowBytes: N }           its row as one DataRow of N bytes (the last column padded)
 *   { stall: true }           no answer until a CancelRequest names this connection
 *                             (then ErrorResponse 57014 and the rest)
 *                             What the server answered for it before (ParseComplete...)
 *                             is kept back with it, as PostgreSQL keeps its output until
 *                             the Sync
 *   { stall: true, ignoreCancels: N }  the same, but the first N CancelRequests are
 *                             ignored, as a server ignores one that comes between messages
 *   { stall: true, flushed: true }  the same, but what came before the stall is written,
 *                             as when the server's output buffer filled: its answer began
 *   { stall: true, passOn: true }  the same, but a CancelRequest finds it just ended: it
 *                             answers as usual, and the request stops the stalled query
 *                             after it (57014), as PostgreSQL's lands on whatever runs
 * keepCancels (a property, false at first): while true, a CancelRequest's
 * connection is left open after it acted, as a server slow to close it
 * would; releaseCancels() closes them.
 * hold(conn) -> bool: while true, replies are kept back (in order) and
 * written once it turns false (checked after every read, and by flush());
 * a test holds until N queries arrived to prove they were all sent first. */
export function defaultResults(q) {
	if (/^\s*show\s+max_connections/i.test(q.sql)) return { fields: [{ name: 'max_connections', oid: OID.text }], rows: [['100']], tag: 'SHOW' };
	if (/^\s*(begin|commit|rollback|set|listen|unlisten)\b/i.test(q.sql)) return { tag: q.sql.trim().split(/\s+/)[0].toUpperCase() };
	// The server's migrations check at its first connection: none applied.
	if (/\bfrom\s+ingot_migrations\b/i.test(q.sql)) {
		return { fields: [{ name: 'version', oid: OID.int8 }, { name: 'name', oid: OID.text }, { name: 'checksum', oid: OID.text }],
			rows: [], tag: 'SELECT 0' };
	}
	const id = q.params[0] === undefined || q.params[0] === null ? 1 : Number(q.params[0]);
	return { fields: [{ name: 'id', oid: OID.int4 }, { name: 'randomnumber', oid: OID.int4 }], rows: [[id, 4242]] };
}

/** until(pred) resolves once pred(fake) holds (checked after every read and close). */
export class PgFake extends Watched {
	static async start({ results = defaultResults, fault = () => null, hold = () => false, port = 0 } = {}) {
		const f = new PgFake(results, fault, hold);
		await new Promise((resolve, reject) => {
			f.server.once('error', reject);
			f.server.listen(port, '127.0.0.1', resolve);
		});
		f.port = f.server.address().port;
		f.url = `postgres://fake@127.0.0.1:${f.port}/fake?sslmode=disable`;
		return f;
	}

	constructor(results, fault, hold) {
		super();
		this.results = results;
		this.fault = fault;
		this.hold = hold;
		this.conns = [];      // every connection, in accept order (cancel requests included)
		this.cancels = [];    // every CancelRequest: {pid, key}
		this.keepCancels = false;
		this.openCancels = []; // their sockets, while keepCancels
		this.queries = [];    // every query executed: {conn, sql, params}
		this.sockets = new Set();
		this.server = net.createServer((s) => this._accept(s));
	}

	close() {
		for (const s of this.sockets) s.destroy();
		return new Promise((resolve) => this.server.close(() => resolve()));
	}

	_accept(socket) {
		const conn = {
			id: this.conns.length, socket, pid: 1000 + this.conns.length, key: 0x5eed0000 + this.conns.length,
			started: false, closed: false, stalled: false,
			log: [],       // {dir: 'in', type, ...} and {dir: 'out', what} in order
			statements: new Map(), portals: new Map(),
			failed: false, // an error in this Sync's batch: skip until Sync
			held: [],      // replies kept back while hold(conn)
			syncs: 0, startup: null,
			// Queries read (each Sync or simple Query) whose ReadyForQuery has
			// not been written yet, and the most there ever were: the client
			// cannot have read any of their replies, so a peak of N proves N
			// queries were all written before the first of them was answered.
			pending: 0, peak: 0,
		};
		this.conns.push(conn);
		this.sockets.add(socket);
		// As PostgreSQL's own: a reply's messages are not held back for
		// the ACK of its first (Nagle's delay would hold an ErrorResponse
		// after a lone BindComplete for the peer's delayed ACK).
		socket.setNoDelay(true);
		let buf = Buffer.alloc(0);
		socket.on('data', (chunk) => {
			buf = Buffer.concat([buf, chunk]);
			const out = [];
			buf = this._consume(conn, buf, out);
			this._emit(conn, out);
			this._wake();
		});
		socket.on('error', () => {});
		socket.on('close', () => { conn.closed = true; this.sockets.delete(socket); this._wake(); });
		this._wake();
	}

	// Parses every complete message in buf; replies go to out (Buffers, or
	// {close} / {stall}); returns what is left.
	_consume(conn, buf, out) {
		for (;;) {
			if (!conn.started) {
				if (buf.length < 8) return buf;
				const len = buf.readInt32BE(0);
				if (buf.length < len) return buf;
				const code = buf.readInt32BE(4);
				const body = buf.subarray(8, len);
				buf = buf.subarray(len);
				if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
					conn.log.push({ dir: 'in', type: code === SSL_REQUEST ? 'SSLRequest' : 'GSSENCRequest' });
					out.push(Buffer.from('N'));
					continue;
				}
				if (code === CANCEL_REQUEST) {
					const c = { pid: body.readInt32BE(0), key: body.readInt32BE(4) };
					conn.log.push({ dir: 'in', type: 'CancelRequest', ...c });
					this.cancels.push(c);
					this._cancel(c);
					if (this.keepCancels) this.openCancels.push(conn.socket);
					else out.push({ close: true });
					return Buffer.alloc(0);
				}
				if (code !== PROTOCOL_3) { out.push(errorResponse({ severity: 'FATAL', code: '08P01', message: 'unsupported protocol' }), { close: true }); return Buffer.alloc(0); }
				const params = {};
				const parts = body.toString('utf8').split('\0');
				for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) params[parts[i]] = parts[i + 1];
				conn.startup = params;
				conn.started = true;
				conn.log.push({ dir: 'in', type: 'Startup', params });
				out.push(authOk(), parameterStatus('server_version', '15.0 (fake)'),
					parameterStatus('client_encoding', 'UTF8'), parameterStatus('DateStyle', 'ISO, MDY'),
					parameterStatus('integer_datetimes', 'on'), parameterStatus('standard_conforming_strings', 'on'),
					backendKey(conn.pid, conn.key), ready());
				continue;
			}
			if (buf.length < 5) return buf;
			const len = buf.readInt32BE(1);
			if (buf.length < 1 + len) return buf;
			const type = String.fromCharCode(buf[0]);
			const m = parseFrontend(type, buf.subarray(5, 1 + len));
			buf = buf.subarray(1 + len);
			conn.log.push({ dir: 'in', ...m });
			if (type === 'X') { out.push({ close: true }); return Buffer.alloc(0); }
			this._handle(conn, m, out);
		}
	}

	_handle(conn, m, out) {
		if (conn.failed && m.type !== 'S') return; // the server skips to Sync after an error
		switch (m.type) {
		case 'Q': {
			this._pend(conn);
			for (const sql of m.sql.split(';').map((s) => s.trim()).filter(Boolean)) {
				if (!this._run(conn, { sql, params: [], resultFormats: [], describe: true }, out)) break;
			}
			if (m.sql.trim() === '') out.push(emptyQuery());
			out.push(ready());
			return;
		}
		case 'P':
			conn.statements.set(m.name, { sql: m.sql, oids: m.oids });
			out.push(parseComplete());
			return;
		case 'B': {
			const st = conn.statements.get(m.stmt);
			if (!st) { this._fail(conn, out, { code: '26000', message: `prepared statement "${m.stmt}" does not exist` }); return; }
			const params = m.params.map((p, i) => decodeParam(p, st.oids[i], formatOf(m.formats, i)));
			conn.portals.set(m.portal, { sql: st.sql, params, resultFormats: m.resultFormats });
			out.push(bindComplete());
			return;
		}
		case 'D': {
			if (m.kind === 'S') {
				const st = conn.statements.get(m.name);
				if (!st) { this._fail(conn, out, { code: '26000', message: 'no such statement' }); return; }
				out.push(parameterDescription(st.oids));
				const r = this.results({ sql: st.sql, params: [], conn, describeOnly: true });
				out.push(r.fields ? rowDescription(r.fields) : noData());
			} else {
				const p = conn.portals.get(m.name);
				if (!p) { this._fail(conn, out, { code: '34000', message: 'no such portal' }); return; }
				p.described = true;
				const r = this.results({ sql: p.sql, params: p.params, conn });
				out.push(r.fields ? rowDescription(r.fields, r.fields.map((_, i) => formatOf(p.resultFormats, i))) : noData());
			}
			return;
		}
		case 'E': {
			const p = conn.portals.get(m.portal);
			if (!p) { this._fail(conn, out, { code: '34000', message: 'no such portal' }); return; }
			this._run(conn, { ...p, describe: false }, out);
			return;
		}
		case 'C': out.push(closeComplete()); return;
		case 'S':
			this._pend(conn);
			conn.failed = false;
			conn.syncs++;
			out.push(ready());
			return;
		default: return; // H (Flush) and the rest: nothing to answer
		}
	}

	_pend(conn) {
		conn.pending++;
		conn.peak = Math.max(conn.peak, conn.pending);
	}

	_fail(conn, out, error) {
		out.push(errorResponse(error));
		conn.failed = true;
	}

	// One statement's rows (with its RowDescription in the simple protocol);
	// false when it failed.
	_run(conn, q, out) {
		const query = { conn, sql: q.sql, params: q.params, index: this.queries.length };
		this.queries.push(query);
		const f = this.fault(query);
		const r = this.results(query);
		const formats = (r.fields || []).map((_, i) => formatOf(q.resultFormats, i));
		if (f?.error) { this._fail(conn, out, f.error); return false; }
		if (f?.stall) {
			const answer = f.passOn ? this._rows(r, formats) : null;
			out.push({ stall: true, ignoreCancels: f.ignoreCancels || 0, flushed: !!f.flushed, answer });
			return false;
		}
		if (q.describe && r.fields) out.push(rowDescription(r.fields, formats));
		if (f?.malformed === 'short-length') { out.push(Buffer.from([0x44, 0, 0, 0, 2])); return false; }
		if (f?.malformed === 'column-overrun') {
			// One column that claims 1,000 bytes in a 10-byte body.
			out.push(msg('D', i16(1), i32(1000), Buffer.from('abcd')));
			return false;
		}
		if (f?.closeMidRow) {
			const row = dataRow(r.fields.map((fd, i) => encodeValue(r.rows[0]?.[i] ?? 1, fd.oid, formats[i])));
			out.push(row.subarray(0, Math.max(6, row.length >> 1)), { close: true });
			return false;
		}
		if (f?.rowBytes) {
			// The row's own columns, the last one padded to N bytes in all.
			const cols = r.fields.map((fd, i) => encodeValue(r.rows[0]?.[i] ?? 1, fd.oid, formats[i]));
			const used = 7 + cols.slice(0, -1).reduce((a, c) => a + 4 + c.length, 0) + 4;
			cols[cols.length - 1] = Buffer.alloc(Math.max(0, f.rowBytes - used), '7');
			out.push(dataRow(cols));
			out.push(commandComplete('SELECT 1'));
			return true;
		}
		out.push(...this._rows(r, formats));
		return true;
	}

	// A result's DataRows and CommandComplete.
	_rows(r, formats) {
		return [...(r.rows || []).map((row) => dataRow(r.fields.map((fd, i) => encodeValue(row[i], fd.oid, formats[i])))),
			commandComplete(r.tag ?? `SELECT ${(r.rows || []).length}`)];
	}

	// Writes (or holds back) what a read produced, logging each reply.
	_emit(conn, out) {
		conn.held.push(...out);
		if (conn.stalled || this.hold(conn)) return;
		const pending = conn.held;
		conn.held = [];
		// Unless flushed, a stall keeps back its own query's answer since the
		// last ReadyForQuery.
		const at = pending.findIndex((o) => o.stall);
		let keep = at;
		if (at >= 0 && !pending[at].flushed) {
			while (keep > 0 && !(Buffer.isBuffer(pending[keep - 1]) && pending[keep - 1][0] === 0x5a)) keep--;
		}
		for (const [i, o] of pending.entries()) {
			if (conn.stalled) return;
			if (o.close) { conn.log.push({ dir: 'out', what: 'close' }); conn.socket.end(); return; }
			if (i === keep) {
				// Kept with what follows it: a CancelRequest answers it.
				conn.log.push({ dir: 'out', what: 'stall' });
				conn.stalled = true;
				conn.ignoreCancels = pending[at].ignoreCancels;
				conn.held = pending.slice(keep);
				return;
			}
			const what = String.fromCharCode(o[0]);
			if (what === 'Z' && conn.pending > 0) conn.pending--;
			conn.log.push({ dir: 'out', what });
			conn.socket.write(o);
		}
	}

	// A CancelRequest for a stalled query: it fails as the server's would
	// (57014), and the connection goes on.
	_cancel({ pid, key }) {
		const c = this.conns.find((x) => x.pid === pid && x.key === key && !x.closed);
		if (!c || !c.stalled) return;
		if (c.ignoreCancels > 0) { c.ignoreCancels--; return; }
		const at = c.held.findIndex((o) => o.stall);
		const { answer } = c.held[at];
		if (answer) c.held.splice(at, 1, ...answer);
		const stopped = answer ? c.held.findIndex((o) => o.stall) : at;
		if (stopped >= 0) c.held[stopped] = errorResponse({ code: '57014', message: 'canceling statement due to user request' });
		c.stalled = false;
		this._emit(c, []);
	}

	/** Closes the CancelRequests' connections kept open (keepCancels). */
	releaseCancels() {
		for (const s of this.openCancels.splice(0)) s.end();
	}

	/** Asks hold() again now, not at the next read: what it no longer keeps
	 * back is written (for a test that has just turned its hold off). */
	flush() {
		for (const c of this.conns) if (!c.closed) this._emit(c, []);
	}
}
