/* The reference service's files: GET /files/{name} streams a file of the
 * directory FILES_DIR names (app/service.c's setting) through
 * include/ingot/body.h, a piece at a time, so that its size and the
 * client's pace change what the server holds by nothing. */
#include "api.h"
#include "ingot/body.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char *files_dir; /* app/service.c's FILES_DIR */

/* A file's bytes read and written at a time: a read of a local file is
 * fast enough to make on the loop. */
#define FILE_PIECE (64 * 1024)

/* Opens name in FILES_DIR, a regular file. The document's pattern already
 * keeps '/' and a leading '.' out; this holds whatever the document says.
 * Returns: the descriptor, its size in *size; -1 when there is none. */
static int open_file(ig_str name, int64_t *size)
{
	if (!*files_dir || !name.len || name.ptr[0] == '.' || memchr(name.ptr, '/', name.len) ||
	    memchr(name.ptr, '\0', name.len))
		return -1;
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/%.*s", files_dir, (int)name.len, name.ptr);
	if (n < 0 || (size_t)n >= sizeof path)
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

int getFile(ig_ctx *ctx, const struct getFile_in *in, struct getFile_out *out)
{
	(void)out;
	int64_t size = 0;
	int fd = open_file(in->name, &size);
	if (fd < 0) {
		ig_respond_problem(ctx, 404, "no such file");
		return 404;
	}
	char *buf = ig_alloc(ctx, FILE_PIECE);
	ig_body_out *s = buf ? ig_body_out_begin(ctx, 200, "application/octet-stream", in->chunked ? -1 : size) : NULL;
	if (!s) {
		close(fd);
		ig_respond_problem(ctx, 503, "no stream could be opened now");
		return 503;
	}
	/* A read that fails or ends early leaves the body short: its end then
	   cuts the connection, and the client sees it. */
	/* A HEAD has its head (the length) and no body: nothing to read. */
	for (int64_t left = ig_req(ctx)->head ? 0 : size; left > 0;) {
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
