/* The reference service on a core set up in-process, for the programs that
 * stand in for net/http/server.c (sockets, threads, signals): the fuzz
 * target (tests/fuzz/fuzz_http.c) and the handler tests
 * (tests/unit/test_app_handlers.c). Each feeds the core through a memory
 * transport of its own; what they share is here: the symbols server.c
 * would provide, server.c's configuration defaults, server.c's core_setup
 * without a listener, seeded pools or TLS, and an outbound agent that
 * never touches the network.
 * Build: every runtime source but net/http/server.c, with app/service.c
 * and the generated api.c, its main renamed (-Dmain=ingot_service_main).
 * Header-only: include it from one file of a program (it defines ig_main
 * and http_core_drained). */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include "net/http/internal.h"
#include "net/client/client.h"
#include "net/client/mock.h"
#include "kernel/log.h"

#include <stdlib.h>

int ingot_service_main(int argc, char **argv); /* api.c's main, renamed */

/* ---- what server.c would provide ---- */

static const struct ig_app *harness_app; /* the service's, once registered */
static bool harness_drained;             /* http_core_drained was called */

int ig_main(int argc, char **argv, const struct ig_app *app)
{
	(void)argc;
	(void)argv;
	harness_app = app;
	return 0;
}

void http_core_drained(struct http_core *core)
{
	(void)core;
	harness_drained = true;
}

/* Runs the service's main, which registers its app (harness_app) and
 * returns; false if it registered none. */
static inline bool harness_load_service(void)
{
	ingot_service_main(0, NULL);
	return harness_app != NULL;
}

/* ---- the core ---- */

/* server.c's defaults (net/http/server.c) for what a core without TLS
 * reads, on one loop at 127.0.0.1 with errors logged only; callers narrow
 * the limits they test. */
static inline void harness_config_defaults(struct http_config *cfg)
{
	*cfg = (struct http_config){
		.port = 8080,
		.host = "127.0.0.1",
		.threads = 1,
		.max_conns = 10000,
		.max_request_line = 8192,
		.max_header_bytes = 16384,
		.max_headers = 100,
		.max_body = 1 << 20,
		.header_timeout_ms = 10000,
		.body_timeout_ms = 30000,
		.idle_timeout_ms = 60000,
		.write_timeout_ms = 30000,
		.max_output = 256 * 1024,
		.grace_ms = 8000,
		.log_level = IG_LOG_ERROR,
	};
}

/* As server.c's core_setup, without a listener, seeded pools or TLS (the
 * pools grow from nothing). Aborts if memory is short. */
static inline void harness_core_init(struct http_core *core, const struct http_config *cfg, const struct ig_app *app)
{
	core->cfg = cfg;
	core->app = app;
	core->listen_fd = -1;
	if (ig_loop_init(&core->loop, 0) != 0)
		abort();
	size_t max_conns = (size_t)cfg->max_conns;
	size_t head = (size_t)(cfg->max_header_bytes > cfg->max_request_line ? cfg->max_header_bytes
									      : cfg->max_request_line);
	core->rbuf_size = (uint32_t)((head + 16384 + 4095) & ~(size_t)4095);
	ig_pool_init(&core->conns, sizeof(struct http_conn), 256, max_conns);
	ig_pool_init(&core->ctxs, sizeof(struct ig_ctx), 256, max_conns * 4 + 1024);
	ig_pool_init(&core->rbufs, core->rbuf_size, 8, max_conns + 64);
	ig_pool_init(&core->blocks, HTTP_BLOCK_SIZE, 16, max_conns * 16 + 1024);
	core->limits = (struct http_limits){ .max_request_line = (size_t)cfg->max_request_line,
					     .max_header_bytes = (size_t)cfg->max_header_bytes,
					     .max_headers = (size_t)cfg->max_headers };
	core->scratch_headers = calloc((size_t)cfg->max_headers, sizeof(struct http_header));
	if (!core->scratch_headers)
		abort();
}

/* ---- the outbound side: no network ---- */

/* A mock agent with the network disabled, made the core's agent
 * (ig_core_agent): every outbound call of a handler ends in an
 * interception of the caller's or in IG_CLIENT_NET_FORBIDDEN, from a timer
 * on the core's loop. Aborts if memory is short. */
static inline ig_mock_agent *harness_mock_network(struct http_core *core)
{
	ig_mock_agent *m = ig_mock_agent_new(&core->loop, NULL);
	if (!m)
		abort();
	ig_mock_disable_net_connect(m);
	ig_core_set_agent(&core->loop, ig_mock_dispatcher(m));
	return m;
}

/* Takes the mock agent off the core and frees it. */
static inline void harness_unmock_network(struct http_core *core, ig_mock_agent *m)
{
	ig_core_set_agent(&core->loop, NULL);
	ig_mock_agent_free(m);
}

#endif
