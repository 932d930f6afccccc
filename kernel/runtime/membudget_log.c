/* The memory budget's refusal lines (membudget_log.h). Cold: only a
 * refusal runs it. */
#include "membudget_log.h"
#include "ingot/log.h"

__attribute__((cold)) void ig_membudget_refused(enum ig_mem_cause cause, uint64_t now_ms, const char *msg,
						const char *total_key, const char *extra_key, int64_t extra)
{
	uint64_t total = ig_membudget_count_refusal(cause), suppressed;
	struct ig_logline l;
	if (!ig_membudget_log_due(cause, now_ms, &suppressed) || !ig_log_begin(&l, IG_LOG_WARN, msg))
		return;
	ig_log_int(&l, "budget_bytes", (int64_t)ig_membudget_limit());
	ig_log_int(&l, "used_bytes", (int64_t)ig_membudget_used());
	if (extra_key)
		ig_log_int(&l, extra_key, extra);
	ig_log_int(&l, total_key, (int64_t)total);
	ig_log_int(&l, "suppressed", (int64_t)suppressed);
	ig_log_end(&l);
}
