/* What the interceptors (retry.c, redirect.c) and the mock agent (mock.c)
 * share: finding a response header by name, the call that stands for one
 * that ended before it had any state, and the lifetime of their call
 * states (internal.h). */
#include "net/client/interceptors.h"
#include "net/client/internal.h"

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

/* ---- call states (internal.h) ---- */

void *wrap_call_take(struct wrap_slots *s)
{
	if (!s->ready) {
		ig_pool_init(&s->pool, s->size, s->chunk_objs, s->max_objs);
		s->ready = true;
	}
	return ig_pool_take(&s->pool);
}

void wrap_call_link(struct wrap_owner *o, struct wrap_slots *s, struct wrap_call *w)
{
	w->owner = o;
	w->slots = s;
	w->prev = NULL;
	w->next = o->calls;
	if (o->calls)
		o->calls->prev = w;
	o->calls = w;
	o->live++;
}

static void wrap_call_free(struct wrap_call *w)
{
	struct wrap_owner *o = w->owner;
	if (w->prev)
		w->prev->next = w->next;
	else
		o->calls = w->next;
	if (w->next)
		w->next->prev = w->prev;
	ig_pool_give(&w->slots->pool, w);
	if (--o->live == 0 && o->destroying)
		o->free(o);
}

void wrap_let_go(struct wrap_call *w, bool ended)
{
	if (--w->holds == 0 && ended)
		wrap_call_free(w);
}

void wrap_destroy_begin(struct wrap_owner *o)
{
	o->destroying = true;
	o->live++;
}

void wrap_destroy_end(struct wrap_owner *o)
{
	if (--o->live == 0)
		o->free(o);
}
