/* The server's listeners: each core's own SO_REUSEPORT socket for plain
 * HTTP and, when TLS is on, for HTTPS, whose accepts wrap the connection
 * in a TLS transport; with socket activation, each core's descriptor of
 * the socket given instead. Without a certificate nothing of TLS runs. */
#include "server.h"
#include "net/stack.h"
#include "net/tls/tls.h"

int ig_server_listen(struct http_core *core, int *port, int *tls_port, char *err, size_t errlen)
{
	const struct http_config *cfg = &ig_server_config;
	core->listen_fd = -1;
	core->tls_listen_fd = -1;
	if (ig_net_stack) /* ig_server_net_listen, once the loop is there */
		return 0;
	if (ig_server_activation.active) {
		const struct ig_server_activation *a = &ig_server_activation;
		if (a->http_fd >= 0 && (core->listen_fd = ig_server_activation_listener(a->http_fd, err, errlen)) < 0)
			return -1;
		if (a->https_fd >= 0 && (core->tls_listen_fd = ig_server_activation_listener(a->https_fd, err, errlen)) < 0)
			return -1;
		return 0;
	}
	if (!cfg->tls_only && (core->listen_fd = ig_sock_listen(cfg->host, port, 4096, err, errlen)) < 0)
		return -1;
	if (ig_http_server.tls && (core->tls_listen_fd = ig_sock_listen(cfg->host, tls_port, 4096, err, errlen)) < 0)
		return -1;
	return 0;
}

void ig_server_stop_accepting(struct http_core *core)
{
	ig_sock_core_stop_accepting(&core->sock);
	if (core->index == 0)
		ig_server_admin_stop_accepting();
	if (core->tls)
		ig_sock_core_stop_accepting(&core->tls_sock);
	if (ig_net_stack) {
		ig_net_stack->stop_accepting(core->net_listener);
		ig_net_stack->stop_accepting(core->net_tls_listener);
	}
}

/* The HTTPS listener's accept: a connection slot first, so that a TLS
 * state is never made for a connection that cannot be served. */
void *ig_server_tls_accept(void *arg, struct ig_transport *lower)
{
	struct http_core *core = arg;
	struct http_conn *c = ig_http_conn_take(core);
	if (!c)
		return NULL;
	struct ig_transport *t = ig_tls_server(core->tls, lower);
	if (!t) {
		ig_pool_give(&core->conns, c);
		return NULL;
	}
	return ig_http_conn_begin(core, c, t, (uint32_t)core->cfg->tls_idle_timeout_ms);
}

int ig_server_tls_core_setup(struct http_core *core)
{
	const struct http_config *cfg = core->cfg;
	struct ig_tls_limits limits = {
		.handshake_timeout_ms = (uint32_t)cfg->tls_handshake_timeout_ms,
		.max_handshakes = (uint32_t)cfg->tls_max_handshakes,
		/* Per core, pooled by a backend that shares one cache. */
		.session_cache_bytes = (size_t)cfg->tls_session_cache *
				       (ig_tls_backend_shares_session_cache() ? (size_t)cfg->threads : 1),
		.close_timeout_ms = (uint32_t)cfg->write_timeout_ms,
	};
	core->tls = ig_tls_core_new(&core->loop, ig_http_server.tls, &limits);
	if (!core->tls)
		return -1;
	ig_sock_core_init(&core->tls_sock, &core->loop, core->tls_listen_fd, (uint32_t)cfg->max_conns, ig_server_tls_accept, core);
	core->tls_sock.keep_peer = cfg->access_log; /* the access log's "client" */
	return core->tls_listen_fd >= 0 ? ig_sock_core_start(&core->tls_sock) : 0;
}

