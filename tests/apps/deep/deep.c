/* The deep app's handlers: shallow answers at once; deep recurses with a
 * 1 KiB frame to a bound (a million frames, 1 GiB) that no handler stack
 * reaches, so it runs into its stack's guard page and the process ends
 * with the fatal line (tests/integration/overflow.test.mjs). */
#include "api.h"

/* noinline and the volatile frame: the compiler can neither fold the
   recursion into a loop nor drop the array. */
__attribute__((noinline)) static int64_t descend(int64_t depth)
{
	volatile char frame[1024];
	frame[0] = (char)depth;
	frame[sizeof frame - 1] = (char)depth;
	if (depth >= 1024 * 1024)
		return depth;
	return descend(depth + 1) + frame[0] + frame[sizeof frame - 1];
}

int shallow(ig_ctx *ctx, const struct shallow_in *in, struct shallow_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.depth = 1;
	return 200;
}

int deep(ig_ctx *ctx, const struct deep_in *in, struct deep_out *out)
{
	(void)ctx;
	(void)in;
	out->r200.depth = descend(0);
	return 200;
}
