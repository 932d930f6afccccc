/* The document's root extension x-ingot-cors: the CORS policy the runtime
 * starts with (net/http/cors_settings.c), each field overridden by its
 * INGOT_CORS_* setting. Read into the model here; emit_app.c writes it
 * into ig_api_app. The origins' own syntax is judged here too, so that a
 * bad one fails the build rather than the start. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_keyword cors_keys[] = {
	{ "origins", NULL }, { "credentials", NULL }, { "exposeHeaders", NULL }, { "maxAge", NULL },
	{ NULL, NULL },
};

/* An origin as INGOT_CORS_ORIGINS takes it: *, or scheme://host[:port]
 * whose host may start with the one label pattern "*.". */
static bool origin_ok(const char *s)
{
	if (strcmp(s, "*") == 0)
		return true;
	const char *sep = strstr(s, "://");
	if (!sep || sep == s || !sep[3] || strchr(s, ',') || strchr(sep + 3, '/') || strchr(s, ' '))
		return false;
	const char *star = strchr(s, '*');
	return !star || (star == sep + 3 && star[1] == '.' && star[2] && !strchr(star + 1, '*'));
}

/* A non-empty array of strings, joined with ", " (NULL, and an error,
 * otherwise); each passes ok when it is given. */
static char *joined(struct sc_model *m, const cJSON *v, const char *ptr, bool (*ok)(const char *), const char *what)
{
	if (!cJSON_IsArray(v) || !v->child) {
		sc_error(m, ptr, "must be a non-empty array of strings");
		return NULL;
	}
	size_t len = 1;
	for (const cJSON *it = v->child; it; it = it->next)
		len += (cJSON_IsString(it) ? strlen(it->valuestring) : 0) + 2;
	char *out = sc_xmalloc(len);
	out[0] = 0;
	int i = 0;
	for (const cJSON *it = v->child; it; it = it->next, i++) {
		char *p = sc_ptr_index(ptr, i);
		if (!cJSON_IsString(it) || !it->valuestring[0] || strchr(it->valuestring, ','))
			sc_error(m, p, "must be a non-empty string without a comma");
		else if (ok && !ok(it->valuestring))
			sc_error(m, p, "\"%s\" is not %s", it->valuestring, what);
		else {
			if (out[0])
				strcat(out, ", ");
			strcat(out, it->valuestring);
		}
		free(p);
	}
	return out;
}

void sc_parse_cors(struct sc_model *m, const cJSON *doc)
{
	const cJSON *c = sc_get(doc, "x-ingot-cors");
	if (!c)
		return;
	if (!cJSON_IsObject(c)) {
		sc_error(m, "/x-ingot-cors", "\"x-ingot-cors\" must be an object");
		return;
	}
	sc_check_keys(m, c, "/x-ingot-cors", cors_keys);
	m->cors.present = true;
	const cJSON *v = sc_get(c, "origins");
	if (!v)
		sc_error(m, "/x-ingot-cors", "missing \"origins\"");
	else
		m->cors.origins = joined(m, v, "/x-ingot-cors/origins", origin_ok,
					 "an origin (scheme://host[:port], https://*.example.com or *)");
	if ((v = sc_get(c, "exposeHeaders")))
		m->cors.expose_headers = joined(m, v, "/x-ingot-cors/exposeHeaders", NULL, NULL);
	if ((v = sc_get(c, "credentials"))) {
		if (!cJSON_IsBool(v))
			sc_error(m, "/x-ingot-cors/credentials", "must be true or false");
		m->cors.credentials = cJSON_IsTrue(v);
	}
	if ((v = sc_get(c, "maxAge"))) {
		if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble || v->valuedouble < 0 ||
		    v->valuedouble > 86400)
			sc_error(m, "/x-ingot-cors/maxAge", "must be an integer of seconds from 0 to 86400");
		else
			m->cors.max_age = (long)v->valuedouble;
	}
}
