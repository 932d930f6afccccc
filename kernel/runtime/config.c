/* Settings parsing: one table of every part's rows drives the environment,
 * the flags and --help, so they cannot drift apart. Values are parsed
 * strictly: "80x", "" or an out-of-range number is an error that names the
 * setting and what it takes (a secret's value is never in it). A secret's
 * NAME_FILE form is read here too. */
#include "config.h"
#include "file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a start with good values never runs (a message, --help, a secret's
 * file, the nearest name of a misspelt one): out of line, in sections of
 * their own that net/cold.ld keeps off the startup pages. */
#define RARE __attribute__((cold, noinline))

/* Where the parse's message goes besides stderr (ig_config_args.error). */
static char *error_out;
static size_t error_cap;

/* The parse's one message: printed, and kept for a caller that reports it
 * elsewhere too (the Lambda runtime's init error). */
RARE __attribute__((format(printf, 1, 2))) static void config_fail(const char *fmt, ...)
{
	char msg[IG_CONFIG_ERROR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = 0;
	fprintf(stderr, "ingot: %s\n", msg);
	if (error_out && error_cap)
		snprintf(error_out, error_cap, "%s", msg);
}

int ig_config_parse_bool(const char *s, bool *out)
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

/* The index-th word of the '|'-separated names ("add|replace"), its
 * length in *len; NULL past the last. */
static const char *choice_word(const char *names, int index, size_t *len)
{
	const char *p = names;
	for (int i = 0; i < index; i++) {
		if (!(p = strchr(p, '|')))
			return NULL;
		p++;
	}
	const char *bar = strchr(p, '|');
	*len = bar ? (size_t)(bar - p) : strlen(p);
	return p;
}

/* The index of s among the names, or -1. */
static int parse_choice(const char *names, const char *s)
{
	size_t n = strlen(s), len;
	const char *w;
	for (int i = 0; (w = choice_word(names, i, &len)); i++)
		if (n && len == n && memcmp(w, s, n) == 0)
			return i;
	return -1;
}

/* "1", "0", "0.25", ".5", "1.000": a decimal in [0, 1], in millionths. */
static int parse_fraction(const char *s, uint32_t *out)
{
	uint32_t whole = 0, frac = 0, scale = IG_FRACTION_ONE;
	const char *p = s;
	if (*p == '0' || *p == '1')
		whole = (uint32_t)(*p++ - '0');
	if (*p == '.') {
		p++;
		if (p == s + 1 && *p == 0)
			return -1; /* "." alone */
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale == 1)
				return -1; /* more than 6 decimals */
			scale /= 10;
			frac += (uint32_t)(*p - '0') * scale;
		}
	}
	if (p == s || *p != 0 || (whole == 1 && frac != 0))
		return -1;
	*out = whole * IG_FRACTION_ONE + frac;
	return 0;
}

/* Where a value came from, for its error message only: formatted when
 * there is one, so that a start whose values are good formats nothing
 * (and runs none of printf's code). */
struct source {
	const char *kind; /* "environment variable ", "flag --", ... */
	const char *name;
	int len;
};
#define SRC(s) (s)->kind, (s)->len, (s)->name

static int set_value(const struct ig_option *o, const struct source *source, const char *v)
{
	switch (o->type) {
	case IG_OPT_INT:
	case IG_OPT_U32:
	case IG_OPT_U64: {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (*v == 0 || *end != 0 || errno || x < o->min || x > o->max) {
			config_fail("invalid %s%.*s \"%s\": expected an integer from %lld to %lld\n",
				SRC(source), v, (long long)o->min, (long long)o->max);
			return -1;
		}
		if (o->type == IG_OPT_U32)
			*(uint32_t *)o->target = (uint32_t)x;
		else if (o->type == IG_OPT_U64)
			*(uint64_t *)o->target = (uint64_t)x;
		else
			*(int64_t *)o->target = x;
		return 0;
	}
	case IG_OPT_STR:
	case IG_OPT_SECRET: /* its one message shows no value */
		if (*v == 0) {
			config_fail("invalid %s%.*s: empty value\n", SRC(source));
			return -1;
		}
		*(const char **)o->target = v;
		return 0;
	case IG_OPT_BOOL:
		if (ig_config_parse_bool(v, o->target) != 0) {
			config_fail("invalid %s%.*s \"%s\": expected 1/0, true/false, yes/no or on/off\n",
				SRC(source), v);
			return -1;
		}
		return 0;
	case IG_OPT_CHOICE: {
		const struct ig_choice *c = o->target;
		int i = parse_choice(c->names, v);
		if (i < 0) {
			config_fail("invalid %s%.*s \"%s\": expected one of %s\n", SRC(source), v, c->names);
			return -1;
		}
		*c->index = i;
		return 0;
	}
	case IG_OPT_FRACTION:
		if (parse_fraction(v, o->target) != 0) {
			config_fail("invalid %s%.*s \"%s\": expected a decimal from 0 to 1 (at most 6 decimals)\n",
				SRC(source), v);
			return -1;
		}
		return 0;
	}
	return -1;
}

/* NAME_FILE's form of a secret: the file at path holds the value, with one
 * trailing newline stripped. The value is kept for the life of the
 * process (the target points into it). Runs only when such a form is
 * given, so a start without one reads no file. */
RARE static int set_from_file(const struct ig_option *o, const struct source *source,
					       const char *path)
{
	char why[256];
	size_t len = 0;
	char *v = ig_read_file(path, 1u << 20, 0, &len, why, sizeof why);
	if (!v) {
		config_fail("%s%.*s: %s\n", SRC(source), why);
		return -1;
	}
	if (len && v[len - 1] == '\n')
		v[--len] = 0;
	if (len && v[len - 1] == '\r')
		v[--len] = 0;
	if (memchr(v, 0, len) || set_value(o, source, v) != 0) {
		if (memchr(v, 0, len))
			config_fail("invalid %s%.*s: the file holds a NUL byte\n", SRC(source));
		free(v);
		return -1;
	}
	/* Held here too, so that a leak checker sees them reachable whatever
	   becomes of the target. */
	static char *kept[16];
	static size_t nkept;
	if (nkept < IG_COUNTOF(kept))
		kept[nkept++] = v;
	return 0;
}

/* Sets o from v: the value itself, or (file) the path of a file holding it. */
static int set_or_read(const struct ig_option *o, const struct source *source, const char *v, bool file)
{
	return file ? set_from_file(o, source, v) : set_value(o, source, v);
}

RARE static void print_default(const struct ig_option *o)
{
	switch (o->type) {
	case IG_OPT_INT: printf("%lld", (long long)*(int64_t *)o->target); break;
	case IG_OPT_U32: printf("%u", *(uint32_t *)o->target); break;
	case IG_OPT_U64: printf("%llu", (unsigned long long)*(uint64_t *)o->target); break;
	case IG_OPT_STR: {
		const char *s = *(const char **)o->target;
		printf("%s", *s ? s : "not set");
		break;
	}
	case IG_OPT_SECRET: break; /* never shown (print_help) */
	case IG_OPT_BOOL: printf("%s", *(bool *)o->target ? "true" : "false"); break;
	case IG_OPT_CHOICE: {
		const struct ig_choice *c = o->target;
		size_t len;
		const char *w = choice_word(c->names, *c->index, &len);
		printf("%.*s", (int)len, w ? w : "?");
		break;
	}
	case IG_OPT_FRACTION: {
		uint32_t v = *(uint32_t *)o->target;
		char d[8];
		int n = snprintf(d, sizeof d, "%06u", v % IG_FRACTION_ONE);
		while (n > 0 && d[n - 1] == '0')
			d[--n] = 0;
		printf("%u%s%s", v / IG_FRACTION_ONE, n ? "." : "", d);
		break;
	}
	}
}

/* The flag of a setting named env (see config.h), written into out. */
static const char *flag_of(const char *env, char out[64])
{
	if (strncmp(env, "INGOT_", 6) == 0)
		env += 6;
	size_t i = 0;
	for (; env[i] && i < 63; i++)
		out[i] = env[i] == '_' ? '-' : (char)(env[i] | 0x20); /* A-Z and 0-9 only */
	out[i] = 0;
	return out;
}

RARE static void print_help(const struct ig_settings *const *parts, size_t nparts, const char *name)
{
	printf("Usage: %s [--FLAG VALUE | --FLAG=VALUE]...\n\n"
	       "Every flag has an environment variable; a flag wins over it. A secret's value\n"
	       "is never printed; its NAME_FILE (--FLAG-file) names a file that holds it.\n", name);
	for (size_t p = 0; p < nparts; p++) {
		printf("\n%s:\n", parts[p]->part);
		for (size_t i = 0; i < parts[p]->count; i++) {
			const struct ig_option *o = &parts[p]->opts[i];
			char flag[64];
			printf("  --%-20s %-24s %s (", flag_of(o->env, flag), o->env, o->help);
			if (o->type == IG_OPT_SECRET) { /* no default shown; its file form's row */
				char file_flag[72], file_env[72];
				snprintf(file_flag, sizeof file_flag, "%s-file", flag);
				snprintf(file_env, sizeof file_env, "%s_FILE", o->env);
				printf("secret)\n  --%-20s %-24s a file holding %s (secret)\n", file_flag, file_env, o->env);
				continue;
			}
			printf("default: ");
			print_default(o);
			printf(")\n");
		}
	}
	printf("\ncommands:\n  --%-20s %-24s %s\n  --%-20s %-24s %s\n", "help", "", "print this help",
	       "version", "", "print the version");
	for (size_t p = 0; p < nparts; p++)
		for (size_t i = 0; i < parts[p]->ncommands; i++)
			printf("  --%-20s %-24s %s\n", parts[p]->commands[i].flag, "", parts[p]->commands[i].help);
}

/* The row whose flag (by_env false) or environment name (true) is
 * name[0..len), or NULL. */
static const struct ig_option *find_exact(const struct ig_settings *const *parts, size_t nparts,
					  const char *name, size_t len, bool by_env)
{
	char flag[64];
	for (size_t p = 0; p < nparts; p++)
		for (size_t i = 0; i < parts[p]->count; i++) {
			const char *env = parts[p]->opts[i].env;
			const char *key = by_env ? env : flag_of(env, flag);
			if (strlen(key) == len && memcmp(key, name, len) == 0)
				return &parts[p]->opts[i];
		}
	return NULL;
}

/* As find_exact, and a secret's file form too (NAME_FILE, --name-file):
 * *file then says that name is that form. */
static const struct ig_option *find_row(const struct ig_settings *const *parts, size_t nparts,
					const char *name, size_t len, bool by_env, bool *file)
{
	*file = false;
	const struct ig_option *o = find_exact(parts, nparts, name, len, by_env);
	if (o || len <= 5 || memcmp(name + len - 5, by_env ? "_FILE" : "-file", 5) != 0)
		return o;
	o = find_exact(parts, nparts, name, len - 5, by_env);
	if (!o || o->type != IG_OPT_SECRET)
		return NULL;
	*file = true;
	return o;
}

/* NAME_FILE into out, without printf: a start formats nothing with it
 * (net/cold.ld keeps printf off the startup pages). false if too long. */
static bool file_name(const char *env, char out[72])
{
	size_t n = strlen(env);
	if (n + 6 > 72)
		return false;
	memcpy(out, env, n);
	memcpy(out + n, "_FILE", 6);
	return true;
}

static enum ig_config_result parse_env(const struct ig_settings *const *parts, size_t nparts)
{
	for (size_t p = 0; p < nparts; p++)
		for (size_t i = 0; i < parts[p]->count; i++) {
			const struct ig_option *o = &parts[p]->opts[i];
			const char *v = getenv(o->env);
			const char *path = NULL;
			char file_env[72];
			if (o->type == IG_OPT_SECRET && file_name(o->env, file_env))
				path = getenv(file_env);
			if (v && path) {
				config_fail("give %s once: %s or %s, not both\n", o->env, o->env, file_env);
				return IG_CONFIG_ERROR;
			}
			if (!v && !path)
				continue;
			const char *name = path ? file_env : o->env;
			const struct source source = { "environment variable ", name, (int)strlen(name) };
			if (set_or_read(o, &source, path ? path : v, path != NULL) != 0)
				return IG_CONFIG_ERROR;
		}
	return IG_CONFIG_OK;
}

/* A word that is not a --flag: a setting's NAME=value on a machine's
 * command line, else ignored there and an error anywhere else. */
static int parse_word(const struct ig_settings *const *parts, size_t nparts,
		      const struct ig_config_args *args, const char *a)
{
	const char *eq = strchr(a, '=');
	if (!args->command_line_words) {
		/* Not what follows a '=': it may be a secret's value. */
		config_fail("unexpected argument \"%.*s%s\" (see --help)\n", eq ? (int)(eq - a) : (int)strlen(a), a,
			    eq ? "=..." : "");
		return -1;
	}
	bool file;
	const struct ig_option *o = eq ? find_row(parts, nparts, a, (size_t)(eq - a), true, &file) : NULL;
	if (!o)
		return 0;
	const struct source source = { "command line word ", a, (int)(eq - a) };
	return set_or_read(o, &source, eq + 1, file);
}

static enum ig_config_result parse_args(const struct ig_settings *const *parts, size_t nparts,
					const struct ig_config_args *args)
{
	for (int i = 1; i < args->argc; i++) {
		const char *a = args->argv[i];
		if (strncmp(a, "--", 2) != 0) {
			if (parse_word(parts, nparts, args, a) != 0)
				return IG_CONFIG_ERROR;
			continue;
		}
		a += 2;
		const char *eq = strchr(a, '=');
		size_t len = eq ? (size_t)(eq - a) : strlen(a);
		bool file;
		const struct ig_option *o = find_row(parts, nparts, a, len, false, &file);
		if (!o) {
			/* Only the flag: a value after its '=' may be a secret. */
			config_fail("unknown flag \"--%.*s\" (see --help)\n", (int)len, a);
			return IG_CONFIG_ERROR;
		}
		const char *v = eq ? eq + 1 : (i + 1 < args->argc ? args->argv[++i] : NULL);
		if (!v) {
			config_fail("flag --%.*s needs a value\n", (int)len, a);
			return IG_CONFIG_ERROR;
		}
		const struct source source = { "flag --", a, (int)len };
		if (set_or_read(o, &source, v, file) != 0)
			return IG_CONFIG_ERROR;
	}
	return IG_CONFIG_OK;
}

/* Runs once per process, at the start: compiled for size (cold). */
__attribute__((cold)) enum ig_config_result
ig_config_parse(const struct ig_settings *const *parts, size_t nparts, const struct ig_config_args *args)
{
	error_out = args->error;
	error_cap = args->error_cap;
	for (size_t p = 0; p < nparts; p++)
		if (parts[p]->defaults)
			memcpy(parts[p]->values, parts[p]->defaults, parts[p]->size);
	/* --help must show the built-in defaults, so look for it first. */
	for (int i = 1; i < args->argc; i++) {
		if (strcmp(args->argv[i], "--help") == 0 || strcmp(args->argv[i], "-h") == 0) {
			print_help(parts, nparts, args->name);
			return IG_CONFIG_EXIT;
		}
		if (strcmp(args->argv[i], "--version") == 0) {
			printf("%s %s\n", args->name, args->version);
			if (args->version_detail)
				args->version_detail();
			return IG_CONFIG_EXIT;
		}
	}
	if (parse_env(parts, nparts) != IG_CONFIG_OK || parse_args(parts, nparts, args) != IG_CONFIG_OK)
		return IG_CONFIG_ERROR;
	char err[300];
	for (size_t p = 0; p < nparts; p++) {
		const char *why = parts[p]->check ? parts[p]->check(err, sizeof err) : NULL;
		if (why) {
			config_fail("%s\n", why);
			return IG_CONFIG_ERROR;
		}
	}
	return IG_CONFIG_OK;
}

/* ---- environment variables that name no setting ---- */

/* Edits (insert, delete, replace) between a[0..la) and b[0..lb), capped:
 * names are short, and a distance past the cap suggests nothing. */
RARE static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[65];
	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

struct nearest {
	const char *name;
	size_t len;
	const char *best; /* NUL-terminated copy in buf */
	size_t best_distance;
	char buf[64];
};

RARE static void consider(struct nearest *n, const char *cand, size_t clen)
{
	size_t d = edit_distance(n->name, n->len, cand, clen);
	if (d < n->best_distance && clen < sizeof n->buf) {
		memcpy(n->buf, cand, clen);
		n->buf[clen] = 0;
		n->best = n->buf;
		n->best_distance = d;
	}
}

/* Whether a space-separated list holds name[0..len); each word is also
 * offered to n, when given. */
static bool list_has(const char *list, const char *name, size_t len, struct nearest *n)
{
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, " ");
		if (k == len && memcmp(p, name, len) == 0)
			return true;
		if (n)
			consider(n, p, k);
		p += k + (p[k] == ' ');
	}
	return false;
}

static bool declared(const struct ig_settings *const *parts, size_t nparts, const char *(*known)(size_t i),
		     const char *name, size_t len, struct nearest *n)
{
	for (size_t p = 0; p < nparts; p++)
		for (size_t i = 0; i < parts[p]->count; i++) {
			const char *env = parts[p]->opts[i].env;
			size_t el = strlen(env);
			if (el == len && memcmp(env, name, len) == 0)
				return true;
			if (parts[p]->opts[i].type == IG_OPT_SECRET && el + 5 == len && memcmp(env, name, el) == 0 &&
			    memcmp(name + el, "_FILE", 5) == 0)
				return true; /* its NAME_FILE */
			if (n)
				consider(n, env, el);
		}
	const char *list;
	for (size_t k = 0; (list = known(k)); k++)
		if (list_has(list, name, len, n))
			return true;
	return false;
}

__attribute__((cold)) size_t ig_config_unknown_env(const struct ig_settings *const *parts, size_t nparts,
						   const char *(*known)(size_t i), ig_config_unknown_fn *report,
						   void *arg)
{
	extern char **environ;
	size_t unknown = 0;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "INGOT_", 6) != 0)
			continue;
		size_t len = strcspn(*e, "=");
		if (declared(parts, nparts, known, *e, len, NULL))
			continue;
		struct nearest n = { .name = *e, .len = len, .best_distance = (size_t)-1 };
		declared(parts, nparts, known, *e, len, &n);
		/* A suggestion only for a slip: a few edits, at most a third of
		   what follows the INGOT_ both share. */
		bool close = n.best && n.best_distance <= 3 && n.best_distance * 3 <= len - 6;
		report(*e, len, close ? n.best : NULL, arg);
		unknown++;
	}
	return unknown;
}
