/* Serving a packed document (net/api/document.h): unpacked into the body's
 * own buffer, so the served bytes are never held twice. */
#include "net/api/document.h"

#include "kernel/runtime/lz.h"

void ig_serve_packed(ig_ctx *ctx, const unsigned char *packed, size_t packed_len, size_t len)
{
	ig_wbuf *body = ig_body(ctx);
	char *d = ig_wbuf_reserve(body, len);
	if (!d) {
		ig_finish(ctx, 200); /* the body's failure answers, as for ig_wbuf_put */
		return;
	}
	if (ig_lz_unpack((unsigned char *)d, len, packed, packed_len) != len) {
		ig_finish(ctx, 500);
		return;
	}
	body->len += len;
	ig_finish(ctx, 200);
}
