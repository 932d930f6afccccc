/* The document's root extension x-ingot-cron: the app's jobs, each a name,
 * a schedule (`every` or a cron `schedule`, parsed by the runtime's own
 * kernel/runtime/cron_expr.c, linked into schemac) and the operation it
 * calls. Judged here, so a bad job fails the build at its place in the
 * document; emitted as data (net/cron/jobs.h) for the runtime's
 * scheduler. The platforms' exports are cron_export.c's. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_keyword job_keys[] = {
	{ "name", NULL }, { "every", NULL }, { "schedule", NULL }, { "operationId", NULL }, { "description", NULL },
	{ NULL, NULL },
};

bool sc_cron_label_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63 || !(s[0] >= 'a' && s[0] <= 'z') || s[n - 1] == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* A job's name follows the app's in the objects' names: short. */
static bool name_ok(const char *s)
{
	return strlen(s) <= 40 && sc_cron_label_ok(s);
}

static struct sc_op *find_op(struct sc_model *m, const char *id)
{
	for (size_t i = 0; i < m->nops; i++)
		if (strcmp(m->ops[i]->id, id) == 0)
			return m->ops[i];
	return NULL;
}

/* The operation a job calls gets no parameters and no body. */
static void check_callable(struct sc_model *m, const struct sc_op *op, const char *ptr)
{
	for (size_t i = 0; i < op->nparams; i++)
		if (op->params[i].required) {
			sc_error(m, ptr, "operation \"%s\" has the required parameter \"%s\": a cron job calls it with none",
				 op->id, op->params[i].name);
			return;
		}
	if (op->body_required)
		sc_error(m, ptr, "operation \"%s\" requires a request body: a cron job calls it with none", op->id);
}

static void parse_job(struct sc_model *m, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a cron job is an object {name, every or schedule, operationId}");
		return;
	}
	sc_check_keys(m, j, ptr, job_keys);
	unsigned before = m->errors;
	char *name = sc_get_string(m, j, ptr, "name", true);
	char *id = sc_get_string(m, j, ptr, "operationId", true);
	const cJSON *every = sc_get(j, "every"), *sched = sc_get(j, "schedule");
	char *np = sc_ptr_key(ptr, "name"), *op_ptr = sc_ptr_key(ptr, "operationId");
	if (name && !name_ok(name))
		sc_error(m, np, "job name \"%s\" must be 1 to 40 lower-case letters, digits and '-', starting with a "
				"letter and not ending with '-'", name);
	for (size_t i = 0; name && i < m->ncron_jobs; i++)
		if (strcmp(m->cron_jobs[i]->name, name) == 0)
			sc_error(m, np, "job name \"%s\" is used by %s too", name, m->cron_jobs[i]->ptr);
	struct sc_op *op = id ? find_op(m, id) : NULL;
	if (id && !op)
		sc_error(m, op_ptr, "no operation has the operationId \"%s\"", id);
	else if (op)
		check_callable(m, op, op_ptr);
	struct sc_cron_job *job = sc_xmalloc(sizeof *job);
	if (!!every == !!sched) {
		sc_error(m, ptr, "a cron job has either \"every\" (a period: \"1s\", \"5m\", \"1h\") or \"schedule\" "
				 "(a cron expression: \"0 * * * *\"), not %s", every ? "both" : "neither");
	} else {
		const char *key = every ? "every" : "schedule";
		char *sp = sc_ptr_key(ptr, key);
		const cJSON *v = every ? every : sched;
		struct ig_cron_error err;
		if (!cJSON_IsString(v))
			sc_error(m, sp, "\"%s\" must be a string", key);
		else if (!(every ? ig_cron_parse_every(v->valuestring, &job->expr, &err)
				 : ig_cron_parse(v->valuestring, &job->expr, &err)))
			sc_error(m, sp, "bad %s \"%s\" at character %zu: %s", every ? "period" : "cron expression",
				 v->valuestring, err.pos + 1, ig_cron_strerror(err.kind));
		free(sp);
	}
	free(np);
	free(op_ptr);
	free(id);
	if (m->errors != before) {
		free(name);
		free(job);
		return;
	}
	job->name = name;
	job->every = every != NULL;
	job->schedule = sc_strdup((every ? every : sched)->valuestring);
	job->op = op;
	job->ptr = sc_strdup(ptr);
	SC_APPEND(m->cron_jobs, m->ncron_jobs, job);
}

void sc_parse_cron(struct sc_model *m, const cJSON *doc)
{
	const cJSON *c = sc_get(doc, "x-ingot-cron");
	if (!c)
		return;
	if (!cJSON_IsArray(c)) {
		sc_error(m, "/x-ingot-cron", "\"x-ingot-cron\" must be an array of jobs");
		return;
	}
	int i = 0;
	for (const cJSON *it = c->child; it; it = it->next, i++) {
		char *p = sc_ptr_index("/x-ingot-cron", i);
		parse_job(m, it, p);
		free(p);
	}
}

void emit_cron_jobs(struct sc_model *m, struct sc_out *c)
{
	if (!m->ncron_jobs)
		return;
	out_line(c, "/* x-ingot-cron: the jobs (net/cron/jobs.h), their schedules parsed at build time. */");
	out_open(c, "static const struct ig_cron_job ig_cron_jobs[] = {");
	for (size_t i = 0; i < m->ncron_jobs; i++) {
		const struct sc_cron_job *j = m->cron_jobs[i];
		const struct ig_cron_expr *e = &j->expr;
		char *name = c_str(j->name), *sched = c_str(j->schedule), *path = c_str(j->op->path->tmpl);
		out_open(c, "{");
		out_line(c, ".name = %s,", name);
		out_line(c, ".schedule = %s,", sched);
		if (j->every)
			out_line(c, ".expr = { .every_s = %lu },", (unsigned long)e->every_s);
		else
			out_line(c, ".expr = { .minutes = 0x%llxu, .hours = 0x%lxu, .dom = 0x%lxu, .months = 0x%xu, "
				    ".dow = 0x%xu, .flags = %u },",
				 (unsigned long long)e->minutes, (unsigned long)e->hours, (unsigned long)e->dom,
				 (unsigned)e->months, (unsigned)e->dow, (unsigned)e->flags);
		out_line(c, ".method = \"%s\",", j->op->method);
		out_line(c, ".path = %s,", path);
		out_line(c, ".operation = &ig_operation_%s,", j->op->id);
		out_close(c, "},");
		free(name);
		free(sched);
		free(path);
	}
	out_close(c, "};");
	out_line(c, "const struct ig_cron_table ig_api_cron = { ig_cron_jobs, %zu, &ig_cron_ops };", m->ncron_jobs);
	out_blank(c);
}
