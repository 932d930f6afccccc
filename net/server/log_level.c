/* The log level while running: INGOT_LOG_LEVEL at the start, then what
 * SIGUSR1 (debug), SIGUSR2 (back to INGOT_LOG_LEVEL) or the admin
 * listener's PUT /loglevel set. Each change is logged, at warn so that it
 * shows at any level, with what changed it. */
#include "server.h"
#include "ingot/log.h"

#include <string.h>

const char *ig_server_log_level_name(void)
{
	return ig_log_level_name((enum ig_log_level)__atomic_load_n(&ig_log_threshold, __ATOMIC_RELAXED));
}

int ig_server_log_level_parse(const char *word, size_t len)
{
	for (int i = 0; i <= IG_LOG_DEBUG; i++) {
		const char *name = ig_log_level_name((enum ig_log_level)i);
		if (strlen(name) == len && memcmp(name, word, len) == 0)
			return i;
	}
	return -1;
}

__attribute__((cold)) void ig_server_log_level_set(int level, const char *by)
{
	ig_log_set_threshold((enum ig_log_level)level);
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "log level changed")) {
		ig_log_cstr(&l, "level", ig_log_level_name((enum ig_log_level)level));
		ig_log_cstr(&l, "by", by);
		ig_log_end(&l);
	}
}
