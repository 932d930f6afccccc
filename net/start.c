/* The process's start (ig_main): the VM's PID-1 duties, then every linked
 * part's settings parsed as one table (the server, the outbound client, its
 * DNS resolver, the TLS trust, the network stack, the database, Lambda, JWT
 * authentication),
 * the metrics sources of the parts below the server, then the server. It
 * sits above the parts it lists, so none of them knows the others' settings.
 * The outbound client, the resolver, the trust and the database are
 * referred to weakly: the runtime is linked as an archive, so each is in
 * the binary only when the app's code calls it (its own objects refer to
 * their settings); the settings of one that is not are ignored with a
 * warning (unlinked.c). The app's lifecycle hooks (include/ingot/
 * lifecycle.h) are called from here, or handed to the server. */
#include "kernel/runtime/clock.h"
#include "kernel/runtime/config.h"
#include "kernel/runtime/loop.h"
#include "kernel/process/exit_codes.h"
#include "kernel/process/fatal.h"
#include "kernel/process/vm.h"
#include "net/client/settings.h"
#include "net/cron/jobs.h"
#include "net/server/server.h"
#include "net/lambda/lambda.h"
#include "net/metrics/metrics.h"
#include "net/metrics/process.h"
#include "net/pg/settings.h"
#include "net/pubsub/provider.h"
#include "net/pubsub/push_settings.h"
#include "net/auth/settings.h"
#include "net/stack.h"
#include "net/start.h"
#include "net/tls/tls.h"
#include "net/http/cors.h"
#include "net/http/hooks.h"
#include "net/http/client_addr.h"
#include "net/unlinked.h"
#include "ingot/lifecycle.h"
#include "ingot/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEAK __attribute__((weak))
extern const struct ig_settings ig_client_settings WEAK;
extern const struct ig_settings ig_dns_settings WEAK;
extern const struct ig_settings ig_tls_trust_settings WEAK;
extern const struct ig_settings ig_pg_settings WEAK;
extern const struct ig_settings ig_auth_settings WEAK;
extern const struct ig_settings ig_cron_settings WEAK;
extern const struct ig_settings ig_pubsub_settings WEAK;
extern const struct ig_settings ig_pubsub_sqs_settings WEAK;
extern const struct ig_settings ig_pubsub_push_settings WEAK;
extern struct ig_pubsub_push_config ig_pubsub_push_config WEAK;
extern struct ig_auth_settings_values ig_auth_settings_values WEAK;
bool ig_security_bearer(ig_ctx *ctx) WEAK;
extern struct ig_metrics_source ig_client_metrics_source WEAK;
extern struct ig_metrics_source ig_auth_metrics_source WEAK;
extern struct ig_metrics_source ig_pubsub_metrics_source WEAK;
extern struct ig_metrics_source ig_pubsub_delivery_metrics_source WEAK;
const struct ig_pubsub_provider *ig_pubsub_provider(void) WEAK;
extern struct ig_pubsub_config ig_pubsub_config WEAK;
extern const struct ig_build_info ig_build_info WEAK;
extern const struct ig_settings ig_app_settings WEAK;
extern const struct ig_lifecycle ig_app_lifecycle WEAK;
bool ig_pg_start(void) WEAK;
void ig_pg_core_start(struct ig_loop *loop, int core_count) WEAK;

/* In --help's order; NULL: not linked. */
static const struct ig_settings *const settings_parts[] = {
	&ig_http_server_settings,
	&ig_cors_settings,
	&ig_hooks_settings,
	&ig_client_addr_settings,
	&ig_client_settings,
	&ig_dns_settings,
	&ig_tls_trust_settings,
	&ig_net_settings,
	&ig_pg_settings,
	&ig_lambda_settings,
	&ig_auth_settings,
	&ig_cron_settings,
	&ig_pubsub_settings,
	&ig_pubsub_sqs_settings,
	&ig_pubsub_push_settings,
};

/* Names the build and the tests put into a service's environment (make run
 * under an app, tests/run): not settings, and not mistakes either. */
static const char build_names[] = "INGOT_ROOT INGOT_LOCK INGOT_BIN INGOT_BIN_MBEDTLS INGOT_BIN_NOTLS "
				  "INGOT_FETCH_BIN INGOT_PGCHECK_BIN INGOT_TEST_NET";

/* The linked parts, then the app's rows under its name: what --help lists. */
static size_t all_parts(const struct ig_settings **parts, struct ig_settings *app_part, const char *app_name)
{
	size_t n = 0;
	for (size_t i = 0; i < IG_COUNTOF(settings_parts); i++)
		if (settings_parts[i])
			parts[n++] = settings_parts[i];
	if (&ig_app_settings) {
		*app_part = ig_app_settings;
		app_part->part = app_name;
		parts[n++] = app_part;
	}
	return n;
}

struct unknown_env {
	bool strict;
	char *error; /* the first one's message, for a caller that reports it */
	size_t error_cap;
};

__attribute__((cold)) static void report_unknown(const char *name, size_t len, const char *nearest, void *arg)
{
	struct unknown_env *u = arg;
	if (u->strict) {
		char msg[IG_CONFIG_ERROR_MAX];
		snprintf(msg, sizeof msg, "%.*s is not a setting%s%s%s (INGOT_STRICT_ENV is on)", (int)len, name,
			 nearest ? " (did you mean " : "", nearest ? nearest : "", nearest ? "?)" : "");
		fprintf(stderr, "ingot: %s\n", msg);
		if (u->error && u->error_cap && !u->error[0])
			snprintf(u->error, u->error_cap, "%s", msg);
		return;
	}
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "an INGOT_ variable that names no setting is ignored")) {
		ig_log_str(&l, "name", name, len);
		if (nearest)
			ig_log_cstr(&l, "did_you_mean", nearest);
		ig_log_end(&l);
	}
}

/* The names no row declares but that are not mistakes: the optional
 * parts' (kept off the startup pages with the warning that names them) and
 * the build's. Asked only for a name no row declares. */
__attribute__((cold)) static const char *known_names(size_t i)
{
	if (i < IG_COUNTOF(ig_optional_setting_names))
		return ig_optional_setting_names[i];
	return i == IG_COUNTOF(ig_optional_setting_names) ? build_names : NULL;
}

/* Every INGOT_ variable that no row of parts, no optional part and no build
 * name declares: warned about, or with strict each named on stderr. The
 * number of them. */
static size_t check_env(const struct ig_settings *const *parts, size_t n, bool strict, char *error, size_t error_cap)
{
	struct unknown_env u = { strict, error, error_cap };
	return ig_config_unknown_env(parts, n, known_names, report_unknown, &u);
}

/* INGOT_ is the runtime's prefix: an app row named so would read as the
 * runtime's in every message and list. */
static const char *app_row_misnamed(void)
{
	for (size_t i = 0; i < ig_app_settings.count; i++)
		if (strncmp(ig_app_settings.opts[i].env, "INGOT_", 6) == 0)
			return ig_app_settings.opts[i].env;
	return NULL;
}

/* Its message, as a bad setting's: on stderr and in args->error. */
__attribute__((cold, noinline)) static enum ig_config_result report_misnamed(const char *name,
									     const struct ig_config_args *args)
{
	char msg[IG_CONFIG_ERROR_MAX];
	snprintf(msg, sizeof msg, "the app's setting %s starts with INGOT_, the runtime's prefix: rename it", name);
	fprintf(stderr, "ingot: %s\n", msg);
	if (args->error && args->error_cap)
		snprintf(args->error, args->error_cap, "%s", msg);
	return IG_CONFIG_ERROR;
}

enum ig_config_result ig_settings_parse(const struct ig_config_args *args)
{
	const struct ig_settings *parts[IG_COUNTOF(settings_parts) + 1];
	struct ig_settings app_part;
	size_t n = all_parts(parts, &app_part, args->name);
	const char *misnamed = &ig_app_settings ? app_row_misnamed() : NULL;
	if (misnamed)
		return report_misnamed(misnamed, args);
	enum ig_config_result r = ig_config_parse(parts, n, args);
	if (r != IG_CONFIG_OK)
		return r;
	bool strict = ig_server_config.strict_env;
	if (check_env(parts, n, strict, args->error, args->error_cap) && strict)
		return IG_CONFIG_ERROR;
	const struct ig_linked_parts linked = { &ig_client_settings, &ig_dns_settings, &ig_tls_trust_settings, &ig_pg_settings };
	if (!linked.client || !linked.dns || !linked.trust || !linked.pg)
		ig_unlinked_settings_warn(&linked);
	return r;
}

int ig_check_env(const struct ig_app *app)
{
	const struct ig_settings *parts[IG_COUNTOF(settings_parts) + 1];
	struct ig_settings app_part;
	size_t n = all_parts(parts, &app_part, app->name);
	bool strict = false;
	const char *v = getenv("INGOT_STRICT_ENV");
	if (v && ig_config_parse_bool(v, &strict) != 0) {
		fprintf(stderr, "ingot: INGOT_STRICT_ENV: expected true or false, got \"%s\"\n", v);
		return IG_EXIT_CONFIG;
	}
	return check_env(parts, n, strict, NULL, 0) && strict ? IG_EXIT_CONFIG : IG_EXIT_OK;
}

/* --version's lines after "NAME VERSION": ingot's version and what the
 * binary was built from (include/ingot/version.h), one "key value" a line. */
__attribute__((cold)) static void print_version_detail(void)
{
	printf("ingot %s\n", IG_VERSION);
	const struct ig_build_info *b = &ig_build_info;
	if (b && b->ingot_commit[0])
		printf("ingot-commit %s\n", b->ingot_commit);
	if (b && b->app_commit[0])
		printf("app-commit %s\n", b->app_commit);
	printf("tls %s\n", ig_tls_backend_name());
	if (b && b->time > 0) {
		char when[20];
		when[ig_format_utc(when, (time_t)b->time)] = 0;
		printf("built %sZ\n", when);
	}
}

/* Takes --check out of argv (the parse would call it an unknown flag);
 * true when it was there. */
static bool take_check_flag(int *argc, char **argv)
{
	bool found = false;
	int n = 1;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--check") == 0)
			found = true;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	*argc = n;
	return found;
}

/* Each core's start: net/pg's pool when a database is configured, core
 * 0's JWKS fetch when keys come over HTTP, then the app's core_init;
 * installed only when there is any. */
static bool pg_started, cron_started;
static const struct ig_pubsub_provider *pubsub_started; /* its core_start runs */
static const struct ig_app_jwt *jwks_fetched;
static void core_start(struct ig_loop *loop, int core_count)
{
	if (pg_started)
		ig_pg_core_start(loop, core_count);
	if (cron_started) /* after the pool: its first claim may use it */
		ig_api_cron.ops->core_start(loop, core_count);
	if (pubsub_started) /* after the pool: PostgreSQL's claims use it */
		pubsub_started->core_start(loop, core_count);
	if (jwks_fetched && loop->core == 0)
		jwks_fetched->core_start(loop);
	if (&ig_app_lifecycle && ig_app_lifecycle.core_init)
		ig_app_lifecycle.core_init((unsigned)loop->core, (unsigned)core_count);
}

/* The exit status of an init that returned why, printed (and posted to
 * Lambda's init error under Lambda). */
__attribute__((cold, noinline)) static int app_init_failed(const char *why)
{
	fprintf(stderr, "ingot: the app's init failed: %s\n", why);
	if (ig_lambda_requested()) {
		char msg[IG_CONFIG_ERROR_MAX];
		snprintf(msg, sizeof msg, "the app's init failed: %s", why);
		return ig_lambda_init_error(msg);
	}
	return IG_EXIT_CONFIG;
}

/* Whether the app wants any of its cron jobs in this process. Asked here,
 * not in net/cron: a process whose jobs are all off touches none of the
 * scheduler's pages (net/cold.ld). */
static bool cron_wanted(void)
{
	for (size_t i = 0; i < ig_api_cron.count; i++)
		if (ig_cron_job_on(ig_api_cron.jobs[i].name, &ig_app_lifecycle))
			return true;
	return false;
}

/* The app's init, before any listener: 0, or the exit status. */
static int app_init(void)
{
	if (!&ig_app_lifecycle || !ig_app_lifecycle.init)
		return IG_EXIT_OK;
	char err[IG_CONFIG_ERROR_MAX] = "";
	const char *why = ig_app_lifecycle.init(err, sizeof err);
	return why ? app_init_failed(why) : IG_EXIT_OK;
}

static int start(int argc, char **argv, const struct ig_app *app)
{
	/* --check: the parse below is the whole check (each part's check
	   reads and parses its files); nothing after it runs. */
	bool check_only = take_check_flag(&argc, argv);
	uint64_t t0_us = ig_clock_counts_from_boot ? 0 : ig_monotonic_us();
	char error[IG_CONFIG_ERROR_MAX] = "";
	const struct ig_config_args args = {
		.argc = argc,
		.argv = argv,
		.name = app->name,
		.version = app->version,
		.version_detail = print_version_detail,
		.command_line_words = ig_vm_active(),
		.error = error,
		.error_cap = sizeof error,
	};
	if (app->cors)
		ig_cors_document(app->cors);
	ig_http_server.document_client_certs = app->client_certs;
	switch (ig_settings_parse(&args)) {
	case IG_CONFIG_OK: break;
	case IG_CONFIG_EXIT: return IG_EXIT_OK;
	case IG_CONFIG_ERROR:
		return ig_lambda_requested() && !check_only ? ig_lambda_init_error(error) : IG_EXIT_CONFIG;
	}
	if (check_only) {
		printf("%s: configuration ok\n", app->name);
		return IG_EXIT_OK;
	}
	ig_hooks_start(app);
	/* The parts' metrics sources, before any loop runs; a one-shot
	   command (--help, --version) has returned above and registers none. */
	ig_process_metrics_register(app->version, ig_tls_backend_name, &ig_build_info);
	ig_tls_metrics_register();
	if (&ig_client_metrics_source)
		ig_metrics_register(&ig_client_metrics_source);
	if (&ig_auth_metrics_source)
		ig_metrics_register(&ig_auth_metrics_source);
	if (&ig_pubsub_metrics_source)
		ig_metrics_register(&ig_pubsub_metrics_source);
	if (&ig_pubsub_delivery_metrics_source)
		ig_metrics_register(&ig_pubsub_delivery_metrics_source);
	pg_started = ig_pg_start && ig_pg_start();
	if (app->jwt && app->jwt->prepare(app->jwt))
		jwks_fetched = app->jwt;
	/* Push delivery takes the door's bearer JWT too, where the document
	   has a bearer scheme and a key set is configured. */
	if (&ig_pubsub_push_config && app->jwt && ig_security_bearer && &ig_auth_settings_values &&
	    (ig_auth_settings_values.jwks_file[0] || ig_auth_settings_values.jwks_url[0] ||
	     ig_auth_settings_values.oidc_discovery_url[0] || app->jwt->discovery_url))
		ig_pubsub_push_config.jwt = ig_security_bearer;
	/* The app's init may log: at the level asked for. */
	ig_log_set_threshold((enum ig_log_level)ig_server_config.log_level);
	int rc = app_init();
	if (rc != IG_EXIT_OK)
		return rc;
	/* Pub/Sub's provider (net/pubsub/provider.h), when the document has
	   topics (a publish call's reference links it): its consumers, and
	   NATS's client per core; under Lambda, frozen between invocations,
	   what a publish needs alone (NATS's client: no consumer, no cron
	   claim). Asked only with a database or INGOT_PUBSUB_URL: a process
	   with neither touches none of Pub/Sub's pages. Before cron's: NATS's
	   provider claims cron's ticks too (net/cron/jobs.h). */
	if (ig_pubsub_provider && &ig_api_pubsub &&
	    (pg_started || (&ig_pubsub_config && ig_pubsub_config.url && ig_pubsub_config.url[0]))) {
		const struct ig_pubsub_provider *p = ig_pubsub_provider();
		if (p->prepare(&ig_api_pubsub, ig_lambda_requested()))
			pubsub_started = p;
	}
	/* The cron timer, when the document has jobs and the app wants any
	   of them here; never under Lambda, whose function is frozen between
	   invocations (its jobs come as ingot.cron events). */
	if (&ig_api_cron && !ig_lambda_requested() && cron_wanted())
		cron_started = ig_api_cron.ops->prepare(&ig_api_cron, &ig_app_lifecycle);
	if (pg_started || cron_started || pubsub_started || jwks_fetched || (&ig_app_lifecycle && ig_app_lifecycle.core_init))
		ig_http_core_start_hook = core_start;
	if (&ig_app_lifecycle) {
		ig_http_drain_hook = ig_app_lifecycle.drain;
		ig_http_stopped_hook = ig_app_lifecycle.stopped;
	}
	/* A fatal signal's log line names the request a thread was running;
	   this thread runs core 0 (or Lambda's loop), the others set their
	   own stack as they start (net/server/drain.c). */
	ig_fatal_signals_install(ig_http_log_exchange);
	ig_fatal_thread_init();
	/* Under Lambda: invocations from its Runtime API, no listener. */
	return ig_lambda_requested() ? ig_lambda_serve(app, t0_us) : ig_http_serve(app, t0_us);
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
