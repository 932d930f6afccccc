/* The server's listeners, over the process's stack (net/stack.h): each
 * core's for plain HTTP and, when TLS is on, for HTTPS, whose accepts wrap
 * the connection in a TLS transport; with socket activation, each core's
 * descriptor of the socket given instead of one bound. The stack says
 * whether every core listens or one loop serves all. Without a
 * certificate nothing of TLS runs. */
#include "server.h"
#include "net/stack.h"
#include "net/tls/tls.h"

#include <unistd.h>

struct ig_net_listener *ig_server_listener_at(size_t slot)
{
	return (struct ig_net_listener *)(ig_http_server.listeners + slot * ig_http_server.listener_size);
}

/* One of core's listeners in slot, on given (a socket activation's fd,
 * -1: none) or host:*port; NULL with err set. */
static struct ig_net_listener *open_one(struct http_core *core, size_t slot, int given, int *port,
					const char *setting, sock_accept_fn *accept, char *err, size_t errlen)
{
	const struct http_config *cfg = &ig_server_config;
	int fd = -1;
	if (given >= 0 && (fd = ig_server_activation_listener(given, err, errlen)) < 0)
		return NULL;
	struct ig_net_listen_spec spec = {
		.host = cfg->host, .backlog = 4096, .fd = fd, .max_streams = (uint32_t)cfg->max_conns,
		/* the access log's "client", a rate limit's key, the door's
		   limit on failed attempts */
		.keep_peer = cfg->access_log || core->app->peer_addresses,
		/* The first core's: another process on the port stops the start
		   (the later cores join this one's SO_REUSEPORT group). */
		.probe = core->index == 0 && !cfg->share_port ? setting : NULL,
		.accept = accept, .arg = core,
	};
	struct ig_net_listener *l = ig_server_listener_at(slot);
	if (ig_net_stack->open(l, &spec, port, err, errlen) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return l;
}

int ig_server_listen(struct http_core *core, int *port, int *tls_port, char *err, size_t errlen)
{
	const struct ig_server_activation *a = &ig_server_activation; /* -1s when not active */
	size_t slot = 2 * (size_t)core->index;
	core->listener = core->tls_listener = NULL;
	/* Activation made tls_only and tls say which sockets it gave. */
	if (!ig_server_config.tls_only &&
	    !(core->listener = open_one(core, slot, a->http_fd, port, "PORT", ig_http_conn_accept, err, errlen)))
		return -1;
	if (ig_http_server.tls &&
	    !(core->tls_listener = open_one(core, slot + 1, a->https_fd, tls_port, "INGOT_TLS_PORT", ig_server_tls_accept, err, errlen)))
		return -1;
	return 0;
}

int ig_server_serve(struct http_core *core, char *seeds, char *err, size_t errlen)
{
	const struct ig_net_stack *s = ig_net_stack;
	if (s->start(&core->loop, (uint32_t)core->cfg->max_conns, err, errlen) != 0)
		return -1;
	if (core->listener && s->serve(core->listener, &core->loop, seeds, err, errlen) != 0)
		return -1;
	if (core->tls_listener && s->serve(core->tls_listener, &core->loop, seeds + s->seed_size, err, errlen) != 0)
		return -1;
	return 0;
}

void ig_server_stop_accepting(struct http_core *core)
{
	if (core->listener)
		ig_net_stack->stop_accepting(core->listener);
	if (core->index == 0)
		ig_server_admin_stop_accepting();
	if (core->tls_listener)
		ig_net_stack->stop_accepting(core->tls_listener);
}

uint64_t ig_server_refused(const struct http_core *core)
{
	return (core->listener ? ig_net_stack->refused(core->listener) : 0) +
	       (core->tls_listener ? ig_net_stack->refused(core->tls_listener) : 0);
}

uint64_t ig_server_shed(const struct http_core *core)
{
	uint64_t (*shed)(const struct ig_net_listener *) = ig_net_stack->shed;
	if (!shed)
		return 0;
	return (core->listener ? shed(core->listener) : 0) + (core->tls_listener ? shed(core->tls_listener) : 0);
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
	c = ig_http_conn_begin(core, c, t, (uint32_t)core->cfg->tls_idle_timeout_ms);
	c->tls = true; /* HSTS goes on its answers (net/http/security_headers.c) */
	return c;
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
		.mem = &core->mem, /* what clients make us buffer: in the budget */
	};
	core->tls = ig_tls_core_new(&core->loop, ig_http_server.tls, &limits);
	return core->tls ? 0 : -1;
}
