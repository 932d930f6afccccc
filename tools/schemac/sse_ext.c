/* Server-Sent Events in the document: a 200 response whose content is
 * text/event-stream, with its event schema under the media type as
 * OpenAPI 3.2's itemSchema or (3.1) x-ingot-event, a $ref to a typed
 * object component. The operation becomes a stream (include/ingot/sse.h);
 * api.h gets its typed send, ig_sse_send_<operationId>, which api.c
 * encodes with the component's writer (emit_encode.c). */
#include "emit.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UNSUPPORTED "(not supported by schemac)"

static const struct sc_keyword stream_keys[] = {
	{ "schema", NULL }, { "itemSchema", NULL }, { "example", NULL }, { "examples", NULL },
	{ "encoding", "(encoding is for multipart and form bodies, which are " UNSUPPORTED ")" },
	{ NULL, NULL },
};

bool sc_is_event_stream(const char *type)
{
	size_t n = strcspn(type, "; \t");
	return n == 17 && strncasecmp(type, "text/event-stream", n) == 0;
}

struct sc_schema *sc_parse_event_stream(struct sc_model *m, const cJSON *media, const char *pm, int status)
{
	sc_check_keys(m, media, pm, stream_keys);
	if (status != 200) {
		sc_error(m, pm, "text/event-stream is a 200 response's (a stream answers 200)");
		return NULL;
	}
	const cJSON *item = sc_get(media, "itemSchema"), *ext = sc_get(media, "x-ingot-event");
	const char *key = item ? "itemSchema" : "x-ingot-event";
	char *ep = sc_ptr_key(pm, key);
	const cJSON *j = item ? item : ext;
	struct sc_schema *event = NULL;
	if (item && ext) {
		sc_error(m, pm, "an event schema is given once: itemSchema (OpenAPI 3.2) or x-ingot-event, not both");
	} else if (!j) {
		sc_error(m, pm, "a text/event-stream response needs its event schema: \"itemSchema\" (OpenAPI 3.2) or "
				"\"x-ingot-event\", {\"$ref\": \"#/components/schemas/<Name>\"}");
	} else {
		event = sc_component_ref(m, j, ep, "an event schema");
	}
	free(ep);
	return event;
}

void sc_check_events(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_op *op = m->ops[i];
		for (size_t k = 0; k < op->nresponses; k++) {
			const struct sc_response *r = &op->responses[k];
			if (!r->event)
				continue;
			const struct sc_schema *s = sc_resolve(r->event);
			if (s->kind != SC_OBJECT || s->nullable)
				sc_error(m, r->event_ptr, "the event schema \"%s\" must be a typed object (\"type\": "
						  "\"object\", not nullable, no anyOf/oneOf): its struct is what is sent",
					 r->event->component);
		}
	}
}

const struct sc_schema *sc_op_event(const struct sc_op *op)
{
	for (size_t k = 0; k < op->nresponses; k++)
		if (op->responses[k].event)
			return op->responses[k].event;
	return NULL;
}

bool sc_has_streams(const struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++)
		if (sc_op_event(m->ops[i]))
			return true;
	return false;
}

/* The typed send's declaration for op (whose event e is), after attr. */
static void send_signature(struct sc_out *o, const char *attr, const struct sc_op *op, const struct sc_schema *e,
			   const char *end)
{
	char *t = c_type(e);
	out_line(o, "%s enum ig_sse_result ig_sse_send_%s(ig_sse *s, const %s *ev, const char *event, const char *id)%s",
		 attr, op->id, t, end);
	free(t);
}

void emit_sse_prototypes(struct sc_model *m, struct sc_out *h)
{
	if (!sc_has_streams(m))
		return;
	out_line(h, "/* text/event-stream operations: a typed send per stream (include/ingot/sse.h,");
	out_line(h, " * which says where it may wait). The event is encoded as JSON into one");
	out_line(h, " * event's data; event (the `event:` field) and id (`id:`, what a client");
	out_line(h, " * reconnects with as Last-Event-ID) may be NULL. Returns as ig_sse_send. */");
	for (size_t i = 0; i < m->nops; i++)
		if (sc_op_event(m->ops[i]))
			send_signature(h, "IG_MUST_USE", m->ops[i], sc_op_event(m->ops[i]), ";");
	out_blank(h);
}

void emit_sse_sends(struct sc_model *m, struct sc_out *c)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_schema *e = sc_op_event(m->ops[i]);
		if (!e)
			continue;
		send_signature(c, "IG_STREAM_CODE", m->ops[i], e, "");
		out_open(c, "{");
		out_line(c, "ig_wbuf *w;");
		out_line(c, "enum ig_sse_result r = ig_sse_buffer(s, &w);");
		out_line(c, "if (r != IG_SSE_OK)");
		out_line(c, "\treturn r;");
		out_line(c, "write_%s(w, ev);", sc_resolve(e)->cname);
		out_line(c, "return ig_sse_send_buffered(s, event, id);");
		out_close(c, "}");
		out_blank(c);
	}
}
