/* lambda_floor: the least a Lambda runtime can do before its first
 * GET .../invocation/next: read AWS_LAMBDA_RUNTIME_API, connect, write the
 * request, wait. lambda_init times it beside the service (make bench). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	const char *api = getenv("AWS_LAMBDA_RUNTIME_API");
	const char *colon = api ? strrchr(api, ':') : NULL;
	if (!colon)
		return 2;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
	char host[64];
	snprintf(host, sizeof host, "%.*s", (int)(colon - api), api);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
		return 1;
	static const char req[] = "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n";
	if (write(s, req, sizeof req - 1) != (ssize_t)(sizeof req - 1))
		return 1;
	char c;
	return read(s, &c, 1) < 0; /* until the probe kills it */
}
