/* Cron schedules, UTC only: `every` periods ("1s", "90s", "5m", "1h",
 * "1d") and five-field cron expressions as Vixie cron reads them, parsed
 * into bit sets, and the next fire time after a given second. Pure
 * computation: no clock, no time zone, no allocation. schemac links this
 * file too, so the build judges an expression with the runtime's parser
 * and the generated code carries it already parsed (ig_cron_next only).
 *
 * every: a whole number and one unit, s, m, h or d, from 1s to 7d, no
 * spaces. It fires at the multiples of the period since the Unix epoch
 * (so every replica computes the same ticks).
 *
 * cron: "minute hour day-of-month month day-of-week", fields separated by
 * spaces or tabs. A field is a list (`,`) of `*`, `N`, `N-M`, each with an
 * optional step `/S` (`N/S` means N up to the field's last value).
 * Months take JAN-DEC, days of the week SUN-SAT (any case; 0 and 7 are
 * Sunday). Or one of @yearly @annually @monthly @weekly @daily @midnight
 * @hourly. Days follow Vixie's rule: when both day fields are restricted
 * (neither starts with `*`), a day matching either fires; otherwise it
 * must match both. An expression no date can satisfy (`0 0 30 2 *`) is
 * refused. */
#ifndef KERNEL_RUNTIME_CRON_EXPR_H
#define KERNEL_RUNTIME_CRON_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The day-of-month (day-of-week) field started with `*`: Vixie's rule. */
#define IG_CRON_DOM_STAR 1u
#define IG_CRON_DOW_STAR 2u

/* A parsed schedule. every_s non-zero: a period; else the bit sets, bit
 * n meaning value n is selected (minutes 0-59, hours 0-23, dom 1-31,
 * months 1-12, dow 0-6 with 0 Sunday). */
struct ig_cron_expr {
	uint32_t every_s;
	uint64_t minutes;
	uint32_t hours;
	uint32_t dom;
	uint16_t months;
	uint8_t dow;
	uint8_t flags; /* IG_CRON_DOM_STAR, IG_CRON_DOW_STAR */
};

enum ig_cron_err {
	IG_CRON_OK,
	IG_CRON_EMPTY,     /* nothing but blanks */
	IG_CRON_FIELDS,    /* not five fields (pos: where the sixth starts, or the end) */
	IG_CRON_SYNTAX,    /* an unexpected character */
	IG_CRON_RANGE,     /* a value outside its field's range */
	IG_CRON_REVERSED,  /* N-M with N greater than M */
	IG_CRON_STEP,      /* a step of 0, or larger than the field */
	IG_CRON_NAME,      /* an unknown name (month, day, or @macro) */
	IG_CRON_NEVER,     /* no date matches (day 30 of February) */
	IG_CRON_UNIT,      /* every: not s, m, h or d after the number */
	IG_CRON_PERIOD,    /* every: zero, or longer than 7 days */
};

struct ig_cron_error {
	enum ig_cron_err kind;
	size_t pos; /* byte offset in the text where the problem is */
};

/* Parses a five-field expression or @macro (text NUL-terminated). Returns
 * true and fills *out; false and fills *err (out is then unspecified). */
bool ig_cron_parse(const char *text, struct ig_cron_expr *out, struct ig_cron_error *err)
	__attribute__((warn_unused_result));

/* Parses an `every` period, as ig_cron_parse. */
bool ig_cron_parse_every(const char *text, struct ig_cron_expr *out, struct ig_cron_error *err)
	__attribute__((warn_unused_result));

/* The last second ig_cron_next starts from: 9999-12-31 23:59:59 UTC. */
#define IG_CRON_MAX_S 253402300799LL

/* The first fire time strictly after after_s (Unix seconds, UTC), or -1
 * when after_s is negative or past IG_CRON_MAX_S. A parsed expression always has one: the
 * calendar repeats every 400 years, and the search stops there. A date
 * that must also fall on one weekday (September 8th, with a `*`-led
 * day-of-week field that keeps only Sunday) walks years of days. */
int64_t ig_cron_next(const struct ig_cron_expr *e, int64_t after_s);

/* Whether a day, by its day of the month (1-31) and of the week (0-6,
 * Sunday 0), passes e's day fields under Vixie's rule (not its months). */
bool ig_cron_day_matches(const struct ig_cron_expr *e, unsigned dom, unsigned dow);

/* A short English description of kind, for messages. */
const char *ig_cron_strerror(enum ig_cron_err kind);

#endif
