/* The key that proves a delivery is the runtime's own (consumer.h,
 * IG_PUBSUB_KEY_HEADER), made at the start by either provider's
 * consumers, or by SQS's or push's first delivery. */
#include "consumer.h"

#include <sys/random.h>

bool ig_pubsub_key_make(void)
{
	uint8_t raw[IG_PUBSUB_KEY_LEN / 2];
	if (ig_pubsub_key[0])
		return true;
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return false;
	for (size_t i = 0; i < sizeof raw; i++) {
		ig_pubsub_key[2 * i] = "0123456789abcdef"[raw[i] >> 4];
		ig_pubsub_key[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
	}
	return true;
}
