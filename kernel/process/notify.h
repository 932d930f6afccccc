/* systemd's notification protocol (sd_notify(3)), without libsystemd: one
 * datagram per message to the socket NOTIFY_SOCKET names (a path, or an
 * abstract name starting with '@'). READY=1, STOPPING=1 and WATCHDOG=1 are
 * what the server sends; whether the watchdog is asked for, and how often,
 * comes from WATCHDOG_USEC (and WATCHDOG_PID, when set, must be this
 * process). Without NOTIFY_SOCKET nothing is opened and every call is a
 * no-op, so a process outside systemd pays one getenv. */
#ifndef KERNEL_NOTIFY_H
#define KERNEL_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Reads the environment and opens the socket, once, at startup (before the
 * threads: the result is read-only afterwards). False when there is no
 * NOTIFY_SOCKET or it cannot be used (then the calls below do nothing). */
bool ig_notify_open(void);

/* Sends msg ("READY=1", "STOPPING=1\nSTATUS=draining", ...) as one datagram.
 * Safe from any thread; never blocks (a full socket drops the message, as
 * libsystemd's does). */
void ig_notify_send(const char *msg);

/* The watchdog's period in microseconds (WATCHDOG_USEC), or 0 when the
 * watchdog is off or meant for another process. Valid after ig_notify_open. */
uint64_t ig_notify_watchdog_usec(void);

#endif
