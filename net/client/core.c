/* The client's per-core state, made on a loop's first outbound call (a
 * process that never calls out allocates and touches nothing of it), and
 * the core's shared Agent, configured once from the INGOT_CLIENT_*
 * settings. A core's state is found from its loop through a short list
 * per thread: a loop is only ever used on its own thread. */
#include "internal.h"
#include "kernel/log.h"
#include "net/http/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Thread_local struct client_core *thread_cores;

/* Every core's state, for the process's lifetime: what it holds (the
 * resolver, say) stays reachable after its thread has gone, so a leak
 * checker at exit sees memory in use, not lost. Pushed once per core. */
static _Atomic(struct client_core *) all_cores;

struct client_core *client_core_of(struct ig_loop *loop)
{
	for (struct client_core *c = thread_cores; c; c = c->next)
		if (c->loop == loop)
			return c;
	/* One allocation, once per core, for the state and the header
	   arrays (large enough to be fresh pages, touched only as used). */
	size_t head = (sizeof(struct client_core) + 15) & ~(size_t)15;
	size_t scratch = CLIENT_MAX_HEADERS * sizeof(struct http_header);
	size_t bytes = head + scratch + CLIENT_MAX_HEADERS * sizeof(ig_header);
	char *m = calloc(1, bytes);
	if (!m)
		return NULL;
	struct client_core *c = (struct client_core *)m;
	c->all_next = atomic_load(&all_cores);
	while (!atomic_compare_exchange_weak(&all_cores, &c->all_next, c))
		;
	c->loop = loop;
	c->scratch = (struct http_header *)(m + head);
	c->headers = (ig_header *)(m + head + scratch);
	ig_pool_init(&c->calls, sizeof(struct client_call), 256, 1u << 20);
	ig_pool_init(&c->conns, sizeof(struct client_conn), 64, CLIENT_MAX_STREAMS);
	ig_pool_init(&c->rbufs, CLIENT_RBUF_SIZE, 4, CLIENT_MAX_STREAMS);
	ig_pool_init(&c->pools, sizeof(struct client_pool), 8, 1u << 16);
	ig_pool_init(&c->agents, sizeof(struct client_agent), 4, 1024);
	sock_core_init(&c->sock, loop, -1, CLIENT_MAX_STREAMS, NULL, NULL);
	c->next = thread_cores;
	thread_cores = c;
	return c;
}

/* ---- the core's Agent ---- */

struct env_setting {
	const char *name;
	uint32_t *u32;
	uint64_t *u64;
	uint64_t min, max;
};

static ig_client_opts env_opts;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
	client_opts_resolve(&env_opts, NULL);
	ig_client_opts *o = &env_opts;
	const struct env_setting settings[] = {
		{ "INGOT_CLIENT_CONNECTIONS", &o->connections, NULL, 1, 65536 },
		{ "INGOT_CLIENT_PIPELINING", &o->pipelining, NULL, 1, 1000 },
		{ "INGOT_CLIENT_CONNECT_TIMEOUT_MS", &o->connect_timeout_ms, NULL, 1, 3600000 },
		{ "INGOT_CLIENT_HEADERS_TIMEOUT_MS", &o->headers_timeout_ms, NULL, 1, 3600000 },
		{ "INGOT_CLIENT_BODY_TIMEOUT_MS", &o->body_timeout_ms, NULL, 1, 3600000 },
		{ "INGOT_CLIENT_KEEP_ALIVE_MS", &o->keep_alive_ms, NULL, 1, 3600000 },
		{ "INGOT_CLIENT_MAX_HEADER_BYTES", &o->max_header_bytes, NULL, 256, CLIENT_MAX_HEAD_BYTES },
		{ "INGOT_CLIENT_MAX_HEADERS", &o->max_headers, NULL, 1, CLIENT_MAX_HEADERS },
		{ "INGOT_CLIENT_MAX_BODY", NULL, &o->max_body_bytes, 1, 1ull << 32 },
		{ "INGOT_CLIENT_MAX_QUEUED", &o->max_queued, NULL, 1, 1u << 20 },
	};
	for (size_t i = 0; i < IG_COUNTOF(settings); i++) {
		const struct env_setting *s = &settings[i];
		const char *v = getenv(s->name);
		if (!v)
			continue;
		char *end;
		unsigned long long n = strtoull(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || n < s->min || n > s->max) {
			/* Read on the first outbound call, long after startup's
			   checks: say so and keep the default. */
			struct ig_logline l;
			if (ig_log_begin(&l, IG_LOG_WARN, "ignored a bad client setting")) {
				ig_log_cstr(&l, "name", s->name);
				ig_log_cstr(&l, "value", v);
				ig_log_int(&l, "min", (int64_t)s->min);
				ig_log_int(&l, "max", (int64_t)s->max);
				ig_log_end(&l);
			}
			continue;
		}
		if (s->u32)
			*s->u32 = (uint32_t)n;
		else
			*s->u64 = n;
	}
}

ig_dispatcher *ig_core_agent(ig_ctx *ctx)
{
	struct client_core *core = client_core_of(ig_ctx_loop(ctx));
	if (!core)
		return NULL;
	if (!core->agent) {
		pthread_once(&env_once, read_env);
		core->agent = ig_agent_new(core->loop, &env_opts);
	}
	return core->agent;
}

void ig_core_set_agent(struct ig_loop *loop, ig_dispatcher *d)
{
	struct client_core *core = client_core_of(loop);
	if (core)
		core->agent = d;
}

struct ig_loop *ig_ctx_loop(ig_ctx *ctx)
{
	return &ctx->core->loop;
}
