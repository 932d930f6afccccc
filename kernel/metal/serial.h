/* The console of the bare-metal platform: COM1 (I/O port 0x3f8), where the
 * machine's stdout and stderr go (qemu's -serial stdio, Firecracker's
 * console). Output only: the program reads nothing from its console. */
#ifndef KERNEL_METAL_SERIAL_H
#define KERNEL_METAL_SERIAL_H

#include <stddef.h>

/* 115200 8N1, FIFO on, no interrupts. Call before any output. */
void ig_serial_init(void);
/* Writes len bytes, waiting for room in the transmitter; "\n" stays "\n"
 * (the host's terminal, not the guest, is in charge of line endings). */
void ig_serial_write(const void *buf, size_t len);
void ig_serial_puts(const char *s);
/* Waits (bounded) until every byte written has left the UART: the last
 * line before a power-off is not lost with the machine (qemu's UART
 * holds bytes its console cannot take yet). */
void ig_serial_drain(void);
/* "0x" and 16 hex digits: for register dumps, which must not need printf. */
void ig_serial_hex(unsigned long v);

#endif
