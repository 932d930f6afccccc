/* The settings table: every part of the runtime (server, TLS, client, DNS)
 * contributes its rows, and one parse reads them all from the environment
 * and matching command-line flags. Flags win over the environment, which
 * wins over the part's defaults. */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#include "ingot/settings.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ig_config_result { IG_CONFIG_OK, IG_CONFIG_EXIT, IG_CONFIG_ERROR };

struct ig_config_args {
	int argc;
	char **argv;
	const char *name, *version; /* for --help and --version */
	/* Optional: --version prints "NAME VERSION" on its first line (tools
	   read its last word), then calls this, which may print more lines to
	   stdout (what the binary was built from). */
	void (*version_detail)(void);
	/* A machine's init gets the kernel command line's words it did not
	   consume: a NAME=value word naming a setting sets it, any other word
	   that is not a --flag is ignored instead of being an error. */
	bool command_line_words;
	/* Optional: on IG_CONFIG_ERROR the message (as printed, without
	   "ingot: " and the newline; it names the setting or flag) is also
	   written here, NUL-terminated, for a caller that reports it
	   elsewhere (the Lambda runtime's init error). */
	char *error;
	size_t error_cap;
};
#define IG_CONFIG_ERROR_MAX 384

/* Copies every part's defaults in, parses the environment, then the
 * arguments, into the parts' targets, then runs the parts' checks. On
 * --help (every part's rows) or --version prints to stdout and returns
 * IG_CONFIG_EXIT; on a bad value, an unknown flag or a failed check prints
 * one message to stderr and returns IG_CONFIG_ERROR (the caller exits 2). */
enum ig_config_result ig_config_parse(const struct ig_settings *const *parts, size_t nparts,
				      const struct ig_config_args *args);

/* 1/true/yes/on or 0/false/no/off into *out: 0, or -1 for anything else. */
int ig_config_parse_bool(const char *s, bool *out);

/* Each environment variable whose name starts with INGOT_ and that neither
 * a row of parts nor a name of known declares is reported: report(name,
 * len, nearest, arg), nearest the declared name a few edits away ("did you
 * mean"), or NULL. known(i) gives the i-th string of space-separated names
 * (NULL past the last); it is asked only for a name no row declares, so
 * that a start whose names are all rows reads nothing of those lists.
 * Returns the count. */
typedef void ig_config_unknown_fn(const char *name, size_t len, const char *nearest, void *arg);
size_t ig_config_unknown_env(const struct ig_settings *const *parts, size_t nparts, const char *(*known)(size_t i),
			     ig_config_unknown_fn *report, void *arg);

#endif
