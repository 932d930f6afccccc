/* Pub/Sub's metrics: ingot_pubsub_published_total{topic}, counted per core
 * as each publish is stored, summed over the cores when scraped. The
 * topics are the document's (a bounded set); beyond
 * IG_PUBSUB_METRIC_TOPICS they share the series topic="_OTHER". */
#ifndef NET_PUBSUB_PUBSUB_METRICS_H
#define NET_PUBSUB_PUBSUB_METRICS_H

#include "topics.h"
#include "net/metrics/metrics.h"

#define IG_PUBSUB_METRIC_TOPICS 32

/* One message of topic t stored; on ctx's core. */
void ig_pubsub_count_published(const ig_ctx *ctx, const struct ig_pubsub_topic *t);

/* Registered by the start when linked (a publish links it). */
extern struct ig_metrics_source ig_pubsub_metrics_source;

#endif
