/* An ordered topic's partition on NATS (nats_partition.h): the ordering
 * key's value read from the message's JSON, hashed. Pure but for the
 * arena; no client, no loop. */
#include "nats_partition.h"
#include "ingot/json_read.h"

#include <string.h>

/* The member's value in json: a string's decoded bytes (so "a" and "\u0061"
 * are one key), else the value's JSON text; empty when there is none. */
static ig_str key_value(ig_arena *a, const char *member, ig_str json)
{
	ig_json_reader r;
	ig_jr_init(&r, json.ptr, json.len, a, 64);
	size_t mlen = strlen(member);
	ig_str key, v = { 0 };
	if (!ig_jr_object_begin(&r))
		return v;
	while (ig_jr_object_next_key(&r, &key)) {
		if (key.len != mlen || memcmp(key.ptr, member, mlen) != 0) {
			if (!ig_jr_skip(&r))
				break;
			continue;
		}
		if (ig_jr_peek(&r) == IG_JN_STRING) {
			if (!ig_jr_string(&r, &v))
				v = (ig_str){ 0 };
			break;
		}
		const char *from = r.p;
		while (from < r.end && (*from == ' ' || *from == '\t' || *from == '\n' || *from == '\r'))
			from++;
		if (ig_jr_skip(&r))
			v = (ig_str){ from, (size_t)(r.p - from) };
		break;
	}
	return v;
}

uint32_t ig_pubsub_nats_partition(ig_arena *a, const char *member, ig_str json)
{
	ig_str v = key_value(a, member, json);
	if (!v.len)
		return 0;
	uint32_t h = 2166136261u; /* FNV-1a: stable across processes and builds */
	for (size_t i = 0; i < v.len; i++)
		h = (h ^ (uint8_t)v.ptr[i]) * 16777619u;
	return h % IG_NATS_PARTITIONS;
}
