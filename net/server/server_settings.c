/* The server's rows of the settings table: the listeners, the limits of a
 * request and a connection, the drain, the logs and the HTTPS listener.
 * Its check judges the TLS settings together and loads the credentials, so
 * that a bad certificate or key stops the start like any bad value. */
#include "server.h"
#include "kernel/process/cores.h"
#include "kernel/runtime/membudget.h"
#include "ingot/log.h"
#include "net/tls/tls.h"

#define CFG(field) &ig_server_config.field

/* In enum ig_log_level's order. */
static const struct ig_choice log_levels = { CFG(log_level), "error|warn|info|debug" };

static const struct ig_option server_rows[] = {
	{ "PORT", IG_OPT_INT, CFG(port), 0, 65535,
	  IG_HELP("TCP port; 0 picks a free one (ignored with LISTEN_FDS: the sockets given are served)") },
	{ "HOST", IG_OPT_STR, CFG(host), 0, 0, IG_HELP("numeric address to listen on (ignored with LISTEN_FDS)") },
	{ "INGOT_SHARE_PORT", IG_OPT_BOOL, CFG(share_port), 0, 1,
	  IG_HELP("join the listeners of another process on PORT (a zero-downtime handover: the new process starts, "
	  "then the old one drains); else a port served already stops the start (exit 2)") },
	{ "INGOT_THREADS", IG_OPT_INT, CFG(threads), 0, IG_MAX_CORES,
	  IG_HELP("event loops; 0 = usable CPUs (affinity, cgroup quota)") },
	{ "INGOT_MAX_CONNS", IG_OPT_INT, CFG(max_conns), 0, 1000000,
	  IG_HELP("open connections per core; more are accepted and closed. 0 (the default): what the descriptor "
	  "limit holds, at most 10000; a value it cannot hold is lowered, with a warning") },
	{ "INGOT_MAX_REQUEST_LINE", IG_OPT_INT, CFG(max_request_line), 64, 1 << 20,
	  IG_HELP("request line bytes (414 beyond)") },
	{ "INGOT_MAX_HEADER_BYTES", IG_OPT_INT, CFG(max_header_bytes), 256, 1 << 20,
	  IG_HELP("request head bytes (431 beyond)") },
	{ "INGOT_MAX_HEADERS", IG_OPT_INT, CFG(max_headers), 1, 10000,
	  IG_HELP("header fields per request (431 beyond)") },
	{ "INGOT_MAX_BODY", IG_OPT_INT, CFG(max_body), 0, 1 << 30, IG_HELP("request body bytes (413 beyond)") },
	{ "INGOT_MEMORY_BUDGET", IG_OPT_INT, &ig_membudget_state.setting, 0, (int64_t)1 << 50,
	  IG_HELP("bytes of request bodies being received, unsent responses and TLS buffers, all connections together; "
	  "beyond, reading waits (a body then gets 503), a TLS handshake is refused. "
	  "0: half the memory limit (cgroup, else MemTotal) less 8 MiB, at least 4 MiB") },
	{ "INGOT_MEMORY_WAIT_MS", IG_OPT_INT, CFG(memory_wait_ms), 0, 3600000,
	  IG_HELP("how long a body over the memory budget waits for room before 503 with Retry-After") },
	{ "INGOT_HEADER_TIMEOUT_MS", IG_OPT_INT, CFG(header_timeout_ms), 1, 3600000,
	  IG_HELP("time to receive a request head (408 beyond)") },
	{ "INGOT_BODY_TIMEOUT_MS", IG_OPT_INT, CFG(body_timeout_ms), 1, 3600000,
	  IG_HELP("time to receive a request body (408 beyond)") },
	{ "INGOT_IDLE_TIMEOUT_MS", IG_OPT_INT, CFG(idle_timeout_ms), 1, 86400000,
	  IG_HELP("keep-alive connection idle time") },
	{ "INGOT_WRITE_TIMEOUT_MS", IG_OPT_INT, CFG(write_timeout_ms), 1, 3600000,
	  IG_HELP("time a client may leave responses unread") },
	{ "INGOT_MAX_OUTPUT", IG_OPT_INT, CFG(max_output), 1024, 1 << 30,
	  IG_HELP("unsent response bytes per connection before reading pauses") },
	{ "INGOT_SSE_HEARTBEAT_MS", IG_OPT_INT, CFG(sse_heartbeat_ms), 0, 3600000,
	  IG_HELP("an open Server-Sent Events stream silent this long gets a comment line (keeps proxies from cutting "
	  "it, and finds clients gone); 0: none") },
	{ "INGOT_WS_MAX_MESSAGE", IG_OPT_INT, CFG(ws_max_message), 0, 1 << 30,
	  IG_HELP("a WebSocket message's bytes at most, all its frames together (closed with 1009 beyond); "
	  "0: INGOT_MAX_BODY") },
	{ "INGOT_WS_PING_MS", IG_OPT_INT, CFG(ws_ping_ms), 0, 3600000,
	  IG_HELP("a WebSocket silent this long gets a ping (finds clients gone, keeps proxies from cutting it); "
	  "0: none") },
	{ "INGOT_STACK_SIZE", IG_OPT_INT, CFG(stack_size), 16384, 64 << 20,
	  IG_HELP("bytes of each handler's coroutine stack (rounded up to the page; only the pages touched are resident; "
	  "a handler that overflows it ends the process)") },
	{ "INGOT_MAX_WAITING", IG_OPT_INT, CFG(max_waiting), 0, 1000000,
	  IG_HELP("handlers alive at once per core (running or waiting); beyond, 503 with Retry-After: 1. "
	  "0: what keeps the process's stacks under vm.max_map_count (65,530): 30,000 over the cores") },
	{ "INGOT_GRACE_MS", IG_OPT_INT, CFG(grace_ms), 0, 3600000,
	  IG_HELP("drain time after SIGTERM/SIGINT (after the drain delay)") },
	{ "INGOT_DRAIN_DELAY_MS", IG_OPT_INT, CFG(drain_delay_ms), 0, 3600000,
	  IG_HELP("after SIGTERM/SIGINT, keep serving this long with /readyz 503, then drain") },
	{ "INGOT_ADMIN_PORT", IG_OPT_INT, CFG(admin_port), -1, 65535,
	  IG_HELP("admin listener (GET /metrics, /livez, /readyz) on HOST; 0 picks a free one; -1: none "
	  "(with LISTEN_FDS: only a socket named admin)") },
	{ "INGOT_ADMIN_HOST", IG_OPT_STR, CFG(admin_host), 0, 0,
	  IG_HELP("numeric address of the admin listener (127.0.0.1 keeps it off the network); not set: HOST") },
	{ "INGOT_ADMIN_TOKEN", IG_OPT_SECRET, CFG(admin_token), 0, 0,
	  IG_HELP("when set, the admin listener asks Authorization: Bearer <token> on all but /livez and /readyz") },
	{ "INGOT_IDLE_EXIT_MS", IG_OPT_INT, CFG(idle_exit_ms), 0, 86400000,
	  IG_HELP("exit 0 through the drain after this long with no connection open and nothing in flight; 0: never") },
	{ "INGOT_TEST_STALL_CORE", IG_OPT_INT, CFG(test_stall_core), -1, 1023,
	  IG_HELP("for tests of the systemd watchdog: this core's loop stops turning after the second WATCHDOG=1; -1: never") },
	{ "INGOT_STRICT_ENV", IG_OPT_BOOL, CFG(strict_env), 0, 0,
	  IG_HELP("an INGOT_ variable that names no setting stops the start (exit 2) instead of a warning") },
	{ "INGOT_LOG_LEVEL", IG_OPT_CHOICE, (void *)&log_levels, 0, 0, IG_HELP("error, warn, info or debug") },
	{ "INGOT_ACCESS_LOG", IG_OPT_BOOL, CFG(access_log), 0, 0, IG_HELP("log every request") },
	{ "INGOT_ACCESS_LOG_SAMPLE", IG_OPT_FRACTION, CFG(access_log_sample), 0, 0,
	  IG_HELP("share of 2xx requests the access log keeps (0 to 1, by request id); others are all kept") },
	{ "INGOT_TLS_CERT", IG_OPT_STR, CFG(tls_cert), 0, 0,
	  IG_HELP("PEM file: certificate chain, leaf first; turns HTTPS on") },
	{ "INGOT_TLS_KEY", IG_OPT_STR, CFG(tls_key), 0, 0, IG_HELP("PEM file: its private key (RSA or EC)") },
	{ "INGOT_TLS_CERT_PEM", IG_OPT_STR, CFG(tls_cert_pem), 0, 0,
	  IG_HELP("the certificate chain as PEM text, instead of a file") },
	{ "INGOT_TLS_KEY_PEM", IG_OPT_SECRET, CFG(tls_key_pem), 0, 0,
	  IG_HELP("the private key as PEM text, instead of a file") },
	{ "INGOT_TLS_CLIENT_CA", IG_OPT_STR, CFG(tls_client_ca), 0, 0,
	  IG_HELP("PEM file of CAs: HTTPS asks for a client certificate and verifies it against them (mutual TLS; "
	  "a client may send none); the document's mutualTLS scheme admits a verified one, its CN the subject") },
	{ "INGOT_TLS_PORT", IG_OPT_INT, CFG(tls_port), 0, 65535,
	  IG_HELP("HTTPS port; 0 picks a free one (ignored with LISTEN_FDS)") },
	{ "INGOT_TLS_ONLY", IG_OPT_BOOL, CFG(tls_only), 0, 0, IG_HELP("serve HTTPS only: no plain HTTP listener") },
	{ "INGOT_TLS_HANDSHAKE_TIMEOUT_MS", IG_OPT_INT, CFG(tls_handshake_timeout_ms),
	  1, 3600000, IG_HELP("a TLS handshake not done by then is cut") },
	{ "INGOT_TLS_MAX_HANDSHAKES", IG_OPT_INT, CFG(tls_max_handshakes), 1, 1000000,
	  IG_HELP("concurrent TLS handshakes per core; beyond, the oldest that sent nothing yet is "
	  "closed to make room, or else the newcomer") },
	{ "INGOT_TLS_IDLE_TIMEOUT_MS", IG_OPT_INT, CFG(tls_idle_timeout_ms), 1, 86400000,
	  IG_HELP("idle keep-alive HTTPS connection (it holds a 16 KiB TLS buffer)") },
	{ "INGOT_TLS_SESSION_CACHE", IG_OPT_INT, CFG(tls_session_cache), 0, 1 << 30,
	  IG_HELP("bytes per core for resumable TLS sessions (about 100 each; BearSSL's shared cache: "
	  "2 GiB in all at most); 0: none") },
};

/* Why HTTPS is off though a certificate was given (check_tls); empty when
 * it is not. */
static char tls_refused[240];

const char *ig_server_tls_refused(void)
{
	return tls_refused[0] ? tls_refused : NULL;
}

/* Only when a certificate is given does anything of TLS run. */
__attribute__((cold)) static const char *check_tls(char *err, size_t errlen)
{
	const struct http_config *c = &ig_server_config;
	if (!c->tls_cert[0] && !c->tls_cert_pem[0]) {
		if (c->tls_only)
			return "INGOT_TLS_ONLY needs a certificate (INGOT_TLS_CERT or INGOT_TLS_CERT_PEM)";
		if (c->tls_key[0] || c->tls_key_pem[0])
			return "a TLS private key was given without a certificate (INGOT_TLS_CERT or INGOT_TLS_CERT_PEM)";
		if (c->tls_client_ca[0])
			return "INGOT_TLS_CLIENT_CA needs HTTPS: a certificate (INGOT_TLS_CERT or INGOT_TLS_CERT_PEM)";
		return NULL;
	}
	if (c->tls_cert[0] && c->tls_cert_pem[0])
		return "give the TLS certificate once: INGOT_TLS_CERT or INGOT_TLS_CERT_PEM, not both";
	if (c->tls_key[0] && c->tls_key_pem[0])
		return "give the TLS private key once: INGOT_TLS_KEY or INGOT_TLS_KEY_PEM, not both";
	if (!c->tls_key[0] && !c->tls_key_pem[0])
		return "a TLS certificate was given without its private key (INGOT_TLS_KEY or INGOT_TLS_KEY_PEM)";
	if (!c->tls_only && c->tls_port == c->port && c->port != 0)
		return "INGOT_TLS_PORT must differ from PORT";
	bool no_entropy;
	ig_http_server.tls = ig_tls_server_credentials(c->tls_cert, c->tls_cert_pem[0] ? c->tls_cert_pem : NULL,
						    c->tls_key, c->tls_key_pem[0] ? c->tls_key_pem : NULL,
						    &no_entropy, err, errlen);
	if (!ig_http_server.tls) {
		if (!no_entropy || c->tls_only)
			return err;
		/* No source fit for keys (a VM without an entropy device):
		   HTTPS stays off and plain HTTP serves; the start says so in
		   an error line (ig_server_tls_refused). A bad certificate or
		   key still stops the start: that is the operator's to fix. */
		size_t n = strnlen(err, sizeof tls_refused - 1);
		memcpy(tls_refused, err, n);
		tls_refused[n] = 0;
		return NULL;
	}
	if (!c->tls_client_ca[0])
		return ig_http_server.document_client_certs
			       ? "the document's mutualTLS scheme needs INGOT_TLS_CLIENT_CA (a PEM file of the client CAs) "
				 "when HTTPS is on"
			       : NULL;
	return ig_tls_client_ca_load(c->tls_client_ca, err, errlen) == 0 ? NULL : err;
}

/* The admin port is never an API port: a scrape must not reach the app. */
__attribute__((cold)) static const char *check_server(char *err, size_t errlen)
{
	const struct http_config *c = &ig_server_config;
	bool tls = c->tls_cert[0] || c->tls_cert_pem[0];
	if (c->admin_port > 0 && ((!c->tls_only && c->admin_port == c->port) || (tls && c->admin_port == c->tls_port)))
		return "INGOT_ADMIN_PORT must differ from PORT and INGOT_TLS_PORT";
	return check_tls(err, errlen);
}

/* net/start.c runs it: the parse of every part is the check. */
static const struct ig_command server_commands[] = {
	{ "check", IG_HELP("read and check every setting and every file a start reads (certificates, keys, CA "
		   "bundles), then exit 0, or 2 naming what is wrong; opens no listener, resolves no name") },
};

const struct ig_settings ig_http_server_settings = {
	.part = "server", .opts = server_rows, .count = IG_COUNTOF(server_rows), .check = check_server,
	.values = &ig_server_config, .defaults = &ig_http_config_defaults, .size = sizeof ig_server_config,
	.commands = server_commands, .ncommands = IG_COUNTOF(server_commands),
};
