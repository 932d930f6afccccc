/* The runtime headers the generated api.h includes (emit_types.c). The
 * build derives from them, through tools/schemac/libc-names, the C library
 * names an operationId cannot take (libc_names.h): its handler's prototype
 * would clash with theirs in api.h itself. */
#ifndef SCHEMAC_API_INCLUDES_H
#define SCHEMAC_API_INCLUDES_H

#define SC_API_INCLUDES "kernel/runtime/json_read.h", "net/http/exchange.h", "net/api/html.h"

#endif
