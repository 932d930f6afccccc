/* The console's ring (console.h): a byte array, its oldest byte's index
 * and the count held. */
#include "console.h"
#include "serial.h"

#include <string.h>

#define BURST 16 /* a 16550A's FIFO: what the UART takes without waiting */

static char ring[IG_CONSOLE_RING_BYTES];
static size_t head; /* the oldest byte held */
static size_t held;

/* Of n bytes from index at, how many fit before the ring's end. */
static size_t before_end(size_t at, size_t n)
{
	return IG_CONSOLE_RING_BYTES - at < n ? IG_CONSOLE_RING_BYTES - at : n;
}

/* Writes up to n of the oldest bytes held; returns how many. */
static size_t write_oldest(size_t n)
{
	if (n > held)
		n = held;
	if (n == 0)
		return 0;
	size_t first = before_end(head, n);
	ig_serial_write(ring + head, first);
	if (n > first)
		ig_serial_write(ring, n - first);
	head = (head + n) % IG_CONSOLE_RING_BYTES;
	held -= n;
	return n;
}

void ig_console_write(const void *buf, size_t len)
{
	const char *p = buf;
	/* More than the ring holds: what it holds, then the excess, at once. */
	if (len > IG_CONSOLE_RING_BYTES) {
		write_oldest(held);
		size_t excess = len - IG_CONSOLE_RING_BYTES;
		ig_serial_write(p, excess);
		p += excess;
		len = IG_CONSOLE_RING_BYTES;
	}
	if (IG_CONSOLE_RING_BYTES - held < len)
		write_oldest(len - (IG_CONSOLE_RING_BYTES - held));
	size_t tail = (head + held) % IG_CONSOLE_RING_BYTES;
	size_t first = before_end(tail, len);
	memcpy(ring + tail, p, first);
	memcpy(ring, p + first, len - first);
	held += len;
}

void ig_console_puts(const char *s)
{
	ig_console_write(s, strlen(s));
}

bool ig_console_idle_write(void)
{
	return write_oldest(BURST) != 0;
}

void ig_console_flush(void)
{
	write_oldest(held);
}
