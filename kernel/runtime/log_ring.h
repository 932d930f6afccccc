/* Where finished log lines go once a server runs: a ring per thread that
 * logs, drained by one writer thread to stdout, so that no loop ever
 * blocks on a slow reader. Lines that do not fit are dropped and counted.
 * Before ig_log_ring_enable (startup), on the writer thread itself, and on
 * a one-loop stack (the unikernel's serial console), lines are written
 * directly, as ig_log_end_direct does. */
#ifndef KERNEL_LOG_RING_H
#define KERNEL_LOG_RING_H

#include "ingot/log.h"

#include <stdatomic.h>

/* Set by ig_log_ring_enable; ig_log_end hands each line to it, and writes
 * the line itself when it returns false. */
typedef bool ig_log_queue_fn(const struct ig_logline *l);
extern _Atomic(ig_log_queue_fn *) ig_log_queue;

/* Closes the line and writes it to stdout with write(2), whatever is
 * enabled: the fatal-signal handler's path, and the writer's own. */
IG_NONNULL(1) void ig_log_end_direct(struct ig_logline *l);

/* From now on, lines go through the rings. The writer thread starts with
 * the first line queued, and a ring is mapped on a thread's first line.
 * The writer may run on any of cpus[0..ncpus) (the process's, before the
 * loops pinned themselves), so that it does not share the one core of the
 * loop that happened to start it; with ncpus 0 it keeps its creator's. */
void ig_log_ring_enable(const int *cpus, int ncpus);

/* At the exit: waits until what was queued before the call is written,
 * then ends the writer thread and joins it, at most deadline_ms in all (a
 * reader that does not read cannot hold the exit). Lines after it are
 * written directly. */
void ig_log_ring_flush(int deadline_ms);

/* Lines dropped so far because their ring was full. */
uint64_t ig_log_ring_dropped(void);

#endif
