/* epoll for the unikernel: each instance is a list of (fd, events, data);
 * a wait asks every listed descriptor's readiness now (level-triggered,
 * EPOLLET read as level: the runtime reads until EAGAIN either way) and,
 * when none is ready, halts the CPU until an interrupt (a device, or the
 * wake-up timer armed for the timeout), then asks again. */
#ifndef KERNEL_METAL_EPOLL_SET_H
#define KERNEL_METAL_EPOLL_SET_H

#include <sys/epoll.h>

long ig_epoll_create(void);
long ig_epoll_ctl(long epfd, int op, int fd, const struct epoll_event *ev);
long ig_epoll_wait(long epfd, struct epoll_event *out, int max, int timeout_ms);
/* close()'s part here, before the descriptor table frees fd (fds.h sits
 * below epoll and knows no instance): fd leaves every instance's list, and
 * when fd is an epoll instance its storage is freed. */
void ig_epoll_closing(long fd);

#endif
