/* Between the NATS provider's files: nats_provider.c (a client per core,
 * the streams, publish), nats_consumer.c (core 0's durable pull consumers)
 * and nats_cron.c (cron's claims). Names on the broker: a topic's stream is IG_NATS_STREAM
 * <topic>, taking the one subject IG_NATS_SUBJECT<topic>; a subscription's
 * durable consumer is the subscription's name. */
#ifndef NET_PUBSUB_NATS_PROVIDER_H
#define NET_PUBSUB_NATS_PROVIDER_H

#include "nats_partition.h"
#include "topics.h"

#include <stdbool.h>
#include <stdint.h>

struct ig_nats;
struct ig_loop;

#define IG_NATS_STREAM "pubsub-"
#define IG_NATS_SUBJECT "ingot.pubsub."
/* A subject's or a stream's name: the prefix and a topic's name (at most
 * 63 characters, schemac's rule), NUL-terminated. */
#define IG_NATS_NAME_MAX 96

/* Fills out with prefix and the topic's name. */
void ig_pubsub_nats_name(char out[IG_NATS_NAME_MAX], const char *prefix, const char *topic);

/* A topic with an ordering key is split in IG_NATS_PARTITIONS partitions:
 * a message goes to the subject IG_NATS_SUBJECT<topic>.<k> (its stream
 * takes IG_NATS_SUBJECT<topic>.*), k its key's partition
 * (nats_partition.h); a subscription to it has a durable consumer per
 * partition (<subscription>-<k>, filtered to that subject, MaxAckPending
 * 1), so a key's messages are handled one at a time in stream order. */

/* The subject a message (json) of topic t is published on, into out; nc's
 * scratch arena reads the key. A message without its key (a dead letter
 * that broke the schema) goes to partition 0. */
void ig_pubsub_nats_subject(char out[IG_NATS_NAME_MAX], struct ig_nats *nc, const struct ig_pubsub_topic *t,
			    ig_str json);

/* The consumers (nats_consumer.c): prepare on the main thread (false:
 * this process runs none); up on core 0 each time its client has had
 * every stream's create answered (a consumer on a stream not made fails
 * and is tried again); down when the connection is lost. */
bool ig_pubsub_nats_consumers_prepare(const struct ig_pubsub_table *table);
void ig_pubsub_nats_consumers_up(struct ig_nats *nc, struct ig_loop *loop);
void ig_pubsub_nats_consumers_down(void);

/* Cron's claims (nats_cron.c) in the KV bucket IG_NATS_CRON_BUCKET:
 * prepare, on the main thread before cron's, makes them cron's claimer
 * when the document has jobs (false otherwise); bucket makes sure of the
 * bucket's stream on core 0's client, each time it comes up. */
#define IG_NATS_CRON_BUCKET "ingot-cron"
bool ig_pubsub_nats_cron_prepare(void);
struct ig_js_result;
enum ig_nats_error ig_pubsub_nats_cron_bucket(struct ig_nats *nc, uint32_t replicas,
					      void (*done)(void *arg, const struct ig_js_result *r), void *arg);

#endif
