/* The outbound client's metrics (client_metrics.c), which the process's
 * start registers: no app calls them. */
#ifndef NET_CLIENT_CLIENT_METRICS_H
#define NET_CLIENT_CLIENT_METRICS_H

#include "net/metrics/metrics.h"

/* The client's metrics source (net/metrics/metrics.h):
 * http_client_request_duration_seconds{server_address, server_port,
 * http_request_method, http_response_status_code}, ingot_client_errors_total
 * {server_address, kind} (kind: ig_client_error_name) and
 * ingot_client_connections{server_address, server_port, state=active|idle},
 * summed over the cores (client_metrics.c). net/start.c registers it with
 * ig_metrics_register, before the loops run, when the client is linked (it
 * refers to it weakly): data only, so that the start runs no code of
 * net/client, which net/cold.ld keeps off the startup path's pages. */
extern struct ig_metrics_source ig_client_metrics_source;

#endif
