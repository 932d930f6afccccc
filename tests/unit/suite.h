/* Where the JSON-Schema-Test-Suite is (argv[1], else $INGOT_SUITE, else
 * ../shared beside the repo, as CI lays it out) and reading one of its
 * files whole. For the unit tests that use the suite as data. */
#ifndef TESTS_UNIT_SUITE_H
#define TESTS_UNIT_SUITE_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const char *suite_dir(int argc, char **argv)
{
	if (argc > 1)
		return argv[1];
	const char *env = getenv("INGOT_SUITE");
	return env && *env ? env : "../shared/testdata/json-schema-test-suite/tests/draft2020-12";
}

/* The file's bytes (NUL-terminated, malloc'd) and length, or NULL. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fileno(f), &st) == 0 && (buf = malloc((size_t)st.st_size + 1))) {
		if (fread(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size) {
			buf[st.st_size] = 0;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	*len = buf ? (size_t)st.st_size : 0;
	return buf;
}

#endif
