/* Parsed header fields (kernel/runtime/ingot.h's ig_header, what the
 * request and the response parser both fill) as one line of text, for a
 * test's failure message. */
#ifndef TESTS_UNIT_FIELDS_H
#define TESTS_UNIT_FIELDS_H

#include <stdio.h>

#include "net/http/parser.h"

/* "name=value|name=value", cut at cap. */
static inline void fields_dump(const ig_header *fields, size_t count, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < count && o < cap; i++) {
		const ig_header *f = &fields[i];
		o += (size_t)snprintf(out + o, cap - o, "%s%.*s=%.*s", i ? "|" : "", (int)f->name.len,
				      f->name.ptr, (int)f->value.len, f->value.ptr);
	}
}

#endif
