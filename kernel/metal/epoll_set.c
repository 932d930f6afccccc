/* epoll instances as fixed arrays, and the idle halt (smp.h's: interrupts
 * are on only for the one hlt, so nothing of the program ever runs with
 * them on; an eventfd written on another CPU wakes it with an IPI). */
#include "epoll_set.h"
#include "fds.h"
#include "smp.h"
#include "tsc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_INSTANCES (IG_METAL_MAX_CPUS + 8) /* a loop per CPU, and spares */
#define MAX_ENTRIES 32

struct entry {
	int fd;
	struct epoll_event ev;
};

struct instance {
	bool used;
	int count;
	struct entry e[MAX_ENTRIES];
};

static struct instance instances[MAX_INSTANCES];

long ig_epoll_create(void)
{
	for (int s = 0; s < MAX_INSTANCES; s++)
		if (!instances[s].used) {
			int fd = ig_fd_alloc(IG_FD_EPOLL);
			if (fd < 0)
				return fd;
			instances[s] = (struct instance){ .used = true };
			ig_fd_get(fd)->slot = s;
			return fd;
		}
	return -ENOMEM;
}

static struct instance *instance_of(long epfd)
{
	struct ig_fd *f = ig_fd_get(epfd);
	return f && f->kind == IG_FD_EPOLL ? &instances[f->slot] : NULL;
}

long ig_epoll_ctl(long epfd, int op, int fd, const struct epoll_event *ev)
{
	struct instance *in = instance_of(epfd);
	if (!in)
		return -EBADF;
	if (!ig_fd_get(fd) || fd == epfd)
		return -EBADF;
	int i = 0;
	while (i < in->count && in->e[i].fd != fd)
		i++;
	bool found = i < in->count;
	switch (op) {
	case EPOLL_CTL_ADD:
		if (found)
			return -EEXIST;
		if (in->count == MAX_ENTRIES)
			return -ENOSPC;
		in->e[in->count++] = (struct entry){ .fd = fd, .ev = *ev };
		return 0;
	case EPOLL_CTL_MOD:
		if (!found)
			return -ENOENT;
		in->e[i].ev = *ev;
		return 0;
	case EPOLL_CTL_DEL:
		if (!found)
			return -ENOENT;
		in->e[i] = in->e[--in->count];
		return 0;
	}
	return -EINVAL;
}

void ig_epoll_closing(long fd)
{
	const struct ig_fd *f = ig_fd_get(fd);
	if (!f)
		return;
	if (f->kind == IG_FD_EPOLL)
		instances[f->slot].used = false;
	for (int s = 0; s < MAX_INSTANCES; s++)
		for (int i = 0; i < instances[s].count; i++)
			if (instances[s].e[i].fd == fd)
				instances[s].e[i--] = instances[s].e[--instances[s].count];
}

static int collect(struct instance *in, struct epoll_event *out, int max)
{
	int n = 0;
	for (int i = 0; i < in->count && n < max; i++) {
		uint32_t want = in->e[i].ev.events | EPOLLERR | EPOLLHUP;
		uint32_t got = ig_fd_ready(in->e[i].fd) & want;
		if (got)
			out[n++] = (struct epoll_event){ .events = got, .data = in->e[i].ev.data };
	}
	return n;
}

long ig_epoll_wait(long epfd, struct epoll_event *out, int max, int timeout_ms)
{
	struct instance *in = instance_of(epfd);
	if (!in)
		return -EBADF;
	if (max <= 0)
		return -EINVAL;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : ig_tsc_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		int n = collect(in, out, max);
		if (n || timeout_ms == 0)
			return n;
		uint64_t now = ig_tsc_now_ns();
		if (now >= deadline)
			return 0;
		ig_smp_halt(deadline == UINT64_MAX ? 0 : deadline - now);
	}
}
