/* Process duties: signals, reaping children (the binary may be PID 1 in a
 * container or an initramfs), and the open-file limit. Signals arrive as
 * readable bytes on a signalfd that the first core's loop watches, so no
 * handler ever runs in async context and no thread exists just to wait. */
#ifndef KERNEL_PROCESS_H
#define KERNEL_PROCESS_H

#include <stdbool.h>

/* Blocks the signals the process handles (TERM, INT, CHLD, HUP, QUIT, USR1, USR2) in
 * the calling thread, and so in every thread it starts later, ignores
 * SIGPIPE, and returns a non-blocking signalfd for them (or -1). */
int ig_signals_open(void);

enum ig_signal_event { IG_SIGNAL_NONE, IG_SIGNAL_STOP, IG_SIGNAL_OTHER };

/* Reads the pending signals from the signalfd: reaps children on SIGCHLD,
 * ignores QUIT, and returns IG_SIGNAL_STOP if TERM or INT came
 * (*name is then "SIGTERM" or "SIGINT"). *log_signal is the last of USR1
 * and USR2 that came (the log level's signals), or 0; *reload tells
 * whether HUP came (a reload of the TLS material). */
enum ig_signal_event ig_signals_read(int fd, const char **name, int *log_signal, bool *reload);

/* Raises the soft RLIMIT_NOFILE to the hard limit; returns the new soft. */
long ig_raise_nofile(void);

#endif
