/* One log line when a fatal signal ends the process (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS): the signal's name and, when a
 * thread was running a request, what the caller's describe adds (its id
 * and route). A fault in the guard page of a coroutine's stack
 * (kernel/runtime/coro.h) is named "stack overflow", with the stack's size
 * ("stack_bytes"). The handler runs on a small stack of each thread's own, so
 * that a stack overflow is reported too, writes the line with the logger
 * (one write(2), no allocation), then lets the signal do what it did
 * before: the default action (the process ends by that signal) or a
 * handler that was there first (a sanitizer's report). */
#ifndef KERNEL_FATAL_H
#define KERNEL_FATAL_H

#include "ingot/log.h"

/* Adds the running work's fields to line; called in the signal handler, so
 * it may only read memory and format (no allocation, no locks). */
typedef void ig_fatal_describe_fn(const void *running, struct ig_logline *line);

/* Installs the handler for the whole process, once, before the threads that
 * run requests start. describe may be NULL. */
void ig_fatal_signals_install(ig_fatal_describe_fn *describe);

/* Set, before that, by a platform whose faults are CPU exceptions and not
 * signals (kernel/metal: its exception handler calls ig_fatal_overflow_line):
 * then installing keeps only describe, and threads get no signal stack. */
extern bool ig_fatal_faults_are_exceptions;

/* Gives the calling thread its signal stack (16 KiB of address space, no
 * memory until a signal uses it). Each thread that runs requests calls it
 * once; 0, or -1 when the stack could not be had (the handler then runs on
 * the thread's own stack, where an overflow cannot be reported). */
int ig_fatal_thread_init(void);

/* The "stack overflow" line for a fault at addr when addr lies in the
 * guard page of one of the calling thread's coroutine stacks; returns
 * whether it was one (and the line written). For a platform whose faults
 * are not signals: kernel/metal's exception handler. */
bool ig_fatal_overflow_line(const void *addr);

/* What the calling thread runs now, or NULL: set by the HTTP engine around
 * a handler's call (two stores a request), read only by the handler. */
extern _Thread_local const void *ig_fatal_running;

#endif
