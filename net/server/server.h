/* The server: the process's listeners, one loop per core and the drain,
 * split by concern over the files of net/server. The top half is the contract
 * with the process's start (net/start.c); the rest is shared by the
 * server's own files only. */
#ifndef NET_SERVER_SERVER_H
#define NET_SERVER_SERVER_H

#include "net/http/internal.h"
#include "kernel/runtime/config.h"

/* The server's rows of the settings table (PORT, HOST, INGOT_* of the
 * server and its HTTPS listener); its check loads the TLS credentials. */
extern const struct ig_settings ig_http_server_settings;

/* Serves app with the parsed settings until SIGTERM/SIGINT and the drain;
 * t0_us is when the start began (for the "listening" line's startup_us).
 * Returns the process exit code. */
int ig_http_serve(const struct ig_app *app, uint64_t t0_us);

/* Run on each core's own thread once its loop is set up, before it
 * serves: a part below the app that keeps state per core (net/pg's pools)
 * is set here by the start, before ig_http_serve. NULL: nothing. */
extern void (*ig_http_core_start_hook)(struct ig_loop *loop, int core_count);
/* Set by the start before ig_http_serve (the app's, include/ingot/
 * lifecycle.h), NULL: nothing. The drain hook runs once on core 0's thread
 * when the stop begins (the signal, or the idle exit), the stopped hook
 * once on the main thread after every core's loop ended, before the
 * "stopped" line. */
extern void (*ig_http_drain_hook)(void);
extern void (*ig_http_stopped_hook)(void);

/* ---- shared by the server's files ---- */

struct tls_credentials;

/* The parsed settings, the server rows' targets: zero until the parse
 * copies ig_http_config_defaults (net/http/core.c) into them. */
extern struct http_config ig_server_config;
/* Why HTTPS is off though a certificate was given: TLS could not be
 * seeded for want of a source fit for keys (net/tls/backend.h's
 * IG_TLS_NO_ENTROPY), and plain HTTP serves alone. NULL when HTTPS is on
 * or was not asked for. After the settings' check. */
const char *ig_server_tls_refused(void);

struct ig_http_server {
	const struct tls_credentials *tls; /* NULL when TLS is off; read-only */
	/* Set before the settings' parse: the document has a mutualTLS scheme
	   (ig_app.client_certs), so HTTPS without INGOT_TLS_CLIENT_CA stops
	   the start. */
	bool document_client_certs;
	struct http_core *cores;
	int core_count;
	_Atomic int cores_finished; /* loops other than core 0 that returned */
	/* Core 0 runs on the main thread and also owns the process's duties:
	   the signalfd and the grace timer. */
	int signal_fd;
	struct ig_io signal_io;
	struct ig_timer delay_timer, grace_timer;
	bool stopping, grace_over;
	uint64_t watchdog_pings; /* WATCHDOG=1 sent (core 0's) */
	_Atomic bool watchdog_pinged_twice; /* for INGOT_TEST_STALL_CORE */
	/* The listeners' memory (ig_server_listener_at), in the cores' mapping */
	char *listeners;
	size_t listener_size;
};
extern struct ig_http_server ig_http_server;

/* conn_limit.c: before the listeners open, sets INGOT_MAX_CONNS (0: not
 * set) from nofile (ig_raise_nofile's) and the cores, or lowers it to fit
 * with a warning. */
void ig_server_fit_conns(long nofile, int cores);
/* Sets the memory budget's limit (mem_budget.c) and logs it: after
 * "listening", since it may read the cgroup. */
void ig_server_memory_budget(void);

/* listen.c: the listeners, over the process's stack (net/stack.h).
 * Slots of their memory: core i's HTTP listener is 2i, its HTTPS one
 * 2i + 1, the admin listener's 2n (n cores). */
#define IG_SERVER_LISTENER_SLOTS(n) (2 * (size_t)(n) + 1)
#define IG_SERVER_ADMIN_SLOT(n) (2 * (size_t)(n))
struct ig_net_listener *ig_server_listener_at(size_t slot);
/* Opens core's listeners before any thread starts (the first may pick
 * the port: *port and *tls_port are updated); 0, or -1 with err set. */
int ig_server_listen(struct http_core *core, int *port, int *tls_port, char *err, size_t errlen);
/* On core's loop: starts the stack there and core's listeners on it,
 * their seeds in seeds (2 x the stack's seed_size bytes of core's memory);
 * 0, or -1 with err set. */
int ig_server_serve(struct http_core *core, char *seeds, char *err, size_t errlen);
/* The HTTPS listeners' accept: wraps the stream in TLS. */
void *ig_server_tls_accept(void *arg, struct ig_transport *lower);
/* core's TLS state (TLS on only); 0 or -1. */
int ig_server_tls_core_setup(struct http_core *core);
void ig_server_stop_accepting(struct http_core *core);
/* Connections core's listeners refused (a metric; any thread). */
uint64_t ig_server_refused(const struct http_core *core);
/* Connections core's listeners closed at the descriptor limit (a metric;
 * any thread). */
uint64_t ig_server_shed(const struct http_core *core);

/* activation.c: socket activation (LISTEN_FDS, LISTEN_PID,
 * LISTEN_FDNAMES). take reads and unsets them, checks each fd (a listening
 * stream socket) and sets the settings from what was given (the ports, TLS
 * only with an https socket, the admin port from an admin socket, -1 if
 * none); 0, or -1 with err (the caller exits 2). With active set, the
 * listeners are these sockets and nothing is bound: listener gives a core
 * its own descriptor of fd (-1 with err), release closes the originals of
 * http and https once every core has its own (admin's is the admin
 * listener's). port: the fd's bound port (0: none). */
struct ig_server_activation {
	bool active;
	int http_fd, https_fd, admin_fd; /* -1: not given */
};
extern struct ig_server_activation ig_server_activation;
int ig_server_activation_take(char *err, size_t errlen);
int ig_server_activation_listener(int fd, char *err, size_t errlen);
void ig_server_activation_release(void);
int ig_server_activation_port(int fd);

/* idle.c: INGOT_IDLE_EXIT_MS (> 0). start arms core's tick on its
 * own loop; core 0's tick starts the drain once every core has been idle
 * that long. */
void ig_server_idle_core_start(struct http_core *core);
/* log_level.c: the log level while running. The current level's word;
 * a word's level (error, warn, info, debug) or -1; a change, logged with
 * what made it ("SIGUSR1", "admin"). */
const char *ig_server_log_level_name(void);
int ig_server_log_level_parse(const char *word, size_t len);
void ig_server_log_level_set(int level, const char *by);

/* reload.c: SIGHUP, on core 0: loads the TLS certificate and key from
 * their files again and posts them to every core (or logs why not). */
void ig_server_reload(void);
/* On core's own thread, after a reload posted to it: adopts the new
 * credentials. */
void ig_server_tls_adopt(struct http_core *core);
/* watchdog.c: starts the core's tick when systemd asked for the watchdog. */
void ig_server_watchdog_core_start(struct http_core *core);

/* layout.c: core's loop, pools (seeded from one mapping) and
 * listeners; 0, or -1 with err set. */
int ig_server_core_setup(struct http_core *core, char *err, size_t errlen);

/* drain.c: the signals, the drain and the other cores' threads. */
void ig_server_on_core_wake(struct ig_loop *loop, void *arg);
void ig_server_on_drained(struct http_core *core);
int ig_server_watch_signals(struct http_core *core0);
/* Starts the drain now, without the drain delay, as a signal would (the
 * "draining" line says reason); on core 0's loop. False if a stop is under
 * way already. */
bool ig_server_drain_now(const char *reason);
void *ig_server_core_main(void *core);
/* server.c, on core 0's loop (or, once they run, any core's: then
 * nothing): starts the other cores' threads, where the stack had them wait
 * (ig_net_stack's after_first_delivery). */
void ig_server_start_cores(void);
/* On core 0's loop, as a stop begins: cores not started yet never start,
 * and count as returned (the drain waits for none of them). */
void ig_server_forgo_cores(void);
/* Wakes core's loop to read its flags, if it exists (a loop that starts
 * later reads them as it starts). */
void ig_server_wake_core(struct http_core *core);

/* admin.c: the admin listener (INGOT_ADMIN_PORT; none when -1).
 * open opens it before any thread starts (the kernel's sockets bind it
 * then: 0, or -1 with err, and the caller exits 2); start serves it on
 * core 0's loop once that is set up and logs "admin listening". */
int ig_server_admin_open(char *err, size_t errlen);
int ig_server_admin_start(struct http_core *core0, char *err, size_t errlen);
void ig_server_admin_stop_accepting(void);

/* server_metrics.c: the server's families, summed over the cores when
 * scraped (registered by ig_http_serve). */
extern struct ig_metrics_source ig_server_metrics_source;

/* stats.c: the final "stopped" line, summed over the cores. */
uint64_t ig_server_log_stopped(void);

#endif
