/* The client's per-core state, made on a loop's first outbound call (a
 * process that never calls out allocates and touches nothing of it). The
 * bottom of net/client: every layer takes its slots from it and it calls
 * none of them. A core's state is found in its loop's slot
 * (kernel/runtime/loop.h). */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

static struct ig_loop_slot client_slot;

/* Every core's state, for the process's lifetime: what it holds (its
 * pools, say) stays reachable after its thread has gone, so a leak
 * checker at exit sees memory in use, not lost. Pushed once per core. */
static _Atomic(struct client_core *) all_cores;

struct client_core *ig_client_core_of(struct ig_loop *loop)
{
	void **slot = ig_loop_slot(loop, &client_slot);
	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	/* One allocation, once per core, for the state and the header
	   array (large enough to be fresh pages, touched only as used). */
	size_t head = (sizeof(struct client_core) + 15) & ~(size_t)15;
	size_t bytes = head + CLIENT_MAX_HEADERS * sizeof(ig_header);
	char *m = calloc(1, bytes);
	if (!m)
		return NULL;
	struct client_core *c = (struct client_core *)m;
	c->all_next = atomic_load(&all_cores);
	while (!atomic_compare_exchange_weak(&all_cores, &c->all_next, c))
		;
	c->loop = loop;
	c->scratch = (ig_header *)(m + head);
	ig_pool_init(&c->calls, sizeof(struct client_call), 256, 1u << 20);
	ig_pool_init(&c->conns, sizeof(struct client_conn), 64, CLIENT_MAX_STREAMS);
	ig_pool_init(&c->rbufs, CLIENT_RBUF_SIZE, 4, CLIENT_MAX_STREAMS);
	ig_pool_init(&c->pools, sizeof(struct client_pool), 8, 1u << 16);
	ig_pool_init(&c->agents, sizeof(struct client_agent), 4, 1024);
	ig_sock_core_init(&c->sock, loop, -1, CLIENT_MAX_STREAMS, NULL, NULL);
	*slot = c;
	return c;
}

const struct client_core *ig_client_core_next(const struct client_core *prev)
{
	return prev ? prev->all_next : atomic_load(&all_cores);
}
