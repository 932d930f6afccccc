/* JetStream's API over a NATS client (nats.h): streams, durable pull
 * consumers, publish that waits for the stream's ack, pulls, and the acks
 * (+ACK, -NAK with a delay, +TERM). Each call is a request on the
 * client's inbox; its answer's JSON is read with the project's reader
 * (ingot/json_read.h). Callbacks run on the client's loop, context first;
 * what they are given is valid during the call only. */
#ifndef NET_NATS_JS_H
#define NET_NATS_JS_H

#include "net/nats/nats.h"

/* An API call's outcome. err is IG_NATS_OK when the server answered
 * without an error; IG_NATS_SERVER with code (400, 404, 503...), err_code
 * (JetStream's own: 10058 a stream name in use with another config, 10059
 * no such stream, 10014 no such consumer...) and description; else why
 * the answer did not come (a timeout, the connection lost, no responders:
 * JetStream is not enabled or no stream takes the subject). */
struct ig_js_result {
	enum ig_nats_error err;
	int code, err_code;
	ig_str description;
	ig_str json;      /* the whole answer */
	ig_str stream;    /* a publish's ack: the stream that stored it */
	uint64_t seq;     /* a publish's ack: its sequence in the stream */
	bool duplicate;   /* a publish's ack: a Nats-Msg-Id seen before */
	uint64_t messages, last_seq; /* STREAM.INFO: its state */
	uint64_t num_pending, num_ack_pending; /* CONSUMER.INFO / create */
};

typedef void ig_js_done_fn(void *arg, const struct ig_js_result *r);

struct ig_js_stream_config {
	ig_str name;
	const ig_str *subjects;
	size_t nsubjects;
	int64_t max_age_ns; /* 0: none */
	uint32_t replicas;  /* 0: 1 */
	bool memory;        /* memory storage; else file */
};

/* STREAM.CREATE: the stream, or the same config again (success). */
IG_MUST_USE enum ig_nats_error ig_js_stream_create(struct ig_nats *nc, const struct ig_js_stream_config *c,
						   uint32_t timeout_ms, ig_js_done_fn *done, void *arg);
/* STREAM.INFO: messages and last_seq in the result. */
IG_MUST_USE enum ig_nats_error ig_js_stream_info(struct ig_nats *nc, ig_str stream, uint32_t timeout_ms,
						 ig_js_done_fn *done, void *arg);

/* A durable pull consumer with explicit acks. */
struct ig_js_consumer_config {
	ig_str stream, durable;
	ig_str filter_subject;     /* empty: the stream's every subject */
	int64_t ack_wait_ns;       /* 0: the server's (30 s) */
	int64_t max_deliver;       /* 0: unlimited */
	const int64_t *backoff_ns; /* redelivery delays after an ack timeout
				      (nats-server 2.7.1 and later); with it,
				      max_deliver must be above their count */
	size_t nbackoff;
	int64_t max_ack_pending;   /* 0: the server's */
};

/* CONSUMER.DURABLE.CREATE: the consumer, or the same config again. */
IG_MUST_USE enum ig_nats_error ig_js_consumer_create(struct ig_nats *nc, const struct ig_js_consumer_config *c,
						     uint32_t timeout_ms, ig_js_done_fn *done, void *arg);

/* Publishes to a stream's subject and calls done with its ack (stream,
 * seq) or why there is none. msg_id (maybe empty) goes as Nats-Msg-Id for
 * the stream's duplicate window; headers (a "NATS/1.0\r\n..." block,
 * maybe empty) are the message's own, msg_id added to them. */
IG_MUST_USE enum ig_nats_error ig_js_publish(struct ig_nats *nc, ig_str subject, ig_str headers, ig_str payload,
					     ig_str msg_id, uint32_t timeout_ms, ig_js_done_fn *done, void *arg);

/* What a delivered message's reply subject says about it:
 * $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.
 * <timestamp>.<pending> (and the longer form with a domain and a hash). */
struct ig_js_meta {
	ig_str stream, consumer;
	uint64_t delivered; /* 1 the first time, 2 at the first redelivery... */
	uint64_t stream_seq, consumer_seq, pending;
	int64_t timestamp_ns;
};
bool ig_js_meta_parse(ig_str reply, struct ig_js_meta *m);

struct ig_js_pull_options {
	uint32_t batch;      /* messages asked for; 0: 1 */
	int64_t expires_ns;  /* how long the server holds the pull; 0: none */
	bool no_wait;        /* answer at once (404/408) when nothing is there */
	uint32_t timeout_ms; /* our bound on the whole pull; 0: expires + 5 s,
				or 5 s when it has none */
};

/* Each message of a pull: m->reply is what ig_js_ack and the others take
 * (copy it to ack later: it is valid during the call only). */
typedef void ig_js_msg_fn(void *arg, const struct ig_nats_msg *m, const struct ig_js_meta *meta);
/* The pull's end: err IG_NATS_OK with status 0 (the batch came), 404 (no
 * messages, no_wait), 408 (expired), 409 (the server ended it: a
 * consumer deleted, too many waiting pulls...); or another err (the
 * timeout, the connection lost). */
typedef void ig_js_pull_end_fn(void *arg, enum ig_nats_error err, int status, uint32_t received);

/* CONSUMER.MSG.NEXT on a durable consumer. Idle heartbeats (100) are
 * skipped. */
IG_MUST_USE enum ig_nats_error ig_js_pull(struct ig_nats *nc, ig_str stream, ig_str consumer,
					  const struct ig_js_pull_options *o, ig_js_msg_fn *on_msg,
					  ig_js_pull_end_fn *on_end, void *arg);

/* Acknowledgements, fire and forget (the server's redelivery covers a
 * lost one): +ACK; -NAK, redelivered after delay_ns (0: at once); +TERM,
 * never redelivered. reply is the message's reply subject. */
IG_MUST_USE enum ig_nats_error ig_js_ack(struct ig_nats *nc, ig_str reply);
IG_MUST_USE enum ig_nats_error ig_js_nak(struct ig_nats *nc, ig_str reply, int64_t delay_ns);
IG_MUST_USE enum ig_nats_error ig_js_term(struct ig_nats *nc, ig_str reply);

#endif
