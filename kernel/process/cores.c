/* Core counting and thread pinning. Reading the cgroup files costs a few
 * syscalls at startup only; any failure means "no quota". */
#include "cores.h"
#include "cgroup.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ig_affinity_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;
	if (sched_getaffinity(0, sizeof set, &set) != 0) {
		cpus[0] = 0;
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n ? n : (cpus[0] = 0, 1);
}

int ig_read_small_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static int quota_cpus(long long quota, long long period)
{
	if (quota <= 0 || period <= 0)
		return 0;
	return (int)((quota + period - 1) / period);
}

/* Whether the comma-separated list list[0..len) names item exactly ("cpu"
 * is not "cpuset"). */
static bool list_has(const char *list, size_t len, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list, *end = list + len; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t k = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if (k == n && memcmp(p, item, n) == 0)
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/* out = a b c, NUL-terminated; false (out then empty) when it does not fit.
 * By hand: the start formats nothing with printf, whose code would then be
 * resident in every idle process. */
static bool join3(char *out, size_t cap, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	if (la + lb + lc >= cap) {
		if (cap)
			out[0] = 0;
		return false;
	}
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc + 1);
	return true;
}

/* The process's cgroup path for a controller, from the text of
 * /proc/self/cgroup: "0::/path" (v2, controller NULL) or
 * "N:cpu,cpuacct:/path" (v1). Read in place: no copy of the text on the
 * stack, which an idle process would keep resident. */
int ig_cgroup_path(const char *cgroups, const char *controller, char *out, size_t cap)
{
	for (const char *line = cgroups; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			bool match = controller ? list_has(c1 + 1, (size_t)(c2 - c1 - 1), controller) : c2 == c1 + 1;
			size_t plen = len - (size_t)(c2 + 1 - line);
			if (match) {
				if (plen >= cap)
					return -1;
				memcpy(out, c2 + 1, plen);
				out[plen] = 0;
				return 0;
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return -1;
}

static int cgroup_v2_limit(const char *cgroups)
{
	char rel[1024], path[1200], buf[128];
	if (ig_cgroup_path(cgroups, NULL, rel, sizeof rel) != 0)
		return 0;
	/* Inside a cgroup namespace the path is "/", and the limit of the
	 * container's own cgroup is at the mount root. Walk up from the
	 * deepest level: the tightest limit on the way counts. */
	int best = 0;
	for (;;) {
		join3(path, sizeof path, "/sys/fs/cgroup", strcmp(rel, "/") ? rel : "", "/cpu.max");
		if (ig_read_small_file(path, buf, sizeof buf) == 0 && strncmp(buf, "max", 3) != 0) {
			int c = quota_cpus(atoll(buf), atoll(strchr(buf, ' ') ? strchr(buf, ' ') + 1 : "0"));
			if (c && (!best || c < best))
				best = c;
		}
		char *slash = strrchr(rel, '/');
		if (!slash)
			break;
		if (slash == rel) { /* the mount root comes last */
			if (strcmp(rel, "/") == 0)
				break;
			rel[1] = 0;
			continue;
		}
		*slash = 0;
	}
	return best;
}

static int cgroup_v1_limit(const char *cgroups)
{
	char rel[1024], path[1300], q[64], p[64];
	static const char *const mounts[] = { "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu" };
	if (ig_cgroup_path(cgroups, "cpu", rel, sizeof rel) != 0)
		return 0;
	for (size_t m = 0; m < 2; m++) {
		for (int pass = 0; pass < 2; pass++) {
			/* pass 0: the process's own cgroup; pass 1: the mount root
			 * (inside a container the path may not exist in its view). */
			const char *r = pass == 0 && strcmp(rel, "/") ? rel : "";
			join3(path, sizeof path, mounts[m], r, "/cpu.cfs_quota_us");
			if (ig_read_small_file(path, q, sizeof q) != 0)
				continue;
			join3(path, sizeof path, mounts[m], r, "/cpu.cfs_period_us");
			if (ig_read_small_file(path, p, sizeof p) != 0)
				continue;
			return quota_cpus(atoll(q), atoll(p));
		}
	}
	return 0;
}

int ig_cgroup_cpu_limit(void)
{
	char cgroups[4096];
	if (ig_read_small_file("/proc/self/cgroup", cgroups, sizeof cgroups) != 0)
		return 0;
	int v2 = cgroup_v2_limit(cgroups);
	return v2 ? v2 : cgroup_v1_limit(cgroups);
}

void ig_pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

int ig_threads_start(pthread_t *threads, int n, const int *cpus, int ncpus, int first,
		     void *(*fn)(void *), void **args)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Loops keep their state in pools, not on the stack. */
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int i = 0; i < n; i++) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpus[(first + i) % ncpus], &set);
		if (pthread_create(&threads[i], &attr, fn, args[i]) != 0) {
			pthread_attr_destroy(&attr);
			return -1;
		}
		/* Pinning can fail where the mask is managed elsewhere; the
		 * thread still runs, so this is not an error. */
		pthread_setaffinity_np(threads[i], sizeof set, &set);
	}
	pthread_attr_destroy(&attr);
	return 0;
}
