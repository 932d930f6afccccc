/* The opening handshake's key and accept value (handshake.h). SHA-1 is
 * BearSSL's, linked whatever the TLS backend (its hash code alone). */
#include "net/ws/handshake.h"
#include "kernel/runtime/base64.h"

#include <bearssl_hash.h>
#include <stdint.h>

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

bool ig_ws_key_valid(const char *key, size_t n)
{
	uint8_t nonce[18];
	return n == 24 && ig_base64_decode(key, n, nonce, sizeof nonce) == 16;
}

void ig_ws_accept(const char *key, size_t n, char *out)
{
	br_sha1_context sha;
	uint8_t digest[br_sha1_SIZE];
	br_sha1_init(&sha);
	br_sha1_update(&sha, key, n);
	br_sha1_update(&sha, ws_guid, sizeof ws_guid - 1);
	br_sha1_out(&sha, digest);
	(void)ig_base64_encode(digest, sizeof digest, out);
}
