/* A tiny TAP producer for unit tests: each check prints "ok N - name" or
 * "not ok N - name (details)"; check_done() prints the plan and a summary
 * and gives main() its exit status, non-zero if any check failed.
 * Header-only and single-translation-unit: include it from the test's .c. */
#ifndef TESTS_UNIT_CHECK_H
#define TESTS_UNIT_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static unsigned check_count_;
static unsigned check_failed_;

/* Records one check; `fmt` (printf-style, may be NULL) explains a failure. */
static inline bool check_that(bool ok, const char *name, const char *fmt, ...)
{
	check_count_++;
	if (ok) {
		printf("ok %u - %s\n", check_count_, name);
		return true;
	}
	check_failed_++;
	printf("not ok %u - %s", check_count_, name);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		printf(" (");
		vprintf(fmt, ap);
		printf(")");
		va_end(ap);
	}
	printf("\n");
	return false;
}

/* The condition's own text is the failure detail. */
#define CHECK(cond, name) check_that((cond), (name), "%s", #cond)

#define CHECK_INT(got, want, name)                                                   \
	do {                                                                         \
		intmax_t got_ = (intmax_t)(got), want_ = (intmax_t)(want);          \
		check_that(got_ == want_, (name), "%s = %jd, want %jd", #got, got_, want_); \
	} while (0)

/* Compares a (pointer, length) slice with a C string; NULL matches NULL. */
static inline bool check_slice(const char *got, size_t got_len, const char *want,
			       const char *name, const char *what)
{
	bool ok = want == NULL ? got == NULL
			       : got != NULL && got_len == strlen(want) &&
					 memcmp(got, want, got_len) == 0;
	return check_that(ok, name, "%s = \"%.*s\", want \"%s\"", what,
			  got ? (int)got_len : 4, got ? got : "NULL", want ? want : "NULL");
}

/* Records a check that cannot run here: "ok N - name # SKIP reason", which
 * tests/run counts as skipped, not passed. */
static inline void check_skip(const char *name, const char *reason)
{
	printf("ok %u - %s # SKIP %s\n", ++check_count_, name, reason);
}

/* Prints the plan and a summary; returns main()'s exit status. */
static inline int check_done(void)
{
	printf("1..%u\n", check_count_);
	printf("# %u checks, %u failed\n", check_count_, check_failed_);
	return check_failed_ == 0 ? 0 : 1;
}

#endif
