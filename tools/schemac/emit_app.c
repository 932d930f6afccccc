/* Emits the end of the generated source: the document itself (minified by
 * cJSON at build time, packed with ig_lz (tools/schemac/lz_pack.c),
 * embedded as a C string literal and served unpacked at GET /openapi.json
 * by net/api/document.c) and the struct ig_app the runtime serves
 * (ig_api_app; main() is the runtime's, net/api/main.c). */
#include "emit.h"
#include "kernel/runtime/lz.h"
#include "tools/schemac/lz_pack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input bytes per source line: at most 4 source characters each (octal
 * escapes), so lines stay readable without splitting an escape. */
#define CHUNK 64

void emit_app(struct sc_model *m, struct sc_out *c)
{
	char *json = cJSON_PrintUnformatted(m->doc);
	if (!json) {
		sc_error(m, "", "cJSON could not print the document");
		return;
	}
	size_t len = strlen(json);
	/* Packed: a JSON document is mostly repeats (keys, "$ref"s, "type"s),
	   about a fourth of its bytes remain. Unpacked here once, so that a
	   packing bug fails the build, not a request. */
	unsigned char *packed = NULL, *check = malloc(len + 1);
	size_t plen = sc_lz_pack((const unsigned char *)json, len, &packed);
	if (plen == (size_t)-1 || !check || ig_lz_unpack(check, len, packed, plen) != len ||
	    memcmp(check, json, len) != 0) {
		sc_error(m, "", "the document did not pack and unpack to itself");
		free(packed);
		free(check);
		cJSON_free(json);
		return;
	}
	free(check);
	char *file = c_comment(m->file);
	out_line(c, "/* ---- the document, served at GET /openapi.json ---- */");
	out_blank(c);
	out_line(c, "/* %s, minified (%zu bytes), packed (kernel/runtime/lz.h: %zu bytes). */", file, len, plen);
	out_open(c, "static const unsigned char ig_openapi_packed[] =");
	for (size_t off = 0; off < plen; off += CHUNK) {
		size_t n = plen - off < CHUNK ? plen - off : CHUNK;
		char *lit = c_string((const char *)packed + off, n);
		out_line(c, "%s%s", lit, off + n == plen ? ";" : "");
		free(lit);
	}
	if (!plen)
		out_line(c, "\"\";");
	c->indent--;
	out_blank(c);
	out_line(c, "static void ig_serve_openapi(ig_ctx *ctx)");
	out_line(c, "{");
	out_line(c, "\tig_serve_packed(ctx, ig_openapi_packed, sizeof ig_openapi_packed - 1, %zu);", len);
	out_line(c, "}");
	out_blank(c);
	free(packed);

	out_line(c, "/* The path templates, by the number ig_route gives ig_set_route. */");
	out_open(c, "static const char *const ig_route_templates[] = {");
	for (size_t i = 0; i < m->npaths; i++) {
		char *t = c_str(m->paths[i]->tmpl);
		out_line(c, "%s,", t);
		free(t);
	}
	out_close(c, "};");
	out_blank(c);

	char *title = c_str(m->title), *version = c_str(m->version);
	if (m->cors.present) {
		char *origins = c_str(m->cors.origins ? m->cors.origins : "");
		char *expose = c_str(m->cors.expose_headers ? m->cors.expose_headers : "");
		out_line(c, "/* x-ingot-cors: CORS's defaults; each INGOT_CORS_* setting given overrides its field. */");
		out_open(c, "static const struct ig_app_cors ig_api_cors = {");
		out_line(c, ".origins = %s,", origins);
		out_line(c, ".expose_headers = %s,", expose);
		out_line(c, ".max_age = %ld,", m->cors.max_age);
		out_line(c, ".credentials = %s,", m->cors.credentials ? "true" : "false");
		out_close(c, "};");
		out_blank(c);
		free(origins);
		free(expose);
	}
	if (m->bearer_used) {
		char *url = m->discovery_url ? c_str(m->discovery_url) : sc_strdup("NULL");
		out_line(c, "/* Bearer JWTs: their keys may be fetched (INGOT_JWKS_URL, OpenID Connect discovery). */");
		out_open(c, "static const struct ig_app_jwt ig_api_jwt = {");
		out_line(c, ".discovery_url = %s,", url);
		out_line(c, ".prepare = ig_jwks_remote_prepare,");
		out_line(c, ".core_start = ig_jwks_remote_core_start,");
		out_close(c, "};");
		out_blank(c);
		free(url);
	}
	emit_app_hooks(m, c);
	bool streams_bodies = false;
	for (size_t i = 0; i < m->nops; i++)
		streams_bodies |= m->ops[i]->stream_body_max != 0;
	if (streams_bodies) {
		out_line(c, "/* x-ingot-stream-body: the operations whose handler reads its request");
		out_line(c, " * body as it arrives, and their maxBytes; asked at a request's head. */");
		out_line(c, "static uint64_t ig_stream_body_limit(ig_str method, ig_str path)");
		out_open(c, "{");
		for (size_t i = 0; i < m->nops; i++) {
			const struct sc_op *op = m->ops[i];
			if (!op->stream_body_max)
				continue;
			char *t = c_str(op->path->tmpl);
			out_line(c, "if (ig_str_eq(method, \"%s\", %zu) && ig_path_fits(path, %s))", op->method,
				 strlen(op->method), t);
			out_line(c, "\treturn %" PRIu64 "u;", op->stream_body_max);
			free(t);
		}
		out_line(c, "return 0;");
		out_close(c, "}");
		out_blank(c);
	}
	out_line(c, "/* The app the runtime serves (net/api/main.c hands it to ig_main). */");
	out_open(c, "const struct ig_app ig_api_app = {");
	out_line(c, ".name = %s,", title);
	out_line(c, ".version = %s,", version);
	out_line(c, ".route = ig_route,");
	out_line(c, ".routes = ig_route_templates,");
	out_line(c, ".route_count = %zu,", m->npaths);
	/* The document is served packed (ig_serve_openapi): no unpacked copy
	   for openapi_json to point at. */
	out_line(c, ".openapi_json = NULL,");
	out_line(c, ".openapi_len = %zu,", len);
	if (m->cors.present)
		out_line(c, ".cors = &ig_api_cors,");
	if (m->bearer_used)
		out_line(c, ".jwt = &ig_api_jwt,");
	bool secured = false;
	for (size_t i = 0; i < m->nops; i++)
		secured |= m->ops[i]->security != NULL;
	if (sc_rate_limits_need_peer(m) || secured)
		out_line(c, ".peer_addresses = true,");
	bool client_certs = false;
	for (size_t i = 0; i < m->nops; i++)
		for (size_t a = 0; m->ops[i]->security && a < m->ops[i]->security->nalts; a++)
			for (size_t u = 0; u < m->ops[i]->security->alts[a].nuses; u++)
				client_certs |= m->ops[i]->security->alts[a].uses[u].scheme->type == SC_SEC_MUTUAL_TLS;
	if (client_certs)
		out_line(c, ".client_certs = true,");
	if (sc_has_hooks(m))
		out_line(c, ".hooks = &ig_api_hooks,");
	if (streams_bodies)
		out_line(c, ".stream_body_limit = ig_stream_body_limit,");
	out_close(c, "};");
	free(title);
	free(version);
	free(file);
	cJSON_free(json);
}
