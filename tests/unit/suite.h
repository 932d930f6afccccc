/* Where the JSON-Schema-Test-Suite's draft 2020-12 tests are (argv[1], else
 * $JSON_SCHEMA_TEST_SUITE/tests/draft2020-12, else the same under
 * ../shared/testdata/json-schema-test-suite beside the repo, as CI lays it
 * out), and reading one of its files whole. For the unit tests that use the
 * suite as data; without it they report its checks as skipped. */
#ifndef TESTS_UNIT_SUITE_H
#define TESTS_UNIT_SUITE_H

#include "kernel/runtime/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define SUITE_TESTS "/tests/draft2020-12"
#define SUITE_SKIP "JSON Schema Test Suite not found (set JSON_SCHEMA_TEST_SUITE)"

/* The directory, or NULL when there is none (the checks are then skipped). */
static const char *suite_dir(int argc, char **argv)
{
	static char dir[4096];
	const char *env = getenv("JSON_SCHEMA_TEST_SUITE");
	if (argc > 1)
		snprintf(dir, sizeof dir, "%s", argv[1]);
	else
		snprintf(dir, sizeof dir, "%s" SUITE_TESTS,
			 env && *env ? env : "../shared/testdata/json-schema-test-suite");
	struct stat st;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

/* The file's bytes (NUL-terminated, malloc'd) and length, or NULL. */
static inline char *read_file(const char *path, size_t *len)
{
	return ig_read_file(path, (size_t)64 << 20, 0, len, NULL, 0);
}

#endif
