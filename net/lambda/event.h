/* The HTTP front ends' Lambda events, as requests (event.c), and the
 * answers they expect (reply.c). Supported: API Gateway HTTP API payload
 * 2.0 and Lambda function URLs (the same shape), API Gateway REST payload
 * 1.0, and Application Load Balancer target groups (with and without
 * multi-value headers); and an x-ingot-cron job named by an ingot.cron
 * event (EventBridge Scheduler); and a batch of records (SQS), which is
 * no request: net/pubsub/sqs.h runs it. Everything is read from and written into the
 * invocation's arena; nothing is kept between invocations. */
#ifndef NET_LAMBDA_EVENT_H
#define NET_LAMBDA_EVENT_H

#include "ingot/base.h"
#include "ingot/json_read.h"
#include "net/http/inproc.h"

enum lambda_event_kind {
	LAMBDA_EVENT_V2,  /* HTTP API 2.0, function URL */
	LAMBDA_EVENT_V1,  /* REST API (and HTTP API) 1.0 */
	LAMBDA_EVENT_ALB, /* requestContext.elb */
	LAMBDA_EVENT_CRON, /* {"source":"ingot.cron","job":...}: EventBridge Scheduler's Input */
	LAMBDA_EVENT_RECORDS, /* {"Records":[...]}: no request (net/pubsub/sqs.h) */
};

struct lambda_event {
	enum lambda_event_kind kind;
	bool multi_value; /* ALB: the event had multiValueHeaders, so must the answer */
	bool function_url; /* V2 from a function URL (requestContext.domainName *.lambda-url.*) */
	struct http_inproc_request req; /* headers in the arena, extra room for add_header */
	size_t header_room;
	const ig_json_value *event; /* RECORDS: the parsed event, req unset */
};

/* Reads the event JSON. The request: the method; the target from the path
 * (v2.0 rawPath; v1.0 and ALB path, never requestContext.path, which
 * carries the stage) with bytes a request-target cannot hold %-encoded,
 * and the query (v2.0 rawQueryString as it is; v1.0's decoded
 * multiValueQueryStringParameters, else queryStringParameters, encoded
 * again; ALB's as received); the fields (v2.0's comma-joined values as one
 * field, its cookies as one Cookie field joined with "; "; v1.0 and ALB
 * multiValueHeaders as repeated fields, else headers); the body, base64
 * decoded when isBase64Encoded; the peer from sourceIp. An event with a
 * Records array is LAMBDA_EVENT_RECORDS, its JSON in ev->event and no
 * request made. Returns 0, or -1
 * with *why (static) when it is not JSON or not one of these events. */
int ig_lambda_event_decode(const char *json, size_t len, ig_arena *a, struct lambda_event *ev, const char **why);

/* Adds a field to the request, replacing those of the same name; false
 * when the room made by the decoder is used up. name is lowercase. */
bool ig_lambda_event_set_header(struct lambda_event *ev, const char *name, ig_str value);
/* The event's value of a field (the first), or {NULL, 0}. */
ig_str ig_lambda_event_header(const struct lambda_event *ev, const char *name);

/* The answer in ev's form (reply.c): statusCode, the fields but Date,
 * Content-Length and Connection (v2.0: headers, repeats joined with ", ",
 * and Set-Cookie as cookies; v1.0: multiValueHeaders; ALB: headers or
 * multiValueHeaders as the event had, and statusDescription), the body as
 * text when it is UTF-8 and base64 otherwise, and isBase64Encoded. Into w
 * (its arena); false when out of memory. */
bool ig_lambda_reply_encode(const struct lambda_event *ev, const struct http_inproc_response *res, ig_wbuf *w);

/* The prelude of an answer in the streaming mode (a function URL's,
 * application/vnd.awslambda.http-integration-response): {"statusCode",
 * "headers" (as v2.0's, Transfer-Encoding also left out), "cookies"} and
 * the 8 NUL bytes after it; the body follows as it is. Into w; false when
 * out of memory. */
bool ig_lambda_reply_prelude(const struct http_inproc_response *res, ig_wbuf *w);

#endif
