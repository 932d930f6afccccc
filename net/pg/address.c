/* Where the database is: the socket address of DATABASE_URL's host and
 * port when it needs no lookup (a numeric address, localhost, or the unix
 * socket <dir>/.s.PGSQL.<port>), found once by the settings' check at
 * startup; a host name is left to each connect (conn.c). Also how a log
 * line names it (ig_pg_log_peer). */
#include "internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>


/* Numeric addresses, "localhost" and socket directories need no lookup. */
const char *ig_pg_resolve(char *err, size_t errlen)
{
	struct pg_conninfo *ci = &ig_pg_global->ci;
	struct sockaddr_storage *a = &ig_pg_global->addr;
	memset(a, 0, sizeof *a);
	if (ci->unix_socket) {
		struct sockaddr_un *u = (struct sockaddr_un *)a;
		u->sun_family = AF_UNIX;
		int n = snprintf(u->sun_path, sizeof u->sun_path, "%s/.s.PGSQL.%u", ci->host, ci->port);
		if (n < 0 || (size_t)n >= sizeof u->sun_path) {
			snprintf(err, errlen, "DATABASE_URL: the socket path under %s is too long", ci->host);
			return err;
		}
		ig_pg_global->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
		return NULL;
	}
	struct sockaddr_in *v4 = (struct sockaddr_in *)a;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)a;
	const char *host = strcmp(ci->host, "localhost") ? ci->host : "127.0.0.1";
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(ci->port);
		ig_pg_global->addr_len = sizeof *v4;
		return NULL;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(ci->port);
		ig_pg_global->addr_len = sizeof *v6;
		return NULL;
	}
	/* A name: each connect looks it up on its core's loop (conn.c's
	   dial, with the core's resolver and its TTL cache), so that a
	   failover that moves the name is followed without a restart. */
	ig_pg_global->addr_len = 0;
	return NULL;
}


void ig_pg_log_peer(struct ig_logline *line)
{
	if (!ig_pg_global)
		return;
	const struct pg_conninfo *ci = &ig_pg_global->ci;
	ig_log_cstr(line, ci->unix_socket ? "socket_dir" : "host", ci->host);
	ig_log_int(line, "port", ci->port);
}
