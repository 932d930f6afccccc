/* Pub/Sub's consumers on NATS JetStream, on core 0's loop (as consumer.c
 * on PostgreSQL): a durable pull consumer per subscription (explicit ack,
 * AckWait the ack deadline, MaxDeliver maxAttempts + 1: that last delivery
 * only dead-letters, when the last attempt's process died or its dead
 * letter was not stored; one per partition, MaxAckPending 1, for a topic
 * with an ordering key), pulled while the subscription has free slots;
 * each message runs as the same in-process request to POST
 * /_ingot/pubsub/<subscription> (delivery.h; serve.c runs the typed
 * handler) and its verdict goes back: +ACK, -NAK with the backoff, +TERM,
 * or, at maxAttempts or for a message that breaks the schema, a copy on
 * the dead-letter topic's stream (the reason in its headers), then +TERM.
 * A process that dies mid-handler sends nothing: AckWait redelivers. */
#include "consumer.h"
#include "delivery.h"
#include "nats_provider.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"
#include "net/nats/js.h"
#include "ingot/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A consumer not made, or a pull that ended without an answer (a
   cluster's leader moving, a timeout) with the connection still up, is
   tried again this much later. */
#define RETRY_MS 1000
/* How long the server holds a pull that found nothing. */
#define PULL_EXPIRES_NS (5LL * 1000 * 1000 * 1000)
#define REPLY_MAX 256

struct nsub;

/* A durable consumer of a subscription: its one (named as it, on the
 * topic's whole stream), or for a topic with an ordering key one per
 * partition (nats_provider.h: <name>-<k>, filtered to the partition's
 * subject, MaxAckPending 1: one message of the partition in flight across
 * all processes, the next only after its verdict, in stream order). */
struct puller {
	struct nsub *r;
	char durable[IG_NATS_NAME_MAX], filter[IG_NATS_NAME_MAX];
	bool ready, pulling, making; /* made; a pull in flight; its create in flight */
};

struct delivery {
	struct ig_pubsub_delivery base; /* first: record's cast */
	struct nsub *sub;
	uint64_t seq;
	char reply[REPLY_MAX];
	size_t reply_len;
	char traceparent[64];
	ig_str received; /* the message while on_msg runs (a verdict given from inside) */
};

struct nsub {
	struct ig_pubsub_lane lane; /* first: ig_pubsub_lanes_make's */
	char stream[IG_NATS_NAME_MAX];
	struct delivery *slots;
	struct puller *pullers;
	uint32_t npullers, next; /* next: the puller pull() asks first, in turn, so no partition waits on the others */
	uint32_t running, pulls; /* handlers running; pulls in flight */
	uint32_t last_freed; /* the slot free_slot tries first */
};

static struct {
	const struct ig_pubsub_table *table;
	struct nsub *subs;
	struct ig_nats *nc;
	struct http_inproc_worker worker; /* its core NULL until the first up */
	struct ig_timer retry;
} s;

static void retry_later(void)
{
	if (s.worker.core && !ig_timer_armed(&s.retry))
		ig_timer_set(&s.worker.core->loop.timers, &s.retry, ig_monotonic_us() / 1000 + RETRY_MS);
}

static void pull(struct nsub *r);

static void freed(struct delivery *d, enum ig_pubsub_outcome outcome)
{
	struct nsub *r = d->sub;
	ig_counter_add(&r->lane.stats.delivered[outcome], 1);
	d->base.busy = false;
	r->running--;
	r->last_freed = (uint32_t)(d - r->slots);
	pull(r);
}

static ig_str reply_of(const struct delivery *d)
{
	return (ig_str){ d->reply, d->reply_len };
}

/* A lost ack is the server's to redeliver after AckWait: logged only. */
static void sent(enum ig_nats_error e, const struct delivery *d, const char *what)
{
	struct ig_logline l;
	if (e != IG_NATS_OK && ig_log_begin(&l, IG_LOG_WARN, what)) {
		ig_log_cstr(&l, "subscription", d->sub->lane.sub->name);
		ig_log_cstr(&l, "error", ig_nats_error_name(e));
		ig_log_end(&l);
	}
}

static void dead_stored(void *arg, const struct ig_js_result *r)
{
	struct delivery *d = arg;
	if (r->err != IG_NATS_OK) {
		/* Not stored: delivered again after the backoff, the last time
		   only to be dead-lettered (MaxDeliver is maxAttempts + 1). */
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "pub/sub dead letter not stored")) {
			ig_log_cstr(&l, "subscription", d->sub->lane.sub->name);
			ig_log_cstr(&l, "error", ig_nats_error_name(r->err));
			ig_log_end(&l);
		}
		const struct ig_pubsub_subscription *sub = d->sub->lane.sub;
		sent(ig_js_nak(s.nc, reply_of(d), (int64_t)ig_pubsub_backoff_us(sub, d->base.attempts) * 1000), d,
		     "pub/sub: NATS nak not sent");
		freed(d, IG_PUBSUB_OUT_RETRY);
		return;
	}
	sent(ig_js_term(s.nc, reply_of(d)), d, "pub/sub: NATS term not sent");
	freed(d, IG_PUBSUB_OUT_DEAD);
}

/* The message a dead letter copies: the one being received, or, after a
 * run, the body of the run's request, still in its slot's buffer. */
static ig_str payload_of(const struct delivery *d)
{
	return d->received.ptr ? d->received : ig_pubsub_delivery_body(&d->base);
}

static void dead(struct delivery *d, const char *why)
{
	const struct ig_pubsub_subscription *sub = d->sub->lane.sub;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "pub/sub delivery dead")) {
		ig_log_cstr(&l, "subscription", sub->name);
		ig_log_int(&l, "message_id", (int64_t)d->seq);
		ig_log_int(&l, "attempts", (int64_t)d->base.attempts);
		ig_log_cstr(&l, "reason", why);
		ig_log_end(&l);
	}
	if (!sub->dead_letter) {
		sent(ig_js_term(s.nc, reply_of(d)), d, "pub/sub: NATS term not sent");
		freed(d, IG_PUBSUB_OUT_DEAD);
		return;
	}
	/* The message as it was, its trace, and why it was given up on, in
	   the headers (the attributes of PostgreSQL's dead letters). The
	   delivery kept for dead-lettering (below) counts no attempt. */
	uint64_t attempts = d->base.attempts > sub->max_attempts ? sub->max_attempts : d->base.attempts;
	char headers[512], subject[IG_NATS_NAME_MAX];
	int n = snprintf(headers, sizeof headers,
			 "NATS/1.0\r\n%s%s%sreason: %s\r\nsubscription: %s\r\nmessage_id: %llu\r\nattempts: %llu\r\n\r\n",
			 d->traceparent[0] ? "traceparent: " : "", d->traceparent, d->traceparent[0] ? "\r\n" : "", why,
			 sub->name, (unsigned long long)d->seq, (unsigned long long)attempts);
	ig_str payload = payload_of(d);
	ig_pubsub_nats_subject(subject, s.nc, sub->dead_letter, payload);
	enum ig_nats_error e = n > 0 && (size_t)n < sizeof headers
				       ? ig_js_publish(s.nc, (ig_str){ subject, strlen(subject) },
						       (ig_str){ headers, (size_t)n }, payload,
						       (ig_str){ 0 }, 5000, dead_stored, d)
				       : IG_NATS_TOO_LARGE;
	if (e != IG_NATS_OK) {
		const struct ig_js_result r = { .err = e };
		dead_stored(d, &r);
	}
}

static void record(struct ig_pubsub_delivery *base, enum ig_pubsub_outcome outcome, const char *why)
{
	struct delivery *d = (struct delivery *)base;
	const struct ig_pubsub_subscription *sub = d->sub->lane.sub;
	switch (outcome) {
	case IG_PUBSUB_OUT_ACK:
		sent(ig_js_ack(s.nc, reply_of(d)), d, "pub/sub: NATS ack not sent");
		break;
	case IG_PUBSUB_OUT_DROP:
		sent(ig_js_term(s.nc, reply_of(d)), d, "pub/sub: NATS term not sent");
		break;
	case IG_PUBSUB_OUT_RETRY:
		sent(ig_js_nak(s.nc, reply_of(d), (int64_t)ig_pubsub_backoff_us(sub, d->base.attempts) * 1000), d,
		     "pub/sub: NATS nak not sent");
		break;
	default:
		dead(d, why);
		return;
	}
	freed(d, outcome);
}

/* The header block's traceparent, into out (empty when none). */
static void find_traceparent(ig_str h, char *out, size_t cap)
{
	out[0] = 0;
	static const char key[] = "\r\ntraceparent:";
	if (!h.len)
		return;
	const char *cr = h.ptr, *end = h.ptr + h.len;
	/* from line end to line end (memchr), not a compare at every byte */
	for (; (cr = memchr(cr, '\r', (size_t)(end - cr))) != NULL; cr++) {
		if ((size_t)(end - cr) < sizeof key - 1 || strncasecmp(cr, key, sizeof key - 1) != 0)
			continue;
		size_t a = (size_t)(cr - h.ptr) + sizeof key - 1, b;
		while (a < h.len && h.ptr[a] == ' ')
			a++;
		for (b = a; b < h.len && h.ptr[b] != '\r'; b++)
			;
		if (b - a < cap) {
			memcpy(out, h.ptr + a, b - a);
			out[b - a] = 0;
		}
		return;
	}
}

static struct delivery *free_slot(struct nsub *r)
{
	if (!r->slots[r->last_freed].base.busy) /* the usual case: one freed, one pulled */
		return &r->slots[r->last_freed];
	for (uint32_t i = 0; i < r->lane.sub->max_concurrency; i++)
		if (!r->slots[i].base.busy)
			return &r->slots[i];
	return NULL;
}

static void on_msg(void *arg, const struct ig_nats_msg *m, const struct ig_js_meta *meta)
{
	struct nsub *r = ((struct puller *)arg)->r;
	struct delivery *d = free_slot(r);
	if (!d || m->reply.len >= REPLY_MAX) {
		/* more than was asked for: another delivery soon (a lost nak:
		   AckWait's) */
		enum ig_nats_error e = ig_js_nak(s.nc, m->reply, 0);
		(void)e;
		return;
	}
	d->base.busy = true;
	r->running++;
	memcpy(d->reply, m->reply.ptr, m->reply.len);
	d->reply_len = m->reply.len;
	d->base.attempts = meta->delivered;
	d->seq = meta->stream_seq;
	find_traceparent(m->headers, d->traceparent, sizeof d->traceparent);
	/* A verdict given from inside (the next two calls) copies the message
	   as received; later ones from the run's buffer. */
	d->received = (ig_str){ m->payload.ptr ? m->payload.ptr : "", m->payload.len };
	if (d->base.attempts > r->lane.sub->max_attempts) {
		/* MaxDeliver keeps one delivery past maxAttempts for this: the
		   last attempt's process died, or its dead letter was not
		   stored. The handler does not run again. */
		dead(d, "max attempts reached");
		d->received = (ig_str){ NULL, 0 };
		return;
	}
	bool ran = ig_pubsub_delivery_run(&d->base, &s.worker, (ig_str){ d->traceparent, strlen(d->traceparent) },
					  m->payload);
	d->received = (ig_str){ NULL, 0 };
	if (ran)
		return;
	/* the core drains or is full: another process takes it now */
	sent(ig_js_nak(s.nc, m->reply, 0), d, "pub/sub: NATS nak not sent");
	d->base.busy = false;
	r->running--;
}

static void on_end(void *arg, enum ig_nats_error err, int status, uint32_t received)
{
	struct puller *p = arg;
	struct nsub *r = p->r;
	(void)received;
	if (p->pulling) { /* not when the connection's down has already cleared it */
		p->pulling = false;
		r->pulls--;
	}
	if (err == IG_NATS_OK && status == 409) {
		/* the server ended it (the consumer deleted, its leader moved):
		   made again, then pulled, a little later */
		p->ready = false;
		retry_later();
	} else if (err == IG_NATS_OK)
		pull(r);
	else if (s.nc && ig_nats_connected(s.nc))
		retry_later(); /* else the connection's up starts pulling again */
}

/* The one consumer pulls the subscription's free slots; a partition's
 * pulls one message (all its MaxAckPending lets come), each pull in flight
 * holding a slot so that the partitions' together never bring more than
 * the slots free. */
static void pull_one(struct nsub *r, struct puller *p)
{
	if (!p->ready || p->pulling)
		return;
	uint32_t held = r->running + (r->npullers > 1 ? r->pulls : 0);
	if (held >= r->lane.sub->max_concurrency)
		return;
	const struct ig_js_pull_options o = { .batch = r->npullers > 1 ? 1 : r->lane.sub->max_concurrency - held,
					      .expires_ns = PULL_EXPIRES_NS };
	if (ig_js_pull(s.nc, (ig_str){ r->stream, strlen(r->stream) }, (ig_str){ p->durable, strlen(p->durable) }, &o,
		       on_msg, on_end, p) == IG_NATS_OK) {
		p->pulling = true;
		r->pulls++;
	}
}

static void pull(struct nsub *r)
{
	if (!r->pullers || !s.nc || s.worker.core->draining || !ig_nats_connected(s.nc))
		return;
	for (uint32_t i = 0; i < r->npullers; i++)
		pull_one(r, &r->pullers[(r->next + i) % r->npullers]);
	r->next = (r->next + 1) % r->npullers;
}

static void consumer_made(void *arg, const struct ig_js_result *res)
{
	struct puller *p = arg;
	struct nsub *r = p->r;
	p->making = false;
	if (res->err != IG_NATS_OK) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "pub/sub: the NATS consumer could not be made")) {
			ig_log_cstr(&l, "subscription", r->lane.sub->name);
			ig_log_cstr(&l, "error", ig_nats_error_name(res->err));
			if (res->description.len)
				ig_log_str(&l, "description", res->description.ptr, res->description.len);
			ig_log_end(&l);
		}
		retry_later();
		return;
	}
	p->ready = true;
	pull(r);
}

/* Each subscription's durable consumers, where not made (or in the
 * making); create answers the same config again with success. */
static void make_consumers(void)
{
	for (size_t i = 0; i < s.table->nsubs; i++) {
		struct nsub *r = &s.subs[i];
		for (uint32_t k = 0; r->slots && k < r->npullers; k++) {
			struct puller *p = &r->pullers[k];
			if (p->ready || p->making)
				continue;
			const struct ig_js_consumer_config c = {
				.stream = { r->stream, strlen(r->stream) },
				.durable = { p->durable, strlen(p->durable) },
				.filter_subject = { p->filter, strlen(p->filter) },
				.ack_wait_ns = (int64_t)r->lane.sub->ack_deadline_us * 1000,
				.max_deliver = (int64_t)r->lane.sub->max_attempts + 1, /* one to dead-letter (on_msg) */
				.max_ack_pending = r->npullers > 1 ? 1 : (int64_t)r->lane.sub->max_concurrency * 64,
			};
			p->making = ig_js_consumer_create(s.nc, &c, 5000, consumer_made, p) == IG_NATS_OK;
		}
	}
}

static void on_retry(struct ig_timer *t)
{
	(void)t;
	if (!s.nc || !ig_nats_connected(s.nc) || s.worker.core->draining)
		return;
	make_consumers();
	for (size_t i = 0; i < s.table->nsubs; i++)
		pull(&s.subs[i]);
}

bool ig_pubsub_nats_consumers_prepare(const struct ig_pubsub_table *table)
{
	if (!ig_pubsub_config.consume || !table->nsubs)
		return false;
	s.table = table;
	if (!(s.subs = ig_pubsub_lanes_make(table, sizeof *s.subs)))
		return false;
	for (size_t i = 0; i < table->nsubs; i++) {
		struct nsub *r = &s.subs[i];
		ig_pubsub_nats_name(r->stream, IG_NATS_STREAM, r->lane.sub->topic->name);
		r->npullers = r->lane.sub->topic->ordering_key ? IG_NATS_PARTITIONS : 1;
		if (!(r->pullers = calloc(r->npullers, sizeof *r->pullers))) {
			while (i--)
				free(s.subs[i].pullers);
			free(s.subs);
			s.subs = NULL;
			return false;
		}
		for (uint32_t k = 0; k < r->npullers; k++) {
			struct puller *p = &r->pullers[k];
			p->r = r;
			if (r->npullers == 1) {
				snprintf(p->durable, sizeof p->durable, "%s", r->lane.sub->name);
				continue;
			}
			snprintf(p->durable, sizeof p->durable, "%s-%u", r->lane.sub->name, (unsigned)k);
			snprintf(p->filter, sizeof p->filter, IG_NATS_SUBJECT "%s.%u", r->lane.sub->topic->name, (unsigned)k);
		}
	}
	ig_pubsub_delivery_lanes(table, &s.subs[0].lane, sizeof s.subs[0]);
	return true;
}

void ig_pubsub_nats_consumers_up(struct ig_nats *nc, struct ig_loop *loop)
{
	if (!s.subs)
		return;
	if (!s.worker.core) {
		ig_http_inproc_worker_init(&s.worker, loop, 0); /* its slots take no arena */
		for (size_t i = 0; i < s.table->nsubs; i++) {
			struct nsub *r = &s.subs[i];
			r->slots = calloc(r->lane.sub->max_concurrency, sizeof *r->slots);
			for (uint32_t k = 0; r->slots && k < r->lane.sub->max_concurrency; k++) {
				struct delivery *d = &r->slots[k];
				d->sub = r;
				ig_pubsub_delivery_init(&d->base, &s.worker, &r->lane, record, 0);
			}
		}
	}
	s.nc = nc;
	s.retry.fn = on_retry;
	make_consumers();
}

void ig_pubsub_nats_consumers_down(void)
{
	if (!s.subs)
		return;
	for (size_t i = 0; i < s.table->nsubs; i++) {
		struct nsub *r = &s.subs[i];
		r->pulls = 0;
		for (uint32_t k = 0; r->pullers && k < r->npullers; k++)
			r->pullers[k].ready = r->pullers[k].pulling = r->pullers[k].making = false;
	}
}
