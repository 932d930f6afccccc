/* Shared by net/lambda's files only: the parsed setting and the Runtime
 * API's paths. */
#ifndef NET_LAMBDA_INTERNAL_H
#define NET_LAMBDA_INTERNAL_H

#include "net/lambda/lambda.h"

struct lambda_config {
	const char *runtime_api; /* "127.0.0.1:9001"; "" when not set */
};
extern struct lambda_config lambda_config;

#define LAMBDA_API_PREFIX "/2018-06-01/runtime"

#endif
