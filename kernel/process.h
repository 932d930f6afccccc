/* Process duties: signals, graceful drain with a deadline, reaping children
 * (the binary may be PID 1 in a container or an initramfs), and the
 * open-file limit. The main thread runs the supervisor; loops run on their
 * own threads with every signal blocked. */
#ifndef KERNEL_PROCESS_H
#define KERNEL_PROCESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Blocks the signals the supervisor waits for and ignores SIGPIPE; call in
 * main before starting threads so every thread inherits the mask. */
void ig_signals_block(void);

/* Raises the soft RLIMIT_NOFILE to the hard limit; returns the new soft. */
long ig_raise_nofile(void);

struct ig_drain_hooks {
	void (*drain)(void *arg); /* stop accepting, finish in-flight work */
	void (*force)(void *arg); /* grace is over: close everything now */
	void *arg;
};

/* Waits for SIGTERM/SIGINT while reaping children, then calls drain and
 * joins the threads; if they have not all finished within grace_ms, calls
 * force and joins them. Returns true if the drain finished in time. Also
 * returns (without a signal) if every thread has exited on its own. */
bool ig_supervise(pthread_t *threads, int n, uint32_t grace_ms, const struct ig_drain_hooks *hooks);

#endif
