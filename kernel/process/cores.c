/* Core counting and thread pinning. Reading the cgroup files costs a few
 * syscalls at startup only; any failure means "no quota". */
#include "cores.h"

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

static int read_small_file(const char *path, char *buf, size_t cap)
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

/* Whether the comma-separated list names item exactly ("cpu" is not
 * "cpuset"). */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && memcmp(p, item, n) == 0)
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/* The process's cgroup path for a controller, from the text of
 * /proc/self/cgroup: "0::/path" (v2, controller NULL) or
 * "N:cpu,cpuacct:/path" (v1). */
static int cgroup_path(const char *cgroups, const char *controller, char *out, size_t cap)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", cgroups);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		bool match = controller ? list_has(c1 + 1, controller) : c1[1] == 0;
		if (match) {
			snprintf(out, cap, "%s", c2 + 1);
			return 0;
		}
	}
	return -1;
}

static int cgroup_v2_limit(const char *cgroups)
{
	char rel[1024], path[1200], buf[128];
	if (cgroup_path(cgroups, NULL, rel, sizeof rel) != 0)
		return 0;
	/* Inside a cgroup namespace the path is "/", and the limit of the
	 * container's own cgroup is at the mount root. Walk up from the
	 * deepest level: the tightest limit on the way counts. */
	int best = 0;
	for (;;) {
		snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", strcmp(rel, "/") ? rel : "");
		if (read_small_file(path, buf, sizeof buf) == 0 && strncmp(buf, "max", 3) != 0) {
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
	if (cgroup_path(cgroups, "cpu", rel, sizeof rel) != 0)
		return 0;
	for (size_t m = 0; m < 2; m++) {
		for (int pass = 0; pass < 2; pass++) {
			/* pass 0: the process's own cgroup; pass 1: the mount root
			 * (inside a container the path may not exist in its view). */
			const char *r = pass == 0 && strcmp(rel, "/") ? rel : "";
			snprintf(path, sizeof path, "%s%s/cpu.cfs_quota_us", mounts[m], r);
			if (read_small_file(path, q, sizeof q) != 0)
				continue;
			snprintf(path, sizeof path, "%s%s/cpu.cfs_period_us", mounts[m], r);
			if (read_small_file(path, p, sizeof p) != 0)
				continue;
			return quota_cpus(atoll(q), atoll(p));
		}
	}
	return 0;
}

int ig_cgroup_cpu_limit(void)
{
	char cgroups[4096];
	if (read_small_file("/proc/self/cgroup", cgroups, sizeof cgroups) != 0)
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
