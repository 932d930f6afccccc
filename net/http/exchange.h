/* What the door's checks (net/api's rate limits, security and hooks) ask of an
 * exchange beyond include/ingot/http.h: defined in exchange.c. */
#ifndef NET_HTTP_EXCHANGE_H
#define NET_HTTP_EXCHANGE_H

#include "ingot/http.h"

#include <stdbool.h>
#include <stdint.h>

/* The connection's peer address (client_addr.h's form); false when it is
 * not known (an in-process request, a client gone). */
bool ig_http_peer_addr(const ig_ctx *ctx, uint8_t out[16]);
/* The subject (the CN) of the client certificate the TLS listener
 * verified against INGOT_TLS_CLIENT_CA, NUL-terminated, "" when the
 * certificate has no CN; valid while the connection is (copy it to keep
 * it). NULL: no verified certificate (plain HTTP, none sent, a resumed
 * session, a client gone). */
const char *ig_http_peer_subject(const ig_ctx *ctx);
/* The loop's cached clock when the request's bytes came, in microseconds. */
uint64_t ig_http_start_us(const ig_ctx *ctx);
/* ingot_rate_limited_total{http_route}, for this request's route. */
void ig_count_rate_limited(ig_ctx *ctx);
struct ig_op_hooks;
/* The request is an operation's with x-ingot-hooks (api_hooks.h): their
 * after-hooks, which begin with the root's, replace the root's on each of
 * its answers (net/http/hooks.h). */
void ig_http_set_op_hooks(ig_ctx *ctx, const struct ig_op_hooks *hooks);
/* Whether ctx has been answered (ig_finish ran): a before-hook that
 * answered and still said IG_HOOK_NEXT must not let the handler run. */
bool ig_http_answered(const ig_ctx *ctx);

#endif
