/* What the interceptors (retry.c, redirect.c) and the mock agent (mock.c)
 * share: finding a response header by name, and the call that stands for
 * one that ended before it had any state. */
#include "net/client/interceptors.h"

#include <strings.h>

const ig_str *ig_header_find(const ig_header *headers, size_t count, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < count; i++)
		if (headers[i].name.len == n && strncasecmp(headers[i].name.ptr, name, n) == 0)
			return &headers[i].value;
	return NULL;
}

static void ended_call_noop(ig_call *call)
{
	(void)call;
}

static const struct ig_call_ops ended_call_ops = { .abort = ended_call_noop, .resume = ended_call_noop };

ig_call ig_ended_call = { .ops = &ended_call_ops };
