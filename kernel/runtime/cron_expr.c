/* Parses cron schedules into bit sets and finds their next fire time
 * (cron_expr.h). The calendar is proleptic Gregorian in UTC, computed
 * here from day numbers: no libc time zone state is touched, so the
 * result is the same in the runtime, in schemac and under any TZ. */
#include "cron_expr.h"

#include <string.h>

struct field {
	unsigned lo, hi;
	const char *const *names; /* three-letter names for lo.., or NULL */
};

static const char *const month_names[] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
					   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
static const char *const dow_names[] = { "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT" };

/* Day of the week allows 7 (Sunday again), folded into 0 after parsing. */
static const struct field fields[5] = {
	{ 0, 59, NULL }, { 0, 23, NULL }, { 1, 31, NULL }, { 1, 12, month_names }, { 0, 7, dow_names },
};

static const struct {
	const char *name, *expr;
} macros[] = {
	{ "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" }, { "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" }, { "@daily", "0 0 * * *" },    { "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

static bool fail(struct ig_cron_error *err, enum ig_cron_err kind, size_t pos)
{
	err->kind = kind;
	err->pos = pos;
	return false;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* A number or (where the field has them) a name at text[*i]. */
static bool value(const char *t, size_t *i, const struct field *f, unsigned *out, struct ig_cron_error *err)
{
	size_t start = *i;
	if (t[*i] >= '0' && t[*i] <= '9') {
		unsigned v = 0;
		while (t[*i] >= '0' && t[*i] <= '9') {
			if (v > 1000)
				return fail(err, IG_CRON_RANGE, start);
			v = v * 10 + (unsigned)(t[*i] - '0');
			(*i)++;
		}
		if (v < f->lo || v > f->hi)
			return fail(err, IG_CRON_RANGE, start);
		*out = v;
		return true;
	}
	bool alpha = (upper(t[*i]) >= 'A' && upper(t[*i]) <= 'Z');
	if (!alpha)
		return fail(err, IG_CRON_SYNTAX, start);
	size_t n = 0;
	while (upper(t[*i + n]) >= 'A' && upper(t[*i + n]) <= 'Z')
		n++;
	*i += n;
	if (f->names && n == 3) {
		unsigned count = f->hi - f->lo + 1 - (f->names == dow_names); /* 7 has no name of its own */
		for (unsigned k = 0; k < count; k++)
			if (upper(t[start]) == f->names[k][0] && upper(t[start + 1]) == f->names[k][1] &&
			    upper(t[start + 2]) == f->names[k][2]) {
				*out = f->lo + k;
				return true;
			}
	}
	return fail(err, IG_CRON_NAME, start);
}

/* One field, ending at a blank or the end; its bits into *bits. */
static bool field(const char *t, size_t *i, const struct field *f, uint64_t *bits, bool *star,
		  struct ig_cron_error *err)
{
	*bits = 0;
	*star = t[*i] == '*';
	for (;;) {
		unsigned lo, hi, step = 1;
		bool range = false;
		if (t[*i] == '*') {
			(*i)++;
			lo = f->lo;
			hi = f->hi;
			range = true;
		} else {
			if (!value(t, i, f, &lo, err))
				return false;
			hi = lo;
			if (t[*i] == '-') {
				(*i)++;
				size_t at = *i;
				if (!value(t, i, f, &hi, err))
					return false;
				if (hi < lo)
					return fail(err, IG_CRON_REVERSED, at);
				range = true;
			}
		}
		if (t[*i] == '/') {
			(*i)++;
			size_t at = *i;
			if (t[*i] < '0' || t[*i] > '9')
				return fail(err, IG_CRON_SYNTAX, at);
			step = 0;
			while (t[*i] >= '0' && t[*i] <= '9') {
				if (step > 1000)
					return fail(err, IG_CRON_STEP, at);
				step = step * 10 + (unsigned)(t[*i] - '0');
				(*i)++;
			}
			if (step == 0 || step > f->hi - f->lo + 1)
				return fail(err, IG_CRON_STEP, at);
			if (!range)
				hi = f->hi; /* N/S: from N to the field's end */
		}
		for (unsigned v = lo; v <= hi; v += step)
			*bits |= (uint64_t)1 << v;
		if (t[*i] == ',') {
			(*i)++;
			continue;
		}
		if (t[*i] && !blank(t[*i]))
			return fail(err, IG_CRON_SYNTAX, *i);
		return true;
	}
}

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned month_days(int64_t y, unsigned m)
{
	static const unsigned char d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return m == 2 && leap(y) ? 29 : d[m - 1];
}

/* Whether some date matches. With both day fields restricted either one
 * fires, and every weekday comes; otherwise the day of the month must
 * exist in some selected month (February counts its 29th): the weekday
 * then follows, as every date falls on every weekday within 400 years. */
static bool satisfiable(const struct ig_cron_expr *e)
{
	if (!(e->flags & (IG_CRON_DOM_STAR | IG_CRON_DOW_STAR)))
		return true;
	for (unsigned m = 1; m <= 12; m++) {
		if (!(e->months >> m & 1))
			continue;
		unsigned last = m == 2 ? 29 : month_days(2001, m);
		if (e->dom & (((uint32_t)2 << last) - 2))
			return true;
	}
	return false;
}

static bool parse5(const char *t, size_t base, struct ig_cron_expr *out, struct ig_cron_error *err)
{
	uint64_t bits[5];
	bool star[5];
	size_t i = 0;
	for (int k = 0; k < 5; k++) {
		while (blank(t[i]))
			i++;
		if (!t[i])
			return fail(err, k == 0 ? IG_CRON_EMPTY : IG_CRON_FIELDS, base + i);
		if (!field(t, &i, &fields[k], &bits[k], &star[k], err)) {
			err->pos += base;
			return false;
		}
	}
	while (blank(t[i]))
		i++;
	if (t[i])
		return fail(err, IG_CRON_FIELDS, base + i);
	memset(out, 0, sizeof *out);
	out->minutes = bits[0];
	out->hours = (uint32_t)bits[1];
	out->dom = (uint32_t)bits[2];
	out->months = (uint16_t)bits[3];
	out->dow = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f);
	out->flags = (uint8_t)((star[2] ? IG_CRON_DOM_STAR : 0) | (star[4] ? IG_CRON_DOW_STAR : 0));
	if (!satisfiable(out))
		return fail(err, IG_CRON_NEVER, base);
	return true;
}

bool ig_cron_parse(const char *text, struct ig_cron_expr *out, struct ig_cron_error *err)
{
	size_t i = 0;
	while (blank(text[i]))
		i++;
	if (text[i] == '@') {
		size_t n = 0;
		while (text[i + n] && !blank(text[i + n]))
			n++;
		size_t end = i + n;
		while (blank(text[end]))
			end++;
		if (text[end])
			return fail(err, IG_CRON_FIELDS, end);
		for (size_t k = 0; k < sizeof macros / sizeof macros[0]; k++)
			if (strlen(macros[k].name) == n && strncmp(macros[k].name, text + i, n) == 0)
				return parse5(macros[k].expr, 0, out, err);
		return fail(err, IG_CRON_NAME, i);
	}
	return parse5(text, 0, out, err);
}

bool ig_cron_parse_every(const char *text, struct ig_cron_expr *out, struct ig_cron_error *err)
{
	size_t i = 0;
	uint64_t n = 0;
	if (!text[0])
		return fail(err, IG_CRON_EMPTY, 0);
	if (text[0] < '0' || text[0] > '9')
		return fail(err, IG_CRON_SYNTAX, 0);
	while (text[i] >= '0' && text[i] <= '9') {
		if (n > 7 * 86400)
			return fail(err, IG_CRON_PERIOD, 0);
		n = n * 10 + (uint64_t)(text[i] - '0');
		i++;
	}
	uint64_t unit = text[i] == 's' ? 1 : text[i] == 'm' ? 60 : text[i] == 'h' ? 3600 : text[i] == 'd' ? 86400 : 0;
	if (!unit || text[i + 1])
		return fail(err, IG_CRON_UNIT, i);
	if (n == 0 || n * unit > 7 * 86400)
		return fail(err, IG_CRON_PERIOD, 0);
	memset(out, 0, sizeof *out);
	out->every_s = (uint32_t)(n * unit);
	return true;
}

/* Days since 1970-01-01 of a civil date, and back (Howard Hinnant's
 * algorithms), for years from 1970 on. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = y / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = z / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

bool ig_cron_day_matches(const struct ig_cron_expr *e, unsigned dom, unsigned dow)
{
	bool in_dom = e->dom >> dom & 1, in_dow = e->dow >> dow & 1;
	if (e->flags & (IG_CRON_DOM_STAR | IG_CRON_DOW_STAR))
		return in_dom && in_dow;
	return in_dom || in_dow;
}

int64_t ig_cron_next(const struct ig_cron_expr *e, int64_t after_s)
{
	if (after_s < 0 || after_s > IG_CRON_MAX_S)
		return -1;
	if (e->every_s)
		return (after_s / e->every_s + 1) * e->every_s;
	int64_t t = (after_s / 60 + 1) * 60; /* the next whole minute */
	int64_t day = t / 86400;
	unsigned minute_of_day = (unsigned)(t % 86400 / 60);
	int64_t limit = day + 400 * 366; /* the calendar repeats after 400 years */
	while (day <= limit) {
		int64_t y;
		unsigned m, d;
		civil_from_days(day, &y, &m, &d);
		if (!(e->months >> m & 1)) {
			day = days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1);
			minute_of_day = 0;
			continue;
		}
		unsigned dow = (unsigned)((day + 4) % 7); /* 1970-01-01 was a Thursday */
		if (ig_cron_day_matches(e, d, dow)) {
			for (unsigned h = minute_of_day / 60; h < 24; h++) {
				if (!(e->hours >> h & 1))
					continue;
				unsigned first = h == minute_of_day / 60 ? minute_of_day % 60 : 0;
				uint64_t left = e->minutes >> first << first;
				if (left)
					return day * 86400 + h * 3600 + (int64_t)__builtin_ctzll(left) * 60;
			}
		}
		day++;
		minute_of_day = 0;
	}
	return -1;
}

const char *ig_cron_strerror(enum ig_cron_err kind)
{
	switch (kind) {
	case IG_CRON_OK: return "no error";
	case IG_CRON_EMPTY: return "empty schedule";
	case IG_CRON_FIELDS: return "a cron expression has five fields (minute hour day-of-month month day-of-week)";
	case IG_CRON_SYNTAX: return "unexpected character";
	case IG_CRON_RANGE: return "value out of range for its field";
	case IG_CRON_REVERSED: return "range ends before it starts";
	case IG_CRON_STEP: return "step must be from 1 to the field's size";
	case IG_CRON_NAME: return "unknown name";
	case IG_CRON_NEVER: return "no date matches this expression";
	case IG_CRON_UNIT: return "a period is a whole number and s, m, h or d (\"90s\", \"5m\")";
	case IG_CRON_PERIOD: return "a period must be from 1s to 7d";
	}
	return "unknown error";
}
