/* The key that proves a delivery is the runtime's own (key.h,
 * IG_PUBSUB_KEY_HEADER), made by SQS's or push's first delivery (the
 * consumers' deliveries are tasks and need none): that may come on any
 * core, so the first caller makes it and the others wait for it. */
#include "key.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/random.h>

char ig_pubsub_key[IG_PUBSUB_KEY_LEN + 1];
static _Atomic int key_state; /* 0: none; 1: being made; 2: made */

bool ig_pubsub_key_make(void)
{
	int none = 0;
	if (atomic_load_explicit(&key_state, memory_order_acquire) == 2)
		return true;
	if (!atomic_compare_exchange_strong(&key_state, &none, 1)) {
		while (atomic_load_explicit(&key_state, memory_order_acquire) == 1)
			; /* another core's getrandom: microseconds */
		return atomic_load_explicit(&key_state, memory_order_acquire) == 2;
	}
	uint8_t raw[IG_PUBSUB_KEY_LEN / 2];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
		atomic_store_explicit(&key_state, 0, memory_order_release);
		return false;
	}
	for (size_t i = 0; i < sizeof raw; i++) {
		ig_pubsub_key[2 * i] = "0123456789abcdef"[raw[i] >> 4];
		ig_pubsub_key[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
	}
	atomic_store_explicit(&key_state, 2, memory_order_release);
	return true;
}
