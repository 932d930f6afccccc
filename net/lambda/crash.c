/* Under the sanitizers (the ASan+UBSan build), a handler that crashes is
 * reported to the Runtime API's .../{id}/error before the process dies:
 * the sanitizer's death callback posts {"errorMessage", "errorType"} with
 * blocking calls on a socket of its own, as the loop cannot run any more.
 * In the shipped build there is no sanitizer and nothing here runs: a
 * crash ends the process, and Lambda reports the exit itself. */
#include "net/lambda/internal.h"

#if defined(__SANITIZE_ADDRESS__)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void on_death(void)
{
	const char *api, *id;
	size_t id_len;
	if (!lambda_current_invocation(&api, &id, &id_len))
		return;
	const char *colon = strrchr(api, ':');
	struct sockaddr_in a = { .sin_family = AF_INET };
	char host[64];
	if (!colon || (size_t)(colon - api) >= sizeof host)
		return;
	memcpy(host, api, (size_t)(colon - api));
	host[colon - api] = 0;
	a.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return;
	static const char body[] = "{\"errorMessage\":\"the handler crashed (a sanitizer's report is in the log)\","
				   "\"errorType\":\"Runtime.Crash\"}";
	char req[768];
	int n = snprintf(req, sizeof req,
			 "POST " LAMBDA_API_PREFIX "/invocation/%.*s/error HTTP/1.1\r\nHost: %s\r\n"
			 "Content-Type: application/json\r\nLambda-Runtime-Function-Error-Type: Runtime.Crash\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 (int)id_len, id, api, sizeof body - 1, body);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || n <= 0 || (size_t)n >= sizeof req)
		return;
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0 && write(s, req, (size_t)n) == n) {
		char reply[256]; /* the answer, so that the post has landed before the exit */
		while (read(s, reply, sizeof reply) > 0)
			;
	}
	close(s);
}

void lambda_crash_watch(void)
{
	__sanitizer_set_death_callback(on_death);
}
#else
void lambda_crash_watch(void)
{
}
#endif
