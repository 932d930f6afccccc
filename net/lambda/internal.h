/* Shared by net/lambda's files only: the parsed setting and the Runtime
 * API's paths. */
#ifndef NET_LAMBDA_INTERNAL_H
#define NET_LAMBDA_INTERNAL_H

#include "net/lambda/lambda.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

enum lambda_invoke_mode {
	LAMBDA_BUFFERED,        /* every answer whole, as JSON */
	LAMBDA_RESPONSE_STREAM, /* a function URL's events answered in the streaming mode */
};

struct ig_lambda_config {
	const char *runtime_api; /* "127.0.0.1:9001"; "" when not set */
	int invoke_mode;         /* enum lambda_invoke_mode */
};
extern struct ig_lambda_config ig_lambda_config;

#define LAMBDA_API_PREFIX "/2018-06-01/runtime"

/* runtime.c: the Runtime API's address and the id of the invocation being
 * answered; false between invocations. For the crash report, which runs
 * when the loop cannot. */
bool ig_lambda_current_invocation(const char **api, const char **id, size_t *id_len);

/* post_blocking.c: the Runtime API's address, host:port with an IPv4
 * address (as Lambda's is), into *a; false if api is not one. */
bool ig_lambda_api_address(const char *api, struct sockaddr_in *a);

/* post_blocking.c: POSTs {"errorMessage", "errorType"} (type also in the
 * Lambda-Runtime-Function-Error-Type header) to api's LAMBDA_API_PREFIX
 * tail with blocking calls on a socket of its own, for when the loop cannot
 * run: a crash, an init error whose loop could not be made. Waits for the
 * answer to end; -1 with errno when it could not be sent (api not
 * host:port with an IPv4 address, no socket, no connection). The message is cut to 400 bytes. */
int ig_lambda_post_blocking(const char *api, const char *tail, const char *type, const char *message);

/* crash.c: under the sanitizers, a crash is posted to .../{id}/error
 * (nothing in the shipped build). */
void ig_lambda_crash_watch(void);

#endif
