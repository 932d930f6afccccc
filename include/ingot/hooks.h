/* Request hooks: C functions the document names in x-ingot-hooks (at its
 * root: every operation's; on an operation: that one's) that the runtime
 * calls around handlers. A before-hook runs once the request is admitted
 * and decoded and may answer instead of the handler; an after-hook sees
 * every response's status, the runtime's own errors included, and may add
 * header fields to it. The generated api.h declares each hook the document
 * names with the prototype below; the app defines it (the link fails
 * without it). The order (README, "Hooks"):
 *   1. the rate limit, the door (security) and the decoder: a request they
 *      refuse (429, 401, 403, 400, 415) runs no before-hook;
 *   2. the root's before-hooks, then the operation's, in the document's
 *      order, until one answers;
 *   3. the handler, unless a before-hook answered;
 *   4. as the response is completed (ig_finish, or the connection's own
 *      answer): INGOT_SECURITY_HEADERS's fields, then the root's
 *      after-hooks, then the operation's, in the document's order.
 * Hooks run on the exchange's core, on its loop: they must not wait (no
 * linear call of http.h, pg.h or client.h). */
#ifndef INGOT_HOOKS_H
#define INGOT_HOOKS_H

#include "ingot/http.h"

/* What a before-hook returns to let the request go on. */
#define IG_HOOK_NEXT 0

/* A before-hook: ctx is the admitted request (its principal, ig_principal
 * in include/ingot/auth.h, when the operation has security); operation_id
 * its operationId (static); in the operation's decoded struct (struct
 * <operationId>_in of the generated api.h, in the arena). Returns
 * IG_HOOK_NEXT: the next hook, then the handler, runs. Returns a status
 * (100 to 599): the request is answered with it, as a handler's returned
 * status is (ig_finish), with what the hook wrote (ig_body,
 * ig_add_header, ig_set_content_type); no later hook or handler runs. A
 * hook that answered with ig_respond_problem returns that status (one
 * that returns IG_HOOK_NEXT all the same still stops the request there). */
typedef int ig_before_hook_fn(ig_ctx *ctx, const char *operation_id, const void *in);

struct ig_answer_fields;
/* A response as an after-hook sees it: valid for the call only. */
struct ig_answer {
	/* The exchange (its request, route and principal readable through
	   http.h and auth.h), or NULL for an answer the connection gives a
	   request that never became one: a head that does not parse (400,
	   414, 431, 505), a body too large (413) or too slow (408), no memory
	   for it (503). */
	ig_ctx *ctx;
	int status;
	bool tls; /* it goes out over TLS */
	struct ig_answer_fields *fields; /* the runtime's: ig_answer_add_header's */
};

/* An after-hook: a's response is about to be written; it may add fields
 * with ig_answer_add_header, and must not change the status or the body
 * (an answer it makes, ig_finish or ig_respond_problem, is ignored). */
typedef void ig_after_hook_fn(const struct ig_answer *a);

/* Adds a header field to a's response: name and value are copied (a CR, LF
 * or NUL in value is sent as a space). Within an after-hook's call only.
 * Out of memory (an exchange's arena at its limit, or the 1 KiB an answer
 * without exchange keeps for fields), the field is left out whole. */
IG_NONNULL(1, 2) void ig_answer_add_header(const struct ig_answer *a, const char *name, ig_str value);

#endif
