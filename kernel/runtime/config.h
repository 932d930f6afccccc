/* The settings table: every part of the runtime (server, TLS, client, DNS)
 * contributes its rows, and one parse reads them all from the environment
 * and matching command-line flags. Flags win over the environment, which
 * wins over the part's defaults. */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ig_opt_type {
	IG_OPT_INT,    /* int64_t target, within [min, max] */
	IG_OPT_U32,    /* uint32_t target, within [min, max] (min >= 0) */
	IG_OPT_U64,    /* uint64_t target, within [min, max] (min >= 0) */
	IG_OPT_STR,    /* const char * target; "" stands for "not set" */
	IG_OPT_BOOL,   /* bool target: 1/0, true/false, yes/no, on/off */
	IG_OPT_CHOICE, /* struct ig_choice target */
	IG_OPT_FRACTION, /* uint32_t target: a decimal from 0 to 1 ("0.25") in
	                    millionths (IG_FRACTION_ONE is 1); at most 6 decimals */
};

#define IG_FRACTION_ONE 1000000u

/* A setting that takes one of a few words: *index is the word's place in
 * names ("add|replace": 0 or 1). The parse only reads the struct, so it
 * may be const (its row's target then casts the const away). */
struct ig_choice {
	int *index;
	const char *names;
};

/* A setting's flag is its environment name without INGOT_, in lower case,
 * '-' for '_': INGOT_MAX_BODY is --max-body, PORT is --port. */
struct ig_option {
	const char *env; /* "PORT" */
	enum ig_opt_type type;
	void *target;
	int64_t min, max;
	const char *help;
};

/* A one-shot command a part runs instead of serving (--migrate): listed by
 * --help beside --help and --version. The table only documents it; the
 * program's main looks for the flag itself, before the parse, because a
 * command reads only its own part's settings. */
struct ig_command {
	const char *flag; /* "migrate" for --migrate */
	const char *help;
};

/* One part's rows. The parse first copies the size bytes of defaults over
 * values, the struct the rows' targets are in: the live values stay
 * zero-initialised (.bss) and the defaults const (.rodata), so that neither
 * costs the file a byte of writable data, and --help shows the defaults.
 * Without defaults the targets' contents are the defaults. check, if set,
 * runs once every row of every part is parsed: it judges what no single
 * row can (two settings that exclude each other, a file that must be read
 * and parsed at startup) and returns NULL or the message to print. */
struct ig_settings {
	const char *part; /* heading in --help: "server", "client", ... */
	const struct ig_option *opts;
	size_t count;
	const char *(*check)(char *err, size_t errlen);
	void *values;
	const void *defaults;
	size_t size;
	const struct ig_command *commands; /* the part's one-shot commands, or NULL */
	size_t ncommands;
};

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

#endif
