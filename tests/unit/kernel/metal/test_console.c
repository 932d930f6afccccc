/* Unit tests of kernel/metal/console: the ring in front of the UART, with
 * the UART replaced by a recorder (what ig_serial_write got, in order).
 * Bytes are held until the idle path writes them, a FIFO's worth (16) a
 * call, oldest first, across the ring's wrap; a full ring writes its
 * oldest bytes at once to make room, and a write larger than the ring
 * goes out in the order written; a flush writes everything held. */
#include "kernel/metal/console.h"
#include "tests/unit/check.h"

#include <stdlib.h>

/* The recorder: everything the UART was given, and how many calls. */
static char *uart;
static size_t uart_len, uart_cap;
static int uart_calls;

void ig_serial_write(const void *buf, size_t len)
{
	if (uart_len + len > uart_cap) {
		uart_cap = (uart_len + len) * 2;
		uart = realloc(uart, uart_cap);
	}
	memcpy(uart + uart_len, buf, len);
	uart_len += len;
	uart_calls++;
}

/* Bytes numbered from *next, as written: a pattern whose order shows. */
static void fill(char *p, size_t n, unsigned *next)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('a' + (*next)++ % 26);
}

/* The UART got exactly want's n bytes, in order. */
static bool uart_is(const char *want, size_t n)
{
	return uart_len == n && memcmp(uart, want, n) == 0;
}

int main(void)
{
	/* Held, then written by the idle path in bursts. */
	ig_console_puts("hello\n");
	CHECK_INT(uart_len, 0, "a write is held, not sent");
	CHECK(ig_console_idle_write(), "the idle path writes what is held");
	CHECK(uart_is("hello\n", 6), "the whole line, in one burst");
	CHECK(!ig_console_idle_write(), "nothing held: the CPU may halt");
	CHECK_INT(uart_len, 6, "and nothing more was written");

	uart_len = 0;
	ig_console_puts("0123456789abcdefghijklmnopqrstuvwxyzABCD"); /* 40 bytes */
	CHECK(ig_console_idle_write() && uart_len == 16, "the first burst: 16 bytes");
	CHECK(ig_console_idle_write() && uart_len == 32, "the second: 16 more");
	CHECK(ig_console_idle_write() && uart_len == 40, "the third: the last 8");
	CHECK(!ig_console_idle_write(), "then none");
	CHECK(uart_is("0123456789abcdefghijklmnopqrstuvwxyzABCD", 40), "in the order written");

	/* A full ring makes room by writing its oldest bytes, at once: the
	   UART's order stays the order written, across the ring's wrap. */
	static char want[3 * IG_CONSOLE_RING_BYTES], chunk[IG_CONSOLE_RING_BYTES + 5000];
	unsigned next = 0;
	size_t wrote = 0;
	uart_len = 0;
	for (int i = 0; i < 9; i++) { /* 9 x 3000: past the ring's size and its end */
		fill(chunk, 3000, &next);
		memcpy(want + wrote, chunk, 3000);
		ig_console_write(chunk, 3000);
		wrote += 3000;
	}
	CHECK_INT(uart_len, wrote - IG_CONSOLE_RING_BYTES, "a full ring wrote only what the new bytes needed");
	CHECK(memcmp(uart, want, uart_len) == 0, "its oldest bytes, in order");
	for (int i = 0; i < 100; i++)
		ig_console_idle_write();
	CHECK_INT(uart_len, wrote - IG_CONSOLE_RING_BYTES + 1600, "100 idle bursts: 1600 bytes more");
	ig_console_flush();
	CHECK(uart_is(want, wrote), "a flush writes the rest, in order (across the wrap)");
	CHECK(!ig_console_idle_write(), "nothing held after a flush");

	/* A write larger than the ring: what was held, then the new bytes,
	   all in order. */
	uart_len = 0;
	ig_console_puts("held");
	memcpy(want, "held", 4);
	fill(chunk, sizeof chunk, &next);
	memcpy(want + 4, chunk, sizeof chunk);
	ig_console_write(chunk, sizeof chunk);
	CHECK_INT(uart_len, 4 + sizeof chunk - IG_CONSOLE_RING_BYTES, "the ring keeps the last ring's worth");
	ig_console_flush();
	CHECK(uart_is(want, 4 + sizeof chunk), "held bytes first, then the large write, in order");

	int calls = uart_calls;
	ig_console_flush();
	CHECK_INT(uart_calls, calls, "a flush with nothing held writes nothing");
	free(uart);
	return check_done();
}
