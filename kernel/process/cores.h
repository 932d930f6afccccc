/* How many cores this process may use, and one pinned thread per core.
 * Usable = the CPUs in the affinity mask, capped by a cgroup CPU quota
 * (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), because a
 * container given 1.5 CPUs of quota on a 64-core host must not run 64 loops. */
#ifndef KERNEL_CORES_H
#define KERNEL_CORES_H

#include <pthread.h>

#define IG_MAX_CORES 256

/* Fills cpus[] with the CPU ids of the affinity mask; returns their count. */
int ig_affinity_cpus(int *cpus, int max);

/* The cgroup CPU quota rounded up to whole CPUs, or 0 if there is none or
 * it cannot be read (no /proc or /sys, as in an empty chroot). */
int ig_cgroup_cpu_limit(void);

/* Pins the calling thread to one CPU (failure is harmless: it still runs). */
void ig_pin_self(int cpu);

/* Starts n threads running fn(args[i]); thread i is pinned to
 * cpus[(first + i) % ncpus]. Returns 0, or -1 if one could not start. */
int ig_threads_start(pthread_t *threads, int n, const int *cpus, int ncpus, int first,
		     void *(*fn)(void *), void **args);

#endif
