/* A core's state for a kind of stream (internal.h's http_stream_core):
 * SSE's and WebSocket's handles and scratch, made once per core at its
 * first stream of the kind. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Every core's, for the process's life: reachable for a leak checker once
 * its loop is gone. */
static _Atomic(struct http_stream_core *) all_stream_cores;

/* Once per core and kind, at its first stream: not on a request's path. */
__attribute__((cold, noinline)) static struct http_stream_core *make(struct http_core *core, struct ig_loop_slot *slot,
								  size_t handle_size)
{
	void **at = ig_loop_slot(&core->loop, slot);
	if (!at)
		return NULL;
	struct http_stream_core *sc = calloc(1, sizeof *sc);
	if (!sc)
		return NULL;
	/* Each stream holds a connection: there are never more than these. */
	size_t max = core->cfg->max_conns > 0 ? (size_t)core->cfg->max_conns : IG_HTTP_MAX_CONNS_CEILING;
	ig_pool_init(&sc->handles, handle_size, 64, max);
	ig_arena_init(&sc->scratch, &core->blocks, (size_t)core->cfg->max_body * 2 + (1u << 20));
	sc->buf = (ig_wbuf){ .arena = &sc->scratch };
	sc->all_next = atomic_load(&all_stream_cores);
	while (!atomic_compare_exchange_weak(&all_stream_cores, &sc->all_next, sc))
		;
	*at = sc;
	return sc;
}

struct http_stream_core *ig_http_stream_core(struct http_core *core, struct ig_loop_slot *slot, size_t handle_size)
{
	struct http_stream_core *sc = ig_loop_slot_get(&core->loop, slot);
	return sc ? sc : make(core, slot, handle_size);
}
