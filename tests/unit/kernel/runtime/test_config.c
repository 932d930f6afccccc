/* The settings table (kernel/runtime/config.h): environment, flags and
 * command-line words parsed strictly, parts' checks, fractions, secrets
 * and their NAME_FILE form. */
#include "kernel/runtime/config.h"
#include "ingot/base.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Writes text to a new file in /tmp; its path in path. */
static void write_temp(char path[64], const char *text)
{
	snprintf(path, 64, "/tmp/test_config_secret_XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A secret: from its variable, from NAME_FILE (one trailing newline off),
 * from --name-file and a NAME_FILE= word; both variables refused; messages
 * name it but never show its value; NAME_FILE is no unknown name. */
static void test_config_secret(void)
{
	const char *token = "";
	int64_t pin = 0;
	const struct ig_option o[] = {
		IG_SECRET("INGOT_T_TOKEN", &token, "token"),
		IG_SETTING_INT("INGOT_T_PIN", &pin, 0, 9999, "pin"),
	};
	const struct ig_settings part = { .part = "t", .opts = o, .count = 2 };
	const struct ig_settings *const parts[] = { &part };
	char msg[IG_CONFIG_ERROR_MAX];
	char *none[] = { "x", NULL };
	struct ig_config_args args = { .argc = 1, .argv = none, .error = msg, .error_cap = sizeof msg };

	setenv("INGOT_T_TOKEN", "s3cret-env", 1);
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_OK && strcmp(token, "s3cret-env") == 0,
	      "config: a secret from its variable");
	char path[64], path2[64];
	write_temp(path, "s3cret-file\r\n");
	write_temp(path2, "s3cret-word\n");
	setenv("INGOT_T_TOKEN_FILE", path, 1);
	msg[0] = 0;
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR && strstr(msg, "INGOT_T_TOKEN_FILE") &&
		      !strstr(msg, "s3cret"), "config: a secret's variable and its _FILE both set is an error");
	unsetenv("INGOT_T_TOKEN");
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_OK && strcmp(token, "s3cret-file") == 0,
	      "config: a secret from NAME_FILE, its trailing newline stripped");
	unsetenv("INGOT_T_TOKEN_FILE");
	char file_flag[96];
	snprintf(file_flag, sizeof file_flag, "--t-token-file=%s", path2);
	char *flags[] = { "x", file_flag, NULL };
	args.argc = 2, args.argv = flags;
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_OK && strcmp(token, "s3cret-word") == 0,
	      "config: a secret from --name-file");
	char word[96];
	snprintf(word, sizeof word, "INGOT_T_TOKEN_FILE=%s", path);
	char *words[] = { "x", word, NULL };
	args.argv = words, args.command_line_words = true;
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_OK && strcmp(token, "s3cret-file") == 0,
	      "config: a secret from a NAME_FILE=path word");
	char *pin_file[] = { "x", "--t-pin-file=/tmp/x", NULL };
	args.argv = pin_file, args.command_line_words = false;
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR, "config: only a secret has a file form");
	char *typo[] = { "x", "--t-tokne=hunter2", NULL };
	args.argv = typo;
	msg[0] = 0;
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR && strstr(msg, "--t-tokne") && !strstr(msg, "hunter2"),
	      "config: an unknown flag's message leaves out what follows its '='");
	char *stray[] = { "x", "INGOT_T_TOKEN=hunter2", NULL };
	args.argv = stray;
	msg[0] = 0;
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR && strstr(msg, "INGOT_T_TOKEN") && !strstr(msg, "hunter2"),
	      "config: a stray NAME=value argument's message leaves out the value");
	write_temp(path2, "");
	setenv("INGOT_T_TOKEN_FILE", path2, 1);
	args = (struct ig_config_args){ .argc = 1, .argv = none, .error = msg, .error_cap = sizeof msg };
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR && strstr(msg, "INGOT_T_TOKEN_FILE"),
	      "config: an empty secret file is an error naming it");
	setenv("INGOT_T_TOKEN_FILE", "/nonexistent/token", 1);
	CHECK(ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR && strstr(msg, "/nonexistent/token"),
	      "config: a missing secret file is an error naming it");
	static const char *const known[] = { NULL };
	known_lists = known;
	struct seen s = { .count = 0 };
	CHECK(ig_config_unknown_env(parts, 1, known_list, record, &s) == 0, "config: a secret's NAME_FILE is a known name");
	unsetenv("INGOT_T_TOKEN_FILE");
	unlink(path);
	unlink(path2);
}

int main(void)
{
	test_config_secret();
	test_config();
	test_config_unknown_env();
	test_config_parts();
	test_config_fraction();
	return check_done();
}
