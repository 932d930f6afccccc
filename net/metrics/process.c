/* The process metrics source (process.h): /proc/self/stat for CPU time,
 * memory and the start, /proc/self/fd for the open descriptors,
 * getrlimit for their limit, /proc/stat's btime once for the boot time.
 * Read only when scraped, on core 0's loop, into stack buffers: nothing
 * is allocated and nothing is touched while no one scrapes. */
#include "net/metrics/process.h"
#include "kernel/runtime/clock.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What /proc/self/stat says, in its own units. */
struct proc_stat {
	uint64_t utime, stime;  /* clock ticks, every thread */
	uint64_t start_ticks;   /* clock ticks after the boot */
	uint64_t vsize;         /* bytes */
	uint64_t rss_pages;
};

/* Reads a small file whole; its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t n;
	while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

static uint64_t parse_u64(const char **p)
{
	uint64_t v = 0;
	while (**p >= '0' && **p <= '9')
		v = v * 10 + (uint64_t)(*(*p)++ - '0');
	return v;
}

/* proc(5): the fields after the command's closing parenthesis (which may
 * itself hold spaces and parentheses, hence the last one). */
static bool read_proc_stat(struct proc_stat *s)
{
	char buf[1024];
	if (read_small("/proc/self/stat", buf, sizeof buf) <= 0)
		return false;
	const char *p = strrchr(buf, ')');
	if (!p)
		return false;
	p += 2; /* ") ": now at field 3, the state */
	for (int field = 3; field <= 24 && *p; field++) {
		const char *v = p;
		switch (field) {
		case 14: s->utime = parse_u64(&v); break;
		case 15: s->stime = parse_u64(&v); break;
		case 22: s->start_ticks = parse_u64(&v); break;
		case 23: s->vsize = parse_u64(&v); break;
		case 24: s->rss_pages = parse_u64(&v); return true;
		}
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	return false;
}

/* /proc/stat's "btime N" (seconds since the epoch), after the per-CPU and
 * interrupt lines, which can be long: scanned in pieces. 0 if not found. */
static uint64_t read_boot_time(void)
{
	static const char key[] = "\nbtime ";
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	size_t matched = 0; /* bytes of key matched so far, across pieces */
	uint64_t v = 0;
	bool in_value = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char ch = buf[i];
			if (in_value) {
				if (ch < '0' || ch > '9') {
					close(fd);
					return v;
				}
				v = v * 10 + (uint64_t)(ch - '0');
			} else if (ch == key[matched]) {
				in_value = ++matched == sizeof key - 1;
			} else {
				matched = ch == '\n';
			}
		}
	}
	close(fd);
	return in_value ? v : 0;
}

/* The descriptors in /proc/self/fd, less the one reading it; -1 if none
 * can be read. getdents64 into the stack: opendir would allocate. */
static long count_open_fds(void)
{
	int fd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	_Alignas(8) char buf[4096];
	long count = 0;
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof reclen);
			const char *name = buf + off + 19;
			if (name[0] != '.')
				count++;
			off += reclen;
		}
	}
	close(fd);
	return n < 0 ? -1 : count - 1;
}

static void write_gauge(struct ig_expo *e, const char *name, const char *type, const char *help, double v)
{
	ig_expo_family(e, name, type, help);
	ig_expo_sample(e, name, NULL, 0, v);
}

static void write_process(struct ig_expo *e, struct ig_process_metrics *ps)
{
	struct proc_stat st = { 0 };
	if (!read_proc_stat(&st))
		return; /* no /proc: the bare-metal build */
	double tck = (double)sysconf(_SC_CLK_TCK);
	if (ps->start_time == 0) {
		uint64_t boot = read_boot_time();
		if (boot)
			ps->start_time = (double)boot + (double)st.start_ticks / tck;
	}
	write_gauge(e, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
		    (double)(st.utime + st.stime) / tck);
	write_gauge(e, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
		    (double)st.rss_pages * (double)sysconf(_SC_PAGESIZE));
	write_gauge(e, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", (double)st.vsize);
	long fds = count_open_fds();
	if (fds >= 0)
		write_gauge(e, "process_open_fds", "gauge", "Number of open file descriptors.", (double)fds);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		write_gauge(e, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
			    (double)rl.rlim_cur);
	if (ps->start_time)
		write_gauge(e, "process_start_time_seconds", "gauge",
			    "Start time of the process since unix epoch in seconds.", ps->start_time);
}

static void write_all(struct ig_expo *e, void *arg)
{
	struct ig_process_metrics *ps = arg;
	write_process(e, ps);
	const char *tls = ps->tls_name();
	struct ig_label labels[6] = {
		{ "version", ps->version, strlen(ps->version) },
		{ "tls", tls, strlen(tls) },
		{ "ingot_version", IG_VERSION, sizeof IG_VERSION - 1 },
	};
	size_t n = 3;
	const struct ig_build_info *b = ps->build;
	char built[20];
	/* An empty label is an absent one to Prometheus: left out. */
	if (b && b->ingot_commit[0])
		labels[n++] = (struct ig_label){ "ingot_commit", b->ingot_commit, strlen(b->ingot_commit) };
	if (b && b->app_commit[0])
		labels[n++] = (struct ig_label){ "app_commit", b->app_commit, strlen(b->app_commit) };
	if (b && b->time > 0) {
		built[ig_format_utc(built, (time_t)b->time)] = 'Z';
		labels[n++] = (struct ig_label){ "built", built, 20 };
	}
	ig_expo_family(e, "ingot_build_info", "gauge",
		       "The service's version, ingot's version and commit, the app's commit, the TLS backend and the "
		       "build time; always 1.");
	ig_expo_sample(e, "ingot_build_info", labels, n, 1);
}

struct ig_process_metrics ig_process_metrics = { .source = { .write = write_all, .arg = &ig_process_metrics } };
