/* An app's lifecycle hooks: what the runtime's start and stop call in the
 * app, besides its handlers. An app that has any defines ig_app_lifecycle
 * (one object, any file); a binary without it has none, and every hook
 * left NULL is skipped. The order, for a server (ig_main):
 *   1. the settings, every part's and the app's, parsed and checked
 *      (include/ingot/settings.h); a bad one exits 2 before any hook;
 *   2. init, once, on the main thread, before any listener opens;
 *   3. core_init, on each core's thread as its loop starts, before that
 *      core serves (core 0's before "listening" is logged; the other
 *      cores start beside it and may come a little after);
 *   4. "listening": requests reach the handlers;
 *   5. drain, once, on core 0's thread, when the stop begins (SIGTERM,
 *      SIGINT or INGOT_IDLE_EXIT_MS): /readyz says 503 from then on, and
 *      requests are still served through the drain delay and the grace
 *      period;
 *   6. stopped, once, on the main thread, after the last request was
 *      answered (or cut by the grace period) and every core's loop ended,
 *      before the "stopped" line and the exit.
 * Under Lambda (AWS_LAMBDA_RUNTIME_API) init and core_init (one core) run,
 * then invocations; a one-shot command (--help, --version, --check,
 * --migrate) runs none of them. */
#ifndef INGOT_LIFECYCLE_H
#define INGOT_LIFECYCLE_H

#include "ingot/base.h"

/* One x-ingot-cron job's switch (ig_lifecycle.cron_switches). */
struct ig_cron_switch {
	const char *job; /* the document's name */
	const bool *on;
};

struct ig_lifecycle {
	/* Once, before any listener opens, on the main thread, after every
	 * setting is parsed (the app's targets hold their values): open what
	 * the app needs once, check what its settings' check could not, and
	 * register the backends /readyz waits for (ig_backend_register,
	 * include/ingot/http.h: only here, or before ig_main). Logging works
	 * (include/ingot/log.h). Returns NULL to go on; or a message (err,
	 * errlen bytes, may hold it; or a literal) that stops the start: it
	 * is printed on stderr and the process exits 2 (bad configuration),
	 * opening no listener. The message must not hold a secret's value. */
	const char *(*init)(char *err, size_t errlen);
	/* On core `core` (0 .. core_count - 1)'s own thread, once, as its loop
	 * starts, before the core accepts: per-core state (a _Thread_local)
	 * made here is ready for every request the core serves. */
	void (*core_init)(unsigned core, unsigned core_count);
	/* Once, on core 0's thread, when the stop begins (see above): stop
	 * taking new background work; requests still arrive for a while. */
	void (*drain)(void);
	/* Once, on the main thread, after the last request and before the
	 * exit: no core runs any more; flush or close what init opened. */
	void (*stopped)(void);
	/* x-ingot-cron jobs that this process's timer schedules only while
	 * a bool (an app setting's target, usually) is true, read once after
	 * init: data, not a call, so a start runs none of the app's code.
	 * A job not listed is scheduled. A job off still runs when a
	 * platform's trigger names it (POST /_ingot/cron, an ingot.cron
	 * Lambda event). */
	const struct ig_cron_switch *cron_switches;
	size_t cron_switch_count;
};

/* The app's hooks, when it has any: defined by the app, read by the
 * runtime's start (weakly: a binary without it has none). */
extern const struct ig_lifecycle ig_app_lifecycle;

#endif
