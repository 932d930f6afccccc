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
	IG_OPT_SECRET, /* const char * target, as IG_OPT_STR, but a secret (below) */
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
 * '-' for '_': INGOT_MAX_BODY is --max-body, PORT is --port.
 *
 * A secret (IG_OPT_SECRET: a password, a token, a private key) is never
 * printed: --help says "(secret)" instead of its default, a message about
 * it names the setting without the value, and the runtime logs it nowhere. It may also
 * come from a file, the Docker and Kubernetes convention: NAME_FILE (flag
 * --name-file, or a NAME_FILE=path word) is the path of a file holding the
 * value, read at startup with one trailing newline ("\n" or "\r\n")
 * stripped. NAME and NAME_FILE both in the environment stop the start;
 * a flag of either form wins over both. */
struct ig_option {
	const char *env; /* "PORT" */
	enum ig_opt_type type;
	void *target;
	int64_t min, max;
	const char *help;
};

/* A row's help text, for the runtime's tables: --help alone reads it, so it
 * is kept off the pages the start reads. A compound literal at file scope
 * is an object of its own, and with -fdata-sections GCC gives it a section
 * of its own (.rodata.__compound_literal.N), which net/cold.ld moves to
 * the cold block; a plain literal would share .rodata.str1.1 with the
 * rows' names, which the start reads. */
#define IG_HELP(text) ((const char[]){ text })

/* Rows with their target's type checked by the compiler (a target of
 * another type does not compile), for an app's table:
 *     static const char *api_key = "";          (the default: not set)
 *     static int64_t max_links = 1000;          (the default)
 *     static const struct ig_option rows[] = {
 *         IG_SETTING_INT("MAX_LINKS", &max_links, 1, 1000000, "links kept"),
 *         IG_SECRET("LINKS_API_KEY", &api_key, "the API key; not set: open"),
 *     };
 * A target's initial value is its default (--help shows it, a secret's
 * excepted); the parse overwrites it with a value given, before the app's
 * init hook runs (include/ingot/lifecycle.h). From then on the app only
 * reads it, from any thread: no call, no lock. A string target points into
 * the environment, argv or a file read at startup: it lives as long as the
 * process, and "" means not set (a value given is never empty). */
#define IG__TARGET(type, p) ((void *)(1 ? (p) : (type *)0))
#define IG_SETTING_STR(name, target, help) { name, IG_OPT_STR, IG__TARGET(const char *, target), 0, 0, help }
#define IG_SETTING_INT(name, target, lo, hi, help) { name, IG_OPT_INT, IG__TARGET(int64_t, target), lo, hi, help }
#define IG_SETTING_U32(name, target, lo, hi, help) { name, IG_OPT_U32, IG__TARGET(uint32_t, target), lo, hi, help }
#define IG_SETTING_BOOL(name, target, help) { name, IG_OPT_BOOL, IG__TARGET(bool, target), 0, 0, help }
/* A secret string (above): NAME, or the file NAME_FILE names. */
#define IG_SECRET(name, target, help) { name, IG_OPT_SECRET, IG__TARGET(const char *, target), 0, 0, help }

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
 * Its `part` is ignored: the heading is the app's name. Its rows' names are
 * the app's own: INGOT_ is the runtime's prefix, and an app row that
 * starts with it stops the start (exit 2). Its `check`, when set, runs
 * after every row of every part is read, on the main thread; it returns
 * NULL, or the message (naming the setting, never a secret's value) that
 * stops the start with exit 2. */
extern const struct ig_settings ig_app_settings;

#endif
