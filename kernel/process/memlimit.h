/* The memory the process may use: the tightest limit of its cgroups up the
 * hierarchy (v2 memory.max, v1 hierarchical_memory_limit), else the
 * machine's MemTotal (/proc/meminfo, else sysinfo(2): the unikernel's RAM). A few file reads (~100 us): callers read it after
 * the start, never before "listening". */
#ifndef KERNEL_MEMLIMIT_H
#define KERNEL_MEMLIMIT_H

#include <stdint.h>

enum ig_mem_source { IG_MEM_NONE, IG_MEM_CGROUP_V2, IG_MEM_CGROUP_V1, IG_MEM_TOTAL };

/* Bytes, and where they came from; 0 with IG_MEM_NONE when nothing says. */
uint64_t ig_memory_limit(enum ig_mem_source *source);

#endif
