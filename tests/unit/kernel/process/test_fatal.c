/* The fatal-signal line (kernel/process/fatal.h), in child processes: a
 * coroutine that runs past its stack into the guard page gives one
 * "stack overflow" line with the stack's size and what the describe
 * callback adds (the operation), and the process ends non-zero; any other
 * fault in a coroutine stays a "fatal signal". */
#include "kernel/process/fatal.h"
#include "kernel/runtime/coro.h"
#include "tests/unit/check.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void describe(const void *running, struct ig_logline *line)
{
	ig_log_cstr(line, "operation", running);
}

static volatile size_t depth_limit = (size_t)1 << 40;

/* Not instrumented: ASan could put frame on a fake stack of its own. */
__attribute__((noinline, no_sanitize_address)) static size_t recurse(size_t depth)
{
	volatile char frame[512];
	frame[0] = (char)depth;
	if (depth >= depth_limit)
		return frame[0];
	return recurse(depth + 1) + frame[0];
}

static void overflow(void *arg)
{
	(void)arg;
	recurse(0);
}

static void wild_write(void *arg)
{
	*(volatile int *)arg = 1;
}

/* Runs fn on a coroutine of a 16 KiB stack in a child whose stdout (the
 * log) and stderr are a pipe; returns what the child wrote
 * (NUL-terminated) and its status. */
static int run_child(ig_coro_fn *fn, void *arg, char *out, size_t cap)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		ig_fatal_signals_install(describe);
		ig_fatal_thread_init();
		ig_fatal_running = "deepOp";
		struct ig_coro_pool pool;
		ig_coro_pool_init(&pool, 16 * 1024, 1);
		struct ig_coro *c = ig_coro_new(&pool, fn, arg);
		ig_coro_resume(c);
		_exit(0);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

static char out[1 << 16];

int main(void)
{
	int status = run_child(overflow, NULL, out, sizeof out);
	char *line = strstr(out, "\"msg\":\"stack overflow\"");
	CHECK(line != NULL, "running into the guard page logs a stack overflow");
	char *end = line ? strchr(line, '\n') : NULL;
	if (end)
		*end = 0;
	CHECK(line && strstr(line, "\"stack_bytes\":16384"), "with the stack's size");
	CHECK(line && strstr(line, "\"operation\":\"deepOp\""), "and what describe adds: the operation");
	CHECK(line && strstr(line, "\"signal\":\"SIGSEGV\""), "the signal");
	CHECK(!strstr(out, "\"fatal signal\""), "one line: no second, generic one");
	CHECK(status != 0 && (WIFSIGNALED(status) || WEXITSTATUS(status) != 0), "the process ends non-zero");

	void *no_access = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	status = run_child(wild_write, no_access, out, sizeof out);
	CHECK(strstr(out, "\"msg\":\"fatal signal\"") && !strstr(out, "stack overflow"),
	      "a fault elsewhere, on a coroutine, is a fatal signal, not an overflow");
	CHECK(status != 0, "and ends the process non-zero too");
	return check_done();
}
