// Request smuggling defences at the socket level: every ambiguous or
// malformed framing gets its error (400/501/505 problem+json), the
// connection closes, and a valid request sent right behind it in the same
// write is never processed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, cleanup, rawRequest, req, BODY, RawClient } from './lib.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { if (srv) await srv.stop(); cleanup(); });

const T = { timeout: 20000 };

const H = 'Host: x\r\n';
const cases = [
	['Content-Length together with Transfer-Encoding: chunked', 400,
		`POST /health HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
	['Transfer-Encoding: chunked together with Content-Length (reverse order)', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`],
	['two Content-Length fields with the same value', 400,
		`POST /health HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello`],
	['two Content-Length fields with different values', 400,
		`POST /health HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`],
	['a Content-Length list "5, 5"', 400,
		`POST /health HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\nhello`],
	['a signed Content-Length "+5"', 400,
		`POST /health HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\nhello`],
	['Transfer-Encoding: gzip', 501,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`],
	['Transfer-Encoding: chunked, gzip (chunked not last)', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked, gzip\r\n\r\n`],
	['Transfer-Encoding: chunked twice', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
	['Transfer-Encoding in an HTTP/1.0 request', 400,
		`POST /health HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
	['a chunk size that is not hex', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`],
	['a chunk size with a trailing space and garbage ("5 5")', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5 5\r\nhello\r\n0\r\n\r\n`],
	['chunk data not followed by CRLF', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n`],
	['a chunk size of 17 hex digits', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n10000000000000000\r\n`],
	['obs-fold (a field line starting with a space)', 400,
		`GET /health HTTP/1.1\r\n${H}X-A: b\r\n c\r\n\r\n`],
	['whitespace between field name and colon', 400,
		`GET /health HTTP/1.1\r\n${H}X-A : b\r\n\r\n`],
	['"Content-Length :" with whitespace before the colon', 400,
		`POST /health HTTP/1.1\r\n${H}Content-Length : 5\r\n\r\nhello`],
	['a NUL byte in a field value', 400,
		`GET /health HTTP/1.1\r\n${H}X-A: b\0c\r\n\r\n`],
	['a bare LF line ending', 400,
		`GET /health HTTP/1.1\n${H}\r\n`],
	['a bare CR inside the head', 400,
		`GET /health HTTP/1.1\r\n${H}X-A: b\rc\r\n\r\n`],
	['HTTP/2.0 in the request line', 505,
		`GET /health HTTP/2.0\r\n${H}\r\n`],
	['HTTP/1.2 in the request line', 505,
		`GET /health HTTP/1.2\r\n${H}\r\n`],
	['a lowercase "http/1.1" version', 400,
		`GET /health http/1.1\r\n${H}\r\n`],
	['HTTP/1.1 without Host', 400,
		`GET /health HTTP/1.1\r\nX-A: b\r\n\r\n`],
	['two Host fields', 400,
		`GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`],
	['a Host with userinfo', 400,
		`GET /health HTTP/1.1\r\nHost: user@x\r\n\r\n`],
	['a fragment in the request-target', 400,
		`GET /health#frag HTTP/1.1\r\n${H}\r\n`],
	['two spaces between method and target', 400,
		`GET  /health HTTP/1.1\r\n${H}\r\n`],
	['a control character in the target', 400,
		`GET /hea\x01lth HTTP/1.1\r\n${H}\r\n`],
	['an empty field name', 400,
		`GET /health HTTP/1.1\r\n${H}: v\r\n\r\n`],
	// RFC 9112 7.1.1: chunk-ext = *( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )
	['a chunk extension with an empty name ("2;")', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2;\r\nab\r\n0\r\n\r\n`],
	['a chunk extension with an unterminated quoted value', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2;a="b\r\nab\r\n0\r\n\r\n`],
	['a chunk extension name with an octet outside token', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2;a@b\r\nab\r\n0\r\n\r\n`],
	['a chunk extension with "=" and no value', 400,
		`POST /health HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2;a=\r\nab\r\n0\r\n\r\n`],
	// The body is framed before any response, so an unknown path does not
	// hide a framing error behind its 404.
	['a bad chunk after a POST to an unknown path', 400,
		`POST /no/such/path HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\nzz\r\n`],
	['a bad chunk extension after a POST to an unknown path', 400,
		`POST /no/such/path HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2;\r\nab\r\n0\r\n\r\n`],
];

for (const [what, status, bad] of cases) {
	test(`${what}: ${status} problem+json, close, and the valid request sent behind it is not processed`, T, async () => {
		// The valid request follows in the same write.
		const { res, client } = await rawRequest(srv.port, bad + req('GET', '/json'));
		assert.equal(res.status, status, `status for ${JSON.stringify(bad)}: ${res.text}`);
		assert.equal(res.headers['content-type'], 'application/problem+json');
		const p = res.json();
		assert.equal(p.status, status);
		assert.equal(typeof p.detail, 'string');
		assert.equal(res.headers.connection, 'close');
		await client.waitEnd();
		assert.equal(client.buf.length, 0,
			`nothing after the error response: ${JSON.stringify(client.buf.toString('latin1').slice(0, 200))}`);
		client.destroy();
	});
}

test('a request with a smuggled second request inside a Content-Length body is one request', T, async () => {
	const inner = req('GET', '/json');
	const outer = `POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`;
	const { res, client } = await rawRequest(srv.port, outer + req('GET', '/blog/5'));
	assert.equal(res.status, 405, 'the POST itself');
	const next = await client.response();
	assert.equal(next.text, BODY.blog(5), 'the body was not parsed as a request');
	client.destroy();
});

test('a chunked body hiding a request after a zero chunk with extensions is consumed as body', T, async () => {
	const body = '2;ext=1\r\nab\r\n0;last\r\nX-Trailer: t\r\n\r\n';
	const { res, client } = await rawRequest(srv.port,
		`POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}` + req('GET', '/blog/6'));
	assert.equal(res.status, 405);
	assert.equal((await client.response()).text, BODY.blog(6));
	client.destroy();
});

test('a bad chunk sent after 100 Continue to a POST to an unknown path is a 400, not a 404', T, async () => {
	// The head alone first: the server answers 100 Continue, so it has read
	// the head and routed nothing yet; the body's framing error must still
	// be the answer, with the connection closed.
	const c = await RawClient.connect(srv.port);
	await c.write(`POST /no/such/path HTTP/1.1\r\n${H}Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n`);
	assert.equal((await c.response()).status, 100);
	await c.write('2;ok="a\\"b"\r\nab\r\n3;\r\nabc\r\n0\r\n\r\n' + req('GET', '/json'));
	const res = await c.response();
	assert.equal(res.status, 400, res.text);
	assert.equal(res.headers.connection, 'close');
	await c.waitEnd();
	assert.equal(c.buf.length, 0, 'nothing after the error response');
	c.destroy();
});

test('a chunked body with valid extensions to an unknown path is read whole, then 404, and the connection goes on', T, async () => {
	const body = '2 ; a = "x;\\"y" ; b=c\r\nab\r\n0;d\r\n\r\n';
	const { res, client } = await rawRequest(srv.port,
		`POST /no/such/path HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${body}` + req('GET', '/blog/7'));
	assert.equal(res.status, 404);
	assert.equal((await client.response()).text, BODY.blog(7));
	client.destroy();
});

test('up to 4 empty lines before a request line are ignored; the request is answered', T, async () => {
	const { res, client } = await rawRequest(srv.port, '\r\n\r\n' + req('GET', '/health'));
	assert.equal(res.status, 200);
	assert.equal(res.text, BODY.health);
	client.destroy();
});
