/* The machine's console as the program sees it (its stdout and stderr,
 * and the platform's own lines): bytes kept in a ring and written to the
 * UART (serial.h) while the CPU has nothing else to do.
 *
 * Under a hypervisor each byte written to the UART is a call into its
 * device model: under qemu's TCG, 5 to 9 us a byte on this project's hosts
 * (qemu writes each to its chardev with a system call). The boot's four
 * lines (the entropy source, `net: up`, `listening`, the memory budget:
 * about 600 bytes) written at once put 3-5 ms between the kernel's start
 * and its first answer. Held here, they go out when the CPU would halt:
 * ig_smp_halt writes one FIFO's worth instead of halting and returns, so
 * its caller looks for work between bursts, and a request that arrives
 * meanwhile waits for at most one burst.
 *
 * Every call but ig_console_flush is made with the big lock held (smp.h),
 * or before the other CPUs start; nothing here allocates. */
#ifndef KERNEL_METAL_CONSOLE_H
#define KERNEL_METAL_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

/* The ring's size. A CPU that never idles writes what overflows it as it
 * comes, oldest first: the console's order is always the order written. */
#define IG_CONSOLE_RING_BYTES 16384

/* Appends len bytes. When the ring is full, its oldest bytes go to the
 * UART first, at once, as many as the new ones need. */
void ig_console_write(const void *buf, size_t len);
void ig_console_puts(const char *s);

/* From the idle path: writes the oldest bytes held, at most one FIFO's
 * worth (16); false when none was held (then the CPU may halt). */
bool ig_console_idle_write(void);

/* Writes everything held, at once: before a power-off, and at a CPU
 * exception (whose lines must follow what the program wrote). Also
 * without the lock: by then the machine is ending. */
void ig_console_flush(void);

#endif
