/* The admin listener (INGOT_ADMIN_PORT, on INGOT_ADMIN_HOST or HOST): GET
 * /metrics in the text format, /livez and /readyz (health.h), GET and PUT
 * /loglevel, 404 otherwise, served by the same engine on core 0's loop; its
 * connections are not metered. With INGOT_ADMIN_TOKEN all but the probes ask
 * for it as a bearer token; a change of state (PUT /loglevel) comes from
 * loopback or with the token. Exclusive (the kernel's
 * sockets: no SO_REUSEPORT), so that a port another process holds stops the
 * start instead of splitting the scrapes between two processes. */
#include "server.h"
#include "net/http/health.h"
#include "ingot/log.h"
#include "net/metrics/metrics.h"
#include "net/stack.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* Constant time in the token's length: a wrong guess tells nothing of
 * how much of it was right. */
static bool token_matches(ig_str got, const char *token)
{
	size_t n = strlen(token);
	unsigned char diff = (unsigned char)(got.len != n);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(token[i] ^ (i < got.len ? got.ptr[i] : 0));
	return diff == 0;
}

static bool has_token(ig_ctx *x)
{
	const char *token = ig_server_config.admin_token;
	ig_str auth = ig_req_header(x, "Authorization");
	return token[0] && auth.len > 7 && strncasecmp(auth.ptr, "Bearer ", 7) == 0 &&
	       token_matches((ig_str){ auth.ptr + 7, auth.len - 7 }, token);
}

/* A loopback peer: 127.0.0.0/8 or ::1 (the transport's text form). */
static bool from_loopback(ig_ctx *x)
{
	char peer[64];
	size_t n = x->conn && x->conn->t->ops->peer ? x->conn->t->ops->peer(x->conn->t, peer, sizeof peer) : 0;
	return (n > 4 && memcmp(peer, "127.", 4) == 0) || (n > 5 && memcmp(peer, "[::1]", 5) == 0);
}

/* GET /loglevel: {"level":"info"}; PUT with the word as its body sets it.
 * A change of state: only from loopback, or with the token. */
static void log_level_route(ig_ctx *x, const ig_request *r)
{
	bool put = ig_str_eq(r->method, "PUT", 3);
	if (!put && !ig_str_eq(r->method, "GET", 3)) {
		ig_add_header(x, "Allow", IG_STR("GET, HEAD, PUT"));
		ig_respond_problem(x, 405, "the method is not allowed for this resource");
		return;
	}
	if (put) {
		if (!has_token(x) && !from_loopback(x)) {
			ig_respond_problem(x, 403, "the log level is changed from loopback or with INGOT_ADMIN_TOKEN");
			return;
		}
		ig_str w = r->body;
		while (w.len && (w.ptr[w.len - 1] == '\n' || w.ptr[w.len - 1] == '\r' || w.ptr[w.len - 1] == ' '))
			w.len--;
		int level = ig_server_log_level_parse(w.ptr, w.len);
		if (level < 0) {
			ig_respond_problem(x, 400, "the body is one of error, warn, info, debug");
			return;
		}
		ig_server_log_level_set(level, "admin");
	}
	ig_wbuf *b = ig_body(x);
	ig_wbuf_lit(b, "{\"level\":\"");
	const char *name = ig_server_log_level_name();
	ig_wbuf_put(b, name, strlen(name));
	ig_wbuf_lit(b, "\"}");
	ig_set_content_type(x, "application/json");
	ig_finish(x, 200);
}

static void admin_route(ig_ctx *x)
{
	const ig_request *r = ig_req(x);
	if (ig_http_health_answer(x))
		return;
	/* The probes stay open; the rest asks the token when there is one. */
	if (ig_server_config.admin_token[0] && !has_token(x)) {
		ig_add_header(x, "WWW-Authenticate", IG_STR("Bearer"));
		ig_respond_problem(x, 401, "the admin listener asks for its token (INGOT_ADMIN_TOKEN)");
		return;
	}
	if (ig_str_eq(r->path, "/loglevel", 9)) {
		log_level_route(x, r);
		return;
	}
	if (!ig_str_eq(r->path, "/metrics", 8)) {
		ig_respond_problem(x, 404, "the admin listener serves /metrics, /loglevel, /livez and /readyz");
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
		.host = cfg->admin_host[0] ? cfg->admin_host : cfg->host, .backlog = 64, .exclusive = true,
		.keep_peer = true, /* PUT /loglevel asks whether it comes from loopback */
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
		ig_log_cstr(&l, "addr", cfg->admin_host[0] ? cfg->admin_host : cfg->host);
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
