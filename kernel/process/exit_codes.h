/* The process's exit statuses: one table, the README's ("Exit statuses").
 * Every path that ends the process returns one of these from main, or ends
 * by a signal (a fatal one: kernel/process/fatal.h; 128 + N to a shell). */
#ifndef KERNEL_EXIT_CODES_H
#define KERNEL_EXIT_CODES_H

enum ig_exit_code {
	IG_EXIT_OK = 0,      /* a clean stop: drained, nothing cut; --help, --version */
	IG_EXIT_FAILURE = 1, /* a runtime failure: threads, memory, the Lambda Runtime API gone */
	IG_EXIT_CONFIG = 2,  /* bad configuration: a setting, a file, a port in use, HOST not
	                        a numeric address, sockets a supervisor gave that cannot serve,
	                        --migrate's records at odds with the binary's migrations */
	IG_EXIT_CUT = 3,     /* stopped, but the grace period ran out and requests were cut
	                        (each logged); systemd's unit lists it in SuccessExitStatus */
};

#endif
