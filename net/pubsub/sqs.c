/* SQS through Lambda (sqs.h): an SQS event's records, each
 * run as a delivery of the subscription its queue maps to
 * (INGOT_SQS_SUBSCRIPTIONS), through serve.c's in-process path, one at a
 * time; the failures go back as SQS's partial batch response. Decoding
 * and checking the message is the generated entry's, as for PostgreSQL's
 * deliveries. Its setting: sqs_settings.c. */
#include "consumer.h"
#include "delivery.h"
#include "sqs_settings.h"
#include "net/http/inproc.h"
#include "sqs.h"
#include "ingot/log.h"

#include <stdio.h>
#include <string.h>

/* The subscription queue maps to in INGOT_SQS_SUBSCRIPTIONS, or NULL. */
static const struct ig_pubsub_subscription *mapped(ig_str queue)
{
	for (const char *p = ig_pubsub_sqs_config.subscriptions; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (eq && (size_t)(eq - p) == queue.len && memcmp(p, queue.ptr, queue.len) == 0) {
			const char *name = eq + 1;
			size_t name_len = n - (size_t)(name - p);
			for (size_t i = 0; i < ig_api_pubsub.nsubs; i++)
				if (strlen(ig_api_pubsub.subs[i].name) == name_len &&
				    memcmp(ig_api_pubsub.subs[i].name, name, name_len) == 0)
					return &ig_api_pubsub.subs[i];
		}
		p += n + (end != NULL);
	}
	return NULL;
}

/* Each pair a queue name and a subscription of the document, at the
 * Lambda runtime's start (only there: a process elsewhere has no use for
 * the mapping, and its start runs none of this file's cold code): a
 * mapping that names none is a typo, better found before a batch fails. */
static const char *check(char *err, size_t errlen)
{
	for (const char *p = ig_pubsub_sqs_config.subscriptions; *p;) {
		const char *end = strchr(p, ',');
		int n = (int)(end ? (size_t)(end - p) : strlen(p));
		const char *eq = memchr(p, '=', (size_t)n);
		if (!eq || eq == p || eq == p + n - 1) {
			snprintf(err, errlen, "INGOT_SQS_SUBSCRIPTIONS: \"%.*s\" is not queue=subscription", n, p);
			return err;
		}
		if (!mapped((ig_str){ p, (size_t)(eq - p) })) {
			snprintf(err, errlen, "INGOT_SQS_SUBSCRIPTIONS: \"%.*s\": the document declares no subscription \"%.*s\"",
				 n, p, (int)(p + n - eq - 1), eq + 1);
			return err;
		}
		p += n + (end != NULL);
	}
	return NULL;
}

/* ---- a batch ---- */

#define RUN_HEADERS 4

struct batch {
	const ig_json_value *records;
	size_t next;
	struct http_core *core;
	ig_arena *arena;
	/* Two runs, so that the next record never starts on the run whose
	   done is still on the stack; each with half the buffer. */
	struct http_inproc *inproc[2];
	char *buf;
	size_t half;
	size_t runs; /* started: which of the two the next one takes */
	uint64_t deadline_ms; /* the invocation's, every record's */
	const struct ig_pubsub_subscription *sub; /* the running record's */
	uint64_t started_us;                      /* its start: the handling time's */
	ig_header headers[RUN_HEADERS];
	char target[sizeof IG_PUBSUB_PATH + 64];
	/* the failed records' indexes, written out once the batch is done:
	   the answer is made in the arena after the records' own allocations */
	size_t *failed;
	size_t nfailed;
	/* FIFO queues: the message groups that have failed in this batch */
	ig_str *failed_groups;
	size_t nfailed_groups;
	ig_pubsub_sqs_done_fn *done;
	void *arg;
	struct ig_deferred step;
};

static const ig_json_value *member(const ig_json_value *o, const char *key)
{
	return o && o->type == IG_JSON_OBJECT ? ig_json_get(o, key, strlen(key)) : NULL;
}

static ig_str string(const ig_json_value *o, const char *key)
{
	const ig_json_value *v = member(o, key);
	return v && v->type == IG_JSON_STRING ? v->s : (ig_str){ NULL, 0 };
}

static bool is(ig_str s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0;
}

/* The queue's name: the ARN's last part (arn:aws:sqs:region:account:name). */
static ig_str queue_of(ig_str arn)
{
	const char *colon = arn.len ? memrchr(arn.ptr, ':', arn.len) : NULL;
	return colon ? (ig_str){ colon + 1, arn.len - (size_t)(colon + 1 - arn.ptr) } : arn;
}

static void log_record(const char *msg, const ig_json_value *rec, const struct ig_pubsub_subscription *sub,
		       const char *why)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, msg)) {
		ig_str id = string(rec, "messageId");
		ig_log_str(&l, "message_id", id.ptr ? id.ptr : "", id.len);
		ig_str queue = queue_of(string(rec, "eventSourceARN"));
		ig_log_str(&l, "queue", queue.ptr ? queue.ptr : "", queue.len);
		if (sub)
			ig_log_cstr(&l, "subscription", sub->name);
		ig_log_cstr(&l, "reason", why);
		ig_log_end(&l);
	}
}

static void fail(struct batch *b, const ig_json_value *rec)
{
	b->failed[b->nfailed++] = b->next - 1;
	/* FIFO: later records of this group are failed without running */
	ig_str group = string(member(rec, "attributes"), "MessageGroupId");
	if (group.len)
		b->failed_groups[b->nfailed_groups++] = group;
}

static bool group_failed(const struct batch *b, const ig_json_value *rec)
{
	ig_str group = string(member(rec, "attributes"), "MessageGroupId");
	for (size_t i = 0; group.len && i < b->nfailed_groups; i++)
		if (b->failed_groups[i].len == group.len && memcmp(b->failed_groups[i].ptr, group.ptr, group.len) == 0)
			return true;
	return false;
}

/* The message a record carries: its body, or, when the body is an SNS
 * notification (a topic's subscription delivering raw-off to the queue),
 * the notification's Message. */
static ig_str payload(struct batch *b, ig_str body)
{
	ig_json_reader r;
	ig_jr_init(&r, body.ptr, body.len, b->arena, 8);
	const ig_json_value *v = ig_jr_value(&r);
	if (!v || !ig_jr_finish(&r) || !is(string(v, "Type"), "Notification") || !string(v, "TopicArn").ptr)
		return body;
	ig_str message = string(v, "Message");
	return message.ptr ? message : body;
}

static void next_record(struct batch *b);

static void answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	struct batch *b = arg;
	const ig_json_value *rec = b->records->array.items[b->next - 1];
	int status = result == HTTP_INPROC_OK ? res->status : 0;
	const char *why;
	ig_pubsub_count_inbound(b->core->index, b->sub, ig_pubsub_outcome_of(status, &why), b->started_us);
	if (status != IG_PUBSUB_STATUS_ACK && status != IG_PUBSUB_STATUS_DROP) {
		const struct ig_pubsub_subscription *sub = mapped(queue_of(string(rec, "eventSourceARN")));
		log_record("sqs record failed", rec, sub,
			   status == IG_PUBSUB_STATUS_INVALID ? "the message breaks the topic's schema"
			   : status == 503		      ? "the handler asked for a retry"
							      : "the handler failed");
		fail(b, rec);
	}
	next_record(b);
}

/* Starts the record at b->next; false when it was settled without running. */
static bool start_record(struct batch *b)
{
	const ig_json_value *rec = b->records->array.items[b->next++];
	if (group_failed(b, rec)) {
		fail(b, rec);
		return false;
	}
	const struct ig_pubsub_subscription *sub = mapped(queue_of(string(rec, "eventSourceARN")));
	if (!sub) {
		log_record("sqs record failed", rec, NULL, "its queue maps to no subscription (INGOT_SQS_SUBSCRIPTIONS)");
		fail(b, rec);
		return false;
	}
	snprintf(b->target, sizeof b->target, IG_PUBSUB_PATH "%s", sub->name);
	size_t nh = 0;
	b->headers[nh++] = (ig_header){ IG_STR(IG_PUBSUB_KEY_HEADER), { ig_pubsub_key, IG_PUBSUB_KEY_LEN } };
	ig_str id = string(rec, "messageId");
	if (id.len)
		b->headers[nh++] = (ig_header){ IG_STR("X-Request-Id"), id };
	ig_str trace = string(member(member(rec, "messageAttributes"), "traceparent"), "stringValue");
	if (trace.len)
		b->headers[nh++] = (ig_header){ IG_STR("traceparent"), trace };
	const struct http_inproc_request req = {
		.method = IG_STR("POST"),
		.target = { b->target, strlen(b->target) },
		.headers = b->headers,
		.header_count = nh,
		.body = payload(b, string(rec, "body")),
		.peer = IG_STR("sqs"),
		.deadline_ms = b->deadline_ms,
	};
	size_t k = b->runs++ & 1;
	b->sub = sub;
	b->started_us = ig_monotonic_us();
	enum http_inproc_result result;
	if (ig_http_inproc_run(b->inproc[k], b->core, b->buf + k * b->half, b->half, &req, answered, b, &result) == 0)
		return true;
	log_record("sqs record failed", rec, sub,
		   result == HTTP_INPROC_NO_ROOM ? "the message is larger than the runtime's buffer"
						 : "the delivery could not be started");
	fail(b, rec);
	return false;
}

static void finish(struct ig_deferred *d)
{
	struct batch *b = (struct batch *)((char *)d - offsetof(struct batch, step));
	ig_wbuf w = { .arena = b->arena };
	ig_wbuf_lit(&w, "{\"batchItemFailures\":[");
	for (size_t i = 0; i < b->nfailed; i++) {
		ig_str id = string(b->records->array.items[b->failed[i]], "messageId");
		if (i)
			ig_wbuf_lit(&w, ",");
		ig_wbuf_lit(&w, "{\"itemIdentifier\":");
		ig_json_string(&w, id.ptr ? id.ptr : "", id.len);
		ig_wbuf_lit(&w, "}");
	}
	ig_wbuf_lit(&w, "]}");
	b->done(b->arg, (ig_str){ w.ptr, w.failed ? 0 : w.len });
}

static void next_record(struct batch *b)
{
	while (b->next < b->records->array.len)
		if (start_record(b))
			return;
	/* done is never called from inside run */
	b->step.fn = finish;
	ig_loop_defer(&b->core->loop, &b->step);
}

static int run(const ig_json_value *event, struct http_core *core, ig_arena *a, char *buf, size_t cap,
	       uint64_t deadline_ms, ig_pubsub_sqs_done_fn *done, void *arg, const char **why)
{
	const ig_json_value *records = member(event, "Records");
	/* S3's, SNS's (direct) and others' records are no deliveries: the
	   runtime answers them as an invalid event */
	for (size_t i = 0; i < records->array.len; i++)
		if (!is(string(records->array.items[i], "eventSource"), "aws:sqs")) {
			*why = "the event's records are not all SQS messages (eventSource aws:sqs)";
			return -1;
		}
	struct batch *b = ig_arena_alloc(a, sizeof *b);
	struct http_inproc *runs = ig_arena_alloc(a, 2 * sizeof *runs);
	if (!b || !runs || !ig_pubsub_key_make()) {
		*why = "out of memory for the batch";
		return -1;
	}
	*b = (struct batch){
		.records = records, .core = core, .arena = a, .inproc = { &runs[0], &runs[1] },
		.buf = buf, .half = cap / 2, .deadline_ms = deadline_ms, .done = done, .arg = arg,
	};
	b->failed = ig_arena_alloc(a, (records->array.len + 1) * sizeof *b->failed);
	b->failed_groups = ig_arena_alloc(a, (records->array.len + 1) * sizeof *b->failed_groups);
	if (!b->failed || !b->failed_groups) {
		*why = "out of memory for the batch";
		return -1;
	}
	next_record(b);
	return 0;
}

const struct ig_pubsub_sqs_ops ig_pubsub_sqs_ops = { .check = check, .run = run };
