/* net/lambda/api_call.c against a scripted Runtime API on loopback, both on
 * one loop: answers framed by length, by chunks written in pieces and by
 * the connection's end; one kept-alive connection for calls in a row; a
 * kept-alive connection the API closed, sent again on a new one; a refused
 * connection and an answer too large, reported as errors; a streamed
 * body's chunks and trailers, and an answer that comes before its end. */
#include "net/lambda/api_call.h"
#include "tests/unit/check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct ig_loop loop;
static struct lambda_api api;
static char addr[32];

/* The server: accepts, reads one request's head (and its Content-Length
 * body), writes the scripted pieces, and closes when told. */
static struct {
	struct ig_io listen_io, conn_io;
	int lfd, fd;
	int accepts;
	char req[8192];
	size_t req_len;
	const char *const *pieces; /* NULL-ended */
	bool close_after;
	bool answer_at_head; /* answer once the head is in, the body unread */
} srv = { .lfd = -1, .fd = -1 };

static void srv_close_conn(void)
{
	if (srv.fd >= 0) {
		ig_loop_del(&loop, srv.fd);
		close(srv.fd);
		srv.fd = -1;
	}
}

static bool request_complete(void)
{
	srv.req[srv.req_len] = 0;
	char *end = strstr(srv.req, "\r\n\r\n");
	if (!end)
		return false;
	if (srv.answer_at_head)
		return true;
	if (strstr(srv.req, "Transfer-Encoding: chunked\r\n")) /* its last chunk, trailers, CRLF */
		return strstr(end, "\r\n0\r\n") && srv.req_len >= 4 && !strcmp(srv.req + srv.req_len - 4, "\r\n\r\n");
	char *cl = strstr(srv.req, "Content-Length: ");
	size_t body = cl && cl < end ? (size_t)atoi(cl + 16) : 0;
	return srv.req_len >= (size_t)(end + 4 - srv.req) + body;
}

static void on_srv_conn(struct ig_io *io, uint32_t events)
{
	(void)io;
	(void)events;
	ssize_t n = read(srv.fd, srv.req + srv.req_len, sizeof srv.req - 1 - srv.req_len);
	if (n <= 0) {
		srv_close_conn();
		return;
	}
	srv.req_len += (size_t)n;
	if (!request_complete())
		return;
	for (const char *const *p = srv.pieces; *p; p++)
		if (write(srv.fd, *p, strlen(*p)) < 0)
			break;
	if (srv.close_after)
		srv_close_conn();
}

static void on_srv_accept(struct ig_io *io, uint32_t events)
{
	(void)io;
	(void)events;
	int fd = accept(srv.lfd, NULL, NULL);
	if (fd < 0)
		return;
	srv_close_conn(); /* one connection at a time, as the runtime makes */
	srv.fd = fd;
	srv.accepts++;
	srv.conn_io.fn = on_srv_conn;
	ig_loop_add(&loop, fd, EPOLLIN, &srv.conn_io);
}

/* One call's answer, copied out. */
static struct {
	bool done;
	const char *error;
	int status;
	char body[256];
	size_t body_len;
	char request_id[64];
} got;

static void on_answer(const struct lambda_api_answer *a)
{
	got.done = true;
	got.error = a->error;
	got.status = a->status;
	got.body_len = a->body.len < sizeof got.body ? a->body.len : sizeof got.body;
	if (a->body.len)
		memcpy(got.body, a->body.ptr, got.body_len);
	got.request_id[0] = 0;
	for (size_t i = 0; i < a->header_count; i++)
		if (a->headers[i].name.len == 29 && strncasecmp(a->headers[i].name.ptr, "Lambda-Runtime-Aws-Request-Id", 29) == 0)
			snprintf(got.request_id, sizeof got.request_id, "%.*s", (int)a->headers[i].value.len,
				 a->headers[i].value.ptr);
	loop.running = false;
}

/* Sends one call with the server scripted to answer with pieces. */
static void call(const char *method, const char *path, const char *body, const char *const *pieces, bool close_after)
{
	srv.pieces = pieces;
	srv.close_after = close_after;
	srv.req_len = 0;
	memset(&got, 0, sizeof got);
	ig_lambda_api_call(&api, addr, method, path, NULL, 0, (ig_str){ body, body ? strlen(body) : 0 }, 5000, on_answer);
	if (!got.done)
		ig_loop_run(&loop);
}

/* A streamed call's source: pieces handed out one at a time, the next
 * one made ready after the batch in which the last was taken. */
static struct {
	const char *const *pieces; /* NULL-ended */
	size_t at, sent;           /* the piece, the bytes of it sent */
	bool ready;
	size_t stall_at; /* the piece that never becomes ready (0: none) */
	const char *trailers;
	struct ig_deferred next;
} src;

static ig_str src_peek(void *arg, bool *end, ig_str *trailers)
{
	(void)arg;
	const char *p = src.pieces[src.at];
	*end = !p;
	if (!p) {
		*trailers = (ig_str){ src.trailers, strlen(src.trailers) };
		return (ig_str){ NULL, 0 };
	}
	if (!src.ready)
		return (ig_str){ NULL, 0 };
	return (ig_str){ p + src.sent, strlen(p) - src.sent };
}

static void src_next(struct ig_deferred *d)
{
	(void)d;
	src.ready = true;
	ig_lambda_api_more(&api);
}

static void src_taken(void *arg, size_t n)
{
	(void)arg;
	src.sent += n;
	if (src.sent == strlen(src.pieces[src.at])) {
		src.at++;
		src.sent = 0;
		src.ready = false;
		src.next.fn = src_next;
		if (src.at != src.stall_at)
			ig_loop_defer(&loop, &src.next);
	}
}

static const struct lambda_api_source source = { .peek = src_peek, .taken = src_taken };

static void stream(const char *const *body, const char *trailers, const char *const *pieces, size_t stall_at)
{
	srv.pieces = pieces;
	srv.close_after = false;
	srv.req_len = 0;
	memset(&got, 0, sizeof got);
	src = (__typeof__(src)){ .pieces = body, .ready = true, .trailers = trailers, .stall_at = stall_at };
	static const ig_header h[] = { { IG_STR("Lambda-Runtime-Function-Response-Mode"), IG_STR("streaming") } };
	ig_lambda_api_stream(&api, addr, "/2018-06-01/runtime/invocation/r-2/response", h, 1, &source, NULL, 5000,
			     on_answer);
	if (!got.done)
		ig_loop_run(&loop);
}

static bool body_is(const char *s)
{
	return got.body_len == strlen(s) && memcmp(got.body, s, got.body_len) == 0;
}

int main(void)
{
	srv.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	if (srv.lfd < 0 || bind(srv.lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(srv.lfd, 8) != 0 ||
	    getsockname(srv.lfd, (struct sockaddr *)&a, &alen) != 0 || ig_loop_init(&loop, 0) != 0 ||
	    ig_lambda_api_init(&api, &loop, 1024) != 0) {
		perror("setup");
		return 1;
	}
	snprintf(addr, sizeof addr, "127.0.0.1:%u", ntohs(a.sin_port));
	srv.listen_io.fn = on_srv_accept;
	ig_loop_add(&loop, srv.lfd, EPOLLIN, &srv.listen_io);

	static const char *const by_length[] = {
		"HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: r-1\r\nContent-Length: 7\r\n\r\n{\"a\":1}", NULL
	};
	call("GET", "/2018-06-01/runtime/invocation/next", NULL, by_length, false);
	CHECK(got.done && !got.error && got.status == 200, "an answer framed by its length");
	CHECK(body_is("{\"a\":1}") && strcmp(got.request_id, "r-1") == 0, "its body and fields");
	CHECK(strncmp(srv.req, "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: 127.0.0.1:", 66) == 0,
	      "the request's line and Host");

	static const char *const chunked[] = {
		"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc", "\r\n2\r\nde\r\n", "0\r\n\r\n", NULL
	};
	call("POST", "/2018-06-01/runtime/invocation/r-1/response", "{\"ok\":true}", chunked, false);
	CHECK(got.done && !got.error && got.status == 202 && body_is("abcde"), "a chunked answer in pieces");
	CHECK(strstr(srv.req, "Content-Length: 11\r\n\r\n{\"ok\":true}") != NULL, "the post's body, with its length");
	CHECK_INT(srv.accepts, 1, "calls in a row share one connection");

	/* A streamed body: chunks as the source has them, then the last chunk
	   with the trailers; the answer read after it, on the same connection. */
	static const char *const accepted[] = { "HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nok", NULL };
	static const char *const hello[] = { "hello ", "world", NULL };
	stream(hello, "X-Error-Type: none\r\n", accepted, 0);
	CHECK(got.done && !got.error && got.status == 202 && body_is("ok"), "a streamed post's answer");
	CHECK(strstr(srv.req, "Lambda-Runtime-Function-Response-Mode: streaming\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "6\r\nhello \r\n5\r\nworld\r\n0\r\nX-Error-Type: none\r\n\r\n") != NULL &&
	      !strstr(srv.req, "Content-Length"),
	      "its head, its chunks as made, the last chunk and the trailers");
	CHECK_INT(srv.accepts, 1, "a streamed post on the kept-alive connection");
	static const char *const none[] = { NULL };
	stream(none, "", accepted, 0);
	CHECK(got.done && !got.error && strstr(srv.req, "chunked\r\n\r\n0\r\n\r\n") != NULL, "an empty stream: the last chunk alone");
	/* Answered before the body's end (Lambda refusing it): the call ends
	   with that answer, and the connection, mid-body, is not used again. */
	static const char *const refused[] = { "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n", NULL };
	static const char *const endless[] = { "a", "b", "c", NULL }; /* "b" never comes */
	srv.answer_at_head = true;
	stream(endless, "", refused, 1);
	srv.answer_at_head = false;
	CHECK(got.done && !got.error && got.status == 413 && src.at == 1, "an answer before the body's end ends the call");
	call("GET", "/after", NULL, by_length, false);
	CHECK(got.done && !got.error && got.status == 200 && srv.accepts == 2, "the next call on a new connection");

	static const char *const until_close[] = { "HTTP/1.0 200 OK\r\n\r\nto the end", NULL };
	call("GET", "/x", NULL, until_close, true);
	CHECK(got.done && !got.error && body_is("to the end"), "an answer that ends with the connection");

	/* The server closed that one: the next call opens another. Then a
	   kept-alive connection that the server closes while idle. */
	call("GET", "/y", NULL, by_length, false);
	CHECK(got.done && !got.error && srv.accepts == 3, "a new connection after one the answer closed");
	srv_close_conn();
	call("GET", "/z", NULL, by_length, false);
	CHECK(got.done && !got.error && got.status == 200, "a kept-alive connection found closed: sent again on a new one");
	CHECK_INT(srv.accepts, 4, "the resend's connection");

	static const char *const too_large[] = { "HTTP/1.1 200 OK\r\nContent-Length: 999999\r\n\r\n", NULL };
	call("GET", "/big", NULL, too_large, false);
	CHECK(got.done && got.error && strstr(got.error, "too large"), "an answer beyond the buffer is an error");

	static const char *const not_http[] = { "SSH-2.0-OpenSSH\r\n\r\n", NULL };
	call("GET", "/ssh", NULL, not_http, false);
	CHECK(got.done && got.error && got.status == 0, "an answer that is not HTTP is an error");

	/* Nothing listens any more: refused. */
	srv_close_conn();
	ig_loop_del(&loop, srv.lfd);
	close(srv.lfd);
	call("GET", "/gone", NULL, by_length, false);
	CHECK(got.done && got.error && got.status == 0, "a refused connection is an error");
	return check_done();
}
