/* An app written by hand for the test core (include/ingot/testing.h), for
 * the runtime's own tests: routes matched by exact path against a table,
 * route i running operation i on a coroutine through ig_run_operation, as
 * the generated code's router does. Include once, after the tables. */
#ifndef TESTS_UNIT_HAND_APP_H
#define TESTS_UNIT_HAND_APP_H

#include "net/api/operation.h"

#include <string.h>

#define HAND_OP(name, fn) { .id = name, .in_size = 8, .out_size = 8, .handle = fn }

/* Routes ctx among n routes; 404 for any other path. */
static inline void hand_route(ig_ctx *ctx, const char *const *routes, const struct ig_operation *ops, uint32_t n)
{
	ig_str path = ig_req(ctx)->path;
	for (uint32_t i = 0; i < n; i++)
		if (path.len == strlen(routes[i]) && memcmp(path.ptr, routes[i], path.len) == 0) {
			ig_set_route(ctx, i);
			ig_run_operation(ctx, &ops[i], NULL);
			return;
		}
	ig_respond_problem(ctx, 404, "no such route");
}

#endif
