/* The unikernel's file descriptors: the console (0, 1, 2), epoll instances,
 * eventfds, the signalfd (SIGTERM on the host's Ctrl-Alt-Del), the frame
 * device /dev/virtio-net (netdev.h) and the initrd's files, read-only. Every descriptor is non-blocking in
 * effect: there is one thread, and waiting is epoll_wait's alone. Calls
 * return a value or -errno, as the kernel's do. */
#ifndef KERNEL_METAL_FDS_H
#define KERNEL_METAL_FDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

#define IG_METAL_MAX_FDS 128

enum ig_fd_kind { IG_FD_FREE, IG_FD_CONSOLE, IG_FD_EPOLL, IG_FD_EVENTFD, IG_FD_SIGNALFD, IG_FD_NETDEV, IG_FD_FILE };

struct ig_fd {
	enum ig_fd_kind kind;
	int status_flags; /* fcntl F_GETFL/F_SETFL */
	uint64_t count;   /* eventfd's counter */
	int slot;         /* epoll: its instance in epoll.c */
	const uint8_t *data; /* a file: its bytes in the initrd, */
	size_t size, off;    /* its length and the read position */
};

void ig_fds_init(void);
/* The lowest free descriptor, now of this kind, or -EMFILE. */
int ig_fd_alloc(enum ig_fd_kind kind);
/* The descriptor's entry, or NULL if it is not open. */
struct ig_fd *ig_fd_get(long fd);
/* EPOLLIN/EPOLLOUT as they hold now (level-triggered readiness). */
uint32_t ig_fd_ready(int fd);

long ig_fd_read(long fd, void *buf, size_t len);
long ig_fd_writev(long fd, const struct iovec *iov, int iovcnt);
/* Frees fd's entry (closing the frame device); close() runs epoll's part
 * first (epoll_set.h: ig_epoll_closing). */
long ig_fd_close(long fd);
long ig_fd_ioctl(long fd, unsigned long req, void *arg);
long ig_fd_fcntl(long fd, int cmd, long arg);
long ig_fd_eventfd(unsigned initval, int flags);
long ig_fd_signalfd(long fd, int flags);
long ig_fd_open(const char *path, int flags);
/* The initrd (a cpio newc archive, cpio.h) whose regular files open() and
 * stat() see at `/`; none until this is called. */
void ig_fds_set_initrd(const void *archive, size_t len);
long ig_fd_fstat(long fd, struct stat *st);
long ig_fd_stat(const char *path, struct stat *st);

#endif
