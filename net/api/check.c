/* Debug builds' response checks (ig_check_response, operation.h): the
 * body an operation's encoder wrote is read back and validated against
 * the schema of its status before it leaves; each violation is one error
 * log line. Only a descriptor built with IG_CHECK_RESPONSES points here,
 * so the shipped binary links none of it. */
#include "operation.h"
#include "ingot/log.h"
#include "net/http/redact.h"

struct response_check {
	ig_ctx *ctx;
	const char *operation;
	int status;
};

/* One violation as an error line naming the operation, status and place. */
static void response_violation(void *arg, const char *pointer, const char *keyword, const char *message)
{
	struct response_check *rc = arg;
	struct ig_logline l;
	const ig_request *req = ig_req(rc->ctx);
	if (!ig_log_begin(&l, IG_LOG_ERROR, "response does not match its schema"))
		return;
	ig_str id = ig_request_id(rc->ctx);
	ig_log_str(&l, "request_id", id.ptr, id.len);
	ig_log_cstr(&l, "operation", rc->operation);
	char buf[1024];
	ig_str target = ig_http_target_loggable(req->target, buf, sizeof buf);
	ig_log_str(&l, "target", target.ptr, target.len);
	ig_log_int(&l, "status", rc->status);
	ig_log_cstr(&l, "pointer", pointer);
	ig_log_cstr(&l, "keyword", keyword);
	ig_log_cstr(&l, "message", message);
	ig_log_end(&l);
}

/* Whether the body just encoded matches the schema of its status (none
 * listed: it does); each violation is logged. */
static bool body_matches(ig_ctx *ctx, const struct ig_operation *op, int status)
{
	/* The most specific key: the status, its range, default. */
	const struct ig_response_schema *best = NULL;
	for (size_t i = 0; i < op->nschemas; i++) {
		const struct ig_response_schema *s = &op->schemas[i];
		int rank = s->status == status ? 3 : s->status == status / 100 ? 2 : s->status == 0 ? 1 : 0;
		int best_rank = !best ? 0 : best->status == status ? 3 : best->status == status / 100 ? 2 : 1;
		if (rank > best_rank)
			best = s;
	}
	ig_validate_fn *validate = best ? best->validate : NULL;
	ig_wbuf *w = ig_body(ctx);
	if (!validate || w->failed)
		return true; /* out of memory: answered 500 anyway */
	struct response_check rc = { ctx, op->id, status };
	ig_json_reader r;
	ig_jr_init(&r, w->ptr, w->len, ig_ctx_arena(ctx), 64);
	ig_json_value *v = ig_jr_value(&r);
	if (!v || !ig_jr_finish(&r)) {
		response_violation(&rc, "", "json", r.error ? r.error : "not JSON");
		return false;
	}
	struct ig_vctx x = { .report = response_violation, .arg = &rc, .arena = ig_ctx_arena(ctx) };
	return validate(v, &x, NULL);
}

/* A pending answer: its output struct and operation, for the encoder. */
struct pending_check {
	const struct ig_operation *op;
	const void *out;
};

/* A pending answer is checked as it is encoded: a violation is logged,
 * the status stays (the encoder cannot change it). */
static void encode_checked(ig_ctx *ctx, int status, const void *arg)
{
	const struct pending_check *pc = arg;
	pc->op->encode(ctx, status, pc->out);
	body_matches(ctx, pc->op, status);
}

int ig_check_response(ig_ctx *ctx, const struct ig_operation *op, int status, void *out)
{
	if (status == IG_PENDING) {
		struct pending_check *pc = ig_alloc(ctx, sizeof *pc);
		if (pc) {
			*pc = (struct pending_check){ op, out };
			ig_set_encoder(ctx, encode_checked, pc);
		} else {
			ig_set_encoder(ctx, op->encode, out); /* no room to check: encoded unchecked */
		}
		return IG_PENDING;
	}
	if (ig_body(ctx)->len == 0) { /* not answered by the handler itself */
		op->encode(ctx, status, out);
		if (!body_matches(ctx, op, status)) {
			ig_respond_problem(ctx, 500, "the response does not match its schema");
			return IG_PENDING;
		}
	}
	return status;
}
