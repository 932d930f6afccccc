/* The Lambda runtime's rows of the settings table: the Runtime API's
 * address, which Lambda sets, and the function URL's invoke mode; and the
 * start's question whether the address is set, read straight from the
 * environment (lambda.h), since an init error must
 * reach the Runtime API when the parse itself failed. */
#include "net/lambda/internal.h"

#include <stdlib.h>

struct ig_lambda_config ig_lambda_config;
static const struct ig_lambda_config lambda_defaults = { .runtime_api = "" };

/* In enum lambda_invoke_mode's order. */
static const struct ig_choice invoke_modes = { &ig_lambda_config.invoke_mode, "BUFFERED|RESPONSE_STREAM" };

static const struct ig_option lambda_rows[] = {
	{ "AWS_LAMBDA_RUNTIME_API", IG_OPT_STR, &ig_lambda_config.runtime_api, 0, 0,
	  IG_HELP("host:port of the Lambda Runtime API (set by Lambda): serve its invocations, bind no socket") },
	{ "INGOT_LAMBDA_INVOKE_MODE", IG_OPT_CHOICE, (void *)&invoke_modes, 0, 0,
	  IG_HELP("the function URL's InvokeMode: RESPONSE_STREAM answers its events through the Runtime API's "
		  "streaming mode (SSE and byte streams leave as they are made); API Gateway and ALB events are "
		  "answered whole either way") },
};

const struct ig_settings ig_lambda_settings = {
	.part = "Lambda runtime", .opts = lambda_rows, .count = IG_COUNTOF(lambda_rows),
	.values = &ig_lambda_config, .defaults = &lambda_defaults, .size = sizeof ig_lambda_config,
};

/* The start's, so here and not in the runtime's cold code. */
bool ig_lambda_requested(void)
{
	const char *api = getenv("AWS_LAMBDA_RUNTIME_API");
	return api && *api;
}
