/* Option parsing: one table drives the environment, the flags and --help,
 * so they cannot drift apart. Values are parsed strictly: "80x", "" or an
 * out-of-range number is an error that names the option and the range. */
#include "config.h"
#include "log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names = "error|warn|info|debug";

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0)
			return *out = true, 0;
		if (strcmp(s, no[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

static int set_value(const struct ig_option *o, const char *source, const char *v)
{
	switch (o->type) {
	case IG_OPT_INT: {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (*v == 0 || *end != 0 || errno || x < o->min || x > o->max) {
			fprintf(stderr, "ingot: invalid %s \"%s\": expected an integer from %lld to %lld\n",
				source, v, (long long)o->min, (long long)o->max);
			return -1;
		}
		*(int64_t *)o->target = x;
		return 0;
	}
	case IG_OPT_STR:
		if (*v == 0) {
			fprintf(stderr, "ingot: invalid %s: empty value\n", source);
			return -1;
		}
		*(const char **)o->target = v;
		return 0;
	case IG_OPT_BOOL:
		if (parse_bool(v, o->target) != 0) {
			fprintf(stderr, "ingot: invalid %s \"%s\": expected 1/0, true/false, yes/no or on/off\n",
				source, v);
			return -1;
		}
		return 0;
	case IG_OPT_LEVEL: {
		int level = ig_log_level_parse(v);
		if (level < 0) {
			fprintf(stderr, "ingot: invalid %s \"%s\": expected one of %s\n", source, v, level_names);
			return -1;
		}
		*(int *)o->target = level;
		return 0;
	}
	}
	return -1;
}

static void print_default(const struct ig_option *o)
{
	switch (o->type) {
	case IG_OPT_INT: printf("%lld", (long long)*(int64_t *)o->target); break;
	case IG_OPT_STR: printf("%s", *(const char **)o->target); break;
	case IG_OPT_BOOL: printf("%s", *(bool *)o->target ? "true" : "false"); break;
	case IG_OPT_LEVEL: printf("%s", (const char *[]){ "error", "warn", "info", "debug" }[*(int *)o->target]); break;
	}
}

static void print_help(const struct ig_option *opts, size_t n, const char *name)
{
	printf("Usage: %s [--FLAG VALUE | --FLAG=VALUE]...\n\n"
	       "Every flag has an environment variable; a flag wins over it.\n\n", name);
	for (size_t i = 0; i < n; i++) {
		printf("  --%-20s %-24s %s (default: ", opts[i].flag, opts[i].env, opts[i].help);
		print_default(&opts[i]);
		printf(")\n");
	}
	printf("  --%-20s %-24s %s\n  --%-20s %-24s %s\n", "help", "", "print this help",
	       "version", "", "print the version");
}

static const struct ig_option *find_flag(const struct ig_option *opts, size_t n,
					 const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(opts[i].flag) == len && memcmp(opts[i].flag, name, len) == 0)
			return &opts[i];
	return NULL;
}

enum ig_config_result ig_config_parse(const struct ig_option *opts, size_t n,
				      int argc, char **argv,
				      const char *name, const char *version)
{
	/* --help must show the built-in defaults, so look for it first. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			print_help(opts, n, name);
			return IG_CONFIG_EXIT;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("%s %s\n", name, version);
			return IG_CONFIG_EXIT;
		}
	}
	char source[96];
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(opts[i].env);
		if (!v)
			continue;
		snprintf(source, sizeof source, "environment variable %s", opts[i].env);
		if (set_value(&opts[i], source, v) != 0)
			return IG_CONFIG_ERROR;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "ingot: unexpected argument \"%s\" (see --help)\n", a);
			return IG_CONFIG_ERROR;
		}
		a += 2;
		const char *eq = strchr(a, '=');
		size_t len = eq ? (size_t)(eq - a) : strlen(a);
		const struct ig_option *o = find_flag(opts, n, a, len);
		if (!o) {
			fprintf(stderr, "ingot: unknown flag \"%s\" (see --help)\n", argv[i]);
			return IG_CONFIG_ERROR;
		}
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		if (!v) {
			fprintf(stderr, "ingot: flag --%s needs a value\n", o->flag);
			return IG_CONFIG_ERROR;
		}
		snprintf(source, sizeof source, "flag --%s", o->flag);
		if (set_value(o, source, v) != 0)
			return IG_CONFIG_ERROR;
	}
	return IG_CONFIG_OK;
}
