/* A POST to the Runtime API with blocking calls on a socket of its own,
 * for when the loop cannot run (internal.h). Nothing here allocates: the
 * sanitizer's death callback runs it with the heap in any state. */
#include "net/lambda/internal.h"
#include "kernel/runtime/json.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MESSAGE_MAX 400 /* bytes of the message posted; an init error's is a line */
#define TYPE_MAX 64

bool ig_lambda_api_address(const char *api, struct sockaddr_in *a)
{
	const char *colon = strrchr(api, ':');
	char host[64];
	if (!colon || (size_t)(colon - api) >= sizeof host)
		return false;
	memcpy(host, api, (size_t)(colon - api));
	host[colon - api] = 0;
	*a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
	return inet_pton(AF_INET, host, &a->sin_addr) == 1;
}

int ig_lambda_post_blocking(const char *api, const char *tail, const char *type, const char *message)
{
	struct sockaddr_in a;
	if (!api || !ig_lambda_api_address(api, &a)) {
		errno = EINVAL;
		return -1;
	}
	size_t ml = strlen(message), tl = strlen(type);
	ml = ml < MESSAGE_MAX ? ml : MESSAGE_MAX;
	tl = tl < TYPE_MAX ? tl : TYPE_MAX;
	char msg[MESSAGE_MAX * 6], typ[TYPE_MAX * 6];
	size_t mn = ig_json_escape(msg, message, ml), tn = ig_json_escape(typ, type, tl);
	char body[sizeof msg + sizeof typ + 40];
	int bn = snprintf(body, sizeof body, "{\"errorMessage\":\"%.*s\",\"errorType\":\"%.*s\"}", (int)mn, msg,
			  (int)tn, typ);
	char req[sizeof body + 512];
	int n = snprintf(req, sizeof req,
			 "POST " LAMBDA_API_PREFIX "%s HTTP/1.1\r\nHost: %s\r\n"
			 "Content-Type: application/json\r\nLambda-Runtime-Function-Error-Type: %.*s\r\n"
			 "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
			 tail, api, (int)tl, type, bn, body);
	if (bn < 0 || n <= 0 || (size_t)n >= sizeof req) {
		errno = EMSGSIZE;
		return -1;
	}
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	int rc = -1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0 && write(s, req, (size_t)n) == n) {
		char reply[256]; /* to its end, so that the post has landed before the exit */
		while (read(s, reply, sizeof reply) > 0)
			;
		rc = 0;
	}
	int e = errno;
	close(s);
	errno = e; /* the connect's or write's, for the caller's log */
	return rc;
}
