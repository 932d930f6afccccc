/* Places test input flush against an unreadable guard page, so a parser
 * that reads even one byte past the length it was given faults at once
 * (under ASan or not). The mapping is writable, for in-place decoders.
 * Needs MAP_ANONYMOUS: define _DEFAULT_SOURCE before the first include. */
#ifndef TESTS_UNIT_GUARD_H
#define TESTS_UNIT_GUARD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct guard {
	char *map;      /* the whole mapping */
	size_t map_len;
	char *limit;    /* first byte of the PROT_NONE page */
	size_t capacity; /* bytes that fit before it */
};

/* Maps room for `capacity` bytes followed by one PROT_NONE page. */
static inline bool guard_init(struct guard *g, size_t capacity)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = (capacity + page - 1) / page * page;
	if (data == 0)
		data = page;
	g->map_len = data + page;
	void *m = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (m == MAP_FAILED)
		return false;
	g->map = m;
	g->limit = g->map + data;
	g->capacity = data;
	if (mprotect(g->limit, page, PROT_NONE) != 0) {
		munmap(g->map, g->map_len);
		return false;
	}
	return true;
}

/* Copies data so that its last byte sits right before the guard page and
 * returns where it starts; NULL if it does not fit. */
static inline char *guard_put(struct guard *g, const void *data, size_t len)
{
	if (len > g->capacity)
		return NULL;
	char *p = g->limit - len;
	if (len)
		memcpy(p, data, len);
	return p;
}

static inline void guard_free(struct guard *g)
{
	munmap(g->map, g->map_len);
	*g = (struct guard){ 0 };
}

static inline void guard_on_fault(int sig)
{
	(void)sig;
	_exit(42);
}

/* Whether reading the byte at the guard faults, as it must, or the tests
 * that rely on it prove nothing. Tried in a child process. */
static inline bool guard_faults(const struct guard *g)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = guard_on_fault };
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		volatile char *p = g->limit;
		(void)*p;
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 42;
}

#endif
