/* Streamed request bodies in the document: x-ingot-stream-body,
 * {"maxBytes": N}, on an operation whose request body is bytes (any media
 * type but JSON's: JSON bodies stay whole and validated). The limit goes
 * to the operation's descriptor (net/api/operation.h); the in struct gets
 * no body, which the handler reads itself. Nothing about the bytes is
 * validated, so a media type's schema can only say it is a string. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* 2^53: the largest count a JSON number holds exactly. */
#define MAX_STREAM_BYTES 9007199254740992.0

static const struct sc_keyword stream_keys[] = {
	{ "maxBytes", NULL }, { NULL, NULL },
};

static const struct sc_keyword bytes_media_keys[] = {
	{ "schema", NULL }, { "example", NULL }, { "examples", NULL },
	{ "encoding", "(encoding is for multipart and form bodies, which are not supported by schemac)" },
	{ NULL, NULL },
};

void sc_parse_stream_body(struct sc_model *m, struct sc_op *op, const cJSON *j, const char *ptr)
{
	op->stream_body_ptr = sc_strdup(ptr);
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "x-ingot-stream-body is an object: {\"maxBytes\": N}, the most bytes a body may have");
		return;
	}
	sc_check_keys(m, j, ptr, stream_keys);
	const cJSON *max = sc_get(j, "maxBytes");
	char *p = sc_ptr_key(ptr, "maxBytes");
	if (!max)
		sc_error(m, ptr, "x-ingot-stream-body needs \"maxBytes\": the most bytes a body may have");
	else if (!cJSON_IsNumber(max) || max->valuedouble < 1 || max->valuedouble > MAX_STREAM_BYTES ||
		 max->valuedouble != (double)(uint64_t)max->valuedouble)
		sc_error(m, p, "maxBytes is a whole number of bytes, 1 to 2^53");
	else
		op->stream_body_max = (uint64_t)max->valuedouble;
	free(p);
}

bool sc_is_json_media(const char *type)
{
	size_t n = strcspn(type, "; \t");
	return (n == 16 && strncasecmp(type, "application/json", n) == 0) ||
	       (n > 5 && strncasecmp(type + n - 5, "+json", 5) == 0);
}

void sc_parse_stream_content(struct sc_model *m, struct sc_op *op, const cJSON *content, const char *ptr)
{
	char *pc = sc_ptr_key(ptr, "content");
	if (!content->child)
		sc_error(m, pc, "a streamed body needs its media type (application/octet-stream, for one)");
	for (const cJSON *it = content->child; it; it = it->next) {
		char *pm = sc_ptr_key(pc, it->string);
		if (sc_is_json_media(it->string))
			sc_error(m, pm, "a JSON body stays whole and validated: x-ingot-stream-body (at %s) is for "
					"bytes, such as application/octet-stream", op->stream_body_ptr);
		else if (!cJSON_IsObject(it))
			sc_error(m, pm, "a media type must be an object");
		else {
			sc_check_keys(m, it, pm, bytes_media_keys);
			sc_check_text_schema(m, it, pm, true);
		}
		free(pm);
	}
	free(pc);
}
