/* Settings: rows of one table that the runtime's parts and an app both
 * declare. Each row is an environment variable with a matching flag (a
 * row's flag is its name without INGOT_, in lower case, '-' for '_':
 * INGOT_MAX_BODY is --max-body, UPSTREAM is --upstream); the runtime reads
 * them all at startup, before any listener opens, and a bad value stops
 * the start with exit status 2 and one message naming the setting. --help
 * lists every row under its part's heading, with its default; on a VM's
 * kernel command line a NAME=value word sets the row NAME.
 *
 * An app declares its own rows by defining ig_app_settings (below); they
 * come after the runtime's in --help, under the app's name. The table is
 * read once, by the start, on the main thread; afterwards the targets hold
 * the values and are only read, from any thread. */
#ifndef INGOT_SETTINGS_H
#define INGOT_SETTINGS_H

#include "ingot/base.h"

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

/* The app's own settings, when it has any: defined by the app (one object,
 * any file), read by the runtime's start. A binary without it has none.
 * Its `part` is ignored: the heading is the app's name. Its `check`, when
 * set, runs after every row of every part is read; it returns NULL, or the
 * message (naming the setting) that stops the start with exit 2. */
extern const struct ig_settings ig_app_settings;

#endif
