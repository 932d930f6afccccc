/* Unit tests of kernel/metal/i8042's Ctrl-Alt-Del decoder: byte streams as
 * qemu's sendkey (scan-code set 2, makes then releases), Firecracker (makes
 * only) and a translating controller (set 1) produce them, the right-hand
 * keys, the keypad's Delete, partial chords, released modifiers, the Pause
 * key's embedded Ctrl, controller replies mixed in, and ordinary typing in
 * either set, which must never count as a press. */
#include "kernel/metal/i8042.h"
#include "tests/unit/check.h"

/* Feeds the bytes to a fresh decoder (or the given one); returns a bitmask
 * of the positions where the decoder said "pressed" (streams < 64 bytes). */
static uint64_t feed(struct ig_i8042_decoder *d, const uint8_t *bytes, size_t n)
{
	struct ig_i8042_decoder fresh = { 0 };
	if (!d)
		d = &fresh;
	uint64_t hits = 0;
	for (size_t i = 0; i < n; i++) {
		if (ig_i8042_decode(d, bytes[i]))
			hits |= 1ull << i;
	}
	return hits;
}

#define FEED(d, ...) feed((d), (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))
#define CHECK_HITS(got, want, name) \
	check_that((got) == (want), (name), "hits at %#jx, want %#jx", (uintmax_t)(got), (uintmax_t)(want))

int main(void)
{
	/* qemu 7.2 `sendkey ctrl-alt-delete`: the makes, then the releases in reverse. */
	CHECK_HITS(FEED(NULL, 0x14, 0x11, 0xe0, 0x71, 0xe0, 0xf0, 0x71, 0xf0, 0x11, 0xf0, 0x14),
		   1ull << 3, "set 2, qemu's sendkey: one press, on Delete's make");
	struct ig_i8042_decoder fc = { 0 };
	CHECK_HITS(FEED(&fc, 0x14, 0x11, 0xe0, 0x71), 1ull << 3, "set 2, Firecracker: makes only");
	CHECK_HITS(FEED(&fc, 0x14, 0x11, 0xe0, 0x71), 1ull << 3,
		   "Firecracker's second SendCtrlAltDel counts again");
	struct ig_i8042_decoder q = { 0 };
	FEED(&q, 0x14, 0x11, 0xe0, 0x71, 0xe0, 0xf0, 0x71, 0xf0, 0x11, 0xf0, 0x14);
	CHECK_HITS(FEED(&q, 0x14, 0x11, 0xe0, 0x71, 0xe0, 0xf0, 0x71, 0xf0, 0x11, 0xf0, 0x14),
		   1ull << 3, "a second sendkey after a full one: one press more");
	CHECK_HITS(FEED(NULL, 0x1d, 0x38, 0xe0, 0x53, 0xe0, 0xd3, 0xb8, 0x9d), 1ull << 3,
		   "set 1 (translated): one press");
	CHECK_HITS(FEED(NULL, 0xe0, 0x14, 0xe0, 0x11, 0xe0, 0x71), 1ull << 5,
		   "set 2: right Ctrl and right Alt");
	CHECK_HITS(FEED(NULL, 0xe0, 0x1d, 0xe0, 0x38, 0xe0, 0x53), 1ull << 5,
		   "set 1: right Ctrl and right Alt");
	CHECK_HITS(FEED(NULL, 0x11, 0x14, 0x71), 1ull << 2, "set 2: Alt first, keypad Delete");
	CHECK_HITS(FEED(NULL, 0x38, 0x1d, 0x53), 1ull << 2, "set 1: keypad Delete");
	CHECK_HITS(FEED(NULL, 0xe0, 0x71), 0, "Delete alone");
	CHECK_HITS(FEED(NULL, 0x14, 0xe0, 0x71), 0, "Ctrl-Delete");
	CHECK_HITS(FEED(NULL, 0x11, 0xe0, 0x71), 0, "Alt-Delete");
	CHECK_HITS(FEED(NULL, 0x14, 0x11, 0xf0, 0x14, 0xe0, 0x71), 0, "set 2: Ctrl released before Delete");
	CHECK_HITS(FEED(NULL, 0xe0, 0x14, 0x11, 0xe0, 0xf0, 0x14, 0xe0, 0x71), 0,
		   "set 2: right Ctrl released (E0 F0 14)");
	CHECK_HITS(FEED(NULL, 0x1d, 0x38, 0xb8, 0xe0, 0x53), 0, "set 1: Alt released before Delete");
	CHECK_HITS(FEED(NULL, 0x14, 0x11, 0xe0, 0xf0, 0x71), 0, "set 2: a Delete release is no press");
	CHECK_HITS(FEED(NULL, 0x1d, 0x38, 0xe0, 0xd3), 0, "set 1: a Delete release is no press");
	CHECK_HITS(FEED(NULL, 0x14, 0xe0, 0x14, 0x11, 0xf0, 0x14, 0xe0, 0x71), 1ull << 7,
		   "left Ctrl released, right Ctrl still held");
	CHECK_HITS(FEED(NULL, 0x11, 0xe1, 0x14, 0x77, 0xe1, 0xf0, 0x14, 0xf0, 0x77, 0xe0, 0x71), 0,
		   "the Pause key's Ctrl does not stay held");
	CHECK_HITS(FEED(NULL, 0xfa, 0x14, 0xaa, 0x11, 0xfa, 0xe0, 0x71), 1ull << 6,
		   "controller replies (FA, AA) between keys change nothing");
	/* "Hello, world" typed with Shift in set 2, and in set 1. */
	CHECK_HITS(FEED(NULL, 0x12, 0x33, 0xf0, 0x33, 0xf0, 0x12, 0x24, 0xf0, 0x24, 0x4b, 0xf0, 0x4b,
			0x4b, 0xf0, 0x4b, 0x44, 0xf0, 0x44, 0x41, 0xf0, 0x41, 0x29, 0xf0, 0x29, 0x1d,
			0xf0, 0x1d, 0x44, 0xf0, 0x44, 0x2d, 0xf0, 0x2d, 0x4b, 0xf0, 0x4b, 0x23, 0xf0,
			0x23),
		   0, "typing in set 2 is no press");
	CHECK_HITS(FEED(NULL, 0x2a, 0x23, 0xa3, 0xaa, 0x12, 0x92, 0x26, 0xa6, 0x26, 0xa6, 0x18, 0x98,
			0x33, 0xb3, 0x39, 0xb9, 0x11, 0x91, 0x18, 0x98, 0x13, 0x93, 0x26, 0xa6, 0x20,
			0xa0),
		   0, "typing in set 1 is no press");
	/* Set-1 T and W are set 2's Ctrl and Alt codes; set 1's releases do not
	 * release them in set 2's eyes, yet no set-1 key completes the chord. */
	CHECK_HITS(FEED(NULL, 0x14, 0x94, 0x11, 0x91, 0xe0, 0x53, 0xe0, 0xd3, 0x53, 0xd3, 0xe0, 0x52),
		   0, "set 1's T, W, Delete, keypad keys: no press");
	return check_done();
}
