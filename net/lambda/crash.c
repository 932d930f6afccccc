/* Under the sanitizers (the ASan+UBSan build), a handler that crashes is
 * reported to the Runtime API's .../{id}/error before the process dies:
 * the sanitizer's death callback posts {"errorMessage", "errorType"} with
 * blocking calls (ig_lambda_post_blocking), as the loop cannot run any more.
 * In the shipped build there is no sanitizer and nothing here runs: a
 * crash ends the process, and Lambda reports the exit itself. */
#include "net/lambda/internal.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#include <stdio.h>

static void on_death(void)
{
	const char *api, *id;
	size_t id_len;
	if (!ig_lambda_current_invocation(&api, &id, &id_len))
		return;
	char tail[160];
	if ((size_t)snprintf(tail, sizeof tail, "/invocation/%.*s/error", (int)id_len, id) >= sizeof tail)
		return;
	ig_lambda_post_blocking(api, tail, "Runtime.Crash", "the handler crashed (a sanitizer's report is in the log)");
}

void ig_lambda_crash_watch(void)
{
	__sanitizer_set_death_callback(on_death);
}
#else
void ig_lambda_crash_watch(void)
{
}
#endif
