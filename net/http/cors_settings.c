/* CORS's rows of the settings table (the policy cors.h applies) and their
 * check, which splits the origins once at startup. An empty
 * INGOT_CORS_ORIGINS (the default) leaves CORS off. The start runs this
 * file (it stays in .text, net/cold.ld), never cors.c, whose block only a
 * request faults in. */
#include "cors.h"
#include "net/ascii.h"
#include "ingot/api_hooks.h"
#include "ingot/settings.h"

#include <string.h>

/* The document's policy may replace these before the parse
 * (ig_cors_document); the settings given then override it. */
static struct ig_cors_config cors_defaults = {
	.origins = "",
	.expose_headers = "",
};

void ig_cors_document(const struct ig_app_cors *d)
{
	cors_defaults.origins = d->origins;
	cors_defaults.expose_headers = d->expose_headers;
	cors_defaults.max_age = d->max_age;
	cors_defaults.credentials = d->credentials;
}


const char *ig_cors_parse_origins(struct ig_cors_config *c)
{
	c->any = false;
	c->count = 0;
	const char *p = c->origins, *end = p + strlen(p);
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		ig_str o = ig_ascii_trim_ows(p, comma ? comma : end);
		p = comma ? comma + 1 : end;
		if (!o.len)
			continue;
		if (o.len == 1 && o.ptr[0] == '*') {
			c->any = true;
			continue;
		}
		if (c->count == IG_CORS_MAX_ORIGINS)
			return "INGOT_CORS_ORIGINS: at most 64 origins";
		const char *scheme = memchr(o.ptr, ':', o.len);
		if (!scheme || (size_t)(o.ptr + o.len - scheme) < 4 || memcmp(scheme, "://", 3) != 0)
			return "INGOT_CORS_ORIGINS: an origin is scheme://host[:port] (\"https://app.example.com\"), "
			       "a pattern (\"https://*.example.com\") or *";
		if (o.ptr[o.len - 1] == '/')
			return "INGOT_CORS_ORIGINS: an origin has no path, not even \"/\"";
		struct ig_cors_origin *e = &ig_cors_origins[c->count++];
		const char *star = memchr(o.ptr, '*', o.len);
		if (!star) {
			*e = (struct ig_cors_origin){ .prefix = o };
			continue;
		}
		const char *host = scheme + 3;
		if (star != host || star + 1 == o.ptr + o.len || star[1] != '.' ||
		    memchr(star + 1, '*', (size_t)(o.ptr + o.len - star - 1)))
			return "INGOT_CORS_ORIGINS: a pattern has one '*', as the host's first label "
			       "(\"https://*.example.com\")";
		*e = (struct ig_cors_origin){ .prefix = { o.ptr, (size_t)(star - o.ptr) },
					      .suffix = { star + 1, (size_t)(o.ptr + o.len - star - 1) },
					      .pattern = true };
	}
	return NULL;
}

static const struct ig_option cors_rows[] = {
	{ "INGOT_CORS_ORIGINS", IG_OPT_STR, &ig_cors_config.origins, 0, 0,
	  IG_HELP("origins whose browsers may call the API, comma-separated: exact (https://app.example.com), "
	  "a pattern (https://*.example.com) or *; not set: CORS off (no CORS header, OPTIONS answers 204 + Allow)") },
	{ "INGOT_CORS_CREDENTIALS", IG_OPT_BOOL, &ig_cors_config.credentials, 0, 0,
	  IG_HELP("Access-Control-Allow-Credentials: true (cookies, HTTP auth); the origin is echoed, never *") },
	{ "INGOT_CORS_EXPOSE_HEADERS", IG_OPT_STR, &ig_cors_config.expose_headers, 0, 0,
	  IG_HELP("response headers a page may read, comma-separated (Access-Control-Expose-Headers)") },
	{ "INGOT_CORS_MAX_AGE", IG_OPT_INT, &ig_cors_config.max_age, 0, 86400,
	  IG_HELP("seconds a browser may keep a preflight's answer (Access-Control-Max-Age); 0: not sent") },
};

__attribute__((cold)) static const char *check_cors(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	/* Unset, the usual case: nothing to split, and the split's code (in
	   the cold block, net/cold.ld) is not faulted in. */
	const char *bad = NULL;
	ig_cors_config.any = false;
	ig_cors_config.count = 0;
	if (*ig_cors_config.origins)
		bad = ig_cors_parse_origins(&ig_cors_config);
	/* Copied into answers' heads as given. */
	const char *e = ig_cors_config.expose_headers;
	for (size_t i = 0; !bad && e[i]; i++)
		if (e[i] < ' ' || e[i] > '~' || i >= 1024)
			bad = "INGOT_CORS_EXPOSE_HEADERS: header names, comma-separated, at most 1024 characters";
	ig_cors_on = !bad && (ig_cors_config.any || ig_cors_config.count);
	return bad;
}

const struct ig_settings ig_cors_settings = {
	.part = "CORS", .opts = cors_rows, .count = IG_COUNTOF(cors_rows), .check = check_cors,
	.values = &ig_cors_config, .defaults = &cors_defaults, .size = sizeof ig_cors_config,
};
