/* The small file and cgroup path readers that the CPU quota (cores.c, where
 * they live) and the memory limit (memlimit.c) share. No printf: the start
 * runs them, and printf's code would stay resident in an idle process. */
#ifndef KERNEL_CGROUP_H
#define KERNEL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

/* Reads the file at path, NUL-terminated, into buf; -1 when it cannot. */
int ig_read_small_file(const char *path, char *buf, size_t cap);
/* The process's cgroup path for a controller (NULL: v2) from the text of
 * /proc/self/cgroup, into out; -1 when absent or too long. */
int ig_cgroup_path(const char *cgroups, const char *controller, char *out, size_t cap);

#endif
