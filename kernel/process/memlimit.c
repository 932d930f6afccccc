/* The process's memory limit (memlimit.h), read the way cores.c reads the
 * CPU quota: from the cgroup files in place, any failure meaning "none". */
#include "memlimit.h"
#include "cgroup.h"

#include <stdlib.h>
#include <string.h>

/* Above this a cgroup v1 limit means "unlimited" (the kernel's is near
 * 2^63, rounded to a page). */
#define NO_LIMIT ((uint64_t)1 << 60)

static uint64_t tighter(uint64_t best, uint64_t v)
{
	return v && v < NO_LIMIT && (!best || v < best) ? v : best;
}

static uint64_t cgroup_v2_memory(const char *cgroups)
{
	char rel[1024], path[1200], buf[64];
	if (ig_cgroup_path(cgroups, NULL, rel, sizeof rel) != 0)
		return 0;
	/* From the deepest level up to the mount root, as cores.c walks. */
	uint64_t best = 0;
	for (;;) {
		ig_join3(path, sizeof path, "/sys/fs/cgroup", strcmp(rel, "/") ? rel : "", "/memory.max");
		if (ig_read_small_file(path, buf, sizeof buf) == 0 && strncmp(buf, "max", 3) != 0)
			best = tighter(best, strtoull(buf, NULL, 10));
		char *slash = strrchr(rel, '/');
		if (!slash)
			break;
		if (slash == rel) {
			if (strcmp(rel, "/") == 0)
				break;
			rel[1] = 0;
			continue;
		}
		*slash = 0;
	}
	return best;
}

/* The value of "name N" in a /proc or cgroup key-value text. */
static uint64_t field(const char *text, const char *name)
{
	const char *p = strstr(text, name);
	return p ? strtoull(p + strlen(name), NULL, 10) : 0;
}

static uint64_t cgroup_v1_memory(const char *cgroups)
{
	char rel[1024], path[1300];
	static char stat[8192]; /* memory.stat runs to a few KiB; read once */
	if (ig_cgroup_path(cgroups, "memory", rel, sizeof rel) != 0)
		return 0;
	/* hierarchical_memory_limit is already the tightest up the tree; the
	   mount root serves inside a container whose path is not in view. */
	for (int pass = 0; pass < 2; pass++) {
		ig_join3(path, sizeof path, "/sys/fs/cgroup/memory", pass == 0 && strcmp(rel, "/") ? rel : "",
			 "/memory.stat");
		if (ig_read_small_file(path, stat, sizeof stat) == 0)
			return tighter(0, field(stat, "\nhierarchical_memory_limit "));
	}
	return 0;
}

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
		if ((v = cgroup_v1_memory(text))) {
			*source = IG_MEM_CGROUP_V1;
			return v;
		}
	}
	/* MemTotal is /proc/meminfo's first line. */
	if (ig_read_small_file("/proc/meminfo", text, 256) == 0 && (v = field(text, "MemTotal:"))) {
		*source = IG_MEM_TOTAL;
		return v * 1024;
	}
	return 0;
}
