/* SQS through Lambda (sqs.c) as the Lambda runtime (net/lambda, above)
 * reaches it: an invocation whose event is a batch of records (SQS's,
 * SNS-wrapped or not) rather than a request is handed to these ops, and
 * the runtime posts the answer they make. Declared weak: sqs.c is linked
 * only into a binary whose document declares subscriptions (serve.c refers
 * to it), and without it a records event is an invalid event. */
#ifndef NET_PUBSUB_SQS_H
#define NET_PUBSUB_SQS_H

#include "ingot/json_read.h"
#include "net/http/internal.h"

/* answer: the JSON to post as the invocation's response, in the arena
 * run was given; called once, on core's loop, never from inside run. */
typedef void ig_pubsub_sqs_done_fn(void *arg, ig_str answer);

struct ig_pubsub_sqs_ops {
	/* At the runtime's start, before the first invocation: NULL, or the
	   message (written into err) of a setting at odds with the document,
	   which stops the start as a bad setting does. */
	const char *(*check)(char *err, size_t errlen);
	/* Runs event's Records on core (one at a time, as in-process
	   requests, each with deadline_ms, the invocation's, on core's
	   clock; 0: none), with buf[0..cap) for their bytes and the arena
	   for the rest; both kept until done has run. Returns 0, done to
	   come; or -1 with *why (static) when the event is not one it runs
	   (done is then not called). */
	int (*run)(const ig_json_value *event, struct http_core *core, ig_arena *a, char *buf, size_t cap,
		   uint64_t deadline_ms, ig_pubsub_sqs_done_fn *done, void *arg, const char **why);
};

extern const struct ig_pubsub_sqs_ops ig_pubsub_sqs_ops __attribute__((weak));

#endif
