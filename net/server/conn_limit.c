/* INGOT_MAX_CONNS against the descriptor limit, once at start: where the
 * stack's streams are descriptors, the connections per core that
 * RLIMIT_NOFILE can hold once the process's own descriptors and a share
 * for outbound streams are set aside. Unset, the setting takes that
 * (at most the in-process ceiling); set beyond it, it is lowered, with
 * one warning. No system call: the limit comes from ig_raise_nofile. */
#include "server.h"
#include "ingot/log.h"
#include "net/stack.h"

/* stdio, the signalfd, the log, files a start or a handler may open, the
 * admin listener and its spares (admin.c) */
#define FIXED_FDS 32
/* each core's epoll and wake eventfd, its two listeners and their spares */
#define PER_CORE_FDS 6
/* Connections per core however few descriptors there are: below this a
   server serves nothing useful, and the shedding (net/sock) covers it. */
#define FLOOR_PER_CORE 4

__attribute__((cold)) void ig_server_fit_conns(long nofile, int cores)
{
	struct http_config *cfg = &ig_server_config;
	bool set = cfg->max_conns > 0;
	if (!ig_net_stack->streams_are_fds || nofile < 0) { /* no descriptors, or RLIM_INFINITY */
		if (!set)
			cfg->max_conns = IG_HTTP_MAX_CONNS_CEILING;
		return;
	}
	/* A quarter for the outbound client's and the database's streams. */
	long left = nofile - FIXED_FDS - (long)cores * PER_CORE_FDS - nofile / 4;
	long fit = left / cores;
	if (fit < FLOOR_PER_CORE)
		fit = FLOOR_PER_CORE;
	if (!set) {
		cfg->max_conns = fit < IG_HTTP_MAX_CONNS_CEILING ? fit : IG_HTTP_MAX_CONNS_CEILING;
		return;
	}
	if (cfg->max_conns <= fit)
		return;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "INGOT_MAX_CONNS lowered to fit the descriptor limit")) {
		ig_log_int(&l, "max_conns_set", cfg->max_conns);
		ig_log_int(&l, "max_conns", fit);
		ig_log_int(&l, "nofile", nofile);
		ig_log_int(&l, "threads", cores);
		ig_log_end(&l);
	}
	cfg->max_conns = fit;
}
