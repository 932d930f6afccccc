/* Where the database is: the socket address of DATABASE_URL's host and
 * port (or the unix socket <dir>/.s.PGSQL.<port>), found once by the
 * settings' check at startup, where blocking on a name lookup is allowed
 * (a loop must not). In net/cold.ld's cold block with the libc resolver
 * it calls: a process without a database runs none of it. */
#include "internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "kernel/log.h"

/* Numeric addresses, "localhost" and socket directories need no lookup;
 * a name is looked up once, here (the start may block, a loop may not). */
const char *pg_resolve(char *err, size_t errlen)
{
	struct pg_conninfo *ci = &pg_global->ci;
	struct sockaddr_storage *a = &pg_global->addr;
	memset(a, 0, sizeof *a);
	if (ci->unix_socket) {
		struct sockaddr_un *u = (struct sockaddr_un *)a;
		u->sun_family = AF_UNIX;
		int n = snprintf(u->sun_path, sizeof u->sun_path, "%s/.s.PGSQL.%u", ci->host, ci->port);
		if (n < 0 || (size_t)n >= sizeof u->sun_path) {
			snprintf(err, errlen, "DATABASE_URL: the socket path under %s is too long", ci->host);
			return err;
		}
		pg_global->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
		return NULL;
	}
	struct sockaddr_in *v4 = (struct sockaddr_in *)a;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)a;
	const char *host = strcmp(ci->host, "localhost") ? ci->host : "127.0.0.1";
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(ci->port);
		pg_global->addr_len = sizeof *v4;
		return NULL;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(ci->port);
		pg_global->addr_len = sizeof *v6;
		return NULL;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
		/* Not fatal: an unreachable database does not stop the start;
		   every connect then fails and /readyz stays 503. */
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "cannot resolve the database host")) {
			ig_log_cstr(&l, "host", host);
			ig_log_end(&l);
		}
		pg_global->addr_len = 0;
		return NULL;
	}
	memcpy(a, res->ai_addr, res->ai_addrlen);
	pg_global->addr_len = res->ai_addrlen;
	if (a->ss_family == AF_INET)
		v4->sin_port = htons(ci->port);
	else
		v6->sin6_port = htons(ci->port);
	freeaddrinfo(res);
	return NULL;
}

