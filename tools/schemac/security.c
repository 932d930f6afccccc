/* The document's security into the model: components/securitySchemes
 * (http bearer, http basic, apiKey in a header, query or cookie; oauth2
 * and openIdConnect as bearer JWTs; mutualTLS: the TLS client
 * certificate the listener verified against INGOT_TLS_CLIENT_CA), the root's security and each
 * operation's override, with OpenAPI's semantics (a list of alternatives,
 * each an object whose schemes must all pass; [] opens a route), and the
 * root's x-ingot-principal (the component schema the principal's data is),
 * and a stream's x-ingot-access-token-query. emit_router.c writes the tables the runtime's net/api/security.c reads. */
#include "model.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct sc_keyword scheme_keys[] = {
	{ "type", NULL }, { "description", NULL }, { "scheme", NULL }, { "bearerFormat", NULL },
	{ "name", NULL }, { "in", NULL }, { "flows", NULL }, { "openIdConnectUrl", NULL },
	{ NULL, NULL },
};

static const char *const flow_names[] = { "implicit", "password", "clientCredentials", "authorizationCode" };

/* An oauth2 scheme's flows: each a known flow with a scopes object, whose
 * names are collected (the runtime checks them as a token's scopes). */
static void parse_flows(struct sc_model *m, struct sc_scheme *s, const cJSON *flows, const char *ptr)
{
	char *fp = sc_ptr_key(ptr, "flows");
	if (!cJSON_IsObject(flows) || !flows->child) {
		sc_error(m, fp, "an oauth2 scheme needs flows: an object with at least one flow");
		free(fp);
		return;
	}
	for (const cJSON *f = flows->child; f; f = f->next) {
		char *p = sc_ptr_key(fp, f->string);
		bool known = false;
		for (size_t i = 0; i < sizeof flow_names / sizeof flow_names[0]; i++)
			known |= strcmp(f->string, flow_names[i]) == 0;
		const cJSON *scopes = sc_get(f, "scopes");
		if (!known)
			sc_error(m, p, "unknown oauth2 flow \"%s\" (implicit, password, clientCredentials, authorizationCode)",
				 f->string);
		else if (!cJSON_IsObject(f) || !cJSON_IsObject(scopes))
			sc_error(m, p, "an oauth2 flow must be an object with a scopes object");
		else
			for (const cJSON *sc = scopes->child; sc; sc = sc->next)
				SC_APPEND(s->scopes, s->nscopes, sc_strdup(sc->string));
		free(p);
	}
	free(fp);
}

static bool scheme_declares(const struct sc_scheme *s, const char *scope)
{
	for (size_t i = 0; i < s->nscopes; i++)
		if (strcmp(s->scopes[i], scope) == 0)
			return true;
	return false;
}

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
	} else if (strcmp(type, "oauth2") == 0) {
		/* Its tokens are bearer JWTs, verified with the keys of
		   INGOT_JWKS_FILE or INGOT_JWKS_URL; the flows' scopes are what
		   requirements may name. */
		s->type = SC_SEC_BEARER;
		s->oauth2 = true;
		parse_flows(m, s, sc_get(j, "flows"), ptr);
	} else if (strcmp(type, "openIdConnect") == 0) {
		/* Bearer JWTs whose keys the runtime finds through the discovery
		   document (its jwks_uri) unless a setting names them. */
		s->type = SC_SEC_BEARER;
		s->oidc_url = sc_get_string(m, j, ptr, "openIdConnectUrl", true);
		if (s->oidc_url && strncmp(s->oidc_url, "https://", 8) != 0 && strncmp(s->oidc_url, "http://", 7) != 0)
			sc_error(m, ptr, "openIdConnectUrl \"%s\" is not an http(s) URL", s->oidc_url);
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
					if (use.scheme && use.scheme->oauth2 && !scheme_declares(use.scheme, s->valuestring))
						sc_error(m, up, "scope \"%s\" is not declared by the oauth2 scheme's flows",
							 s->valuestring);
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

/* x-ingot-principal: {"$ref": "#/components/schemas/<Name>"}, the one
 * schema every scheme's principal fills (the auth handler's struct, a
 * JWT's claims decoded), as Encore's auth data is one type per service. */
static void parse_principal(struct sc_model *m, const cJSON *v)
{
	static const char prefix[] = "#/components/schemas/";
	const cJSON *ref = sc_get(v, "$ref");
	if (!cJSON_IsObject(v) || !cJSON_IsString(ref) || cJSON_GetArraySize(v) != 1 ||
	    strncmp(ref->valuestring, prefix, sizeof prefix - 1) != 0) {
		sc_error(m, "/x-ingot-principal", "x-ingot-principal must be {\"$ref\": \"#/components/schemas/<Name>\"}");
		return;
	}
	const char *name = ref->valuestring + sizeof prefix - 1;
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->component, name) == 0)
			m->principal = m->components[i];
	if (!m->principal)
		sc_error(m, "/x-ingot-principal/$ref", "\"$ref\" to \"%s\": there is no \"%s\" in components/schemas",
			 ref->valuestring, name);
}

void sc_check_principal(struct sc_model *m)
{
	if (!m->principal)
		return;
	const struct sc_schema *r = sc_resolve(m->principal);
	if (r->kind != SC_OBJECT || r->nullable)
		sc_error(m, "/x-ingot-principal/$ref",
			 "the principal's schema \"%s\" must be a typed object (\"type\": \"object\", not nullable, "
			 "no anyOf/oneOf): its struct is the principal's data",
			 m->principal->component);
}

/* A browser's EventSource and WebSocket cannot send Authorization, so a
 * stream may take its bearer token from ?access_token= (RFC 6750 2.3).
 * Nothing else may: a token in a URL is one that proxies and histories
 * keep. */
void sc_check_query_tokens(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_op *op = m->ops[i];
		if (!op->query_token_ptr)
			continue;
		bool bearer = false;
		for (size_t a = 0; op->security && a < op->security->nalts; a++)
			for (size_t u = 0; u < op->security->alts[a].nuses; u++)
				bearer |= op->security->alts[a].uses[u].scheme->type == SC_SEC_BEARER;
		if (!sc_op_is_stream(op))
			sc_error(m, op->query_token_ptr,
				 "x-ingot-access-token-query is for a stream (a text/event-stream response or "
				 "x-ingot-websocket), which a browser opens without Authorization; %s %s is not one",
				 op->method, op->path->tmpl);
		else if (!bearer)
			sc_error(m, op->query_token_ptr,
				 "x-ingot-access-token-query needs a bearer token in the operation's security (an http "
				 "bearer, oauth2 or openIdConnect scheme): the query carries that token");
	}
}

void sc_parse_security(struct sc_model *m, const cJSON *doc)
{
	if (sc_get(doc, "x-ingot-principal"))
		parse_principal(m, sc_get(doc, "x-ingot-principal"));
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
	/* One key set per service: the runtime fetches one discovery
	   document. */
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_security *sec = m->ops[i]->security;
		for (size_t a = 0; sec && a < sec->nalts; a++)
			for (size_t u = 0; u < sec->alts[a].nuses; u++) {
				const struct sc_scheme *s = sec->alts[a].uses[u].scheme;
				m->bearer_used |= s->type == SC_SEC_BEARER;
				m->handler_used |= s->type == SC_SEC_API_KEY || s->type == SC_SEC_BASIC;
				if (!s->oidc_url || (m->discovery_url && strcmp(m->discovery_url, s->oidc_url) == 0))
					continue;
				if (m->discovery_url) {
					char *p = sc_ptr_key("/components/securitySchemes", s->name);
					sc_error(m, p, "a second openIdConnectUrl: the operations' openIdConnect schemes must share one (the service has one key set)");
					free(p);
				} else {
					m->discovery_url = s->oidc_url;
				}
			}
	}
}
