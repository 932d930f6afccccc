/* The admin listener (INGOT_ADMIN_PORT): GET /metrics in the text format,
 * /livez and /readyz (health.h), 404 otherwise, served by the same engine on
 * core 0's loop; its connections are not metered. Exclusive (the kernel's
 * sockets: no SO_REUSEPORT), so that a port another process holds stops the
 * start instead of splitting the scrapes between two processes. */
#include "server.h"
#include "net/http/health.h"
#include "ingot/log.h"
#include "net/metrics/metrics.h"
#include "net/stack.h"

#include <stdio.h>

/* A scraper or a probe or two, not clients: a few connection slots more
 * on core 0. */
#define ADMIN_MAX_CONNS 64
/* Spare descriptors the admin listener keeps, with which a probe or a
 * scrape still gets in when the process has no descriptor left (net/sock:
 * the API's listeners shed at that point, this one serves). */
#define ADMIN_RESERVE 4
/* A scrape's text may outgrow a request's memory limit (about 8 KiB a
 * series of the server's three histograms): its own, larger bound. */
#define ADMIN_SCRAPE_BYTES ((size_t)64 << 20)

static struct ig_net_listener *admin; /* NULL: none, or stopped */

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
	if (cfg->admin_port < 0)
		return 0;
	struct ig_net_listen_spec spec = {
		.host = cfg->host, .backlog = 64, .exclusive = true,
		.fd = ig_server_activation.admin_fd, /* the socket named admin (admin_port is its port), or -1 */
		.max_streams = ADMIN_MAX_CONNS, .reserve = ADMIN_RESERVE, .accept = admin_accept, .arg = &ig_http_server.cores[0],
	};
	struct ig_net_listener *l = ig_server_listener_at(IG_SERVER_ADMIN_SLOT(ig_http_server.core_count));
	int port = (int)cfg->admin_port;
	char why[200];
	if (ig_net_stack->open(l, &spec, &port, why, sizeof why) != 0) {
		snprintf(err, errlen, "admin listener (INGOT_ADMIN_PORT): %s", why);
		return -1;
	}
	ig_server_activation.admin_fd = -1; /* the listener's now */
	cfg->admin_port = port;
	admin = l;
	return 0;
}

__attribute__((cold)) int ig_server_admin_start(struct http_core *core0, char *err, size_t errlen)
{
	struct http_config *cfg = &ig_server_config;
	if (!admin)
		return 0;
	/* Slots of its own: a scrape still gets in when the API's connections
	   fill the core (the API's listeners refuse at INGOT_MAX_CONNS first). */
	core0->conns.max_objs += ADMIN_MAX_CONNS;
	if (ig_net_stack->serve(admin, &core0->loop, NULL, err, errlen) != 0) /* a scrape now and then: no seed */
		return -1;
	cfg->admin_port = ig_net_stack->port(admin);
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
	if (admin) {
		ig_net_stack->stop_accepting(admin);
		admin = NULL;
	}
}
