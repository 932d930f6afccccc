/* COM1 output for the bare-metal console: polled, one byte per port write
 * once the line status says the holding register is empty. */
#include "serial.h"
#include "io.h"

#include <string.h>

#define COM1 0x3f8
#define LSR_THR_EMPTY 0x20
#define LSR_TX_EMPTY 0x40 /* the FIFO and the shift register: all sent */

void ig_serial_init(void)
{
	outb(COM1 + 1, 0x00); /* no interrupts */
	outb(COM1 + 3, 0x80); /* divisor latch */
	outb(COM1 + 0, 0x01); /* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0xc7); /* FIFO on, cleared */
}

void ig_serial_write(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++) {
		while (!(inb(COM1 + 5) & LSR_THR_EMPTY))
			;
		outb(COM1, p[i]);
	}
}

void ig_serial_drain(void)
{
	/* Bounded: a machine whose UART never says so must still go. */
	for (long i = 0; i < 10000000 && !(inb(COM1 + 5) & LSR_TX_EMPTY); i++)
		;
}

void ig_serial_puts(const char *s)
{
	ig_serial_write(s, strlen(s));
}

void ig_serial_hex(unsigned long v)
{
	char out[18] = "0x";
	for (int i = 0; i < 16; i++)
		out[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 0xf];
	ig_serial_write(out, sizeof out);
}
