/* The document's security into the model: components/securitySchemes
 * (http bearer, http basic, apiKey in a header, query or cookie; oauth2
 * and openIdConnect as bearer JWTs; mutualTLS: the TLS client
 * certificate the listener verified against INGOT_TLS_CLIENT_CA), the root's security and each
 * operation's override, with OpenAPI's semantics (a list of alternatives,
 * each an object whose schemes must all pass; [] opens a route).
 * emit_router.c writes the tables the runtime's net/api/security.c reads. */
#include "model.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct sc_keyword scheme_keys[] = {
	{ "type", NULL }, { "description", NULL }, { "scheme", NULL }, { "bearerFormat", NULL },
	{ "name", NULL }, { "in", NULL }, { "flows", NULL }, { "openIdConnectUrl", NULL },
	{ NULL, NULL },
};

static void parse_scheme(struct sc_model *m, const char *name, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a security scheme must be an object");
		return;
	}
	sc_check_keys(m, j, ptr, scheme_keys);
	struct sc_scheme *s = sc_xmalloc(sizeof *s);
	s->name = sc_strdup(name);
	char *type = sc_get_string(m, j, ptr, "type", true);
	if (!type)
		return;
	if (strcmp(type, "http") == 0) {
		char *scheme = sc_get_string(m, j, ptr, "scheme", true);
		char *format = sc_get_string(m, j, ptr, "bearerFormat", false);
		if (scheme && strcasecmp(scheme, "bearer") == 0) {
			s->type = SC_SEC_BEARER;
			if (format && strcasecmp(format, "JWT") != 0)
				sc_error(m, ptr, "bearerFormat \"%s\" is not supported: bearer tokens are JWTs", format);
		} else if (scheme && strcasecmp(scheme, "basic") == 0) {
			s->type = SC_SEC_BASIC;
		} else if (scheme) {
			sc_error(m, ptr, "http scheme \"%s\" is not supported (bearer and basic are)", scheme);
		}
		free(scheme);
		free(format);
	} else if (strcmp(type, "apiKey") == 0) {
		s->type = SC_SEC_API_KEY;
		s->param = sc_get_string(m, j, ptr, "name", true);
		char *in = sc_get_string(m, j, ptr, "in", true);
		if (in && strcmp(in, "header") == 0)
			s->in = 0;
		else if (in && strcmp(in, "query") == 0)
			s->in = 1;
		else if (in && strcmp(in, "cookie") == 0)
			s->in = 2;
		else if (in)
			sc_error(m, ptr, "apiKey \"in\" must be header, query or cookie, not \"%s\"", in);
		if (s->param && (!s->param[0] || strpbrk(s->param, " \t\r\n\",;=")))
			sc_error(m, ptr, "apiKey name \"%s\" is not a valid field name", s->param);
		free(in);
	} else if (strcmp(type, "oauth2") == 0 || strcmp(type, "openIdConnect") == 0) {
		/* Their tokens are bearer JWTs checked against INGOT_JWKS_FILE;
		   the flows' scopes are what requirements name. */
		s->type = SC_SEC_BEARER;
	} else if (strcmp(type, "mutualTLS") == 0) {
		s->type = SC_SEC_MUTUAL_TLS;
	} else {
		sc_error(m, ptr, "unknown security scheme type \"%s\" (http, apiKey, oauth2, openIdConnect, mutualTLS)", type);
	}
	free(type);
	s->index = m->nschemes;
	SC_APPEND(m->schemes, m->nschemes, s);
}

static struct sc_scheme *find_scheme(struct sc_model *m, const char *name)
{
	for (size_t i = 0; i < m->nschemes; i++)
		if (strcmp(m->schemes[i]->name, name) == 0)
			return m->schemes[i];
	return NULL;
}

/* A security array: NULL for [] (open), else its alternatives. */
static struct sc_security *parse_requirements(struct sc_model *m, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsArray(j)) {
		sc_error(m, ptr, "security must be an array of requirement objects");
		return NULL;
	}
	if (!j->child)
		return NULL;
	struct sc_security *sec = sc_xmalloc(sizeof *sec);
	int i = 0;
	for (const cJSON *req = j->child; req; req = req->next, i++) {
		char *rp = sc_ptr_index(ptr, i);
		struct sc_sec_alt alt = { 0 };
		if (!cJSON_IsObject(req)) {
			sc_error(m, rp, "a security requirement must be an object");
			free(rp);
			continue;
		}
		for (const cJSON *u = req->child; u; u = u->next) {
			char *up = sc_ptr_key(rp, u->string);
			struct sc_sec_use use = { .scheme = find_scheme(m, u->string) };
			if (!use.scheme)
				sc_error(m, up, "security scheme \"%s\" is not in components/securitySchemes", u->string);
			if (!cJSON_IsArray(u))
				sc_error(m, up, "a requirement's scopes must be an array of strings");
			else
				for (const cJSON *s = u->child; s; s = s->next) {
					if (!cJSON_IsString(s) || !s->valuestring[0] || strpbrk(s->valuestring, " \"\\")) {
						sc_error(m, up, "a scope must be a non-empty string without spaces or quotes");
						continue;
					}
					SC_APPEND(use.scopes, use.nscopes, sc_strdup(s->valuestring));
				}
			if (use.scheme)
				SC_APPEND(alt.uses, alt.nuses, use);
			free(up);
		}
		free(rp);
		/* {} among the alternatives: anyone passes, so the route is open. */
		if (!alt.nuses)
			return NULL;
		SC_APPEND(sec->alts, sec->nalts, alt);
	}
	return sec->nalts ? sec : NULL;
}

void sc_parse_security(struct sc_model *m, const cJSON *doc)
{
	const cJSON *schemes = sc_get(sc_get(doc, "components"), "securitySchemes");
	if (schemes) {
		if (!cJSON_IsObject(schemes))
			sc_error(m, "/components/securitySchemes", "securitySchemes must be an object");
		else
			for (const cJSON *it = schemes->child; it; it = it->next) {
				char *p = sc_ptr_key("/components/securitySchemes", it->string);
				parse_scheme(m, it->string, it, p);
				free(p);
			}
	}
	const cJSON *global = sc_get(doc, "security");
	struct sc_security *dflt = global ? parse_requirements(m, global, "/security") : NULL;
	for (size_t i = 0; i < m->nops; i++) {
		struct sc_op *op = m->ops[i];
		if (op->security_json) {
			char *p = sc_ptr_key(op->ptr, "security");
			op->security = parse_requirements(m, op->security_json, p);
			free(p);
		} else {
			op->security = dflt;
		}
	}
}
