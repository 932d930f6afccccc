/* COM1 output for the bare-metal console: polled. Once the line status
 * says the transmitter is empty, a 16550A's FIFO takes 16 bytes without
 * asking again (an 8250 without one, a byte): under TCG each port access
 * is a call into qemu's device model, and a byte costs one instead of two. */
#include "serial.h"
#include "io.h"

#include <string.h>

#define COM1 0x3f8
#define LSR_THR_EMPTY 0x20
#define LSR_TX_EMPTY 0x40 /* the FIFO and the shift register: all sent */
#define IIR_FIFO_ON 0xc0   /* the FIFO control register's "on" took: a 16550A */
#define FIFO_BYTES 16

static size_t burst = 1; /* bytes written per "empty" seen */

void ig_serial_init(void)
{
	outb(COM1 + 1, 0x00); /* no interrupts */
	outb(COM1 + 3, 0x80); /* divisor latch */
	outb(COM1 + 0, 0x01); /* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0xc7); /* FIFO on, cleared */
	if ((inb(COM1 + 2) & IIR_FIFO_ON) == IIR_FIFO_ON)
		burst = FIFO_BYTES;
}

void ig_serial_write(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	while (len) {
		while (!(inb(COM1 + 5) & LSR_THR_EMPTY))
			;
		size_t n = len < burst ? len : burst;
		for (size_t i = 0; i < n; i++)
			outb(COM1, p[i]);
		p += n;
		len -= n;
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
