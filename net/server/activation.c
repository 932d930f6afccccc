/* Socket activation (the systemd protocol, sd_listen_fds(3)): with
 * LISTEN_PID equal to our pid, the LISTEN_FDS sockets from fd 3 on are the
 * listeners, named by LISTEN_FDNAMES (http, https, admin; missing or
 * unknown: http), and the server binds none of its own. Read once, before
 * any thread starts, then unset, so that nothing started later takes them. */
#include "server.h"
#include "ingot/log.h"
#include "net/stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIRST_FD 3 /* SD_LISTEN_FDS_START */
#define MAX_FDS 64

struct ig_server_activation ig_server_activation = { .http_fd = -1, .https_fd = -1, .admin_fd = -1 };

/* The fd's kind from LISTEN_FDNAMES' i-th colon-separated name. */
static int *slot_for(const char *names, int i)
{
	const char *p = names ? names : "";
	for (; i > 0 && p; i--)
		p = (p = strchr(p, ':')) ? p + 1 : NULL;
	size_t n = p ? strcspn(p, ":") : 0;
	if (n == 5 && memcmp(p, "https", 5) == 0)
		return &ig_server_activation.https_fd;
	if (n == 5 && memcmp(p, "admin", 5) == 0)
		return &ig_server_activation.admin_fd;
	return &ig_server_activation.http_fd; /* "http", a unit's default name, none */
}

static const char *kind_name(const int *slot)
{
	return slot == &ig_server_activation.https_fd ? "https" : slot == &ig_server_activation.admin_fd ? "admin" : "http";
}

/* A listening stream socket, or a message naming the fd. */
static const char *check_fd(int fd)
{
	struct stat st;
	int v = 0;
	socklen_t len = sizeof v;
	if (fstat(fd, &st) != 0)
		return errno == EBADF ? "is not open" : strerror(errno);
	if (!S_ISSOCK(st.st_mode))
		return "is not a socket";
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) != 0 || v != SOCK_STREAM)
		return "is not a stream (TCP) socket";
	len = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) != 0 || !v)
		return "is not listening (ListenStream= in the .socket unit)";
	/* Shared with the supervisor and with every core: an accept another
	   core won must not block this one. Not inherited by what we exec. */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
		return strerror(errno);
	return NULL;
}

static void log_socket(const char *kind, int fd, int port)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "socket activation")) {
		ig_log_cstr(&l, "name", kind);
		ig_log_int(&l, "fd", fd);
		ig_log_int(&l, "port", port);
		ig_log_end(&l);
	}
}

/* fd's bound port (0: none, a Unix socket), its address as text into
 * addr (cap >= INET6_ADDRSTRLEN; "" when none) if addr is not NULL. */
static int bound_port(int fd, char *addr, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (addr)
		addr[0] = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *v4 = (const struct sockaddr_in *)&ss;
		if (addr)
			inet_ntop(AF_INET, &v4->sin_addr, addr, (socklen_t)cap);
		return ntohs(v4->sin_port);
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&ss;
		if (addr)
			inet_ntop(AF_INET6, &v6->sin6_addr, addr, (socklen_t)cap);
		return ntohs(v6->sin6_port);
	}
	return 0;
}

int ig_server_activation_port(int fd)
{
	return bound_port(fd, NULL, 0);
}

/* The server's settings as the sockets given make them: their ports (for
 * the "listening" line), HTTPS or plain HTTP only as given, the admin
 * listener only when one is given. */
static const char *apply(char *err, size_t errlen)
{
	struct ig_server_activation *a = &ig_server_activation;
	struct http_config *cfg = &ig_server_config;
	if (a->http_fd < 0 && a->https_fd < 0) {
		snprintf(err, errlen, "LISTEN_FDS: no socket to serve the API on (only admin given)");
		return err;
	}
	if (a->http_fd >= 0 && cfg->tls_only) {
		snprintf(err, errlen, "LISTEN_FDS: fd %d is named http (or has no name), but INGOT_TLS_ONLY is set",
			 a->http_fd);
		return err;
	}
	if (a->https_fd >= 0 && !ig_http_server.tls) {
		snprintf(err, errlen, "LISTEN_FDS: fd %d is named https, but no TLS certificate is set "
			 "(INGOT_TLS_CERT or INGOT_TLS_CERT_PEM, and its key)", a->https_fd);
		return err;
	}
	if (a->https_fd < 0)
		ig_http_server.tls = NULL; /* a certificate, but no HTTPS socket to use it on */
	else
		cfg->tls_port = ig_server_activation_port(a->https_fd);
	cfg->tls_only = a->http_fd < 0;
	/* HOST ignored: the "listening" line says where the API socket is. */
	static char host[INET6_ADDRSTRLEN];
	int port = bound_port(a->http_fd >= 0 ? a->http_fd : a->https_fd, host, sizeof host);
	cfg->host = host;
	if (a->http_fd >= 0)
		cfg->port = port;
	cfg->admin_port = a->admin_fd >= 0 ? ig_server_activation_port(a->admin_fd) : -1;
	return NULL;
}

__attribute__((cold)) int ig_server_activation_take(char *err, size_t errlen)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	char *end;
	long n = fds ? strtol(fds, &end, 10) : 0;
	bool ours = pid && fds && strtol(pid, NULL, 10) == (long)getpid();
	int rc = 0;
	if (!ours) {
		/* Another process's (a parent that did not clear them): not ours. */
	} else if (!ig_net_stack->takes_fds && n != 0) {
		snprintf(err, errlen, "LISTEN_FDS gives the kernel's sockets, but INGOT_NET=%s serves on lwIP",
			 ig_net_stack->name);
		rc = -1;
	} else if (!*fds || *end || n < 0 || n > MAX_FDS) {
		snprintf(err, errlen, "LISTEN_FDS \"%s\" is not a count of descriptors (0 to %d)", fds, MAX_FDS);
		rc = -1;
	} else {
		for (int i = 0; i < n && rc == 0; i++) {
			int fd = FIRST_FD + i, *slot = slot_for(names, i);
			const char *why = check_fd(fd);
			if (why) {
				snprintf(err, errlen, "LISTEN_FDS: fd %d (%s) %s", fd, kind_name(slot), why);
				rc = -1;
			} else if (*slot >= 0) {
				snprintf(err, errlen, "LISTEN_FDS: fd %d and fd %d are both named %s; one socket of each "
					 "name is served", *slot, fd, kind_name(slot));
				rc = -1;
			} else {
				*slot = fd;
			}
		}
		ig_server_activation.active = rc == 0 && n > 0;
		if (ig_server_activation.active && apply(err, errlen))
			rc = -1;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (rc == 0 && ig_server_activation.active) {
		const struct ig_server_activation *a = &ig_server_activation;
		const int *slots[] = { &a->http_fd, &a->https_fd, &a->admin_fd };
		for (size_t i = 0; i < IG_COUNTOF(slots); i++)
			if (*slots[i] >= 0)
				log_socket(kind_name(slots[i]), *slots[i], ig_server_activation_port(*slots[i]));
	}
	return rc;
}

int ig_server_activation_listener(int fd, char *err, size_t errlen)
{
	/* A descriptor of its own for each core: each registers it in its own
	   epoll (EPOLLEXCLUSIVE, net/sock) and closes it when it stops
	   accepting, as with a socket of its own; the socket itself lives on
	   in the supervisor, its backlog kept for the next start. */
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, FIRST_FD);
	if (dup < 0)
		snprintf(err, errlen, "LISTEN_FDS: cannot duplicate fd %d: %s", fd, strerror(errno));
	return dup;
}

void ig_server_activation_release(void)
{
	struct ig_server_activation *a = &ig_server_activation;
	if (a->http_fd >= 0)
		close(a->http_fd);
	if (a->https_fd >= 0)
		close(a->https_fd);
	a->http_fd = a->https_fd = -1; /* the cores hold their own now */
}
