/* schemac: compiles an OpenAPI 3.1 document into C for the ingot runtime.
 *   schemac <document> <outdir>       writes <outdir>/api.h and <outdir>/api.c
 *                                     (the document is JSON, or YAML when
 *                                     named *.yaml or *.yml)
 *   schemac --validator <name> <schema.json> <out.c>
 *                                     a validator over ig_json_value for a bare
 *                                     JSON Schema (the conformance tests use it)
 *   schemac --queries <document> <queries dir> <migrations dir> <outdir>
 *                                     <outdir>/queries.h and queries.c: the
 *                                     annotated SQL as typed C (queries.c)
 *   schemac --cron-export knative|eventbridge <document> <app> <outdir>
 *                                     x-ingot-cron's jobs for platforms that
 *                                     scale to zero (cron_export.c):
 *                                     <outdir>/knative-pingsources.yaml, or
 *                                     <outdir>/lambda-schedules/<app>-<job>.json
 * Nothing is written unless the whole document compiles, and the files are
 * replaced by rename, so a failed run never leaves half a file for make. */
#include "emit.h"
#include "kernel/runtime/file.h"
#include "queries.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* The input document whole (NULL with errno set, as fopen would). */
static char *read_file(const char *path, size_t *len)
{
	return ig_read_file(path, (size_t)1 << 30, 0, len, NULL, 0);
}

/* Creates dir and its parents, like mkdir -p. */
static int make_dirs(const char *dir)
{
	char *p = sc_strdup(dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

static int write_path(const char *path, const char *tmp, const struct sc_out *o)
{
	FILE *f = fopen(tmp, "wb");
	int rc = -1;
	if (f) {
		bool ok = fwrite(o->buf, 1, o->len, f) == o->len;
		ok = (fclose(f) == 0) && ok;
		if (ok && rename(tmp, path) == 0)
			rc = 0;
	}
	if (rc != 0) {
		fprintf(stderr, "schemac: %s: %s\n", path, strerror(errno));
		remove(tmp);
	}
	return rc;
}

static int write_file(const char *dir, const char *name, const struct sc_out *o)
{
	char *path = sc_printf("%s/%s", dir, name);
	char *tmp = sc_printf("%s/.%s.tmp", dir, name);
	int rc = write_path(path, tmp, o);
	free(path);
	free(tmp);
	return rc;
}

/* Reads and loads the document at input into m; NULL (the read's error
 * printed) when it cannot be read, else its text, which m points into.
 * m->errors counts what is wrong with it. */
static char *load_document(struct sc_model *m, const char *input)
{
	size_t len = 0;
	char *text = read_file(input, &len);
	if (!text) {
		fprintf(stderr, "schemac: %s: %s\n", input, strerror(errno));
		return NULL;
	}
	sc_model_load(m, input, text, len);
	return text;
}

/* The last line of a failed run; the exit status. */
static int nothing_written(const char *input, unsigned errors)
{
	fprintf(stderr, "schemac: %s: %u error%s, nothing written\n", input, errors, errors == 1 ? "" : "s");
	return 1;
}

static int validator_main(const char *name, const char *input, const char *output)
{
	size_t len = 0;
	char *text = read_file(input, &len);
	if (!text) {
		fprintf(stderr, "schemac: %s: %s\n", input, strerror(errno));
		return 1;
	}
	struct sc_model m;
	sc_model_load_schema(&m, input, text, len, name);
	struct sc_out c = { 0 };
	if (!m.errors)
		emit_standalone(&m, &c, name);
	if (m.errors)
		return nothing_written(input, m.errors);
	char *tmp = sc_printf("%s.tmp", output);
	int rc = write_path(output, tmp, &c);
	free(tmp);
	free(c.buf);
	free(text);
	cJSON_Delete(m.doc);
	return rc ? 1 : 0;
}

/* Removes dir's *.json: schedules of jobs the document no longer has. */
static void remove_json(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0) {
			char *p = sc_printf("%s/%s", dir, e->d_name);
			remove(p);
			free(p);
		}
	}
	closedir(d);
}

static int cron_export_main(const char *kind, const char *input, const char *app, const char *outdir)
{
	bool knative = strcmp(kind, "knative") == 0;
	if (!knative && strcmp(kind, "eventbridge") != 0) {
		fprintf(stderr, "schemac: --cron-export takes knative or eventbridge, not \"%s\"\n", kind);
		return 2;
	}
	struct sc_model m;
	char *text = load_document(&m, input);
	if (!text)
		return 1;
	if (!m.errors && m.ncron_jobs && !sc_cron_label_ok(app))
		sc_error(&m, "/x-ingot-cron", "the app's name \"%s\" must be lower-case letters, digits and '-', "
					      "starting with a letter (at most 63): it names the platform's objects", app);
	for (size_t i = 0; !m.errors && sc_cron_label_ok(app) && i < m.ncron_jobs; i++)
		if (strlen(app) + 1 + strlen(m.cron_jobs[i]->name) > 63)
			sc_error(&m, m.cron_jobs[i]->ptr, "\"%s-%s\" is longer than the 63 characters of an object's name",
				 app, m.cron_jobs[i]->name);
	if (m.errors)
		return nothing_written(input, m.errors);
	/* Every export is made before any is written, so that a conversion
	   that fails its check (an error) leaves nothing behind. */
	size_t n = knative ? 1 : m.ncron_jobs;
	struct sc_out *outs = sc_xmalloc(n * sizeof *outs);
	size_t made = 0;
	if (knative)
		made = sc_cron_pingsources(&m, app, &outs[0]);
	else
		for (size_t i = 0; i < n; i++)
			made += sc_cron_eventbridge(&m, i, app, &outs[i]);
	char *dir = knative ? sc_strdup(outdir) : sc_printf("%s/lambda-schedules", outdir);
	/* What an earlier build wrote goes: jobs since removed, or a failure. */
	char *yaml = sc_printf("%s/knative-pingsources.yaml", dir);
	if (knative)
		remove(yaml);
	else
		remove_json(dir);
	int rc = 0;
	if (m.errors)
		rc = nothing_written(input, m.errors);
	else if (made && make_dirs(dir) != 0) {
		fprintf(stderr, "schemac: %s: %s\n", dir, strerror(errno));
		rc = 1;
	}
	for (size_t i = 0; rc == 0 && made && i < n; i++) {
		char *name = knative ? sc_strdup("knative-pingsources.yaml")
				     : sc_printf("%s-%s.json", app, m.cron_jobs[i]->name);
		if (outs[i].len)
			rc = write_file(dir, name, &outs[i]);
		free(name);
	}
	for (size_t i = 0; i < n; i++)
		free(outs[i].buf);
	free(outs);
	free(yaml);
	free(dir);
	free(text);
	cJSON_Delete(m.doc);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "--cron-export") == 0)
		return cron_export_main(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 5 && strcmp(argv[1], "--validator") == 0)
		return validator_main(argv[2], argv[3], argv[4]);
	if (argc >= 2 && strcmp(argv[1], "--queries") == 0)
		return queries_main(argc, argv);
	if (argc != 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: schemac <openapi.json|.yaml|.yml> <outdir>\n"
				"  compiles an OpenAPI 3.1 document into <outdir>/api.h and <outdir>/api.c\n"
				"       schemac --validator <name> <schema.json> <out.c>\n"
				"  compiles a JSON Schema into bool <name>(const ig_json_value *, ...)\n");
		return 2;
	}
	const char *input = argv[1], *outdir = argv[2];
	struct sc_model m;
	char *text = load_document(&m, input);
	if (!text)
		return 1;
	if (m.errors)
		return nothing_written(input, m.errors);

	struct sc_out h = { 0 }, c = { 0 };
	emit_types(&m, &h);

	emit_banner(&m, &c, "Validators, request decoders, response encoders, the operation table and the "
			    "router; the runtime (net/api) runs them, app/ has the handlers.");
	out_line(&c, "#include \"api.h\"");
	out_line(&c, "#include \"ingot/api_hooks.h\"");
	out_line(&c, "#include \"net/api/decode.h\"");
	out_line(&c, "#include \"net/api/document.h\"");
	out_line(&c, "#include \"net/api/format.h\"");
	out_line(&c, "#include \"net/api/operation.h\"");
	out_line(&c, "#include \"net/api/params.h\"");
	if (m.ncron_jobs)
		out_line(&c, "#include \"net/cron/jobs.h\"");
	if (m.ntopics)
		out_line(&c, "#include \"net/pubsub/publish.h\"");
	if (m.nsubs)
		out_line(&c, "#include \"net/pubsub/consumer.h\"");
	out_blank(&c);
	out_line(&c, "#include <string.h>");
	out_blank(&c);
	mark_body_decoders(&m);
	mark_json_decoders(&m);
	mark_param_schemas(&m);
	mark_response_validators(&m);
	emit_validators(&m, &c, VALIDATE_RESPONSE);
	emit_body_decoders(&m, &c);
	emit_encoders(&m, &c);
	emit_sse_sends(&m, &c);
	emit_ws_code(&m, &c);
	emit_decoders(&m, &c);
	emit_router(&m, &c);
	emit_cron_jobs(&m, &c);
	emit_pubsub_table(&m, &c);
	emit_app(&m, &c);
	if (m.errors)
		return nothing_written(input, m.errors);

	if (make_dirs(outdir) != 0) {
		fprintf(stderr, "schemac: %s: %s\n", outdir, strerror(errno));
		return 1;
	}
	if (write_file(outdir, "api.h", &h) != 0 || write_file(outdir, "api.c", &c) != 0)
		return 1;
	cJSON_Delete(m.doc);
	free(text);
	free(h.buf);
	free(c.buf);
	return 0;
}
