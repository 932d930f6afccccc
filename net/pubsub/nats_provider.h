/* Between the NATS provider's two files: nats_provider.c (a client per
 * core, the streams, publish) and nats_consumer.c (core 0's durable pull
 * consumers). Names on the broker: a topic's stream is IG_NATS_STREAM
 * <topic>, taking the one subject IG_NATS_SUBJECT<topic>; a subscription's
 * durable consumer is the subscription's name. */
#ifndef NET_PUBSUB_NATS_PROVIDER_H
#define NET_PUBSUB_NATS_PROVIDER_H

#include "topics.h"

#include <stdbool.h>

struct ig_nats;
struct ig_loop;

#define IG_NATS_STREAM "pubsub-"
#define IG_NATS_SUBJECT "ingot.pubsub."
/* A subject's or a stream's name: the prefix and a topic's name (at most
 * 63 characters, schemac's rule), NUL-terminated. */
#define IG_NATS_NAME_MAX 96

/* Fills out with prefix and the topic's name. */
void ig_pubsub_nats_name(char out[IG_NATS_NAME_MAX], const char *prefix, const char *topic);

/* The consumers (nats_consumer.c): prepare on the main thread (false:
 * this process runs none); up on core 0 each time its client is up and
 * every stream is there; down when the connection is lost. */
bool ig_pubsub_nats_consumers_prepare(const struct ig_pubsub_table *table);
void ig_pubsub_nats_consumers_up(struct ig_nats *nc, struct ig_loop *loop);
void ig_pubsub_nats_consumers_down(void);

#endif
