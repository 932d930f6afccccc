/* The fatal-signal line (fatal.h). Nothing here runs until a signal comes:
 * installing is a few sigaction calls, and a thread's stack is address
 * space only. */
#include "fatal.h"
#include "kernel/runtime/coro.h"
#include "kernel/runtime/log_ring.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIGNAL_STACK_BYTES (16 * 1024)

_Thread_local const void *ig_fatal_running;

/* Weak: a binary without coroutines has no guard page to run into, and
 * links none of kernel/runtime/coro.c for this. */
#pragma weak ig_coro_guard_hit

static ig_fatal_describe_fn *describe_running;

static const struct {
	int signo;
	const char *name;
} fatal_signals[] = {
	{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" }, { SIGILL, "SIGILL" },
	{ SIGABRT, "SIGABRT" }, { SIGTRAP, "SIGTRAP" }, { SIGSYS, "SIGSYS" },
};
#define FATAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])

/* What each signal did before: the default, or a handler (a sanitizer's). */
static struct sigaction before[FATAL_COUNT];

/* The one line: msg, then what is known of the cause, then the running
 * work's fields. Not through the thread's ring: the signal may have come
 * in the middle of a push, and the process ends before the writer thread
 * would get to it. */
__attribute__((cold)) static void fatal_line(const char *msg, const char *signal, const char *from, size_t stack)
{
	struct ig_logline line;
	if (!ig_log_begin(&line, IG_LOG_ERROR, msg))
		return;
	if (signal)
		ig_log_cstr(&line, "signal", signal);
	ig_log_cstr(&line, "from", from);
	if (stack)
		ig_log_int(&line, "stack_bytes", (int64_t)stack);
	const void *running = ig_fatal_running;
	if (running && describe_running)
		describe_running(running, &line);
	ig_log_end_direct(&line);
}

__attribute__((cold)) bool ig_fatal_overflow_line(const void *addr)
{
	size_t stack = 0;
	if (!ig_coro_guard_hit || !ig_coro_guard_hit(addr, &stack))
		return false;
	fatal_line("stack overflow", NULL, "fault", stack);
	return true;
}

__attribute__((cold)) static void on_fatal(int signo, siginfo_t *info, void *context)
{
	(void)context;
	size_t i = 0;
	while (i < FATAL_COUNT - 1 && fatal_signals[i].signo != signo)
		i++;
	/* Sent by a process (kill), or raised by the fault itself; a fault in
	   a coroutine's guard page: its stack ran out. */
	bool fault = info->si_code > 0;
	size_t stack = 0;
	bool overflow = (signo == SIGSEGV || signo == SIGBUS) && fault && ig_coro_guard_hit &&
			ig_coro_guard_hit(info->si_addr, &stack);
	fatal_line(overflow ? "stack overflow" : "fatal signal", fatal_signals[i].name, fault ? "fault" : "process",
		   stack);
	/* Hand the signal back to what had it: pending while this handler
	   runs, it is delivered when the handler returns (a fault, returning,
	   faults again). */
	sigaction(signo, &before[i], NULL);
	raise(signo);
	if (before[i].sa_handler == SIG_DFL) {
		/* PID 1 in a container ignores a default action that a process
		   sends it: a fatal signal still ends the process. */
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, signo);
		pthread_sigmask(SIG_UNBLOCK, &s, NULL);
		_exit(128 + signo);
	}
}

bool ig_fatal_faults_are_exceptions;

void ig_fatal_signals_install(ig_fatal_describe_fn *describe)
{
	describe_running = describe;
	if (ig_fatal_faults_are_exceptions)
		return;
	struct sigaction sa = { .sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < FATAL_COUNT; i++)
		sigaction(fatal_signals[i].signo, &sa, &before[i]);
}

int ig_fatal_thread_init(void)
{
	if (ig_fatal_faults_are_exceptions)
		return 0;
	void *m = mmap(NULL, SIGNAL_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (m == MAP_FAILED)
		return -1;
	stack_t ss = { .ss_sp = m, .ss_size = SIGNAL_STACK_BYTES };
	if (sigaltstack(&ss, NULL) != 0) {
		munmap(m, SIGNAL_STACK_BYTES);
		return -1;
	}
	return 0;
}
