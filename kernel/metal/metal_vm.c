/* kernel/process/vm.h on bare metal: the program is always the machine's only
 * program (so command-line words are settings), there is nothing to mount
 * or load, and the machine's end is power.h's. The test-only word
 * ingot.test_fault=ud|pf|gp|stack|coro raises that CPU exception here, in
 * the program's context, for the exception handler's test (stack: a runaway
 * recursion into the main stack's guard page, a double fault; coro: the
 * same on a coroutine's 16 KiB stack, whose guard page makes it a "stack
 * overflow" line). */
#include "kernel/process/vm.h"
#include "kernel/runtime/coro.h"
#include "ingot/log.h"
#include "cmdline.h"
#include "power.h"

#include <stdint.h>
#include <string.h>

bool ig_vm_active(void)
{
	return true;
}

/* Each frame holds a page of stack, so the guard is reached quickly; the
 * bound is far beyond any stack (and volatile: not provably infinite). */
static volatile int recursion_bound = 1 << 30;

__attribute__((noinline)) static int recurse(int depth)
{
	volatile char frame[4096];
	frame[0] = (char)depth;
	return depth < recursion_bound ? recurse(depth + 1) + frame[0] : 0;
}

static void recurse_on(void *arg)
{
	(void)arg;
	(void)recurse(0);
}

static void test_fault(void)
{
	char kind[8];
	if (!ig_metal_cmdline_value(ig_metal_boot_cmdline(), "ingot.test_fault", kind, sizeof kind))
		return;
	if (strcmp(kind, "ud") == 0)
		__asm__ volatile("ud2");
	else if (strcmp(kind, "pf") == 0) /* above the identity map's 4 GiB */
		(void)*(volatile uint32_t *)(uintptr_t)0x100000000ull;
	else if (strcmp(kind, "gp") == 0) /* not canonical */
		(void)*(volatile uint32_t *)(uintptr_t)0x8000000000000000ull;
	else if (strcmp(kind, "stack") == 0)
		(void)recurse(0);
	else if (strcmp(kind, "coro") == 0) {
		static struct ig_coro_pool pool;
		ig_coro_pool_init(&pool, 16 * 1024, 1);
		struct ig_coro *c = ig_coro_new(&pool, recurse_on, NULL);
		if (c)
			ig_coro_resume(c);
	}
}

int ig_vm_init(void)
{
	test_fault();
	return 0;
}

_Noreturn void ig_vm_poweroff(int status)
{
	struct ig_logline l;
	/* A failure's last line is an error line: the console alone tells. */
	if (ig_log_begin(&l, status == 0 ? IG_LOG_INFO : IG_LOG_ERROR, "vm: power off")) {
		ig_log_int(&l, "status", status);
		ig_log_cstr(&l, "by", status == 0 ? "reset" : "debug-exit");
		ig_log_end(&l);
	}
	ig_metal_power_off(status);
}
