/* The partition of an ordered topic's message on NATS (nats_provider.h):
 * which of IG_NATS_PARTITIONS subjects it is published on, from its
 * ordering key's value alone, the same in every process and build. */
#ifndef NET_PUBSUB_NATS_PARTITION_H
#define NET_PUBSUB_NATS_PARTITION_H

#include "ingot/base.h"

#include <stdint.h>

#define IG_NATS_PARTITIONS 16

/* The FNV-1a hash of the value of json's top-level member `member` (a
 * string's decoded bytes, else the value's JSON text) modulo
 * IG_NATS_PARTITIONS; 0 for an empty string, and when json is no object
 * with that member (a dead letter that broke the schema). Reads with a
 * (it may allocate there: the caller resets it). */
uint32_t ig_pubsub_nats_partition(ig_arena *a, const char *member, ig_str json);

#endif
