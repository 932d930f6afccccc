/* sd_notify's protocol (notify.h): a connected SOCK_DGRAM unix socket. */
#include "notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int notify_fd = -1;
static uint64_t watchdog_usec;

__attribute__((cold)) bool ig_notify_open(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len = path ? strlen(path) : 0;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (len < 2 || len >= sizeof sa.sun_path || (path[0] != '/' && path[0] != '@'))
		return false;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = 0; /* the abstract namespace */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) != 0) {
		close(fd);
		return false;
	}
	notify_fd = fd;
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v = usec ? strtoull(usec, &end, 10) : 0;
	if (usec && *end == 0 && v > 0 && (!pid || strtol(pid, NULL, 10) == (long)getpid()))
		watchdog_usec = v;
	return true;
}

void ig_notify_send(const char *msg)
{
	if (notify_fd >= 0)
		(void)send(notify_fd, msg, strlen(msg), MSG_NOSIGNAL);
}

uint64_t ig_notify_watchdog_usec(void)
{
	return notify_fd >= 0 ? watchdog_usec : 0;
}
