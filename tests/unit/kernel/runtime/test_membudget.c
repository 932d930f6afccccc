/* The memory budget's shared count (kernel/runtime/membudget.h): the limit
 * refuses, per-core credit spares the shared count, given-back credit above
 * two chunks returns, the log throttle lets one line a second through. */
#include "kernel/runtime/membudget.h"
#include "tests/unit/check.h"

#define MiB ((size_t)1 << 20)

static void test_take_give(void)
{
	struct ig_mem_credit a = { 0 }, b = { 0 };
	CHECK(ig_membudget_take(&a, 10 * MiB) && ig_membudget_used() == 10 * MiB, "no limit: anything is taken");
	ig_membudget_give(&a, 10 * MiB);
	CHECK(ig_membudget_used() == IG_MEM_CREDIT_CHUNK && a.local == IG_MEM_CREDIT_CHUNK,
	      "given back above two chunks: one chunk of credit stays with the core");

	ig_membudget_set_limit(4 * MiB - 100); /* not whole chunks: the last one does not fit */
	CHECK(ig_membudget_take(&a, 1000) && ig_membudget_used() == IG_MEM_CREDIT_CHUNK,
	      "a small body comes from the core's credit: the shared count is untouched");
	CHECK(ig_membudget_take(&b, 3 * MiB), "another core takes 3 MiB");
	CHECK(ig_membudget_used() == IG_MEM_CREDIT_CHUNK + 3 * MiB, "in whole chunks");
	CHECK(!ig_membudget_take(&b, MiB), "1 MiB more passes the limit: refused");
	CHECK(ig_membudget_used() == IG_MEM_CREDIT_CHUNK + 3 * MiB, "a refusal leaves the count as it was");
	CHECK(ig_membudget_take(&b, 3 * MiB / 4 - 100), "what still fits exactly is taken, without rounding up");
	CHECK(ig_membudget_used() == 4 * MiB - 100 && b.local == 0, "up to the limit");
	CHECK(!ig_membudget_take(&a, IG_MEM_CREDIT_CHUNK), "the first core's credit is short of a chunk: refused");
	ig_membudget_give(&b, 3 * MiB + 3 * MiB / 4 - 100);
	CHECK(ig_membudget_take(&b, MiB), "room given back is taken again");
	ig_membudget_give(&b, MiB);
	ig_membudget_give(&a, 1000);
	CHECK(ig_membudget_used() <= 2 * IG_MEM_CREDIT_CHUNK + IG_MEM_CREDIT_CHUNK,
	      "all given back: only the cores' credit is counted");
	CHECK(ig_membudget_limit() == 4 * MiB - 100, "the limit reads back");
}

static void test_rejections_and_log(void)
{
	CHECK(ig_membudget_refusals(IG_MEM_BODY) == 0, "no refusal yet");
	CHECK(ig_membudget_count_refusal(IG_MEM_BODY) == 1 && ig_membudget_count_refusal(IG_MEM_BODY) == 2,
	      "refusals count up");
	CHECK(ig_membudget_refusals(IG_MEM_TLS) == 0 && ig_membudget_count_refusal(IG_MEM_TLS) == 1 &&
		      ig_membudget_refusals(IG_MEM_BODY) == 2,
	      "each cause counts apart");
	uint64_t suppressed = 99;
	CHECK(ig_membudget_log_due(IG_MEM_BODY, 5000, &suppressed) && suppressed == 0, "the first line is logged");
	CHECK(!ig_membudget_log_due(IG_MEM_BODY, 5500, &suppressed) &&
		      !ig_membudget_log_due(IG_MEM_BODY, 5999, &suppressed),
	      "within the second: suppressed");
	suppressed = 99;
	CHECK(ig_membudget_log_due(IG_MEM_TLS, 5500, &suppressed) && suppressed == 0,
	      "another cause within that second: logged, its line is its own");
	CHECK(!ig_membudget_log_due(IG_MEM_TLS, 5600, &suppressed), "and then suppressed too");
	CHECK(ig_membudget_log_due(IG_MEM_BODY, 6000, &suppressed) && suppressed == 2,
	      "a second later: logged, with the count of its own cause");
	CHECK(ig_membudget_log_due(IG_MEM_TLS, 6500, &suppressed) && suppressed == 1,
	      "the other cause's second ends on its own clock");
}

int main(void)
{
	test_take_give();
	test_rejections_and_log();
	return check_done();
}
