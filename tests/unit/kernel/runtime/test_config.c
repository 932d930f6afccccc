/* The settings table (kernel/runtime/config.h): environment, flags and
 * command-line words parsed strictly, parts' checks, fractions. */
#include "kernel/runtime/config.h"
#include "ingot/base.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table as one part named "t". */
static enum ig_config_result parse(const struct ig_option *o, int argc, char **argv)
{
	const struct ig_settings part = { .part = "t", .opts = o, .count = 4 };
	const struct ig_settings *const parts[] = { &part };
	return ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = argc, .argv = argv, .name = "t", .version = "0" });
}

static void test_config(void)
{
	int64_t port = 8080, threads = 0;
	const char *host = "0.0.0.0";
	bool flag = false;
	struct ig_option o[] = {
		{ "T_PORT", IG_OPT_INT, &port, 0, 65535, "port" },
		{ "T_HOST", IG_OPT_STR, &host, 0, 0, "host" },
		{ "T_THREADS", IG_OPT_INT, &threads, 0, 256, "threads" },
		{ "T_FLAG", IG_OPT_BOOL, &flag, 0, 0, "flag" },
	};
	setenv("T_PORT", "9000", 1);
	setenv("T_FLAG", "yes", 1);
	char *argv1[] = { "x", "--t-threads", "3", "--t-host=::1", NULL };
	CHECK(parse(o, 4, argv1) == IG_CONFIG_OK && port == 9000 &&
		      threads == 3 && strcmp(host, "::1") == 0 && flag,
	      "config: environment then flags, both forms");
	char *argv2[] = { "x", "--t-port", "9001", NULL };
	CHECK(parse(o, 3, argv2) == IG_CONFIG_OK && port == 9001,
	      "config: a flag wins over the environment");
	setenv("T_PORT", "80x", 1);
	char *argv3[] = { "x", NULL };
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: trailing garbage is an error");
	setenv("T_PORT", "70000", 1);
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: out of range is an error");
	setenv("T_PORT", "", 1);
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: empty is an error");
	unsetenv("T_PORT");
	char *argv4[] = { "x", "--nope", "1", NULL };
	CHECK(parse(o, 3, argv4) == IG_CONFIG_ERROR, "config: unknown flag is an error");
	char *argv5[] = { "x", "--t-port", NULL };
	CHECK(parse(o, 2, argv5) == IG_CONFIG_ERROR, "config: a flag without value is an error");
	setenv("T_FLAG", "maybe", 1);
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: a bad boolean is an error");
}

/* A decimal from 0 to 1 in millionths: each accepted form, each refusal. */
static void test_config_fraction(void)
{
	uint32_t share = IG_FRACTION_ONE;
	const struct ig_option o[] = { { "T_SHARE", IG_OPT_FRACTION, &share, 0, 0, "share" } };
	const struct ig_settings part = { .part = "t", .opts = o, .count = 1 };
	const struct ig_settings *const parts[] = { &part };
	static const struct { const char *in; uint32_t want; } good[] = {
		{ "0", 0 }, { "1", IG_FRACTION_ONE }, { "0.25", 250000 }, { ".5", 500000 },
		{ "1.000", IG_FRACTION_ONE }, { "0.000001", 1 },
	};
	static const char *const bad[] = { "", ".", "2", "1.5", "0.0000001", "-0.1", "0.5x", "1e-1" };
	bool ok = true;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		char arg[32];
		snprintf(arg, sizeof arg, "--t-share=%s", good[i].in);
		char *argv[] = { "x", arg, NULL };
		ok = ok && ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 2, .argv = argv }) == IG_CONFIG_OK &&
		     share == good[i].want;
	}
	CHECK(ok, "config: a fraction: 0, 1, 0.25, .5, 1.000, 0.000001");
	ok = true;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char arg[32];
		snprintf(arg, sizeof arg, "--t-share=%s", bad[i]);
		char *argv[] = { "x", arg, NULL };
		ok = ok && ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 2, .argv = argv }) == IG_CONFIG_ERROR;
	}
	CHECK(ok, "config: not a fraction: empty, '.', 2, 1.5, 7 decimals, negative, trailing garbage, exponent");
}

static int mode_index;
static const char *check_says;
static const char *check_stub(char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return check_says;
}

/* Two parts, one with its defaults apart, a choice, a part's check and a
 * machine's command-line words. */
static void test_config_parts(void)
{
	int64_t size = 0;
	static const int64_t size_default = 1;
	static const struct ig_choice modes = { &mode_index, "add|replace" };
	const struct ig_option a[] = { { "T_SIZE", IG_OPT_INT, &size, 0, 9, "size" } };
	const struct ig_option b[] = { { "T_MODE", IG_OPT_CHOICE, (void *)&modes, 0, 0, "mode" } };
	const struct ig_settings pa = { .part = "a", .opts = a, .count = 1,
					.values = &size, .defaults = &size_default, .size = sizeof size },
				 pb = { .part = "b", .opts = b, .count = 1, .check = check_stub };
	const struct ig_settings *const parts[] = { &pa, &pb };
	char *flags[] = { "x", "--t-size=4", "--t-mode", "replace", NULL };
	struct ig_config_args args = { .argc = 4, .argv = flags };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_OK && size == 4 && mode_index == 1,
	      "config: flags of two parts, a choice by its word");
	char *bad_choice[] = { "x", "--t-mode=both", NULL };
	args = (struct ig_config_args){ .argc = 2, .argv = bad_choice };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: a word that is not a choice is an error");
	check_says = "no";
	args = (struct ig_config_args){ .argc = 1, .argv = flags };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: a part's failed check is an error");
	check_says = NULL;
	char *words[] = { "x", "console=ttyS0", "quiet", "T_SIZE=7", NULL };
	args = (struct ig_config_args){ .argc = 4, .argv = words };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: bare words are errors outside a machine");
	args.command_line_words = true;
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_OK && size == 7,
	      "config: a machine's command line: NAME=value of a setting sets it, other words are ignored");
	char *bad_word[] = { "x", "T_SIZE=70", NULL };
	args = (struct ig_config_args){ .argc = 2, .argv = bad_word, .command_line_words = true };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: a bad NAME=value word is an error");
	args = (struct ig_config_args){ .argc = 1, .argv = flags };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_OK && size == 1,
	      "config: a part's defaults are copied in before the environment and the flags");
}

static const char *known_list(size_t i);

struct seen {
	char names[4][64];
	char nearest[4][64];
	int count;
};

static void record(const char *name, size_t len, const char *nearest, void *arg)
{
	struct seen *s = arg;
	if (s->count < 4) {
		snprintf(s->names[s->count], sizeof s->names[0], "%.*s", (int)len, name);
		snprintf(s->nearest[s->count], sizeof s->nearest[0], "%s", nearest ? nearest : "");
		s->count++;
	}
}

static const char *const *known_lists;
static const char *known_list(size_t i)
{
	return known_lists[i];
}

/* INGOT_ variables no row and no known name declares: each reported once,
 * with the nearest name for a slip, none for a stranger. */
static void test_config_unknown_env(void)
{
	int64_t v;
	const struct ig_option o[] = { { "INGOT_ACCESS_LOG", IG_OPT_INT, &v, 0, 1, "" },
				       { "INGOT_MAX_CONNS", IG_OPT_INT, &v, 0, 1, "" } };
	const struct ig_settings part = { .part = "t", .opts = o, .count = 2 };
	const struct ig_settings *const parts[] = { &part };
	static const char *const known[] = { "DATABASE_URL INGOT_PG_POOL_SIZE", "INGOT_ROOT", NULL };
	known_lists = known;
	/* Only this test's names: none of the caller's environment. */
	extern char **environ;
	for (char **e = environ; *e;) {
		char name[128];
		size_t len = strcspn(*e, "=");
		if (strncmp(*e, "INGOT_", 6) == 0 && len < sizeof name) {
			memcpy(name, *e, len);
			name[len] = 0;
			unsetenv(name); /* environ shifts down: look at *e again */
		} else {
			e++;
		}
	}
	setenv("INGOT_ACCES_LOG", "1", 1);  /* one letter short */
	setenv("INGOT_MAX_CONNS", "5", 1);  /* a row */
	setenv("INGOT_PG_POOL_SIZ", "3", 1); /* near a known name */
	setenv("INGOT_ROOT", "/x", 1);      /* a known name */
	setenv("INGOT_ZZZ", "1", 1);        /* near nothing */
	setenv("NOT_INGOT_X", "1", 1);      /* not ours */
	struct seen s = { .count = 0 };
	size_t n = ig_config_unknown_env(parts, 1, known_list, record, &s);
	bool access = false, pool = false, zzz = false;
	for (int i = 0; i < s.count; i++) {
		access |= strcmp(s.names[i], "INGOT_ACCES_LOG") == 0 && strcmp(s.nearest[i], "INGOT_ACCESS_LOG") == 0;
		pool |= strcmp(s.names[i], "INGOT_PG_POOL_SIZ") == 0 && strcmp(s.nearest[i], "INGOT_PG_POOL_SIZE") == 0;
		zzz |= strcmp(s.names[i], "INGOT_ZZZ") == 0 && s.nearest[i][0] == 0;
	}
	CHECK(n == 3 && s.count == 3 && access && pool && zzz,
	      "config: unknown INGOT_ names reported, with the nearest for a slip and none for a stranger");
	unsetenv("INGOT_ACCES_LOG");
	unsetenv("INGOT_PG_POOL_SIZ");
	unsetenv("INGOT_ZZZ");
	s.count = 0;
	CHECK(ig_config_unknown_env(parts, 1, known_list, record, &s) == 0 && s.count == 0,
	      "config: rows and known names are no unknown");
}

int main(void)
{
	test_config();
	test_config_unknown_env();
	test_config_parts();
	test_config_fraction();
	return check_done();
}
