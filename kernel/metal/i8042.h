/* The i8042 keyboard controller, for one purpose: noticing Ctrl-Alt-Del
 * (qemu's `sendkey ctrl-alt-delete`, Firecracker's SendCtrlAltDel), which
 * stops the service like SIGTERM. The decoder is pure: it reads scan-code
 * set 2 (qemu's and Firecracker's default; qboot leaves translation off) and,
 * in case a firmware turned translation on, set 1, both at once. */
#ifndef KERNEL_METAL_I8042_H
#define KERNEL_METAL_I8042_H

#include <stdbool.h>
#include <stdint.h>

/* The keys held down, and the prefixes seen, per scan-code set. */
struct ig_i8042_keys {
	uint8_t held;  /* which Ctrl and Alt keys are down (i8042.c's bits) */
	bool extended; /* an E0 prefix came */
	bool release;  /* set 2: an F0 prefix came */
};

struct ig_i8042_decoder {
	struct ig_i8042_keys set2, set1;
};

/* Feeds one byte from the keyboard; true when it completes a Delete press
 * (its make code; the keypad's Delete too) while a Ctrl and an Alt are
 * held, in either set. Every such make counts: Firecracker sends make codes
 * only, never releases. Start from a zeroed decoder. */
bool ig_i8042_decode(struct ig_i8042_decoder *d, uint8_t byte);

/* Enables the keyboard's interrupt in the controller and routes ISA IRQ1
 * (GSI 1) to IG_METAL_IRQ_VECTOR, so that a key press ends the idle halt.
 * Does nothing when no controller answers. */
void ig_i8042_init(void);

/* Drains the controller's output (port 0x60 while port 0x64 says data, a
 * bounded number of bytes) through the decoder; true if a Ctrl-Alt-Del
 * press was among them. */
bool ig_i8042_poll_ctrl_alt_del(void);

#endif
