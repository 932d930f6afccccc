/* The limit of the memory budget for what clients make us buffer (kernel/
 * runtime/membudget.h): INGOT_MEMORY_BUDGET, or half the process's memory limit
 * (kernel/process/memlimit.h) less a reserve for the process itself. Run
 * once, after "listening": reading the cgroup must not delay the start. */
#include "server.h"
#include "kernel/process/memlimit.h"
#include "kernel/runtime/membudget.h"

/* The other half is the process's own (code, pools, handler arenas) and,
   on cgroup v2, the kernel's socket buffers, charged to the same limit. */
#define RESERVE ((uint64_t)8 << 20)
#define FLOOR ((uint64_t)4 << 20)

__attribute__((cold)) void ig_server_memory_budget(void)
{
	static const char *const sources[] = { [IG_MEM_NONE] = "none", [IG_MEM_CGROUP_V2] = "cgroup v2 memory.max",
					       [IG_MEM_CGROUP_V1] = "cgroup v1 hierarchical_memory_limit",
					       [IG_MEM_TOTAL] = "MemTotal" };
	uint64_t budget = (uint64_t)ig_membudget_state.setting, limit = 0;
	const char *source = "INGOT_MEMORY_BUDGET";
	if (!budget) {
		enum ig_mem_source from;
		limit = ig_memory_limit(&from);
		source = sources[from];
		budget = limit / 2 > RESERVE + FLOOR ? limit / 2 - RESERVE : FLOOR;
		if (!limit)
			budget = 0; /* nothing to derive from: no limit */
	}
	ig_membudget_set_limit(budget);
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_INFO, "memory budget"))
		return;
	ig_log_int(&l, "request_body_bytes", (int64_t)budget);
	ig_log_cstr(&l, "source", source);
	if (limit)
		ig_log_int(&l, "memory_limit_bytes", (int64_t)limit);
	ig_log_end(&l);
}
