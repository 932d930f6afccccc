/* Serving a document the build packed (kernel/runtime/lz.h): the generated
 * code's GET /openapi.json hands its packed bytes here, and the answer is
 * the document as it was before packing, unpacked straight into the
 * response body. */
#ifndef NET_API_DOCUMENT_H
#define NET_API_DOCUMENT_H

#include <stddef.h>

#include "ingot/http.h"

/* Answers 200 with the len bytes that packed[0..packed_len) unpacks to,
 * as application/json (the context's default). A body that cannot grow
 * is the runtime's usual failure of a body; packed bytes that do not
 * unpack to exactly len bytes (schemac checks that they do) answer 500. */
void ig_serve_packed(ig_ctx *ctx, const unsigned char *packed, size_t packed_len, size_t len);

#endif
