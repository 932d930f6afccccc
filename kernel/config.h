/* Configuration from the environment and matching command-line flags,
 * described by a table the caller owns. Flags win over the environment,
 * which wins over the defaults already stored in the targets. */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum ig_opt_type {
	IG_OPT_INT,   /* int64_t target, within [min, max] */
	IG_OPT_STR,   /* const char * target */
	IG_OPT_BOOL,  /* bool target: 1/0, true/false, yes/no, on/off */
	IG_OPT_LEVEL, /* int target: error, warn, info, debug */
};

struct ig_option {
	const char *flag; /* "port" for --port */
	const char *env;  /* "PORT" */
	enum ig_opt_type type;
	void *target;
	int64_t min, max;
	const char *help;
};

enum ig_config_result { IG_CONFIG_OK, IG_CONFIG_EXIT, IG_CONFIG_ERROR };

/* Parses env then argv into the targets. On --help or --version prints to
 * stdout and returns IG_CONFIG_EXIT; on a bad value or an unknown flag
 * prints a clear message to stderr and returns IG_CONFIG_ERROR. */
enum ig_config_result ig_config_parse(const struct ig_option *opts, size_t n,
				      int argc, char **argv,
				      const char *name, const char *version);

#endif
