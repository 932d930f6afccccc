/* Emits the end of the generated source: the document itself (minified by
 * cJSON at build time, embedded as a C string literal and served at GET
 * /openapi.json) and the struct ig_app the runtime serves (ig_api_app;
 * main() is the runtime's, net/api/main.c). */
#include "emit.h"

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
	char *file = c_comment(m->file);
	out_line(c, "/* ---- the document, served at GET /openapi.json ---- */");
	out_blank(c);
	out_line(c, "/* %s, minified (%zu bytes). */", file, len);
	out_open(c, "static const char ig_openapi_json[] =");
	for (size_t off = 0; off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? len - off : CHUNK;
		char *lit = c_string(json + off, n);
		out_line(c, "%s%s", lit, off + n == len ? ";" : "");
		free(lit);
	}
	if (!len)
		out_line(c, "\"\";");
	c->indent--;
	out_blank(c);
	out_line(c, "static void ig_serve_openapi(ig_ctx *ctx)");
	out_line(c, "{");
	out_line(c, "\tig_wbuf_put(ig_body(ctx), ig_openapi_json, sizeof ig_openapi_json - 1);");
	out_line(c, "\tig_finish(ctx, 200);");
	out_line(c, "}");
	out_blank(c);

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
	out_line(c, "/* The app the runtime serves (net/api/main.c hands it to ig_main). */");
	out_open(c, "const struct ig_app ig_api_app = {");
	out_line(c, ".name = %s,", title);
	out_line(c, ".version = %s,", version);
	out_line(c, ".route = ig_route,");
	out_line(c, ".routes = ig_route_templates,");
	out_line(c, ".route_count = %zu,", m->npaths);
	out_line(c, ".openapi_json = ig_openapi_json,");
	out_line(c, ".openapi_len = sizeof ig_openapi_json - 1,");
	out_close(c, "};");
	free(title);
	free(version);
	free(file);
	cJSON_free(json);
}
