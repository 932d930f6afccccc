/* The i8042 controller's ports and the Ctrl-Alt-Del decoder. Set 2 (the
 * keyboard's own codes): a release is F0 before the code, extended keys have
 * E0 first (E0 F0 code to release them). Set 1 (translated): a release is
 * the code with bit 7 set, extended keys have E0 first. */
#include "kernel/metal/i8042.h"

#include "kernel/metal/io.h"
#include "kernel/metal/ioapic.h"

#define PORT_DATA 0x60
#define PORT_STATUS 0x64 /* read: status; write: a controller command */
#define STATUS_OUTPUT_FULL 0x01
#define STATUS_INPUT_FULL 0x02
#define STATUS_FROM_MOUSE 0x20
#define CMD_READ_CONFIG 0x20
#define CMD_WRITE_CONFIG 0x60
#define CONFIG_KEYBOARD_IRQ 0x01
#define CONFIG_KEYBOARD_OFF 0x10 /* the keyboard's clock disabled */
#define ISA_KEYBOARD_GSI 1
#define SPINS 10000      /* an emulated controller answers at once, or never */
#define DRAIN_BYTES 64    /* per poll: a stuck status bit cannot hold the loop */

enum {
	HELD_LCTRL = 1,
	HELD_RCTRL = 2,
	HELD_LALT = 4,
	HELD_RALT = 8,
};

/* A key: its code, with 0x100 added for the E0-prefixed ones. The keypad's
 * Del counts too, as in Linux's keymap. */
struct key_codes {
	uint16_t lctrl, rctrl, lalt, ralt, del, keypad_del;
};

static const struct key_codes set2_codes = { 0x14, 0x114, 0x11, 0x111, 0x171, 0x71 };
static const struct key_codes set1_codes = { 0x1d, 0x11d, 0x38, 0x138, 0x153, 0x53 };

/* Updates the held keys for one key event; true for a Delete make with a
 * Ctrl and an Alt down. */
static bool key_event(struct ig_i8042_keys *k, const struct key_codes *c, uint16_t key, bool make)
{
	uint8_t bit = key == c->lctrl ? HELD_LCTRL
		      : key == c->rctrl ? HELD_RCTRL
		      : key == c->lalt	? HELD_LALT
		      : key == c->ralt	? HELD_RALT
					: 0;
	if (bit)
		k->held = (uint8_t)(make ? k->held | bit : k->held & ~bit);
	return make && (key == c->del || key == c->keypad_del) && (k->held & (HELD_LCTRL | HELD_RCTRL)) &&
	       (k->held & (HELD_LALT | HELD_RALT));
}

static bool decode_set2(struct ig_i8042_keys *k, uint8_t byte)
{
	if (byte == 0xe0) {
		k->extended = true;
		return false;
	}
	if (byte == 0xf0) {
		k->release = true;
		return false;
	}
	uint16_t key = (uint16_t)((k->extended ? 0x100 : 0) | byte);
	bool make = !k->release;
	k->extended = k->release = false;
	return key_event(k, &set2_codes, key, make);
}

static bool decode_set1(struct ig_i8042_keys *k, uint8_t byte)
{
	if (byte == 0xe0) {
		k->extended = true;
		return false;
	}
	uint16_t key = (uint16_t)((k->extended ? 0x100 : 0) | (byte & 0x7f));
	k->extended = false;
	return key_event(k, &set1_codes, key, (byte & 0x80) == 0);
}

bool ig_i8042_decode(struct ig_i8042_decoder *d, uint8_t byte)
{
	/* Both always run: a set-2 stream never looks like a set-1 Ctrl-Alt-Del
	 * nor the reverse, since the codes of the three keys differ. */
	bool set2 = decode_set2(&d->set2, byte);
	bool set1 = decode_set1(&d->set1, byte);
	return set2 || set1;
}

/* ---- the controller ---- */

static bool present;
static struct ig_i8042_decoder decoder;

static bool wait_status(uint8_t bit, bool set)
{
	for (int i = 0; i < SPINS; i++) {
		if (((inb(PORT_STATUS) & bit) != 0) == set)
			return true;
	}
	return false;
}

static bool send_command(uint8_t cmd)
{
	if (!wait_status(STATUS_INPUT_FULL, false))
		return false;
	outb(PORT_STATUS, cmd);
	return true;
}

void ig_i8042_init(void)
{
	/* No device on the port: the bus reads as all ones. */
	if (inb(PORT_STATUS) == 0xff)
		return;
	present = true;
	for (int i = 0; i < DRAIN_BYTES && (inb(PORT_STATUS) & STATUS_OUTPUT_FULL); i++)
		(void)inb(PORT_DATA);
	if (send_command(CMD_READ_CONFIG) && wait_status(STATUS_OUTPUT_FULL, true)) {
		uint8_t config = inb(PORT_DATA);
		uint8_t wanted = (uint8_t)((config | CONFIG_KEYBOARD_IRQ) & ~CONFIG_KEYBOARD_OFF);
		if (wanted != config && send_command(CMD_WRITE_CONFIG) &&
		    wait_status(STATUS_INPUT_FULL, false))
			outb(PORT_DATA, wanted);
	}
	ig_ioapic_route(ISA_KEYBOARD_GSI, IG_METAL_IRQ_VECTOR);
}

bool ig_i8042_poll_ctrl_alt_del(void)
{
	if (!present)
		return false;
	bool pressed = false;
	for (int i = 0; i < DRAIN_BYTES; i++) {
		uint8_t status = inb(PORT_STATUS);
		if (!(status & STATUS_OUTPUT_FULL))
			break;
		uint8_t byte = inb(PORT_DATA);
		if (!(status & STATUS_FROM_MOUSE))
			pressed |= ig_i8042_decode(&decoder, byte);
	}
	return pressed;
}
