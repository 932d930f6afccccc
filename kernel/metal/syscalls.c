/* The syscall dispatch, with the calls that need no descriptor: memory over
 * pages.h, clocks over tsc.h, randomness over entropy.h (a generator seeded
 * from the TSC only for GRND_NONBLOCK's seeds, never for a blocking call's
 * keys), process identity (PID 1, uid 0, a thread per CPU: smp.h), and exit. */
#include "syscalls.h"
#include "console.h"
#include "entropy.h"
#include "epoll_set.h"
#include "fds.h"
#include "mmu.h"
#include "pages.h"
#include "power.h"
#include "smp.h"
#include "tsc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>

#define MSR_STAR 0xc0000081u
#define MSR_LSTAR 0xc0000082u
#define MSR_SFMASK 0xc0000084u
#define MSR_FS_BASE 0xc0000100u
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define RFLAGS_TF_IF_DF_AC 0x40700u

void ig_metal_syscall_entry(void);

static void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

void ig_metal_syscalls_init(void)
{
	wrmsr(MSR_STAR, (uint64_t)0x08 << 32); /* CS 0x08, SS 0x10 (boot.S's GDT) */
	wrmsr(MSR_LSTAR, (uint64_t)ig_metal_syscall_entry);
	wrmsr(MSR_SFMASK, RFLAGS_TF_IF_DF_AC);
}

static long sys_mmap(long addr, size_t len, int prot, int flags, int fd)
{
	(void)addr;
	(void)prot;
	if (!(flags & MAP_ANONYMOUS) || fd != -1)
		return -ENODEV;
	if (flags & MAP_FIXED)
		return -EINVAL;
	if (len == 0)
		return -EINVAL;
	void *p = ig_pages_alloc((len + IG_PAGE_SIZE - 1) / IG_PAGE_SIZE);
	return p ? (long)p : -ENOMEM;
}

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif

/* Pages are RAM from the start (no lazy mapping): DONTNEED zeroes them, and
 * a guard (MADV_GUARD_INSTALL, or mprotect PROT_NONE: a coroutine stack's,
 * kernel/runtime/coro.c) takes the page out of the map. */
static long sys_madvise(long addr, size_t len, int advice)
{
	size_t n = (len + IG_PAGE_SIZE - 1) / IG_PAGE_SIZE;
	if (advice == MADV_DONTNEED)
		ig_pages_zero((void *)addr, n);
	else if (advice == MADV_GUARD_INSTALL || advice == MADV_GUARD_REMOVE)
		return ig_mmu_set_present((void *)addr, n, advice == MADV_GUARD_REMOVE) == 0 ? 0 : -ENOMEM;
	return 0;
}

static long sys_mprotect(long addr, size_t len, int prot)
{
	size_t n = (len + IG_PAGE_SIZE - 1) / IG_PAGE_SIZE;
	return ig_mmu_set_present((void *)addr, n, prot != PROT_NONE) == 0 ? 0 : -ENOMEM;
}

/* A guard page given back is shown again: its next owner writes to it. */
static long sys_munmap(long addr, size_t len)
{
	size_t n = (len + IG_PAGE_SIZE - 1) / IG_PAGE_SIZE;
	ig_mmu_set_present((void *)addr, n, true);
	ig_pages_free((void *)addr, n);
	return 0;
}

static long sys_clock_gettime(clockid_t id, struct timespec *ts)
{
	uint64_t ns;
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE: ns = ig_tsc_wall_ns(); break;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_BOOTTIME:
	case CLOCK_PROCESS_CPUTIME_ID:
	case CLOCK_THREAD_CPUTIME_ID: ns = ig_tsc_now_ns(); break;
	default: return -EINVAL;
	}
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
	return 0;
}

/* splitmix64 from the TSC: not for keys, enough for the hash seeds, ids
 * and lwIP's ports and sequence numbers that ask with GRND_NONBLOCK (as
 * Linux's early boot gives them what it has). */
static uint64_t weak_random(void)
{
	static uint64_t state;
	if (!state)
		state = ig_rdtsc() ^ 0x9e3779b97f4a7c15ull;
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A blocking call is where keys come from (TLS, SCRAM's nonce): without a
 * source fit for them it fails (Linux would block, forever here), with one
 * line on the console the first time, rather than return a guessable value. */
static long sys_getrandom(unsigned char *buf, size_t len, unsigned flags)
{
	if (ig_entropy_fill(buf, len))
		return (long)len;
	if (!(flags & (GRND_NONBLOCK | GRND_INSECURE))) {
		static bool said;
		if (!said) {
			said = true;
			ig_console_puts("{\"level\":\"error\",\"msg\":\"metal: getrandom refused: no entropy source fit "
				       "for keys (qemu: -device virtio-rng-device; Firecracker: an entropy device; or a CPU "
				       "with RDRAND)\"}\n");
		}
		return -EAGAIN;
	}
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = weak_random();
		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
	return (long)len;
}

static long sys_prlimit(int resource, struct rlimit *old)
{
	if (old) {
		rlim_t v = resource == RLIMIT_NOFILE ? IG_METAL_MAX_FDS : RLIM_INFINITY;
		old->rlim_cur = old->rlim_max = v;
	}
	return 0;
}

static long sys_sched_getaffinity(size_t len, unsigned char *mask)
{
	if (len < sizeof(long))
		return -EINVAL;
	memset(mask, 0, len);
	for (int i = 0; i < ig_smp_cpus(); i++)
		mask[i / 8] |= (unsigned char)(1u << (i % 8));
	return sizeof(long);
}

static long sys_arch_prctl(int code, long addr)
{
	if (code == ARCH_SET_FS) {
		wrmsr(MSR_FS_BASE, (uint64_t)addr);
		return 0;
	}
	if (code == ARCH_GET_FS) {
		*(uint64_t *)addr = rdmsr(MSR_FS_BASE);
		return 0;
	}
	return -EINVAL;
}

static void log_unimplemented(long nr)
{
	static uint64_t seen[512 / 64];
	if (nr >= 0 && nr < 512) {
		if (seen[nr / 64] >> (nr % 64) & 1)
			return;
		seen[nr / 64] |= 1ull << (nr % 64);
	}
	char d[24];
	size_t n = sizeof d;
	unsigned long v = (unsigned long)nr;
	do
		d[--n] = (char)('0' + v % 10);
	while ((v /= 10) && n);
	ig_console_puts("{\"level\":\"warn\",\"msg\":\"metal: system call not implemented\",\"nr\":");
	ig_console_write(d + n, sizeof d - n);
	ig_console_puts("}\n");
}

static long dispatch(long nr, long a1, long a2, long a3, long a4, long a5, const struct ig_syscall_frame *f)
{
	switch (nr) {
	case SYS_read: return ig_fd_read(a1, (void *)a2, (size_t)a3);
	case SYS_write: {
		struct iovec iov = { (void *)a2, (size_t)a3 };
		return ig_fd_writev(a1, &iov, 1);
	}
	case SYS_readv: {
		const struct iovec *iov = (const void *)a2;
		return a3 >= 1 ? ig_fd_read(a1, iov[0].iov_base, iov[0].iov_len) : 0;
	}
	case SYS_writev: return ig_fd_writev(a1, (const struct iovec *)a2, (int)a3);
	case SYS_open: return ig_fd_open((const char *)a1, (int)a2);
	case SYS_openat: return ig_fd_open((const char *)a2, (int)a3);
	case SYS_close: ig_epoll_closing(a1); return ig_fd_close(a1);
	case SYS_fstat: return ig_fd_fstat(a1, (struct stat *)a2);
	case SYS_stat: return ig_fd_stat((const char *)a1, (struct stat *)a2);
	case SYS_newfstatat:
		if ((a4 & AT_EMPTY_PATH) && !*(const char *)a2)
			return ig_fd_fstat(a1, (struct stat *)a3);
		return ig_fd_stat((const char *)a2, (struct stat *)a3);
	case SYS_ioctl: return ig_fd_ioctl(a1, (unsigned long)a2, (void *)a3);
	case SYS_fcntl: return ig_fd_fcntl(a1, (int)a2, a3);
	case SYS_mmap: return sys_mmap(a1, (size_t)a2, (int)a3, (int)a4, (int)a5);
	case SYS_munmap: return sys_munmap(a1, (size_t)a2);
	case SYS_mprotect: return sys_mprotect(a1, (size_t)a2, (int)a3);
	case SYS_madvise: return sys_madvise(a1, (size_t)a2, (int)a3);
	/* Every page is resident from its mmap: kernel/runtime/coro.c's trim,
	   told so, stops asking. */
	case SYS_mincore: return -ENOSYS;
	case SYS_brk: return 0; /* no heap: musl's malloc falls back to mmap */
	case SYS_getrandom: return sys_getrandom((unsigned char *)a1, (size_t)a2, (unsigned)a3);
	case SYS_arch_prctl: return sys_arch_prctl((int)a1, a2);
	case SYS_set_tid_address:
	case SYS_gettid: return ig_smp_tid();
	case SYS_getpid: return 1;
	case SYS_clone: return ig_smp_clone((unsigned long)a1, (void *)a2, (int *)a3, (int *)a4, (unsigned long)a5, f);
	case SYS_futex: return ig_smp_futex((int *)a1, (int)a2, (int)a3, (const void *)a4, (int *)a5);
	case SYS_getuid:
	case SYS_geteuid:
	case SYS_getgid:
	case SYS_getegid: return 0;
	case SYS_rt_sigaction:
		if (a3)
			memset((void *)a3, 0, (size_t)a4 + 3 * sizeof(long)); /* handler, flags, restorer, mask */
		return 0;
	case SYS_sigaltstack: /* CPU exceptions have idt.c's handler, no signal */
		return 0;
	case SYS_sysinfo: { /* the machine's RAM, for the memory budget */
		struct sysinfo *si = (struct sysinfo *)a1;
		memset(si, 0, sizeof *si);
		si->totalram = ig_pages_total() * IG_PAGE_SIZE;
		si->freeram = ig_pages_free_count() * IG_PAGE_SIZE;
		si->mem_unit = 1;
		return 0;
	}
	case SYS_rt_sigprocmask:
		if (a3)
			memset((void *)a3, 0, (size_t)a4);
		return 0;
	case SYS_sched_getaffinity: return sys_sched_getaffinity((size_t)a2, (unsigned char *)a3);
	case SYS_sched_setaffinity: return 0;
	case SYS_prlimit64: return sys_prlimit((int)a2, (struct rlimit *)a4);
	case SYS_epoll_create1: return ig_epoll_create();
	case SYS_epoll_create: return a1 > 0 ? ig_epoll_create() : -EINVAL;
	case SYS_epoll_ctl: return ig_epoll_ctl(a1, (int)a2, (int)a3, (const struct epoll_event *)a4);
	case SYS_epoll_wait:
	case SYS_epoll_pwait: return ig_epoll_wait(a1, (struct epoll_event *)a2, (int)a3, (int)a4);
	case SYS_eventfd2: return ig_fd_eventfd((unsigned)a1, (int)a2);
	case SYS_eventfd: return ig_fd_eventfd((unsigned)a1, 0);
	case SYS_signalfd4: return ig_fd_signalfd(a1, (int)a4);
	case SYS_signalfd: return ig_fd_signalfd(a1, 0);
	case SYS_exit:
		if (ig_smp_self() != 0)
			ig_smp_thread_exit(); /* a thread's end; main's ends the machine */
		ig_metal_power_off((int)(a1 & 0xff));
	case SYS_exit_group: ig_metal_power_off((int)(a1 & 0xff));
	default: log_unimplemented(nr); return -ENOSYS;
	}
}

/* The calls that touch no shared state run without the big lock: the
 * clock (every loop turn asks it) and sched_yield. */
long ig_metal_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6, const struct ig_syscall_frame *f)
{
	(void)a6;
	if (nr == SYS_clock_gettime)
		return sys_clock_gettime((clockid_t)a1, (struct timespec *)a2);
	if (nr == SYS_sched_yield)
		return 0;
	ig_smp_lock();
	long r = dispatch(nr, a1, a2, a3, a4, a5, f);
	ig_smp_unlock();
	return r;
}
