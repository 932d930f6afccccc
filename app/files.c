/* The reference service's files: GET /files/{name} streams a file of the
 * directory FILES_DIR names (app/service.c's setting) through
 * include/ingot/body.h, a piece at a time, and PUT /files/{name} stores
 * one as its body arrives, so that a file's size and the client's pace
 * change what the server holds by nothing. */
#include "api.h"
#include "ingot/body.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char *files_dir; /* app/service.c's FILES_DIR */

/* A file's bytes read and written at a time: a read of a local file is
 * fast enough to make on the loop. */
#define FILE_PIECE (64 * 1024)

/* FILES_DIR/name into path (PATH_MAX bytes), prefix before the name
 * (".upload-" for the temporary file). The document's pattern already
 * keeps '/' and a leading '.' out; this holds whatever the document says.
 * Returns: false when there is no such path. */
static bool file_path(char *path, ig_str name, const char *prefix)
{
	if (!*files_dir || !name.len || name.ptr[0] == '.' || memchr(name.ptr, '/', name.len) ||
	    memchr(name.ptr, '\0', name.len))
		return false;
	int n = snprintf(path, PATH_MAX, "%s/%s%.*s", files_dir, prefix, (int)name.len, name.ptr);
	return n > 0 && n < PATH_MAX;
}

/* Opens name in FILES_DIR, a regular file. The document's pattern already
 * keeps '/' and a leading '.' out; this holds whatever the document says.
 * Returns: the descriptor, its size in *size; -1 when there is none. */
static int open_file(ig_str name, int64_t *size)
{
	char path[PATH_MAX];
	if (!file_path(path, name, ""))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		*size = st.st_size;
	return fd;
}

/* One range of a file of size bytes (RFC 9110 14.1.2): "bytes=a-b",
 * "bytes=a-" or "bytes=-n", in *first and *last (inclusive). Returns 1
 * for a range to send, 0 for none (several, or a form not read here:
 * the whole file is sent, as the RFC lets a server), -1 for a range that
 * starts past the end (416). */
static int parse_range(ig_str r, int64_t size, int64_t *first, int64_t *last)
{
	const char *p = r.ptr, *end = r.ptr + r.len;
	if (r.len < 7 || strncasecmp(p, "bytes=", 6) != 0 || memchr(p, ',', r.len))
		return 0;
	p += 6;
	int64_t a = -1, b = -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (a > (INT64_MAX - 9) / 10)
			return 0;
		a = (a < 0 ? 0 : a * 10) + (*p - '0');
	}
	if (p == end || *p++ != '-')
		return 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (b > (INT64_MAX - 9) / 10)
			return 0;
		b = (b < 0 ? 0 : b * 10) + (*p - '0');
	}
	if (p != end || (a < 0 && b < 0) || (a >= 0 && b >= 0 && b < a))
		return 0;
	if (a < 0) { /* the last b bytes */
		if (b == 0)
			return -1;
		*first = b < size ? size - b : 0;
		*last = size - 1;
		return size ? 1 : -1;
	}
	if (a >= size)
		return -1;
	*first = a;
	*last = b >= 0 && b < size ? b : size - 1;
	return 1;
}

int getFile(ig_ctx *ctx, const struct getFile_in *in, struct getFile_out *out)
{
	(void)out;
	int64_t size = 0;
	int fd = open_file(in->name, &size);
	if (fd < 0) {
		ig_respond_problem(ctx, 404, "no such file");
		return 404;
	}
	/* A range (to resume a download); with If-Range, whose validator is
	   not checked here, the whole file. */
	int64_t first = 0, last = size - 1;
	int ranged = in->has_Range && !ig_req_header(ctx, "If-Range").ptr ? parse_range(in->Range, size, &first, &last)
									       : 0;
	char cr[64];
	if (ranged < 0) {
		close(fd);
		snprintf(cr, sizeof cr, "bytes */%lld", (long long)size);
		ig_add_header(ctx, "Content-Range", (ig_str){ cr, strlen(cr) });
		ig_respond_problem(ctx, 416, "the range starts past the file's end");
		return 416;
	}
	if (ranged) {
		snprintf(cr, sizeof cr, "bytes %lld-%lld/%lld", (long long)first, (long long)last, (long long)size);
		ig_add_header(ctx, "Content-Range", (ig_str){ cr, strlen(cr) });
		if (lseek(fd, first, SEEK_SET) != first) {
			close(fd);
			ig_respond_problem(ctx, 500, "the file could not be read");
			return 500;
		}
	}
	ig_add_header(ctx, "Accept-Ranges", IG_STR("bytes"));
	int64_t length = last - first + 1;
	char *buf = ig_alloc(ctx, FILE_PIECE);
	ig_body_out *s = buf ? ig_body_out_begin(ctx, ranged ? 206 : 200, "application/octet-stream", in->chunked ? -1 : length)
			     : NULL;
	if (!s) {
		close(fd);
		ig_respond_problem(ctx, 503, "no stream could be opened now");
		return 503;
	}
	/* A read that fails or ends early leaves the body short: its end then
	   cuts the connection, and the client sees it. */
	/* A HEAD has its head (the length) and no body: nothing to read. */
	for (int64_t left = ig_req(ctx)->head ? 0 : length; left > 0;) {
		ssize_t got = read(fd, buf, left < FILE_PIECE ? (size_t)left : FILE_PIECE);
		if (got <= 0 || ig_body_out_write(s, buf, (size_t)got) != IG_BODY_OK)
			break;
		left -= got;
	}
	close(fd);
	enum ig_body_result r = ig_body_out_end(s);
	if (r != IG_BODY_OK) { /* what the tests see of a client that left */
		struct ig_logline l;
		if (ig_log_req(ctx, &l, IG_LOG_INFO, "file cut")) {
			ig_log_int(&l, "result", r);
			ig_log_end(&l);
		}
	}
	return 200;
}

/* Writes p[0..n) whole to fd. Returns: 0, or the errno of the failure. */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The body into the temporary file fd, as it arrives. Returns the status
 * to answer with (201 once the whole body is written), the problem
 * answered when it is not; *size: the bytes written. */
static int store_body(ig_ctx *ctx, int fd, char *buf, int64_t *size)
{
	for (;;) {
		size_t n;
		enum ig_body_result r = ig_body_in_read(ctx, buf, FILE_PIECE, &n);
		switch (r) {
		case IG_BODY_OK:
			break;
		case IG_BODY_TOO_LARGE:
			ig_respond_problem(ctx, 413, "the file is over 64 MiB");
			return 413;
		case IG_BODY_MALFORMED:
			ig_respond_problem(ctx, 400, "the body's chunked framing is broken");
			return 400;
		default: { /* the client went away, or stalled: what the tests see */
			struct ig_logline l;
			if (ig_log_req(ctx, &l, IG_LOG_INFO, "upload cut")) {
				ig_log_int(&l, "result", r);
				ig_log_int(&l, "bytes", *size);
				ig_log_end(&l);
			}
			ig_respond_problem(ctx, 400, "the body ended before its end");
			return 400;
		}
		}
		if (n == 0)
			return 201;
		int err = write_all(fd, buf, n);
		if (err) {
			ig_respond_problem(ctx, err == ENOSPC || err == EDQUOT ? 507 : 500, "the file could not be written");
			return err == ENOSPC || err == EDQUOT ? 507 : 500;
		}
		*size += (int64_t)n;
	}
}

int putFile(ig_ctx *ctx, const struct putFile_in *in, struct putFile_out *out)
{
	char path[PATH_MAX], part[PATH_MAX];
	if (!file_path(path, in->name, "") || !file_path(part, in->name, ".upload-")) {
		ig_respond_problem(ctx, 404, "FILES_DIR is not set");
		return 404;
	}
	char *buf = ig_alloc(ctx, FILE_PIECE);
	if (!buf) {
		ig_respond_problem(ctx, 500, "no memory for the upload");
		return 500;
	}
	/* Another upload of the same name at once: the later rename wins. */
	int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		ig_respond_problem(ctx, 500, "the file could not be created");
		return 500;
	}
	int64_t size = 0;
	int status = store_body(ctx, fd, buf, &size);
	if (close(fd) != 0 && status == 201) {
		ig_respond_problem(ctx, 500, "the file could not be written");
		status = 500;
	}
	if (status == 201 && rename(part, path) != 0) {
		ig_respond_problem(ctx, 500, "the file could not take its name");
		status = 500;
	}
	if (status != 201) {
		unlink(part);
		return status;
	}
	out->r201 = (struct StoredFile){ .name = in->name, .size = size };
	return 201;
}
