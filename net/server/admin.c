/* The admin listener (INGOT_ADMIN_PORT): GET /metrics in the text format,
 * /livez and /readyz (health.h), 404 otherwise, served by the same engine on
 * core 0's loop; its connections are not metered. Bound without
 * SO_REUSEPORT, so that a port another process holds stops the start
 * instead of splitting the scrapes between two processes. */
#include "server.h"
#include "net/http/health.h"
#include "ingot/log.h"
#include "net/metrics/metrics.h"
#include "net/stack.h"

#include <stdio.h>

/* A scraper or a probe or two, not clients: a few connection slots more
 * on core 0. */
#define ADMIN_MAX_CONNS 64
/* A scrape's text may outgrow a request's memory limit (about 8 KiB a
 * series of the server's three histograms): its own, larger bound. */
#define ADMIN_SCRAPE_BYTES ((size_t)64 << 20)

static struct sock_core admin_sock;
static int admin_fd = -1;
static struct ig_net_listener *admin_net;

static void admin_route(ig_ctx *x)
{
	const ig_request *r = ig_req(x);
	if (ig_http_health_answer(x))
		return;
	if (!ig_str_eq(r->path, "/metrics", 8)) {
		ig_respond_problem(x, 404, "the admin listener serves /metrics, /livez and /readyz");
		return;
	}
	if (!ig_str_eq(r->method, "GET", 3)) { /* HEAD is routed as GET */
		ig_add_header(x, "Allow", IG_STR("GET, HEAD"));
		ig_respond_problem(x, 405, "the method is not allowed for this resource");
		return;
	}
	x->arena.limit = ADMIN_SCRAPE_BYTES;
	ig_metrics_write(ig_body(x)); /* larger still: ig_finish answers 500 */
	ig_set_content_type(x, IG_EXPO_CONTENT_TYPE);
	ig_finish(x, 200);
}

static const struct ig_app admin_app = { .name = "admin", .route = admin_route };

static void *admin_accept(void *arg, struct ig_transport *t)
{
	struct http_core *core = arg;
	struct http_conn *c = ig_http_conn_take(core);
	return c ? ig_http_conn_begin_app(core, c, t, (uint32_t)core->cfg->idle_timeout_ms, &admin_app) : NULL;
}

__attribute__((cold)) int ig_server_admin_open(char *err, size_t errlen)
{
	struct http_config *cfg = &ig_server_config;
	if (cfg->admin_port < 0 || ig_net_stack) /* a stack of ingot's own listens once it runs */
		return 0;
	if (ig_server_activation.active) { /* the socket named admin (admin_port is its port) */
		admin_fd = ig_server_activation.admin_fd;
		return 0;
	}
	int port = (int)cfg->admin_port;
	char why[200];
	admin_fd = ig_sock_listen_exclusive(cfg->host, &port, 64, why, sizeof why);
	if (admin_fd < 0) {
		snprintf(err, errlen, "admin listener (INGOT_ADMIN_PORT): %s", why);
		return -1;
	}
	cfg->admin_port = port;
	return 0;
}

__attribute__((cold)) int ig_server_admin_start(struct http_core *core0, char *err, size_t errlen)
{
	struct http_config *cfg = &ig_server_config;
	if (cfg->admin_port < 0)
		return 0;
	/* Slots of its own: a scrape still gets in when the API's connections
	   fill the core (the API's listeners refuse at INGOT_MAX_CONNS first). */
	core0->conns.max_objs += ADMIN_MAX_CONNS;
	if (ig_net_stack) {
		int port = (int)cfg->admin_port;
		admin_net = ig_net_stack->listen(cfg->host, &port, ADMIN_MAX_CONNS, admin_accept, core0, err, errlen);
		if (!admin_net)
			return -1;
		cfg->admin_port = port;
	} else {
		ig_sock_core_init(&admin_sock, &core0->loop, admin_fd, ADMIN_MAX_CONNS, admin_accept, core0);
		if (ig_sock_core_start(&admin_sock) != 0) {
			snprintf(err, errlen, "cannot watch the admin listener");
			return -1;
		}
	}
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "admin listening")) {
		ig_log_cstr(&l, "addr", cfg->host);
		ig_log_int(&l, "port", cfg->admin_port);
		ig_log_end(&l);
	}
	return 0;
}

void ig_server_admin_stop_accepting(void)
{
	if (admin_fd >= 0) {
		ig_sock_core_stop_accepting(&admin_sock);
		admin_fd = -1;
	}
	if (admin_net) {
		ig_net_stack->stop_accepting(admin_net);
		admin_net = NULL;
	}
}
