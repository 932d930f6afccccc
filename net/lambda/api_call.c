/* The Runtime API's HTTP calls (api_call.h): a request written with
 * writev, the answer read into one buffer mapped once, its head parsed by
 * net/http's response parser and its body framed by length, chunks or the
 * connection's end. Errors reach the caller as a text for its log: it
 * retries (runtime.c), so nothing here does, but for a kept-alive
 * connection found closed before any answer, which is sent again once. */
#include "net/lambda/api_call.h"
#include "net/lambda/internal.h"
#include "net/http/internal.h"
#include "net/http/response_head.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 10000
#define HEAD_MAX (64u << 10)

static const struct http_limits limits = {
	.max_request_line = 8192, .max_header_bytes = HEAD_MAX, .max_headers = LAMBDA_API_HEADERS_MAX,
};

int ig_lambda_api_init(struct lambda_api *c, struct ig_loop *loop, size_t max_body)
{
	*c = (struct lambda_api){ .loop = loop, .fd = -1, .rcap = max_body + HEAD_MAX };
	void *m = mmap(NULL, c->rcap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	c->rbuf = m;
	return 0;
}

static void drop_connection(struct lambda_api *c)
{
	if (c->fd < 0)
		return;
	ig_loop_del(c->loop, c->fd);
	close(c->fd);
	c->fd = -1;
}

/* Ends the call with answer a; the callback may start the next one. */
static void finish(struct lambda_api *c, const struct lambda_api_answer *a)
{
	ig_timer_cancel(&c->loop->timers, &c->timer);
	lambda_api_fn *fn = c->fn;
	c->fn = NULL;
	c->src = NULL;
	fn(a);
}

static void fail(struct lambda_api *c, const char *why)
{
	drop_connection(c);
	finish(c, &(struct lambda_api_answer){ .error = why });
}

static void watch(struct lambda_api *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = &c->io };
	epoll_ctl(c->loop->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void send_request(struct lambda_api *c);

/* A kept-alive connection the Runtime API had closed: the request never
 * reached it, so it goes again, once, on a new one. */
static bool resend_on_stale(struct lambda_api *c)
{
	if (!c->reused || c->again || c->rlen || c->src_started)
		return false;
	c->again = true;
	drop_connection(c);
	send_request(c);
	return true;
}

static void on_timeout(struct ig_timer *t)
{
	struct lambda_api *c = (struct lambda_api *)((char *)t - offsetof(struct lambda_api, timer));
	fail(c, c->connecting ? "connect timed out" : "the Runtime API did not answer in time");
}

static void answer(struct lambda_api *c)
{
	if (!c->keep_alive_answer || (c->src && !c->src_done)) /* answered before the body's end */
		drop_connection(c);
	else
		watch(c, EPOLLIN | EPOLLRDHUP);
	finish(c, &(struct lambda_api_answer){ .status = c->status, .headers = c->fields,
						 .header_count = c->field_count,
						 .body = { c->rbuf + c->head_end, c->body_end - c->head_end } });
}

/* Frames what has arrived: 1 when the answer is complete, 0 for more,
 * -1 when it cannot be read (the call has failed). eof: the connection
 * ended. */
static int take(struct lambda_api *c, bool eof)
{
	if (!c->head_end) {
		struct http_response_head h = { .headers = c->fields, .header_capacity = LAMBDA_API_HEADERS_MAX };
		struct http_error err;
		size_t at = 0;
		for (;;) {
			int n = ig_http_parse_response(c->rbuf + at, c->rlen - at, false, &limits, &h, &err);
			if (n == HTTP_INCOMPLETE) {
				if (eof)
					{
				fail(c, "the connection closed before the answer's head");
				return -1;
			}
				return 0;
			}
			if (n < 0)
				{
				fail(c, "the Runtime API's answer is not HTTP");
				return -1;
			}
			if (!http_response_is_interim(&h)) {
				at += (size_t)n;
				break;
			}
			at += (size_t)n;
		}
		/* The head is kept where it is: the fields point into it. */
		c->head_end = at;
		c->body_end = at;
		c->status = h.status;
		c->field_count = h.num_headers;
		c->framing = h.framing;
		c->content_length = h.content_length;
		c->keep_alive_answer = h.keep_alive;
		c->chunked = (struct http_chunked_decoder){ .max_trailer_bytes = 4096 };
		if (h.framing == BODY_LENGTH && h.content_length > c->rcap - at)
			{
				fail(c, "the Runtime API's answer is too large");
				return -1;
			}
	}
	switch (c->framing) {
	case BODY_NONE:
		c->body_end = c->head_end;
		return 1;
	case BODY_LENGTH:
		if (c->rlen - c->head_end >= c->content_length) {
			c->body_end = c->head_end + c->content_length;
			return 1;
		}
		break;
	case BODY_UNTIL_CLOSE:
		c->body_end = c->rlen;
		if (eof)
			return 1;
		return 0;
	case BODY_CHUNKED: {
		size_t n = c->rlen - c->body_end;
		ssize_t r = ig_http_decode_chunked(&c->chunked, c->rbuf + c->body_end, &n);
		c->body_end += n;
		c->rlen = c->body_end; /* what followed the body, if anything, is dropped */
		if (r == HTTP_ERROR)
			{
				fail(c, "the Runtime API's chunked answer is malformed");
				return -1;
			}
		if (r >= 0)
			return 1;
		break;
	}
	}
	if (eof)
		{
				fail(c, "the connection closed before the answer's end");
				return -1;
			}
	return 0;
}

static void on_readable(struct lambda_api *c)
{
	for (;;) {
		if (c->rlen == c->rcap)
			{
				fail(c, "the Runtime API's answer is too large");
				return;
			}
		ssize_t n = read(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0 && resend_on_stale(c))
			return;
		if (n < 0)
			{
				fail(c, strerror(errno));
				return;
			}
		if (n > 0)
			c->rlen += (size_t)n;
		int done = take(c, n == 0);
		if (done < 0)
			return;
		if (done > 0)
			{
				answer(c);
				return;
			}
		if (n == 0)
			return;
	}
}

/* ---- a streamed body, chunk by chunk ---- */

static void stream_body(struct lambda_api *c);

/* The last chunk and the trailers, once the source has ended. */
static void stream_last(struct lambda_api *c, ig_str trailers)
{
	if (trailers.len > sizeof c->last - 5)
		trailers.len = 0; /* the end is worth more than what it says */
	memcpy(c->last, "0\r\n", 3);
	if (trailers.len)
		memcpy(c->last + 3, trailers.ptr, trailers.len);
	memcpy(c->last + 3 + trailers.len, "\r\n", 2);
	c->last_len = 5 + trailers.len;
	c->last_sent = 0;
}

/* n bytes of the current chunk were written: its size line, then its
 * data (the source's, given back as taken), then its CRLF. */
static void chunk_sent(struct lambda_api *c, size_t n)
{
	size_t k = c->chunk_head_len - c->chunk_head_sent < n ? c->chunk_head_len - c->chunk_head_sent : n;
	c->chunk_head_sent += k;
	n -= k;
	k = c->chunk_left < n ? c->chunk_left : n;
	if (k) {
		c->src_started = true;
		c->chunk_left -= k;
		c->src->taken(c->src_arg, k);
	}
	c->chunk_tail_sent += n - k;
	if (c->chunk_head_sent == c->chunk_head_len && !c->chunk_left && c->chunk_tail_sent == 2)
		c->chunk_head_len = 0; /* the next chunk */
}

static void stream_body(struct lambda_api *c)
{
	while (!c->src_done) {
		struct iovec v[3];
		int k = 0;
		bool end = false;
		ig_str trailers = { NULL, 0 };
		if (c->last_len) {
			v[k++] = (struct iovec){ c->last + c->last_sent, c->last_len - c->last_sent };
		} else {
			ig_str b = c->src->peek(c->src_arg, &end, &trailers);
			if (!c->chunk_head_len) { /* between chunks */
				if (!b.len && end) {
					stream_last(c, trailers);
					continue;
				}
				if (!b.len) { /* nothing to send: wait for more, hear an early answer */
					c->src_blocked = false;
					watch(c, EPOLLIN | EPOLLRDHUP);
					return;
				}
				c->chunk_head_len = ig_http_chunk_head(c->chunk_head, b.len);
				c->chunk_head_sent = c->chunk_tail_sent = 0;
				c->chunk_left = b.len;
			}
			if (c->chunk_head_sent < c->chunk_head_len)
				v[k++] = (struct iovec){ c->chunk_head + c->chunk_head_sent,
							 c->chunk_head_len - c->chunk_head_sent };
			if (c->chunk_left)
				v[k++] = (struct iovec){ (char *)b.ptr, c->chunk_left };
			v[k++] = (struct iovec){ (char *)"\r\n" + c->chunk_tail_sent, 2 - c->chunk_tail_sent };
		}
		ssize_t n = writev(c->fd, v, k);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			c->src_blocked = true;
			watch(c, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
			return;
		}
		if (n < 0) {
			if (!resend_on_stale(c))
				fail(c, strerror(errno));
			return;
		}
		if (!c->last_len) {
			chunk_sent(c, (size_t)n);
			continue;
		}
		c->last_sent += (size_t)n;
		if (c->last_sent == c->last_len) {
			c->src_done = true;
			if (c->answer_timeout_ms != UINT32_MAX)
				ig_timer_set(&c->loop->timers, &c->timer, c->loop->clock.now_ms + c->answer_timeout_ms);
		}
	}
	c->src_blocked = false;
	watch(c, EPOLLIN | EPOLLRDHUP);
}

void ig_lambda_api_more(struct lambda_api *c)
{
	if (c->fn && c->src && c->fd >= 0 && !c->connecting && c->head_sent == c->head_len && !c->src_blocked &&
	    !c->src_done)
		stream_body(c);
}

static void on_writable(struct lambda_api *c)
{
	while (c->head_sent < c->head_len || c->body_sent < c->body.len) {
		struct iovec v[2];
		int k = 0;
		if (c->head_sent < c->head_len)
			v[k++] = (struct iovec){ c->head + c->head_sent, c->head_len - c->head_sent };
		v[k++] = (struct iovec){ (char *)c->body.ptr + c->body_sent, c->body.len - c->body_sent };
		ssize_t n = writev(c->fd, v, k);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			if (!resend_on_stale(c))
				fail(c, strerror(errno));
			return;
		}
		size_t h = c->head_len - c->head_sent < (size_t)n ? c->head_len - c->head_sent : (size_t)n;
		c->head_sent += h;
		c->body_sent += (size_t)n - h;
	}
	if (c->src) {
		c->src_blocked = false;
		stream_body(c);
		return;
	}
	watch(c, EPOLLIN | EPOLLRDHUP);
}

static void on_io(struct ig_io *io, uint32_t events)
{
	struct lambda_api *c = (struct lambda_api *)((char *)io - offsetof(struct lambda_api, io));
	if (!c->fn) { /* idle: the Runtime API closed the connection, or sent what nobody asked */
		drop_connection(c);
		return;
	}
	if (c->connecting) {
		int err = 0;
		socklen_t len = sizeof err;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err) {
			fail(c, strerror(err ? err : errno));
			return;
		}
		c->connecting = false;
		if (c->timeout_ms == UINT32_MAX)
			ig_timer_cancel(&c->loop->timers, &c->timer);
		else
			ig_timer_set(&c->loop->timers, &c->timer, c->loop->clock.now_ms + c->timeout_ms);
	}
	int fd = c->fd;
	if (events & EPOLLOUT)
		on_writable(c);
	/* Not when the write failed and the callback has begun another call:
	   these events were the old connection's. */
	if (c->fn && c->fd == fd && !c->connecting && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
		on_readable(c);
}

static void send_request(struct lambda_api *c)
{
	c->head_sent = c->body_sent = 0;
	c->rlen = c->head_end = c->body_end = 0;
	c->src_started = c->src_done = c->src_blocked = false;
	c->chunk_head_len = c->last_len = 0;
	c->reused = c->fd >= 0;
	c->io.fn = on_io;
	c->timer.fn = on_timeout;
	if (c->fd >= 0) {
		if (c->timeout_ms != UINT32_MAX)
			ig_timer_set(&c->loop->timers, &c->timer, c->loop->clock.now_ms + c->timeout_ms);
		watch(c, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
		return;
	}
	struct sockaddr_in a;
	if (!ig_lambda_api_address(c->api, &a))
		{
			fail(c, "AWS_LAMBDA_RUNTIME_API is not an IPv4 host:port");
			return;
		}
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		{
			fail(c, strerror(errno));
			return;
		}
	if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS)
		{
			fail(c, strerror(errno));
			return;
		}
	if (ig_loop_add(c->loop, c->fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP, &c->io) != 0) {
		int e = errno;
		close(c->fd);
		c->fd = -1;
		{
			fail(c, strerror(e));
			return;
		}
	}
	c->connecting = true;
	ig_timer_set(&c->loop->timers, &c->timer, c->loop->clock.now_ms + CONNECT_TIMEOUT_MS);
}

/* The request's head into c->head; false when it does not fit (the call
 * has then ended). */
static bool write_head(struct lambda_api *c, const char *method, const char *path, const ig_header *h, size_t n,
		       ig_str body)
{
	int len = snprintf(c->head, sizeof c->head, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, c->api);
	for (size_t i = 0; len > 0 && (size_t)len < sizeof c->head && i < n; i++)
		len += snprintf(c->head + len, sizeof c->head - (size_t)len, "%.*s: %.*s\r\n", (int)h[i].name.len,
				h[i].name.ptr, (int)h[i].value.len, h[i].value.ptr);
	if (len > 0 && (size_t)len < sizeof c->head && c->src)
		len += snprintf(c->head + len, sizeof c->head - (size_t)len, "Transfer-Encoding: chunked\r\n");
	else if (len > 0 && (size_t)len < sizeof c->head && (body.len || strcmp(method, "GET") != 0))
		len += snprintf(c->head + len, sizeof c->head - (size_t)len, "Content-Length: %zu\r\n", body.len);
	if (len > 0 && (size_t)len < sizeof c->head)
		len += snprintf(c->head + len, sizeof c->head - (size_t)len, "\r\n");
	if (len <= 0 || (size_t)len >= sizeof c->head) {
		finish(c, &(struct lambda_api_answer){ .error = "the request's head is too long" });
		return false;
	}
	c->head_len = (size_t)len;
	return true;
}

/* A call's start, its body whole (src NULL) or a source's. */
static void start(struct lambda_api *c, const char *api, const char *method, const char *path, const ig_header *h,
		  size_t n, ig_str body, const struct lambda_api_source *src, void *arg, uint32_t timeout_ms,
		  lambda_api_fn *fn)
{
	c->fn = fn;
	c->api = api;
	c->again = false;
	c->body = body;
	c->src = src;
	c->src_arg = arg;
	/* A stream's wait is bounded once its body has gone. */
	c->timeout_ms = src ? UINT32_MAX : timeout_ms;
	c->answer_timeout_ms = timeout_ms;
	if (write_head(c, method, path, h, n, body))
		send_request(c);
}

void ig_lambda_api_call(struct lambda_api *c, const char *api, const char *method, const char *path,
		     const ig_header *h, size_t n, ig_str body, uint32_t timeout_ms, lambda_api_fn *fn)
{
	start(c, api, method, path, h, n, body, NULL, NULL, timeout_ms, fn);
}

void ig_lambda_api_stream(struct lambda_api *c, const char *api, const char *path, const ig_header *h, size_t n,
			  const struct lambda_api_source *src, void *arg, uint32_t timeout_ms, lambda_api_fn *fn)
{
	start(c, api, "POST", path, h, n, (ig_str){ NULL, 0 }, src, arg, timeout_ms, fn);
}
