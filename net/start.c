/* The process's start (ig_main): the VM's PID-1 duties, then every part's
 * settings parsed as one table (the server, the outbound client, its DNS
 * resolver, the TLS trust, the network stack), the metrics sources of the
 * parts below the server, then the server. It sits above the parts it
 * lists, so none of them knows the others' settings. */
#include "kernel/runtime/clock.h"
#include "kernel/runtime/config.h"
#include "kernel/process/vm.h"
#include "net/client/client.h"
#include "net/client/settings.h"
#include "net/dns/dns_settings.h"
#include "net/server/server.h"
#include "net/lambda/lambda.h"
#include "net/metrics/process.h"
#include "net/pg/settings.h"
#include "net/stack.h"
#include "net/start.h"
#include "net/tls/tls.h"

/* In --help's order. */
static const struct ig_settings *const settings_parts[] = {
	&http_server_settings,
	&client_settings,
	&dns_settings,
	&ig_tls_trust_settings,
	&ig_net_settings,
	&ig_pg_settings,
	&ig_lambda_settings,
};

enum ig_config_result ig_settings_parse(const struct ig_config_args *args)
{
	return ig_config_parse(settings_parts, IG_COUNTOF(settings_parts), args);
}

static int start(int argc, char **argv, const struct ig_app *app)
{
	uint64_t t0_us = ig_clock_counts_from_boot ? 0 : ig_monotonic_us();
	char error[IG_CONFIG_ERROR_MAX] = "";
	const struct ig_config_args args = {
		.argc = argc,
		.argv = argv,
		.name = app->name,
		.version = app->version,
		.command_line_words = ig_vm_active(),
		.error = error,
		.error_cap = sizeof error,
	};
	switch (ig_settings_parse(&args)) {
	case IG_CONFIG_OK: break;
	case IG_CONFIG_EXIT: return 0;
	case IG_CONFIG_ERROR: return ig_lambda_requested() ? ig_lambda_init_error(error) : 2;
	}
	/* The parts' metrics sources, before any loop runs; a one-shot
	   command (--help, --version) has returned above and registers none. */
	ig_process_metrics_register(app->version, tls_backend_name);
	ig_tls_metrics_register();
	ig_client_metrics_register();
	if (ig_pg_start())
		http_core_start_hook = ig_pg_core_start;
	/* Under Lambda: invocations from its Runtime API, no listener. */
	return ig_lambda_requested() ? ig_lambda_serve(app, t0_us) : http_serve(app, t0_us);
}

int ig_main(int argc, char **argv, const struct ig_app *app)
{
	/* As a VM's init: set the machine up first, so a failure is on the
	   console. Elsewhere (a container's PID 1 included) this does nothing. */
	if (ig_vm_init() != 0)
		ig_vm_poweroff(1);
	int rc = start(argc, argv, app);
	if (ig_vm_active())
		ig_vm_poweroff(rc); /* PID 1 of a machine must not return */
	return rc;
}
