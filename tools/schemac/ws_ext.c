/* WebSockets in the document: x-ingot-websocket on a GET operation,
 * {"in": {"$ref": ...}, "out": {"$ref": ...}}, the typed object components
 * each inbound and outbound text message is. api.h gets the operation's
 * upgrade (ig_ws_open_<operationId>), its typed send
 * (ig_ws_send_<operationId>) and the app's message handler's prototype;
 * api.c decodes an inbound message with the component's decoder
 * (emit_body.c) and encodes an outbound one with its writer (emit_encode.c). */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_keyword ws_keys[] = {
	{ "in", NULL }, { "out", NULL }, { NULL, NULL },
};

void sc_parse_websocket(struct sc_model *m, struct sc_op *op, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "x-ingot-websocket is an object: {\"in\": {\"$ref\": \"#/components/schemas/<In>\"}, "
				 "\"out\": {\"$ref\": \"#/components/schemas/<Out>\"}}");
		return;
	}
	sc_check_keys(m, j, ptr, ws_keys);
	if (strcmp(op->method, "GET") != 0) {
		sc_error(m, ptr, "a WebSocket is a GET operation's (the upgrade is a GET), not %s's", op->method);
		return;
	}
	op->ws_ptr = sc_strdup(ptr);
	static const char *const keys[] = { "in", "out" };
	for (int i = 0; i < 2; i++) {
		const cJSON *ref = sc_get(j, keys[i]);
		char *p = sc_ptr_key(ptr, keys[i]);
		struct sc_schema *s = NULL;
		if (!ref)
			sc_error(m, ptr, "x-ingot-websocket needs \"%s\": {\"$ref\": \"#/components/schemas/<Name>\"}, "
					 "the schema of each %s message", keys[i], i ? "outbound" : "inbound");
		else
			s = sc_component_ref(m, ref, p, i ? "an outbound message's schema" : "an inbound message's schema");
		if (i)
			op->ws_out = s;
		else
			op->ws_in = s;
		free(p);
	}
}

void sc_check_websockets(struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_op *op = m->ops[i];
		const struct sc_schema *both[] = { op->ws_in, op->ws_out };
		for (int k = 0; k < 2; k++) {
			if (!both[k])
				continue;
			const struct sc_schema *s = sc_resolve(both[k]);
			if (s->kind != SC_OBJECT || s->nullable) {
				char *p = sc_ptr_key(op->ws_ptr, k ? "out" : "in");
				sc_error(m, p, "the message schema \"%s\" must be a typed object (\"type\": \"object\", not "
					       "nullable, no anyOf/oneOf): its struct is what is %s",
					 both[k]->component, k ? "sent" : "received");
				free(p);
			}
		}
	}
}

bool sc_op_is_websocket(const struct sc_op *op)
{
	return op->ws_in && op->ws_out;
}

bool sc_op_is_stream(const struct sc_op *op)
{
	return sc_op_event(op) || sc_op_is_websocket(op);
}

bool sc_has_websockets(const struct sc_model *m)
{
	for (size_t i = 0; i < m->nops; i++)
		if (sc_op_is_websocket(m->ops[i]))
			return true;
	return false;
}

static void send_signature(struct sc_out *o, const char *attr, const struct sc_op *op, const char *end)
{
	char *t = c_type(op->ws_out);
	out_line(o, "%s enum ig_ws_result ig_ws_send_%s(ig_ws *ws, const %s *msg)%s", attr, op->id, t, end);
	free(t);
}

void emit_ws_prototypes(struct sc_model *m, struct sc_out *h)
{
	if (!sc_has_websockets(m))
		return;
	out_line(h, "/* WebSocket operations (include/ingot/websocket.h). The operation's handler");
	out_line(h, " * upgrades with ig_ws_open_<op> (NULL: the refusal is answered, return");
	out_line(h, " * *status); each inbound text message, decoded and validated, goes to the");
	out_line(h, " * app's <op>_message (one that fails closes the socket with 1008 first),");
	out_line(h, " * on a coroutine in an exchange of its own (ctx): it may wait (ig_sleep, a");
	out_line(h, " * query), and the next message waits for it to return;");
	out_line(h, " * ig_ws_send_<op> sends one typed message (from the socket's own handler");
	out_line(h, " * it waits while the client's window is full; elsewhere IG_WS_FULL). */");
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_op *op = m->ops[i];
		if (!sc_op_is_websocket(op))
			continue;
		char *t = c_type(op->ws_in);
		out_line(h, "IG_MUST_USE ig_ws *ig_ws_open_%s(ig_ctx *ctx, int *status);", op->id);
		send_signature(h, "IG_MUST_USE", op, ";");
		out_line(h, "void %s_message(ig_ctx *ctx, ig_ws *ws, const %s *msg);", op->id, t);
		free(t);
	}
	out_blank(h);
}

void emit_ws_code(struct sc_model *m, struct sc_out *c)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct sc_op *op = m->ops[i];
		if (!sc_op_is_websocket(op))
			continue;
		char *t = c_type(op->ws_in);
		out_line(c, "IG_STREAM_CODE static void ws_message_%s(ig_ctx *ctx, ig_ws *ws, struct ig_json_reader *r, "
			    "bool check)", op->id);
		out_open(c, "{");
		out_line(c, "%s msg;", t);
		out_line(c, "memset(&msg, 0, sizeof msg);");
		out_line(c, "struct ig_dctx dc = { r, { .report = ig_ws_violation, .arg = ws, .arena = r->arena }, %s };",
			 op->validate ? "check" : "false");
		if (!op->validate)
			out_line(c, "(void)check; /* x-ingot-validate: false: types only */");
		out_line(c, "struct ig_dctx *d = &dc;");
		emit_slot_decode(c, op->ws_in, false, "msg", NULL, "NULL");
		out_line(c, "if (ig_ws_decoded(ws, r))");
		out_line(c, "\t%s_message(ctx, ws, &msg);", op->id);
		out_close(c, "}");
		out_blank(c);
		out_line(c, "static const struct ig_ws_type ws_type_%s IG_STREAM_DATA = { .message = ws_message_%s };",
			 op->id, op->id);
		out_blank(c);
		out_line(c, "IG_STREAM_CODE ig_ws *ig_ws_open_%s(ig_ctx *ctx, int *status)", op->id);
		out_open(c, "{");
		out_line(c, "return ig_ws_open(ctx, &ws_type_%s, status);", op->id);
		out_close(c, "}");
		out_blank(c);
		send_signature(c, "IG_STREAM_CODE", op, "");
		out_open(c, "{");
		out_line(c, "ig_wbuf *w;");
		out_line(c, "enum ig_ws_result r = ig_ws_buffer(ws, &w);");
		out_line(c, "if (r != IG_WS_OK)");
		out_line(c, "\treturn r;");
		out_line(c, "write_%s(w, msg);", sc_resolve(op->ws_out)->cname);
		out_line(c, "return ig_ws_send_buffered(ws);");
		out_close(c, "}");
		out_blank(c);
		free(t);
	}
}
