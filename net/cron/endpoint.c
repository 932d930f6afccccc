/* POST /_ingot/cron (jobs.h: ig_cron_serve): a platform's trigger (a
 * Knative PingSource's CloudEvent) runs a job by name, where no process
 * runs at the tick to schedule it. The job runs as the scheduler runs it,
 * an in-process request to its operation on the exchange's core, and the
 * trigger's exchange waits for it. Reached only from the generated
 * router's miss, so no matched route pays for it. */
#include "jobs.h"
#include "net/http/bearer.h"
#include "net/http/inproc.h"
#include "net/http/internal.h"
#include "ingot/http.h"
#include "ingot/json_read.h"

#include <string.h>

#define CRON_CALL_BUF (16 * 1024)

struct cron_call {
	struct http_inproc inproc;
	ig_ctx *ctx;
	const struct ig_cron_job *job;
	ig_header header;
	char buf[CRON_CALL_BUF];
};

static bool str_is(ig_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.ptr, lit, n) == 0;
}

/* The job a CloudEvent names: its data's "job", the body itself in the
 * binary mode, the envelope's "data" in the structured one. */
static const struct ig_cron_job *named_job(ig_ctx *ctx, const char **why)
{
	const ig_request *req = ig_req(ctx);
	ig_json_reader r;
	ig_jr_init(&r, req->body.ptr, req->body.len, ig_ctx_arena(ctx), 8);
	const ig_json_value *v = ig_jr_value(&r);
	if (!v || !ig_jr_finish(&r) || v->type != IG_JSON_OBJECT) {
		*why = "the body is not a JSON object";
		return NULL;
	}
	ig_str type = ig_req_header(ctx, "content-type");
	if (type.len >= 28 && strncasecmp(type.ptr, "application/cloudevents+json", 28) == 0) {
		v = ig_json_get(v, "data", 4);
		if (!v || v->type != IG_JSON_OBJECT) {
			*why = "the structured CloudEvent has no object \"data\"";
			return NULL;
		}
	}
	const ig_json_value *name = ig_json_get(v, "job", 3);
	if (!name || name->type != IG_JSON_STRING) {
		*why = "the event's data has no string \"job\"";
		return NULL;
	}
	for (size_t i = 0; i < ig_api_cron.count; i++)
		if (str_is(name->s, ig_api_cron.jobs[i].name))
			return &ig_api_cron.jobs[i];
	*why = NULL;
	return NULL;
}

static void answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	struct cron_call *call = arg;
	ig_ctx *ctx = call->ctx;
	int status = result == HTTP_INPROC_OK ? res->status : 0;
	if (status >= 200 && status < 300)
		ig_finish(ctx, 204);
	else
		ig_respond_problem(ctx, 502, status ? "the job's operation did not answer 2xx" : "the job did not run");
}

/* After the trigger's batch: a request made from inside the router's
 * dispatch would run the engine inside itself. */
static void start(ig_ctx *ctx, void *arg)
{
	struct cron_call *call = arg;
	const struct ig_cron_job *job = call->job;
	call->header = (ig_header){ IG_STR("Ingot-Cron-Job"), { job->name, strlen(job->name) } };
	const struct http_inproc_request req = {
		.method = { job->method, strlen(job->method) },
		.target = { job->path, strlen(job->path) },
		.headers = &call->header,
		.header_count = 1,
		.peer = IG_STR("cron"),
	};
	enum http_inproc_result result;
	if (ig_http_inproc_run(&call->inproc, ctx->core, call->buf, sizeof call->buf, &req, answered, call, &result) != 0)
		ig_respond_problem(ctx, 503, "no room to run the job");
}

bool ig_cron_serve(ig_ctx *ctx)
{
	const ig_request *req = ig_req(ctx);
	const char *secret = ig_cron_config.secret;
	if (!str_is(req->path, IG_CRON_PATH) || !secret || !secret[0])
		return false;
	if (!str_is(req->method, "POST")) {
		ig_add_header(ctx, "Allow", IG_STR("POST"));
		ig_respond_problem(ctx, 405, "POST only");
		return true;
	}
	if (!ig_http_bearer_is(ig_req_header(ctx, "authorization"), secret)) {
		ig_add_header(ctx, "WWW-Authenticate", IG_STR("Bearer"));
		ig_respond_problem(ctx, 401, "the cron secret is required as a bearer token");
		return true;
	}
	const char *why;
	const struct ig_cron_job *job = named_job(ctx, &why);
	if (!job) {
		ig_respond_problem(ctx, why ? 400 : 404, why ? why : "no cron job has this name");
		return true;
	}
	/* In the exchange's arena, which lasts until its answer is written. */
	struct cron_call *call = ig_alloc(ctx, sizeof *call);
	if (!call) {
		ig_respond_problem(ctx, 503, "out of memory");
		return true;
	}
	call->ctx = ctx;
	call->job = job;
	ig_after(ctx, 0, start, call);
	return true;
}
