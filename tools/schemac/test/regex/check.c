/* Runs the matchers gen.c wrote (matchers.c) against the cases extract.js
 * wrote: hand-written answers, the JSON Schema suite's answers and long
 * pathological inputs (checks.inc), and V8's answers on random strings
 * (samples.txt, the argument: data, not code, so this builds quickly).
 * A suite case whose pattern was rejected as unsupported is a TAP SKIP
 * naming the construct; any other rejection fails. Prints TAP lines
 * without numbers, then the counts. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matchers.c"

static unsigned passed, failed, skipped;

/* Skip reasons and how often each was given. */
static struct {
	const char *why;
	unsigned count;
} reasons[64];

static void count_reason(const char *why)
{
	size_t k = 0;
	while (k < 63 && reasons[k].why && strcmp(reasons[k].why, why) != 0)
		k++;
	reasons[k].why = why;
	reasons[k].count++;
}

static bool M(int re, const char *s, size_t n)
{
	return re_fn[re](s, n);
}

static void report(const char *desc, bool got, bool want)
{
	if (got == want) {
		passed++;
		printf("ok - %s\n", desc);
	} else {
		failed++;
		printf("not ok - %s (got %s)\n", desc, got ? "match" : "no match");
	}
}

static void skip(const char *desc, const char *why)
{
	skipped++;
	count_reason(why);
	printf("ok - %s # SKIP %s\n", desc, why);
}

/* True (and reported) when a pattern of the case did not compile: a skip
 * if the case may use unsupported constructs and the message says that is
 * what happened, else a failure. */
static bool unsupported(const char *desc, const int *pats, size_t n, int may_be_unsupported)
{
	for (size_t k = 0; k < n; k++) {
		const char *err = re_err[pats[k]];
		if (!err)
			continue;
		if (may_be_unsupported && strstr(err, "is not supported")) {
			skip(desc, err);
		} else {
			failed++;
			printf("not ok - %s (pattern rejected: %s)\n", desc, err);
		}
		return true;
	}
	return false;
}

/* One sample line, "<0|1> <hex>": the string into buf, its length into *n. */
static bool read_sample(FILE *f, char *buf, size_t cap, size_t *n, bool *want)
{
	char line[256], *hex;
	if (!fgets(line, sizeof line, f) || (line[0] != '0' && line[0] != '1') || line[1] != ' ')
		return false;
	*want = line[0] == '1';
	*n = 0;
	for (hex = line + 2; hex[0] != '-' && hex[0] >= '0' && hex[1] >= '0' && *n < cap; hex += 2) {
		unsigned byte;
		if (sscanf(hex, "%2x", &byte) != 1)
			return false;
		buf[(*n)++] = (char)byte;
	}
	return true;
}

/* The strings of one pattern: all must get V8's answer. */
static void fuzz(FILE *f, int re, unsigned count, const char *desc)
{
	char s[128], first[128];
	size_t n, first_n = 0;
	unsigned bad = 0;
	bool want, first_want = false;
	for (unsigned k = 0; k < count; k++) {
		if (!read_sample(f, s, sizeof s, &n, &want)) {
			failed++;
			printf("not ok - %s (samples.txt is malformed)\n", desc);
			return;
		}
		if (M(re, s, n) != want && bad++ == 0)
			memcpy(first, s, n), first_n = n, first_want = want;
	}
	if (bad == 0 && !re_err[re]) {
		passed++;
		printf("ok - %s\n", desc);
		return;
	}
	failed++;
	printf("not ok - %s (%u wrong", desc, bad);
	if (bad) {
		printf("; first: \"");
		for (size_t k = 0; k < first_n; k++)
			printf((unsigned char)first[k] < 0x20 ? "\\x%02x" : "%c", (unsigned char)first[k]);
		printf("\" should %smatch", first_want ? "" : "not ");
	}
	if (re_err[re])
		printf("; rejected: %s", re_err[re]);
	printf(")\n");
}

static void fuzz_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int re;
	unsigned count, at;
	if (!f) {
		failed++;
		printf("not ok - open %s\n", path);
		return;
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "pattern %d %u %n", &re, &count, &at) == 2) {
			fuzz(f, re, count, line + at);
		} else {
			failed++;
			printf("not ok - samples.txt: unexpected line \"%s\"\n", line);
			break;
		}
	}
	fclose(f);
}

/* Matches repeat x times + suffix, timing it for the log. */
static bool long_match(int re, const char *repeat, size_t times, const char *suffix)
{
	size_t r = strlen(repeat), n = r * times + strlen(suffix);
	char *s = malloc(n + 1);
	if (!s)
		abort();
	for (size_t k = 0; k < times; k++)
		memcpy(s + k * r, repeat, r);
	strcpy(s + r * times, suffix);
	clock_t t0 = clock();
	bool got = M(re, s, n);
	printf("# %zu bytes in %.2f ms\n", n, (double)(clock() - t0) * 1000 / CLOCKS_PER_SEC);
	free(s);
	return got;
}

#include "checks.inc"

int main(int argc, char **argv)
{
	run_checks();
	if (argc == 2)
		fuzz_all(argv[1]);
	printf("# check: %u passed, %u failed, %u skipped\n", passed, failed, skipped);
	for (size_t k = 0; k < 64 && reasons[k].why; k++)
		printf("#   skipped %u: %s\n", reasons[k].count, reasons[k].why);
	return 0;
}
