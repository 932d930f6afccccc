/* ig_read_file (see file.h): fstat for the size, then read() until that
 * many bytes or the end, so a file that shrinks meanwhile is read as it is
 * and a file that grows is read as it was. */
#include "kernel/runtime/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* NULL with errno = e (for callers that report strerror) and the message. */
static char *fail(char *err, size_t errlen, const char *path, int e, const char *why, int fd)
{
	if (err && errlen)
		snprintf(err, errlen, "cannot read %s: %s", path, why ? why : strerror(e));
	if (fd >= 0)
		close(fd);
	errno = e;
	return NULL;
}

char *ig_read_file(const char *path, size_t max, unsigned flags, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, path, errno, NULL, -1);
	struct stat st;
	if (fstat(fd, &st) != 0)
		return fail(err, errlen, path, errno, NULL, fd);
	if (!S_ISREG(st.st_mode))
		return fail(err, errlen, path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "not a regular file", fd);
	size_t want = (size_t)st.st_size;
	if (want > max) {
		if (!(flags & IG_FILE_PREFIX)) {
			char why[64];
			snprintf(why, sizeof why, "larger than %zu bytes", max);
			return fail(err, errlen, path, EFBIG, why, fd);
		}
		want = max;
	}
	char *buf = malloc(want + 1);
	if (!buf)
		return fail(err, errlen, path, ENOMEM, "out of memory", fd);
	size_t got = 0;
	while (got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return fail(err, errlen, path, errno, NULL, fd);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
}
