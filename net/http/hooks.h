/* The after-hooks' runner (include/ingot/hooks.h): on every answer of the
 * app's connections, an exchange's (ig_finish) or the connection's own
 * (conn.c), the security headers' fields and then the document's hooks.
 * The before-hooks are net/api's (operation.c): only an operation has
 * them. The setting and the start's part are in hooks_settings.c. */
#ifndef NET_HTTP_HOOKS_H
#define NET_HTTP_HOOKS_H

#include "ingot/api_hooks.h"
#include "ingot/settings.h"

/* Whether any answer runs an after-hook: the one test an answer pays
 * while none does. Set at the start, read-only afterwards. */
extern bool ig_hooks_on;
/* The root's after-hooks (ig_app.hooks; NULL: none), set by the start. */
extern const struct ig_op_hooks *ig_hooks_root;

/* ig_finish's, with ig_hooks_on: runs the after-hooks of exchange ctx
 * (its operation's, else the root's) for its status, adding their fields
 * to its response. Not for the admin listener's exchanges. */
void ig_http_hooks_after(ig_ctx *ctx);

/* The connection's own answer (no exchange), with ig_hooks_on: runs the
 * root's after-hooks for status into out (cap bytes, whole field lines).
 * Returns the length written. */
#define IG_HOOKS_LINES_MAX 1024 /* its share of HTTP_EXTRA_LINES_MAX (internal.h) */
size_t ig_http_hooks_after_lines(int status, bool tls, char *out, size_t cap);

/* ---- the start (hooks_settings.c) ---- */

/* INGOT_SECURITY_HEADERS and INGOT_HSTS_MAX_AGE. */
extern const struct ig_settings ig_hooks_settings;
/* After the settings' parse, on the main thread, before any request:
 * app's hooks (NULL: none) become the root's, and ig_hooks_on is set. */
void ig_hooks_start(const struct ig_app *app);

/* ---- the built-in after-hook (security_headers.c) ---- */

/* INGOT_SECURITY_HEADERS is on: X-Content-Type-Options: nosniff on every
 * answer, Strict-Transport-Security on those over TLS. */
extern bool ig_security_headers_on;
/* The HSTS field's value ("max-age=N"), made by the settings' check. */
extern char ig_hsts_value[32];
void ig_security_headers(const struct ig_answer *a);

#endif
