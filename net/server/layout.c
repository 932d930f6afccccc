/* A core's layout: its loop, its pools and its listeners' first streams
 * seeded from one mapping (so the first requests make no allocation call)
 * with the parser's header scratch, and its listeners started. Runs on the
 * core's own thread, so the memory is first touched there. */
#include "kernel/process/notify.h"
#include "server.h"
#include "net/stack.h"

#include <stdio.h>
#include <sys/mman.h>

/* Seeds for the pools: enough for the first connections. */
#define SEED_CONNS 16
#define SEED_CTXS 32
#define SEED_RBUFS 2
#define SEED_BLOCKS 8

static size_t round16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* One mapping, touched only as used: the header scratch, the seeds of the
 * two listeners (*listener_seeds: the stack's seed_size bytes each) and
 * of the pools. */
static int seed_pools(struct http_core *core, char **listener_seeds)
{
	struct ig_pool *pools[] = { &core->conns, &core->ctxs, &core->rbufs, &core->blocks };
	size_t seeds[] = { SEED_CONNS, SEED_CTXS, SEED_RBUFS, SEED_BLOCKS };
	size_t scratch = round16((size_t)core->cfg->max_headers * sizeof(ig_header));
	size_t listeners = 2 * ig_net_stack->seed_size;
	size_t bytes = scratch + listeners;
	for (size_t i = 0; i < IG_COUNTOF(pools); i++)
		bytes += seeds[i] * pools[i]->obj_size;
	char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	core->scratch_headers = (ig_header *)m;
	m += scratch;
	*listener_seeds = m;
	m += listeners;
	for (size_t i = 0; i < IG_COUNTOF(pools); i++) {
		ig_pool_seed(pools[i], m, seeds[i]);
		m += seeds[i] * pools[i]->obj_size;
	}
	return 0;
}

void (*ig_http_core_start_hook)(struct ig_loop *loop, int core_count);

static void start_backends(struct ig_loop *loop)
{
	ig_http_core_start_hook(loop, ig_http_server.core_count);
}

int ig_server_core_setup(struct http_core *core, char *err, size_t errlen)
{
	if (ig_loop_init(&core->loop, (int)core->index) != 0)
		goto fail;
	atomic_store(&core->loop_ready, true);
	ig_http_core_init_pools(core);
	core->loop.on_wake = ig_server_on_core_wake;
	core->loop.arg = core;
	core->drained = ig_server_on_drained;
	ig_rng_seed(&core->rng);
	char *listener_seeds;
	if (seed_pools(core, &listener_seeds) != 0)
		goto fail;
	if (ig_http_server.tls && ig_server_tls_core_setup(core) != 0)
		goto fail;
	if (core->cfg->idle_exit_ms > 0) /* its code is off the startup pages */
		ig_server_idle_core_start(core);
	if (ig_notify_watchdog_usec())
		ig_server_watchdog_core_start(core);
	if (ig_server_serve(core, listener_seeds, err, errlen) != 0)
		return -1;
	/* The backends' first connects (the database's pool) once the stack
	   runs and has an address: lwIP is started by serve, and may wait for
	   DHCP; a connect before would fail and warn for nothing. */
	if (ig_http_core_start_hook) {
		if (ig_net_stack->when_up)
			ig_net_stack->when_up(&core->loop, start_backends);
		else
			start_backends(&core->loop);
	}
	return 0;
fail:
	snprintf(err, errlen, "cannot set up core %u", core->index);
	return -1;
}
