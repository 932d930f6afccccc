/* The reference service on a core set up in-process, for the programs that
 * stand in for the server (sockets, threads, signals) and feed the core
 * through a memory transport of their own, the fuzz target
 * (tests/fuzz/fuzz_http.c) among them (handler tests use the test API,
 * include/ingot/testing.h). What they share is here: the server's
 * configuration defaults, its core setup without a listener, seeded pools
 * or TLS, and an outbound agent that never touches the network.
 * Build: every runtime source but net/api/main.c (the program has its own
 * main), with app/service.c and the generated api.c. Header-only: include
 * it from one file of a program. */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include "net/http/internal.h"
#include "ingot/client.h"
#include "ingot/client_mock.h"
#include "net/api/operation.h"
#include "ingot/log.h"

#include <stdlib.h>

static const struct ig_app *const harness_app = &ig_api_app; /* the generated service's */

/* ---- what the process's start would provide ---- */

static bool harness_drained; /* the core reported "drained" */

static void harness_on_drained(struct http_core *core)
{
	(void)core;
	harness_drained = true;
}

/* ---- the core ---- */

/* The runtime's defaults (ig_http_config_defaults, net/http/core.c) on one
 * loop at 127.0.0.1 with errors logged only; callers narrow the limits
 * they test. */
static inline void harness_config_defaults(struct http_config *cfg)
{
	*cfg = ig_http_config_defaults;
	cfg->host = "127.0.0.1";
	cfg->threads = 1;
	cfg->log_level = IG_LOG_ERROR;
}

/* As ig_server_core_setup (net/server/layout.c), without a listener,
 * seeded pools or TLS (the pools grow from nothing). Aborts if memory is
 * short. */
static inline void harness_core_init(struct http_core *core, const struct http_config *cfg, const struct ig_app *app)
{
	core->cfg = cfg;
	core->app = app;
	core->listener = core->tls_listener = NULL;
	core->drained = harness_on_drained;
	if (ig_loop_init(&core->loop, 0) != 0)
		abort();
	ig_http_core_init_pools(core);
	core->scratch_headers = calloc((size_t)cfg->max_headers, sizeof(ig_header));
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
