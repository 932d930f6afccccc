/* The hooks' part of the settings table (INGOT_SECURITY_HEADERS, its
 * HSTS max-age) and the start's hand-over of the document's hooks
 * (ig_hooks_start): what the start runs, kept in .text (net/cold.ld), apart
 * from the runs of hooks.c that only an answer faults in. */
#include "hooks.h"

struct hooks_settings_values {
	bool security_headers;
	int64_t hsts_max_age;
};
static struct hooks_settings_values hooks_values;
static const struct hooks_settings_values hooks_defaults = { .hsts_max_age = 31536000 };

static const struct ig_option hooks_rows[] = {
	{ "INGOT_SECURITY_HEADERS", IG_OPT_BOOL, &hooks_values.security_headers, 0, 0,
	  IG_HELP("X-Content-Type-Options: nosniff on every response, Strict-Transport-Security on TLS ones") },
	{ "INGOT_HSTS_MAX_AGE", IG_OPT_INT, &hooks_values.hsts_max_age, 0, 2147483647,
	  IG_HELP("Strict-Transport-Security's max-age, seconds (0: browsers forget the host's HSTS)") },
};

__attribute__((cold)) static const char *check_hooks(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	ig_security_headers_on = hooks_values.security_headers;
	if (ig_security_headers_on) {
		memcpy(ig_hsts_value, "max-age=", 8);
		ig_hsts_value[8 + ig_fmt_i64(ig_hsts_value + 8, hooks_values.hsts_max_age)] = 0;
	}
	ig_hooks_on = ig_security_headers_on || ig_hooks_root;
	return NULL;
}

__attribute__((cold)) void ig_hooks_start(const struct ig_app *app)
{
	ig_hooks_root = app->hooks;
	ig_hooks_on = ig_security_headers_on || ig_hooks_root;
}

const struct ig_settings ig_hooks_settings = {
	.part = "security headers", .opts = hooks_rows, .count = IG_COUNTOF(hooks_rows), .check = check_hooks,
	.values = &hooks_values, .defaults = &hooks_defaults, .size = sizeof hooks_values,
};
