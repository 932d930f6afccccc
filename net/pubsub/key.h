/* How a delivery reaches a subscription's handler inside the process:
 * POST to IG_PUBSUB_PATH<subscription>, the verdict coming back as the
 * answer's status. Both providers' consumers run it as a task
 * (delivery.h); SQS's records and push deliveries, which come from
 * outside, as an in-process request with the runtime's own key (made once,
 * key.c), which serve.c checks before it answers. */
#ifndef NET_PUBSUB_KEY_H
#define NET_PUBSUB_KEY_H

#include <stdbool.h>

/* Where deliveries go; a miss of the generated router only. */
#define IG_PUBSUB_PATH "/_ingot/pubsub/"
/* The header that proves a request is the runtime's own: a random key
 * made at the start, never sent anywhere but to the process itself. */
#define IG_PUBSUB_KEY_HEADER "ingot-pubsub-key"
#define IG_PUBSUB_KEY_LEN 32

/* How the handler's verdict comes back in the in-process response's
 * status (ig_pubsub_serve writes it, the consumer reads it); any other
 * status (a crash, a 5xx, no response) is a retry. */
#define IG_PUBSUB_STATUS_ACK 204
#define IG_PUBSUB_STATUS_DROP 202
#define IG_PUBSUB_STATUS_INVALID 422

/* The key, IG_PUBSUB_KEY_LEN hex digits once the consumers are prepared;
 * empty before (and then ig_pubsub_serve answers nothing). */
extern char ig_pubsub_key[IG_PUBSUB_KEY_LEN + 1];
/* Makes the key, once (key.c; later calls keep it): false when the
 * system has no randomness to give. */
bool ig_pubsub_key_make(void);

#endif
