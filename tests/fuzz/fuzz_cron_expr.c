/* libFuzzer target for kernel/runtime/cron_expr.c: any bytes as a cron
 * expression and as an `every` period. The parser must not read past the
 * text (ASan); a refusal names a kind and a position inside the text; an
 * accepted expression has its next fire time after any start, a whole
 * minute (cron) or a multiple of the period (every), and later than the
 * start; and a second call from that time moves forward.
 * Input: the text (cut at the first NUL), NUL-terminated here.
 * Build: FUZZ_SRC_cron_expr in the Makefile (make fuzz-build). */
#include "kernel/runtime/cron_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_cron_expr: %s\n", what);
	abort();
}

static void judge(const char *text, size_t len, bool every)
{
	struct ig_cron_expr e;
	struct ig_cron_error err = { IG_CRON_OK, 0 };
	bool ok = every ? ig_cron_parse_every(text, &e, &err) : ig_cron_parse(text, &e, &err);
	if (!ok) {
		if (err.kind == IG_CRON_OK || err.pos > len)
			die("a refusal without a kind, or past the text");
		return;
	}
	/* Starts spread over the years, a leap day and 2100 among them. */
	static const int64_t starts[] = { 0, 951782399, 1709164799, 4107542399, 4107542400 + 86399 };
	for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
		int64_t t = ig_cron_next(&e, starts[i]);
		if (t <= starts[i])
			die("no fire time after the start");
		if (every ? t % e.every_s != 0 : t % 60 != 0)
			die("a fire time off the grid");
		if (ig_cron_next(&e, t) <= t)
			die("the next fire time does not move forward");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	size_t len = strlen(text);
	judge(text, len, false);
	judge(text, len, true);
	free(text);
	return 0;
}
