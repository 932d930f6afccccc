/* The descriptor table and each kind's read, write, ioctl and readiness.
 * The console's writes go to its ring (console.h), then to COM1; the
 * signalfd turns the i8042's Ctrl-Alt-Del into one SIGTERM, as the Linux
 * image turns it into SIGINT. */
#include "fds.h"
#include "console.h"
#include "cpio.h"
#include "i8042.h"
#include "netdev.h"
#include "smp.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/ioctl.h>
#include <termios.h>

static struct ig_fd fds[IG_METAL_MAX_FDS];
static bool sigterm_pending;
static const void *initrd;
static size_t initrd_len;

void ig_fds_init(void)
{
	for (int i = 0; i < 3; i++)
		fds[i] = (struct ig_fd){ .kind = IG_FD_CONSOLE, .status_flags = O_RDWR };
}

int ig_fd_alloc(enum ig_fd_kind kind)
{
	for (int i = 0; i < IG_METAL_MAX_FDS; i++)
		if (fds[i].kind == IG_FD_FREE) {
			fds[i] = (struct ig_fd){ .kind = kind, .status_flags = O_RDWR };
			return i;
		}
	return -EMFILE;
}

struct ig_fd *ig_fd_get(long fd)
{
	if (fd < 0 || fd >= IG_METAL_MAX_FDS || fds[fd].kind == IG_FD_FREE)
		return NULL;
	return &fds[fd];
}

static bool signal_waits(void)
{
	if (ig_i8042_poll_ctrl_alt_del())
		sigterm_pending = true;
	return sigterm_pending;
}

uint32_t ig_fd_ready(int fd)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return 0;
	switch (f->kind) {
	case IG_FD_CONSOLE: return EPOLLOUT;
	case IG_FD_EVENTFD: return EPOLLOUT | (f->count ? EPOLLIN : 0);
	case IG_FD_SIGNALFD: return signal_waits() ? EPOLLIN : 0;
	case IG_FD_NETDEV: return EPOLLOUT | (ig_netdev_readable() ? EPOLLIN : 0);
	case IG_FD_FILE: return EPOLLIN;
	case IG_FD_EPOLL:
	case IG_FD_FREE: break;
	}
	return 0;
}

long ig_fd_read(long fd, void *buf, size_t len)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return -EBADF;
	switch (f->kind) {
	case IG_FD_CONSOLE: return 0; /* nothing is ever typed */
	case IG_FD_EVENTFD:
		if (len < sizeof f->count)
			return -EINVAL;
		if (!f->count)
			return -EAGAIN;
		memcpy(buf, &f->count, sizeof f->count);
		f->count = 0;
		return sizeof f->count;
	case IG_FD_SIGNALFD: {
		struct signalfd_siginfo si = { .ssi_signo = SIGTERM, .ssi_pid = 1 };
		if (len < sizeof si)
			return -EINVAL;
		if (!signal_waits())
			return -EAGAIN;
		sigterm_pending = false;
		memcpy(buf, &si, sizeof si);
		return sizeof si;
	}
	case IG_FD_NETDEV: return ig_netdev_read(buf, len);
	case IG_FD_FILE: {
		size_t n = f->size - f->off < len ? f->size - f->off : len;
		memcpy(buf, f->data + f->off, n);
		f->off += n;
		return (long)n;
	}
	case IG_FD_EPOLL:
	case IG_FD_FREE: break;
	}
	return -EINVAL;
}

long ig_fd_writev(long fd, const struct iovec *iov, int iovcnt)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return -EBADF;
	if (iovcnt < 0 || iovcnt > 1024)
		return -EINVAL;
	size_t total = 0;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	switch (f->kind) {
	case IG_FD_CONSOLE:
		for (int i = 0; i < iovcnt; i++)
			ig_console_write(iov[i].iov_base, iov[i].iov_len);
		return (long)total;
	case IG_FD_EVENTFD: {
		uint64_t v;
		if (iovcnt != 1 || iov[0].iov_len < sizeof v)
			return -EINVAL;
		memcpy(&v, iov[0].iov_base, sizeof v);
		if (v == UINT64_MAX)
			return -EINVAL;
		if (UINT64_MAX - 1 - f->count < v)
			return -EAGAIN;
		f->count += v;
		ig_smp_wake_others(); /* a loop on another CPU may wait for it */
		return sizeof v;
	}
	case IG_FD_NETDEV: return ig_netdev_write(iov, iovcnt, total);
	case IG_FD_FILE: return -EBADF; /* opened read-only */
	case IG_FD_SIGNALFD:
	case IG_FD_EPOLL:
	case IG_FD_FREE: break;
	}
	return -EINVAL;
}

long ig_fd_close(long fd)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind == IG_FD_NETDEV)
		ig_netdev_close();
	f->kind = IG_FD_FREE;
	return 0;
}

long ig_fd_ioctl(long fd, unsigned long req, void *arg)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return -EBADF;
	if (req == FIONBIO)
		return 0;
	if (f->kind == IG_FD_CONSOLE && req == TIOCGWINSZ) {
		memset(arg, 0, sizeof(struct winsize));
		return 0; /* a terminal: stdout is line-buffered */
	}
	if (f->kind == IG_FD_NETDEV)
		return ig_netdev_ioctl(req, arg);
	return -ENOTTY;
}

long ig_fd_fcntl(long fd, int cmd, long arg)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return -EBADF;
	switch (cmd) {
	case F_GETFD: return FD_CLOEXEC;
	case F_SETFD: return 0;
	case F_GETFL: return f->status_flags;
	case F_SETFL: f->status_flags = (int)arg; return 0;
	default: return -EINVAL;
	}
}

long ig_fd_eventfd(unsigned initval, int flags)
{
	int fd = ig_fd_alloc(IG_FD_EVENTFD);
	if (fd >= 0) {
		fds[fd].count = initval;
		fds[fd].status_flags |= flags & O_NONBLOCK;
	}
	return fd;
}

/* One signalfd at most matters: all of them see the same SIGTERM. */
long ig_fd_signalfd(long fd, int flags)
{
	if (fd != -1)
		return ig_fd_get(fd) && fds[fd].kind == IG_FD_SIGNALFD ? fd : -EINVAL;
	int nfd = ig_fd_alloc(IG_FD_SIGNALFD);
	if (nfd >= 0)
		fds[nfd].status_flags |= flags & O_NONBLOCK;
	return nfd;
}

void ig_fds_set_initrd(const void *archive, size_t len)
{
	initrd = archive;
	initrd_len = len;
}

static bool initrd_file(const char *path, const void **data, size_t *size)
{
	return initrd && path[0] == '/' && ig_cpio_find(initrd, initrd_len, path, data, size);
}

static void file_stat(struct stat *st, size_t size, long ino)
{
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blksize = 4096;
	st->st_ino = (ino_t)ino;
}

long ig_fd_stat(const char *path, struct stat *st)
{
	const void *data;
	size_t size;
	if (!initrd_file(path, &data, &size))
		return -ENOENT;
	file_stat(st, size, (long)((const char *)data - (const char *)initrd));
	return 0;
}

long ig_fd_fstat(long fd, struct stat *st)
{
	struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind != IG_FD_FILE)
		return -ENOSYS; /* only the files are asked */
	file_stat(st, f->size, (long)((const char *)f->data - (const char *)initrd));
	return 0;
}

long ig_fd_open(const char *path, int flags)
{
	const void *data;
	size_t size;
	if (initrd_file(path, &data, &size)) {
		if ((flags & O_ACCMODE) != O_RDONLY)
			return -EROFS;
		int fd = ig_fd_alloc(IG_FD_FILE);
		if (fd >= 0) {
			fds[fd].data = data;
			fds[fd].size = size;
			fds[fd].status_flags = flags;
		}
		return fd;
	}
	if (strcmp(path, IG_NETDEV_PATH) != 0)
		return -ENOENT;
	int fd = ig_fd_alloc(IG_FD_NETDEV);
	if (fd < 0)
		return fd;
	long rc = ig_netdev_open();
	if (rc < 0) {
		fds[fd].kind = IG_FD_FREE;
		return rc;
	}
	fds[fd].status_flags = flags;
	return fd;
}
