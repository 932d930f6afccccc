/* The built-in after-hook of INGOT_SECURITY_HEADERS (hooks.h): nosniff on
 * every answer, so that no browser guesses a JSON or problem body's type,
 * and HSTS on answers over TLS only (RFC 6797 8.1: a browser ignores it
 * over plain HTTP, which a proxy may terminate). Its rows and the HSTS
 * value are hooks_settings.c's. */
#include "hooks.h"

bool ig_security_headers_on;
char ig_hsts_value[32];

void ig_security_headers(const struct ig_answer *a)
{
	ig_answer_add_header(a, "X-Content-Type-Options", IG_STR("nosniff"));
	if (a->tls)
		ig_answer_add_header(a, "Strict-Transport-Security", (ig_str){ ig_hsts_value, strlen(ig_hsts_value) });
}
