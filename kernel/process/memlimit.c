/* The process's memory limit (memlimit.h), read the way cores.c reads the
 * CPU quota: from the cgroup files in place, any failure meaning "none". */
#include "memlimit.h"
#include "cgroup.h"

#include <string.h>
#include <sys/sysinfo.h>

/* Above this a cgroup v1 limit means "unlimited" (the kernel's is near
 * 2^63, rounded to a page). */
#define NO_LIMIT ((uint64_t)1 << 60)

/* Decimal digits at p; by hand, as the rest: libc's parsers and strstr
 * sit off the startup pages (net/cold.ld), and this runs in every start. */
static uint64_t decimal(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

static uint64_t tighter(uint64_t best, uint64_t v)
{
	return v && v < NO_LIMIT && (!best || v < best) ? v : best;
}

/* The cgroup's own path, built in place after the mount at path: no second
 * buffer for the relative path (see ig_memory_limit). Returns the length of
 * path, 0 when the process's line for the controller is not there. */
static size_t own_cgroup(const char *cgroups, const char *controller, const char *mount, char *path, size_t cap)
{
	size_t m = strlen(mount);
	memcpy(path, mount, m);
	if (ig_cgroup_path(cgroups, controller, path + m, cap - m - 32) != 0)
		return 0;
	size_t n = strlen(path);
	if (n > m && path[n - 1] == '/') /* "/": the mount root */
		path[--n] = 0;
	return n;
}

/* Each level from the deepest up to the mount root (inside a cgroup
 * namespace the path is "/", and the container's limit is at the root):
 * the tightest limit on the way counts. */
__attribute__((noinline)) static uint64_t cgroup_v2_memory(const char *cgroups)
{
	static const char mount[] = "/sys/fs/cgroup";
	char path[1200], buf[64];
	size_t n = own_cgroup(cgroups, NULL, mount, path, sizeof path);
	if (!n)
		return 0;
	uint64_t best = 0;
	for (;;) {
		memcpy(path + n, "/memory.max", sizeof "/memory.max");
		if (ig_read_small_file(path, buf, sizeof buf) == 0 && strncmp(buf, "max", 3) != 0)
			best = tighter(best, decimal(buf));
		path[n] = 0;
		if (n == sizeof mount - 1)
			break;
		while (n > sizeof mount - 1 && path[n] != '/')
			n--;
		path[n] = 0;
	}
	return best;
}

/* The value of the line "name N" in a /proc or cgroup key-value text. */
static uint64_t field(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *line = text; *line;) {
		if (strncmp(line, name, n) == 0)
			return decimal(line + n);
		const char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

/* cgroups: /proc/self/cgroup's text, in a buffer of cap bytes that memory.
 * stat's head then overwrites (no second buffer on the stack, which an
 * idle process would keep resident). */
__attribute__((noinline)) static uint64_t cgroup_v1_memory(char *cgroups, size_t cap)
{
	static const char mount[] = "/sys/fs/cgroup/memory";
	char path[1200];
	char *stat = cgroups;
	size_t n = own_cgroup(cgroups, "memory", mount, path, sizeof path);
	if (!n)
		return 0;
	/* hierarchical_memory_limit is already the tightest up the tree; the
	   mount root serves inside a container whose path is not in view. */
	for (int pass = 0; pass < 2; pass++) {
		memcpy(path + (pass ? sizeof mount - 1 : n), "/memory.stat", sizeof "/memory.stat");
		/* The line is some 20 lines in, well within the first KiBs. */
		if (ig_read_small_file(path, stat, cap) == 0)
			return tighter(0, field(stat, "hierarchical_memory_limit "));
	}
	return 0;
}

/* The readers are kept out of line and build their paths in place:
 * inlined, or with a buffer more, their frames would reach a page deeper
 * into the stack than the start's (cores.c), which then stays resident. */
uint64_t ig_memory_limit(enum ig_mem_source *source)
{
	char text[4096];
	uint64_t v;
	*source = IG_MEM_NONE;
	if (ig_read_small_file("/proc/self/cgroup", text, sizeof text) == 0) {
		if ((v = cgroup_v2_memory(text))) {
			*source = IG_MEM_CGROUP_V2;
			return v;
		}
		if ((v = cgroup_v1_memory(text, sizeof text))) {
			*source = IG_MEM_CGROUP_V1;
			return v;
		}
	}
	/* MemTotal is /proc/meminfo's first line. */
	if (ig_read_small_file("/proc/meminfo", text, 256) == 0 && (v = field(text, "MemTotal:"))) {
		*source = IG_MEM_TOTAL;
		return v * 1024;
	}
	/* No /proc (the unikernel: its platform answers sysinfo with the
	   machine's RAM, qemu's -m). */
	struct sysinfo si;
	if (sysinfo(&si) == 0 && si.totalram) {
		*source = IG_MEM_TOTAL;
		return (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
	}
	return 0;
}
