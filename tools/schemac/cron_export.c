/* x-ingot-cron's jobs as the schedulers of platforms that scale to zero
 * see them: a Knative Eventing PingSource per job (YAML) and an
 * EventBridge Scheduler schedule per job (JSON, CreateSchedule's input).
 * Both fire at most once a minute: a job more frequent, or one whose
 * schedule the platform's syntax cannot state, is left out with a warning
 * naming it. What the triggers carry, and where they go (IG_CRON_PATH), is
 * net/cron/jobs.h's contract with the runtime. */
#include "emit.h"
#include "net/cron/jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum style { PING, EVENTBRIDGE };

/* The reason schedule_text gives when its own check fails. */
static const char converted_wrong[] = "converts to a cron that fires at other times (a schemac bug)";

/* A job left out: a warning, or the build's failure when the conversion
 * itself is wrong. */
static void warn(struct sc_model *m, const struct sc_cron_job *j, const char *target, const char *why)
{
	if (why == converted_wrong) {
		sc_error(m, j->ptr, "cron job \"%s\" (\"%s\") %s, for the %s", j->name, j->schedule, why, target);
		return;
	}
	unsigned long line, col;
	if (sc_yaml_where(&m->pos, j->ptr, &line, &col))
		fprintf(stderr, "schemac: %s:%lu:%lu: %s: warning: ", m->file, line, col, j->ptr);
	else
		fprintf(stderr, "schemac: %s: %s: warning: ", m->file, j->ptr);
	fprintf(stderr, "cron job \"%s\" (%s \"%s\") %s: left out of the %s\n", j->name, j->every ? "every" : "schedule",
		j->schedule, why, target);
}

/* A field's values as the platform writes them: "*" when all of lo..hi
 * are set; a progression that runs to the field's end as a step (when
 * steps is true); else ranges and single values. Days of the week are
 * written plus offset (EventBridge counts Sunday as 1). */
static char *field_text(uint64_t bits, unsigned lo, unsigned hi, bool steps, enum style st, unsigned offset)
{
	uint64_t all = ((hi == 63 ? 0 : (uint64_t)1 << (hi + 1)) - 1) >> lo << lo;
	if ((bits & all) == all)
		return sc_strdup("*");
	unsigned first = (unsigned)__builtin_ctzll(bits);
	uint64_t rest = bits & (bits - 1);
	if (steps && rest && (rest & (rest - 1))) {
		unsigned step = (unsigned)__builtin_ctzll(rest) - first;
		uint64_t prog = 0;
		for (unsigned v = first; v <= hi; v += step)
			prog |= (uint64_t)1 << v;
		if (prog == bits) {
			if (st == EVENTBRIDGE)
				return sc_printf("%u/%u", first, step);
			return first == lo ? sc_printf("*/%u", step) : sc_printf("%u-%u/%u", first, hi, step);
		}
	}
	struct sc_out o = { 0 };
	for (unsigned v = lo; v <= hi; v++) {
		if (!(bits >> v & 1))
			continue;
		unsigned end = v;
		while (end < hi && bits >> (end + 1) & 1)
			end++;
		if (o.len)
			out_raw(&o, ",", 1);
		if (end >= v + 2) {
			out_f(&o, "%u-%u", v + offset, end + offset);
			v = end;
		} else {
			out_f(&o, "%u", v + offset);
		}
	}
	return o.buf;
}

/* The two day fields, or NULL and *why. Vixie's rule (cron_expr.h) gives
 * days matching both fields when one starts with `*`, either one when
 * neither does; robfig/cron (which PingSource uses) applies the same rule
 * but only to a plain `*`, so a restricted field is never written with
 * one. EventBridge takes one field and `?` in the other. */
static bool day_fields(const struct ig_cron_expr *e, enum style st, char **dom, char **dow, const char **why)
{
	bool dom_all = e->dom == 0xfffffffeu, dow_all = e->dow == 0x7f;
	bool either = !(e->flags & (IG_CRON_DOM_STAR | IG_CRON_DOW_STAR));
	const char *none = st == EVENTBRIDGE ? "?" : "*";
	if (either && (dom_all || dow_all))
		dom_all = dow_all = true; /* every day matches one of them */
	if (dom_all) {
		*dom = sc_strdup(dow_all ? "*" : none);
		*dow = dow_all ? sc_strdup(none) : field_text(e->dow, 0, 6, false, st, st == EVENTBRIDGE);
		return true;
	}
	if (dow_all) {
		*dom = field_text(e->dom, 1, 31, false, st, 0);
		*dow = sc_strdup(none);
		return true;
	}
	if (either && st == PING) {
		*dom = field_text(e->dom, 1, 31, false, st, 0);
		*dow = field_text(e->dow, 0, 6, false, st, 0);
		return true;
	}
	*why = either ? "fires on days of the month or days of the week, which EventBridge's cron cannot combine"
		      : "fires on days that are both a day of the month and a day of the week, which the platform's "
			"cron cannot state";
	return false;
}

/* Whether the five-field text (the export in Vixie's syntax) fires when
 * e does: the same minutes, hours and months, and the same verdict on
 * every pair of days. Each export is checked as it is written, as the
 * document's packing is (emit_app.c): a conversion's bug fails the build
 * (warn) instead of a platform firing at other times. */
static bool same_schedule(const struct ig_cron_expr *e, const char *text)
{
	struct ig_cron_expr b;
	struct ig_cron_error err;
	if (!ig_cron_parse(text, &b, &err) || b.minutes != e->minutes || b.hours != e->hours || b.months != e->months)
		return false;
	for (unsigned d = 1; d <= 31; d++)
		for (unsigned w = 0; w < 7; w++)
			if (ig_cron_day_matches(&b, d, w) != ig_cron_day_matches(e, d, w))
				return false;
	return true;
}

/* The same for a period, against the cron that stands for it: a week of
 * fire times from the epoch on (the periods that have one repeat daily). */
static bool same_period(const struct ig_cron_expr *e, const char *text)
{
	struct ig_cron_expr b;
	struct ig_cron_error err;
	if (!ig_cron_parse(text, &b, &err))
		return false;
	for (int64_t ta = 0, tb = 0; ta < 7 * 86400;) {
		ta = ig_cron_next(e, ta);
		tb = ig_cron_next(&b, tb);
		if (ta != tb)
			return false;
	}
	return true;
}

/* The schedule in the platform's syntax, or NULL and *why. */
static char *schedule_text(const struct sc_cron_job *j, enum style st, const char **why)
{
	const struct ig_cron_expr *e = &j->expr;
	if (j->every) {
		uint32_t s = e->every_s;
		if (s < 60) {
			*why = "runs more often than once a minute";
			return NULL;
		}
		if (s % 60) {
			*why = "is not a whole number of minutes";
			return NULL;
		}
		if (st == EVENTBRIDGE) {
			uint32_t n = s % 86400 == 0 ? s / 86400 : s % 3600 == 0 ? s / 3600 : s / 60;
			const char *unit = s % 86400 == 0 ? "day" : s % 3600 == 0 ? "hour" : "minute";
			return sc_printf("rate(%u %s%s)", n, unit, n == 1 ? "" : "s");
		}
		/* The epoch's multiples as a cron where the period divides an hour
		   or a day; else robfig's @every (from when the source starts). */
		uint32_t min = s / 60;
		char *cron = min == 1 ? sc_strdup("* * * * *")
			   : min < 60 && 60 % min == 0 ? sc_printf("*/%u * * * *", min)
			   : min % 60 == 0 && min / 60 < 24 && 24 % (min / 60) == 0 ? sc_printf("0 */%u * * *", min / 60)
			   : min == 1440 ? sc_strdup("0 0 * * *") : NULL;
		if (!cron)
			return min % 60 ? sc_printf("@every %um", min) : sc_printf("@every %uh", min / 60);
		if (!same_period(e, cron))
			*why = converted_wrong;
		return *why ? (free(cron), NULL) : cron;
	}
	char *dom, *dow;
	if (!day_fields(e, st, &dom, &dow, why))
		return NULL;
	char *mi = field_text(e->minutes, 0, 59, true, st, 0), *h = field_text(e->hours, 0, 23, true, st, 0);
	char *mo = field_text(e->months, 1, 12, false, st, 0);
	char *out = st == EVENTBRIDGE ? sc_printf("cron(%s %s %s %s %s *)", mi, h, dom, mo, dow)
				      : sc_printf("%s %s %s %s %s", mi, h, dom, mo, dow);
	/* EventBridge's fields read as Vixie's: `?` is `*`, Sunday is 0. */
	char *vdom = strcmp(dom, "?") ? sc_strdup(dom) : sc_strdup("*");
	char *vdow = strcmp(dow, "?") == 0 ? sc_strdup("*")
		   : st == EVENTBRIDGE	     ? field_text(e->dow, 0, 6, false, PING, 0)
					     : sc_strdup(dow);
	char *vixie = sc_printf("%s %s %s %s %s", mi, h, vdom, mo, vdow);
	if (!same_schedule(e, vixie)) {
		*why = converted_wrong;
		free(out);
		out = NULL;
	}
	free(vixie);
	free(vdom);
	free(vdow);
	free(mi);
	free(h);
	free(mo);
	free(dom);
	free(dow);
	return out;
}

size_t sc_cron_pingsources(struct sc_model *m, const char *app, struct sc_out *y)
{
	size_t n = 0;
	for (size_t i = 0; i < m->ncron_jobs; i++) {
		const struct sc_cron_job *j = m->cron_jobs[i];
		const char *why = NULL;
		char *sched = schedule_text(j, PING, &why);
		if (!sched) {
			warn(m, j, "Knative PingSources", why);
			continue;
		}
		if (n++)
			out_line(y, "---");
		out_line(y, "# x-ingot-cron's job \"%s\" (%s \"%s\"): a CloudEvent naming it, POSTed to the", j->name,
			 j->every ? "every" : "schedule", j->schedule);
		out_line(y, "# service's %s.", IG_CRON_PATH);
		out_line(y, "apiVersion: sources.knative.dev/v1");
		out_line(y, "kind: PingSource");
		out_line(y, "metadata:");
		out_line(y, "  name: %s-%s", app, j->name);
		out_line(y, "spec:");
		out_line(y, "  schedule: \"%s\"", sched);
		out_line(y, "  timezone: UTC");
		out_line(y, "  contentType: application/json");
		out_line(y, "  data: '{\"job\":\"%s\"}'", j->name);
		out_line(y, "  sink:");
		out_line(y, "    ref:");
		out_line(y, "      apiVersion: serving.knative.dev/v1");
		out_line(y, "      kind: Service");
		out_line(y, "      name: %s", app);
		out_line(y, "    uri: %s", IG_CRON_PATH);
		free(sched);
	}
	return n;
}

bool sc_cron_eventbridge(struct sc_model *m, size_t i, const char *app, struct sc_out *o)
{
	const struct sc_cron_job *j = m->cron_jobs[i];
	const char *why = NULL;
	char *sched = schedule_text(j, EVENTBRIDGE, &why);
	if (!sched) {
		warn(m, j, "EventBridge schedules", why);
		return false;
	}
	cJSON *root = cJSON_CreateObject(), *input = cJSON_CreateObject();
	char *name = sc_printf("%s-%s", app, j->name);
	char *desc = sc_printf("x-ingot-cron job %s (%s %s)", j->name, j->every ? "every" : "schedule", j->schedule);
	cJSON_AddStringToObject(root, "Name", name);
	cJSON_AddStringToObject(root, "Description", desc);
	cJSON_AddStringToObject(root, "ScheduleExpression", sched);
	cJSON_AddStringToObject(root, "ScheduleExpressionTimezone", "UTC");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "FlexibleTimeWindow"), "Mode", "OFF");
	cJSON_AddStringToObject(root, "State", "ENABLED");
	/* The runtime's Lambda loop knows the event by its source; the time
	   is the tick's, filled in by the scheduler. */
	cJSON_AddStringToObject(input, "source", "ingot.cron");
	cJSON_AddStringToObject(input, "job", j->name);
	cJSON_AddStringToObject(input, "time", "<aws.scheduler.scheduled-time>");
	char *in = cJSON_PrintUnformatted(input);
	cJSON *target = cJSON_AddObjectToObject(root, "Target");
	cJSON_AddStringToObject(target, "Arn", "FUNCTION_ARN");
	cJSON_AddStringToObject(target, "RoleArn", "SCHEDULER_ROLE_ARN");
	cJSON_AddStringToObject(target, "Input", in);
	char *text = cJSON_Print(root);
	out_raw(o, text, strlen(text));
	out_raw(o, "\n", 1);
	cJSON_free(text);
	cJSON_free(in);
	cJSON_Delete(input);
	cJSON_Delete(root);
	free(name);
	free(desc);
	free(sched);
	return true;
}
