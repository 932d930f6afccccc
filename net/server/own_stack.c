/* The server over a TCP/IP stack of ingot's own (net/stack.h, INGOT_NET):
 * one core, whose loop the stack starts on, and its listeners there. Only
 * such a stack runs this: net/cold.ld keeps it off the startup pages. */
#include "server.h"
#include "net/stack.h"

/* With a stack of ingot's own (one core): starts it on core's loop and
 * listens there; the first listener may pick the ports. */
int ig_server_net_listen(struct http_core *core, char *err, size_t errlen)
{
	struct http_config *cfg = &ig_server_config;
	int port = (int)cfg->port, tls_port = (int)cfg->tls_port;
	uint32_t max = (uint32_t)cfg->max_conns;
	if (ig_net_stack->start(&core->loop, max, err, errlen) != 0)
		return -1;
	if (!cfg->tls_only && !(core->net_listener = ig_net_stack->listen(cfg->host, &port, max, ig_http_conn_accept,
									   core, err, errlen)))
		return -1;
	if (ig_http_server.tls &&
	    !(core->net_tls_listener = ig_net_stack->listen(cfg->host, &tls_port, max, ig_server_tls_accept, core, err, errlen)))
		return -1;
	cfg->port = port;
	cfg->tls_port = tls_port;
	return 0;
}
