/* The outbound client's options: their defaults (ig_client_opts_resolve: an
 * option left zero takes its default) and their rows in the settings
 * table, the options every core's shared Agent is made with
 * (ig_core_agent). The rows' text is not in net/cold.ld's cold block: the
 * start reads them, and must not fault in the client's pages to do so. */
#include "internal.h"
#include "settings.h"

/* Each option's default: the one declaration, copied into the settings'
 * values by the parse and taken by an option an Agent or a Pool is given
 * as zero. */
static const ig_client_opts client_opts_defaults = {
	.connections = 8,
	.pipelining = 1,
	.connect_timeout_ms = 10000,
	.headers_timeout_ms = 30000,
	.body_timeout_ms = 30000,
	.keep_alive_ms = 4000,
	.max_header_bytes = 16384,
	.max_headers = 100,
	.max_body_bytes = 1u << 20,
	.max_queued = 1024,
};

ig_client_opts ig_client_settings_opts;

#define DEFAULT(field) \
	if (!o->field) \
		o->field = client_opts_defaults.field

void ig_client_opts_resolve(ig_client_opts *o, const ig_client_opts *in)
{
	*o = in ? *in : client_opts_defaults;
	DEFAULT(connections);
	DEFAULT(pipelining);
	DEFAULT(connect_timeout_ms);
	DEFAULT(headers_timeout_ms);
	DEFAULT(body_timeout_ms);
	DEFAULT(keep_alive_ms);
	DEFAULT(max_header_bytes);
	DEFAULT(max_headers);
	DEFAULT(max_body_bytes);
	DEFAULT(max_queued);
	if (o->max_header_bytes > CLIENT_MAX_HEAD_BYTES)
		o->max_header_bytes = CLIENT_MAX_HEAD_BYTES;
	if (o->max_headers > CLIENT_MAX_HEADERS)
		o->max_headers = CLIENT_MAX_HEADERS;
}

#define OPT(field) &ig_client_settings_opts.field

static const struct ig_option client_rows[] = {
	{ "INGOT_CLIENT_CONNECTIONS", IG_OPT_U32, OPT(connections), 1, 65536,
	  IG_HELP("outbound connections per origin") },
	{ "INGOT_CLIENT_PIPELINING", IG_OPT_U32, OPT(pipelining), 1, 1000,
	  IG_HELP("outbound requests in flight per connection") },
	{ "INGOT_CLIENT_CONNECT_TIMEOUT_MS", IG_OPT_U32, OPT(connect_timeout_ms), 1,
	  3600000, IG_HELP("name resolution and TCP connect") },
	{ "INGOT_CLIENT_HEADERS_TIMEOUT_MS", IG_OPT_U32, OPT(headers_timeout_ms), 1,
	  3600000, IG_HELP("from a request's turn to its response head (a TLS handshake counts)") },
	{ "INGOT_CLIENT_BODY_TIMEOUT_MS", IG_OPT_U32, OPT(body_timeout_ms), 1, 3600000,
	  IG_HELP("longest stall between two pieces of a response body") },
	{ "INGOT_CLIENT_KEEP_ALIVE_MS", IG_OPT_U32, OPT(keep_alive_ms), 1, 3600000,
	  IG_HELP("idle outbound connection expiry") },
	{ "INGOT_CLIENT_MAX_HEADER_BYTES", IG_OPT_U32, OPT(max_header_bytes), 256,
	  CLIENT_MAX_HEAD_BYTES, IG_HELP("response head bytes") },
	{ "INGOT_CLIENT_MAX_HEADERS", IG_OPT_U32, OPT(max_headers), 1, CLIENT_MAX_HEADERS,
	  IG_HELP("response header fields") },
	{ "INGOT_CLIENT_MAX_BODY", IG_OPT_U64, OPT(max_body_bytes), 1, 1ll << 32,
	  IG_HELP("response body bytes that ig_fetch takes") },
	{ "INGOT_CLIENT_MAX_QUEUED", IG_OPT_U32, OPT(max_queued), 1, 1 << 20,
	  IG_HELP("calls waiting for a connection per origin") },
};

const struct ig_settings ig_client_settings = {
	.part = "client", .opts = client_rows, .count = IG_COUNTOF(client_rows),
	.values = &ig_client_settings_opts, .defaults = &client_opts_defaults, .size = sizeof ig_client_settings_opts,
};
