/* What a core's HTTP engine needs apart from its listeners: the default of
 * every setting and the pools sized from the settings. Shared by
 * server.c and the tests' in-process core (tests/harness.h), so that the
 * two cannot drift apart. */
#include "internal.h"
#include "cors.h"
#include "kernel/runtime/config.h"
#include "ingot/log.h"

/* Every server setting's default: the one declaration, copied into the
 * settings' values (ig_server_config) by the parse. */
const struct http_config ig_http_config_defaults = {
	.port = 8080,
	.host = "0.0.0.0",
	.admin_host = "",
	.admin_token = "",
	.threads = 0,
	.max_conns = 0, /* not set: the server derives it (net/server/conn_limit.c) */
	.max_request_line = 8192,
	.max_header_bytes = 16384,
	.max_headers = 100,
	.max_body = 1 << 20,
	.header_timeout_ms = 10000,
	.body_timeout_ms = 30000,
	.idle_timeout_ms = 60000,
	.write_timeout_ms = 30000,
	.max_output = 256 * 1024,
	.sse_heartbeat_ms = 15000,
	.ws_ping_ms = 30000,
	.memory_wait_ms = 1000,
	.grace_ms = 8000,
	.admin_port = -1,
	.idle_exit_ms = 0,
	.stack_size = 64 * 1024,
	.max_waiting = 0, /* derived per core (wait.c) */
	.test_stall_core = -1,
	.log_level = IG_LOG_INFO,
	.access_log = false,
	.access_log_sample = IG_FRACTION_ONE,
	.tls_cert = "",
	.tls_key = "",
	.tls_cert_pem = "",
	.tls_key_pem = "",
	.tls_client_ca = "",
	.tls_port = 8443,
	.tls_only = false,
	.tls_handshake_timeout_ms = 10000,
	.tls_max_handshakes = 256,
	.tls_idle_timeout_ms = 15000,
	.tls_session_cache = 256 * 1024,
};

void ig_http_core_init_pools(struct http_core *core)
{
	const struct http_config *cfg = core->cfg;
	/* An in-process core (Lambda's, the tests') takes the ceiling. */
	size_t max_conns = cfg->max_conns > 0 ? (size_t)cfg->max_conns : IG_HTTP_MAX_CONNS_CEILING;
	size_t head = (size_t)(cfg->max_header_bytes > cfg->max_request_line ? cfg->max_header_bytes
									      : cfg->max_request_line);
	core->rbuf_size = (uint32_t)((head + 16384 + 4095) & ~(size_t)4095);
	ig_pool_init(&core->conns, sizeof(struct http_conn), 256, max_conns);
	ig_pool_init(&core->ctxs, sizeof(struct ig_ctx), 256, max_conns * 4 + 1024);
	ig_pool_init(&core->rbufs, core->rbuf_size, 8, max_conns + 64);
	ig_pool_init(&core->blocks, HTTP_BLOCK_STRIDE, 16, max_conns * 16 + 1024);
	/* One per connection at most: a failure closes it. Mapped on the first. */
	ig_pool_init(&core->fail_ids, HTTP_REQUEST_ID_MAX + 1 + IG_CORS_ORIGIN_MAX, 32, max_conns);
	core->limits = (struct http_limits){ .max_request_line = (size_t)cfg->max_request_line,
					     .max_header_bytes = (size_t)cfg->max_header_bytes,
					     .max_headers = (size_t)cfg->max_headers };
	core->ctx_ready = ig_http_conn_ctx_ready;
}
